#!/usr/bin/env bash
# Runs every kbench test on a Debian 12 machine with Rust: installs the Debian
# packages the tests need when they are missing, then format, lint and tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# linux-perf: the reference for parity tests; strace: proves "nothing forked";
# util-linux: taskset for pinning; man-db: renders `kbench manpage`; rt-tests: real
# hackbench and cyclictest output; cpio: GNU cpio reads back kbench's initramfs
# images; binutils: `ar` builds a package-shaped archive for kbench-boot's tests;
# python3-yaml: PyYAML, LAVA's YAML reader, reads back the jobs `kbench lava-job` writes.
# file: says what the aarch64 build made. chromium (with a font): renders `kbench
# report`'s page headless. postgresql (and openssl for its test CA): the shared
# store's tests run against a private server (scripts/pg-server.sh).
packages=(linux-perf strace util-linux man-db rt-tests cpio binutils qemu-system-x86 python3-yaml file chromium fonts-dejavu-core postgresql openssl)
missing=()
for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    echo "installing: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

export PROPTEST_RNG_SEED=${PROPTEST_RNG_SEED:-20261130}
cargo fmt --all --check
cargo clippy --locked --workspace --all-targets -- -D warnings

# The binary must stay static, so it can be copied to a board or an initramfs.
static_bin=$(scripts/build-static.sh)
if ldd "$static_bin" 2>&1 | grep -q "=>"; then
    echo "test.sh: $static_bin is dynamically linked" >&2
    exit 1
fi
env -i "$static_bin" bench -f simple sched pipe -l 1000 >/dev/null
echo "static binary: ok ($static_bin)"
# kbench vm-ab's tests boot it as /init.
KBENCH_STATIC_BIN=$PWD/$static_bin
export KBENCH_STATIC_BIN

# The aarch64 kbench, built with Debian's Rust (rustup has no aarch64 std here), for
# the arm64 kernels' tests; a board's binary is built the same way.
scripts/install-aarch64-toolchain.sh
aarch64_bin=$(scripts/build-static.sh aarch64)
if ! file "$aarch64_bin" | grep -q "ARM aarch64.*statically linked"; then
    echo "test.sh: $aarch64_bin is not a static aarch64 executable" >&2
    exit 1
fi
echo "static aarch64 binary: ok ($aarch64_bin)"
KBENCH_STATIC_BIN_AARCH64=$PWD/$aarch64_bin
export KBENCH_STATIC_BIN_AARCH64

# Real Debian kernel packages for kbench-boot's tests, downloaded once into the cache.
KBENCH_KERNEL_CACHE=$(scripts/fetch-kernels.sh)
export KBENCH_KERNEL_CACHE
scripts/fetch-kernels.sh arm64 >/dev/null
# The boot tests skip without kernels; here, where the network is there, they must run.
for series in 6.1.0- 6.12.; do
    for dir_arch in ".:amd64" "arm64:arm64"; do
        dir=$KBENCH_KERNEL_CACHE/${dir_arch%%:*} arch=${dir_arch##*:}
        if ! compgen -G "$dir/linux-image-${series}*_${arch}.deb" >/dev/null; then
            echo "test.sh: no linux-image-${series}*_${arch}.deb in $dir" >&2
            exit 1
        fi
    done
done

# A private PostgreSQL server for the store's tests, stopped and removed at the end.
pg_dir=$(mktemp -d)
trap 'scripts/pg-server.sh stop "$pg_dir" || true; rm -rf "$pg_dir"' EXIT
scripts/pg-server.sh start "$pg_dir" >/dev/null
set -a
# shellcheck disable=SC1091
source "$pg_dir/env"
set +a
echo "postgresql: ok ($KBENCH_TEST_PG)"

# Everything the boot tests need is here now: a test that would skip fails instead.
export KBENCH_REQUIRE_BOOT_TESTS=1
export KBENCH_REQUIRE_CHROMIUM=1
export KBENCH_REQUIRE_POSTGRES=1

# Tests last, so the runner's summary closes the log.
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --locked --workspace --no-fail-fast
else
    cargo test --locked --workspace --no-fail-fast
fi
