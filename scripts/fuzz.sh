#!/usr/bin/env bash
# Fuzzes every parser of outside input in turn (docs/fuzzing.md).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   fuzz (default 60 s, every target)
#   scripts/fuzz.sh --cmin [TARGET...]                 minimise the corpora in place
#                                                      (seed files kept whole)
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
# One libFuzzer process at a time: the machine is shared, run it under `nice`.
#
# For each target it prints executions, exec/s, seconds and whether it crashed. A
# crash (or timeout, or out-of-memory) is minimised with `cargo fuzz tmin` and copied
# to fuzz/regressions/TARGET/, which tests/replay.rs of kbench-fuzz replays on stable.
# Exits 1 when any target crashed.
set -euo pipefail

cd "$(dirname "$0")/../fuzz"

# Inputs are text files: 64 KiB holds every real one in the corpus. A parser that takes
# over 10 s on that, or 2 GiB, has a bug as real as a panic.
LIBFUZZER_FLAGS=(-max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
# Release code, with overflow checks and debug assertions: an overflow that wraps
# silently in the release binary is a wrong figure there.
BUILD_FLAGS=(-O --debug-assertions)
LOG_DIR=target/fuzz-logs

all_targets() {
    cargo +nightly fuzz list
}

# The value of one of libFuzzer's final `stat::NAME: VALUE` lines in a log.
final_stat() {
    sed -n "s/^stat::$1: *//p" "$2" | tail -n 1
}

# The newest crash, timeout, leak or OOM input libFuzzer left for a target.
newest_artifact() {
    ls -t "artifacts/$1"/{crash,timeout,leak,oom,slow-unit}-* 2>/dev/null | head -n 1 || true
}

# Minimises a failing input and keeps it as a regression file; prints its path.
keep_regression() {
    local target=$1 artifact=$2 name minimized
    name=$(basename "$artifact" | cut -c1-20)
    # tmin writes minimized-from-HASH, the HASH of the artifact's name.
    minimized="artifacts/$target/minimized-from-${artifact##*-}"
    mkdir -p "regressions/$target"
    if cargo +nightly fuzz tmin "${BUILD_FLAGS[@]}" -r 2000 "$target" "$artifact" \
        >>"$LOG_DIR/$target.tmin.log" 2>&1 && [ -s "$minimized" ]; then
        cp "$minimized" "regressions/$target/$name"
    else
        cp "$artifact" "regressions/$target/$name"
    fi
    echo "regressions/$target/$name"
}

fuzz_one() {
    local target=$1 seconds=$2 log start elapsed status=ok execs rate artifact
    log="$LOG_DIR/$target.log"
    mkdir -p "corpus/$target"
    start=$(date +%s)
    if ! cargo +nightly fuzz run "${BUILD_FLAGS[@]}" "$target" -- \
        -max_total_time="$seconds" "${LIBFUZZER_FLAGS[@]}" >"$log" 2>&1; then
        status=CRASHED
    fi
    elapsed=$(($(date +%s) - start))
    execs=$(final_stat number_of_executed_units "$log")
    rate=$(final_stat average_exec_per_sec "$log")
    if [ "$status" = CRASHED ]; then
        artifact=$(newest_artifact "$target")
        if [ -n "$artifact" ]; then
            status="CRASHED $(keep_regression "$target" "$artifact")"
        else
            status="CRASHED (no artifact; see $log)"
        fi
    fi
    printf '%-20s %12s %8s %6ss  %s\n' "$target" "${execs:-?}" "${rate:-?}" "$elapsed" "$status"
    [ "$status" = ok ]
}

# Minimises one corpus within a size the repository can carry: the named seed files
# (real outputs, kept whole) stay, and of libFuzzer's inputs (named by their SHA-1)
# only a set covering what the seeds do not is kept, each cut to CMIN_MAX_LEN bytes.
# A plain `cargo fuzz cmin` kept 20 MB.
CMIN_MAX_LEN=256
cmin_one() {
    local target=$1 work before after
    work=$(mktemp -d)
    before=$(ls "corpus/$target" | wc -l)
    mv "corpus/$target" "$work/all"
    mkdir -p "corpus/$target"
    find "$work/all" -type f ! -regex '.*/[0-9a-f]\{40\}' -exec mv {} "corpus/$target/" \;
    cargo +nightly fuzz run "${BUILD_FLAGS[@]}" "$target" "corpus/$target" "$work/all" -- \
        -set_cover_merge=1 -max_len="$CMIN_MAX_LEN" -timeout=10 -rss_limit_mb=2048 \
        >"$LOG_DIR/$target.cmin.log" 2>&1
    rm -rf "$work"
    after=$(ls "corpus/$target" | wc -l)
    printf '%-20s %6s -> %6s files, %s bytes\n' "$target" "$before" "$after" \
        "$(du -sb "corpus/$target" | cut -f1)"
}

mkdir -p "$LOG_DIR"
if [ "${1:-}" = --cmin ]; then
    shift
    cargo +nightly fuzz build "${BUILD_FLAGS[@]}"
    if [ $# -eq 0 ]; then mapfile -t targets < <(all_targets); else targets=("$@"); fi
    for target in "${targets[@]}"; do cmin_one "$target"; done
    exit 0
fi

seconds=${1:-60}
shift || true
if [ $# -eq 0 ]; then mapfile -t targets < <(all_targets); else targets=("$@"); fi

cargo +nightly fuzz build "${BUILD_FLAGS[@]}"
printf '%-20s %12s %8s %7s  %s\n' target executions exec/s time result
crashed=0
for target in "${targets[@]}"; do
    fuzz_one "$target" "$seconds" || crashed=1
done
exit "$crashed"
