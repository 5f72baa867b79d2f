#!/usr/bin/env bash
# What an aarch64 kbench is built with on a Debian 12 x86 machine: Debian's Rust
# (rustc-web, which has the aarch64 standard library as a package) and the cross gcc;
# and what it is tested with: qemu-system-aarch64.
set -euo pipefail
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
packages=(rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu
    libc6-dev-arm64-cross qemu-system-arm)
missing=()
for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
((${#missing[@]})) || exit 0
echo "installing: ${missing[*]}"
dpkg --print-foreign-architectures | grep -qx arm64 || $sudo dpkg --add-architecture arm64
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
