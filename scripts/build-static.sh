#!/usr/bin/env bash
# Builds a statically linked kbench (glibc, crt-static) to copy to a board or into
# an initramfs. Naming the target explicitly keeps the static flag off build scripts
# and proc-macros, which must stay dynamic. Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${KBENCH_TARGET:-$(rustc -vV | sed -n 's/^host: //p')}
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
    cargo build --release --locked --target "$target" -p kbench -q
echo "target/$target/release/kbench"
