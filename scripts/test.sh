#!/usr/bin/env bash
# Runs every kbench test on a Debian 12 machine with Rust: installs the Debian
# packages the tests need when they are missing, then format, lint, builds and tests,
# and closes with how long each step took.
#
# Package installs and downloads wait on the network, builds on the CPU: the first
# run in the background while the second go on. Tests that measure the machine (the
# nextest group `timing`) run first and alone; then everything else, the boots under
# TCG, PostgreSQL and the fuzz replay beside each other (.config/nextest.toml).
#
# `scripts/test.sh --slow` runs, after all of that, the slow tier too: the tests
# marked #[ignore] because they take longer than CI's budget (vm-ab deciding pti=on
# and an A/A by boots at 20 boots a side, 3 to 15 minutes under TCG; run --real's
# build of Debian's kernel source, 2 to 4 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
slow=""
case ${1:-} in
--slow) slow=1 ;;
"") ;;
*)
    echo "usage: scripts/test.sh [--slow]" >&2
    exit 2
    ;;
esac

# linux-perf: the reference for parity tests; strace: proves "nothing forked";
# util-linux: taskset for pinning; man-db: renders `kbench manpage`; rt-tests: real
# hackbench and cyclictest output; cpio: GNU cpio reads back kbench's initramfs
# images; binutils: `ar` builds a package-shaped archive for kbench-boot's tests;
# python3-yaml: PyYAML, LAVA's YAML reader, reads back the jobs `kbench lava-job` writes.
# file: says what the aarch64 build made. chromium (with a font): renders `kbench
# report`'s page headless. postgresql (and openssl for its test CA): the shared
# store's tests run against a private server (scripts/pg-server.sh). fio and
# sockperf: blkio and netrr are set beside them. The aarch64 toolchain's packages
# come with them, so the package lists are refreshed once.
packages=(linux-perf strace util-linux man-db rt-tests cpio binutils qemu-system-x86 python3-yaml file chromium fonts-dejavu-core postgresql openssl fio sockperf)
read -ra aarch64_packages <<<"$(scripts/install-aarch64-toolchain.sh --list)"

timings=()
script_start=$SECONDS
# note_time NAME SECONDS: one row of the closing table.
note_time() { timings+=("$(printf '%-44s %5d s' "$1" "$2")"); }
# step NAME CMD...: runs CMD and notes how long it took.
step() {
    local name=$1 start=$SECONDS rc=0
    shift
    "$@" || rc=$?
    note_time "$name" $((SECONDS - start))
    return "$rc"
}
print_timings() {
    timings_printed=1
    note_time "whole run" $((SECONDS - script_start))
    echo "test.sh: where the time went"
    printf '  %s\n' "${timings[@]}"
    echo "test.sh: target/ takes $(du -sh target 2>/dev/null | cut -f1), $(free_gb) GB left on its disk"
}
free_gb() { df -Pk . | awk 'NR == 2 {printf "%.1f", $4 / 1048576}'; }
pg_dir=""
cleanup() {
    # A step that failed ends the script: say where the time went up to there.
    [[ -n ${timings_printed:-} ]] || print_timings
    if [[ -n $pg_dir ]]; then
        scripts/pg-server.sh stop "$pg_dir" || true
        rm -rf "$pg_dir"
    fi
    if [[ -n ${background_pid:-} ]]; then
        kill "$background_pid" 2>/dev/null || true
    fi
    [[ -z ${background_log:-} ]] || rm -f "$background_log" "$background_log.cache" "$background_log.seconds"
    rm -f "${runner_log:-}"
}
trap cleanup EXIT

# Packages, then the real Debian kernel packages kbench-boot's tests boot (downloaded
# once into the cache), in the background.
background_log=$(mktemp)
fetch_outside() {
    scripts/install-packages.sh "${packages[@]}" "${aarch64_packages[@]}"
    KBENCH_KERNEL_CACHE=$(scripts/fetch-kernels.sh)
    scripts/fetch-kernels.sh arm64 >/dev/null
    echo "$KBENCH_KERNEL_CACHE" >"$background_log.cache"
    echo $((SECONDS - outside_start)) >"$background_log.seconds"
}
outside_start=$SECONDS
fetch_outside >"$background_log" 2>&1 &
background_pid=$!

# A whole run writes about 2.5 GB under target/, and a full disk shows up only as a
# linker's bus error minutes in: say it first.
if awk -v gb="$(free_gb)" 'BEGIN {exit !(gb < 3)}'; then
    echo "test.sh: warning: only $(free_gb) GB free here; a whole run writes about 2.5 GB under target/" >&2
fi

