#!/usr/bin/env bash
# Builds a statically linked kbench (glibc, crt-static) to copy to a board or into
# an initramfs, and prints the binary's path.
#
#   scripts/build-static.sh                    # this machine's architecture
#   scripts/build-static.sh aarch64            # an arm64 board's, on an x86 machine
#   scripts/build-static.sh --guest [aarch64]  # the guest build: what /init and a
#                                              # board run, no PostgreSQL, TLS or tokio
#   scripts/build-static.sh --for-tests [--guest] [aarch64]
#                                              # the same, optimised less, for tests
#
# The guest build (`--no-default-features`) leaves out the shared store (PostgreSQL,
# push), the HTML report and the host's commands (vm-ab, lava-job, initramfs, the
# imports, completions, manpage), which refuse with one line, and SQLite's full-text
# search and R-tree, and is built as a whole program, for size outside the timed
# code; it goes into a target directory of its own, so the two flavours never
# overwrite each other's binary or SQLite.
#
# Naming the target explicitly keeps the static flag off build scripts and
# proc-macros, which must stay dynamic. rustup has no aarch64 standard library on our
# machines, but Debian does: the aarch64 build uses Debian's rustc-web and the cross
# gcc (scripts/install-aarch64-toolchain.sh), in a target directory of its own so the
# two compilers do not rebuild each other's artefacts.
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
flavour=() guest_dir="" tests_dir="" size_config=()
# The tests only need a static binary that boots and runs: opt-level 1 without LTO
# takes about two thirds of a release build's CPU time. It goes into target
# directories of its own, so it never stands in for a release binary.
if [[ ${1:-} == --for-tests ]]; then
    tests_dir=-tests
    export CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
    shift
fi
if [[ ${1:-} == --guest ]]; then
    flavour=(--no-default-features) guest_dir=-guest
    # kbench's tables need no full-text search or R-tree: SQLite without them.
    export LIBSQLITE3_FLAGS="${LIBSQLITE3_FLAGS:-} -USQLITE_ENABLE_FTS3 -USQLITE_ENABLE_FTS3_PARENTHESIS -USQLITE_ENABLE_FTS5 -USQLITE_ENABLE_RTREE"
    # One codegen unit and whole-program LTO: about a tenth smaller, for a slower build
    # (not for the tests, which only boot it: --for-tests).
    export CARGO_PROFILE_RELEASE_LTO=${CARGO_PROFILE_RELEASE_LTO:-fat}
    export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-1}
    # Optimised for size where nothing is timed: every dependency, and the crates that
    # store, import, analyse and render (8.2 MiB stripped at opt-level 3 everywhere,
    # 6.9 MiB so). The workloads, the runner, sys and the binary crate, whose level the
    # whole-program LTO runs at, stay at 3: the timed loops are built as in the full
    # build (pipe and messaging within 1-2% of it, run for run, here).
    if [[ -z $tests_dir ]]; then
        size_config=(--config 'profile.release.package."*".opt-level="s"')
        for crate in kbench-analysis kbench-report kbench-store kbench-import; do
            size_config+=(--config "profile.release.package.$crate.opt-level=\"s\"")
        done
    fi
    shift
fi
asked=${1:-${KBENCH_TARGET:-$host}}
case "$asked" in
    x86_64 | x86_64-unknown-linux-gnu) target=x86_64-unknown-linux-gnu ;;
    aarch64 | arm64 | aarch64-unknown-linux-gnu) target=aarch64-unknown-linux-gnu ;;
    "$host") target=$host ;;
    *)
        echo "build-static.sh: unknown target '$asked' (x86_64 or aarch64, after --guest for the guest build)" >&2
        exit 2
        ;;
esac
if [[ $target == "$host" ]]; then
    # target, target/guest, target/static-tests or target/guest-tests.
    sub=${guest_dir:+guest}
    [[ -z $tests_dir ]] || sub=${sub:-static}$tests_dir
    dir=target${sub:+/$sub}
    [[ -z $sub ]] || export CARGO_TARGET_DIR=$dir
    RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
        cargo build --release --locked --target "$target" -p kbench "${flavour[@]}" "${size_config[@]}" -q
    echo "$dir/$target/release/kbench"
    exit 0
fi
# A cross build: Debian's cargo with its std for the target, and the cross gcc as
# linker and C compiler (SQLite is compiled from source).
cargo=/usr/bin/cargo
if [[ ! -x $cargo ]] || ! /usr/bin/rustc --print sysroot >/dev/null 2>&1 ||
    [[ ! -d $(/usr/bin/rustc --print sysroot)/lib/rustlib/$target ]]; then
    echo "build-static.sh: no Debian Rust with the $target std; run scripts/install-aarch64-toolchain.sh" >&2
    exit 2
fi
# The cross build for tests only boots under TCG as /init and runs workloads of a few
# hundred loops: unoptimised, it builds in 70 s instead of 158 s, and its tests take
# 40 s instead of 37 s.
[[ -z $tests_dir ]] || export CARGO_PROFILE_RELEASE_OPT_LEVEL=0
triple=${target%%-unknown-*}-linux-gnu
env_target=$(echo "$target" | tr 'a-z-' 'A-Z_')
export "CARGO_TARGET_${env_target}_LINKER=$triple-gcc"
export "CC_${target//-/_}=$triple-gcc"
export "AR_${target//-/_}=$triple-ar"
dir=target/debian-rustc$guest_dir$tests_dir
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" CARGO_TARGET_DIR=$dir \
    RUSTC=/usr/bin/rustc "$cargo" build --release --locked --target "$target" -p kbench "${flavour[@]}" "${size_config[@]}" -q
echo "$dir/$target/release/kbench"
