#!/usr/bin/env bash
# What an aarch64 kbench is built with on a Debian 12 x86 machine: Debian's Rust
# (rustc-web, which has the aarch64 standard library as a package) and the cross gcc;
# and what it is tested with: qemu-system-aarch64.
#
#   scripts/install-aarch64-toolchain.sh          # installs what is missing
#   scripts/install-aarch64-toolchain.sh --list   # prints the packages (scripts/test.sh
#                                                 # installs them with its own, at once)
set -euo pipefail
packages=(rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu
    libc6-dev-arm64-cross qemu-system-arm)
if [[ ${1:-} == --list ]]; then
    echo "${packages[*]}"
    exit 0
fi
exec "$(dirname "$0")/install-packages.sh" "${packages[@]}"