export PROPTEST_RNG_SEED=${PROPTEST_RNG_SEED:-20261130}
step "cargo fmt --check" cargo fmt --all --check
step "cargo clippy (all targets)" cargo clippy --locked --workspace --all-targets -q -- -D warnings
# The guest build (/init, boards: --no-default-features) must not regain the shared
# store's PostgreSQL client, TLS or tokio, must build warning-free, and must refuse a
# server's URL with one line.
guest_build() {
    local heavy
    heavy=$(cargo tree --locked -p kbench --no-default-features -e normal --prefix none |
        grep -oE '^(postgres|tokio|rustls|ring|webpki)[^ ]*' | sort -u | tr '\n' ' ') || true
    if [[ -n $heavy ]]; then
        echo "test.sh: the guest build links $heavy" >&2
        return 1
    fi
    # Its code; the tests are linted with the full build.
    cargo clippy --locked -p kbench -p kbench-store --no-default-features -q -- -D warnings
    cargo test --locked -q -p kbench-store --no-default-features --lib
}
step "guest build: dependencies, clippy, refusal" guest_build

# The binary must stay static, so it can be copied to a board or an initramfs. The
# tests only boot and run it: the build for tests, optimised less (build-static.sh).
build_static() { static_bin=$(scripts/build-static.sh --for-tests); }
step "build: static x86_64 kbench (for tests)" build_static
if ldd "$static_bin" 2>&1 | grep -q "=>"; then
    echo "test.sh: $static_bin is dynamically linked" >&2
    exit 1
fi
env -i "$static_bin" bench -f simple sched pipe -l 1000 >/dev/null
echo "static binary: ok ($static_bin)"
# vm-ab's tests boot it as /init.
KBENCH_STATIC_BIN=$PWD/$static_bin
export KBENCH_STATIC_BIN

if cargo nextest --version >/dev/null 2>&1; then
    runner=(cargo nextest run --locked --workspace --no-fail-fast)
    step "build: tests (dev profile)" cargo nextest run --locked --workspace --no-run --cargo-quiet
else
    runner=(cargo test --locked --workspace --no-fail-fast)
    step "build: tests (dev profile)" cargo test --locked --workspace --no-run -q
fi

# The packages and kernels fetched beside the builds.
waited_start=$SECONDS
if ! wait "$background_pid"; then
    background_pid=""
    cat "$background_log" >&2
    echo "test.sh: installing packages or fetching kernels failed" >&2
    exit 1
fi
background_pid=""
cat "$background_log"
note_time "packages and kernels (beside the builds)" "$(cat "$background_log.seconds")"
note_time "  of which waited for after the builds" $((SECONDS - waited_start))
KBENCH_KERNEL_CACHE=$(cat "$background_log.cache")
export KBENCH_KERNEL_CACHE

# The aarch64 kbench, built with Debian's Rust (rustup has no aarch64 std here), for
# the arm64 kernels' tests, where it only runs as /init: the guest build, as a board's,
# unoptimised (build-static.sh): the boot tests need its features, not its speed or
# its last megabyte.
build_aarch64() { aarch64_bin=$(scripts/build-static.sh --for-tests --guest aarch64); }
step "build: static aarch64 guest kbench (Debian rustc)" build_aarch64
if ! file "$aarch64_bin" | grep -q "ARM aarch64.*statically linked"; then
    echo "test.sh: $aarch64_bin is not a static aarch64 executable" >&2
    exit 1
fi
echo "static aarch64 binary: ok ($aarch64_bin)"
KBENCH_STATIC_BIN_AARCH64=$PWD/$aarch64_bin
export KBENCH_STATIC_BIN_AARCH64

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

failed=0
if [[ ${runner[1]} == nextest ]]; then
    # Each run's summary is kept to add up the two into the closing line.
    runner_log=$(mktemp)
    nextest() { "${runner[@]}" "$@" 2>&1 | tee -a "$runner_log"; }
    # The tests that measure the machine, one at a time with nothing beside them.
    step "tests: timing group, alone" nextest -E 'group(timing)' || failed=1
    # Everything else, the slow groups that measure nothing beside each other.
    step "tests: the rest, side by side" nextest -E 'not group(timing)' || failed=1
    if [[ -n $slow ]]; then
        # run --real's kernel build: Debian's kernel source and a compiler.
        step "packages: the slow tier's" scripts/install-packages.sh linux-source-6.1 build-essential flex bison bc libelf-dev || failed=1
        step "tests: the slow tier, alone" nextest --run-ignored only -j 1 || failed=1
    fi
    print_timings
    # nextest's summaries: "N tests run: P passed[ (S slow)], F failed, ...". Its
    # "skipped" counts the other run's tests, which this run filtered out.
    count() { grep -E '^ *Summary ' "$runner_log" | grep -oE "[0-9]+ $1" | awk '{n += $1} END {print n + 0}'; }
    echo "tests: $(count passed) passed, $(($(count failed) + $(count 'timed out'))) failed"
    # CI keeps only the head and the tail of a long log: each failure's panic again,
    # short, at the very end, so that a failure far up the log still says why.
    if grep -q "panicked at" "$runner_log"; then
        echo "test.sh: the failures' panics:"
        grep -A2 "panicked at" "$runner_log" | cut -c1-600 | head -n 40
    fi
else
    step "tests (cargo test)" "${runner[@]}" || failed=1
    print_timings
fi
((failed == 0)) || echo "test.sh: tests failed (see above)" >&2
exit "$failed"
