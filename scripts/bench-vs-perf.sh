#!/usr/bin/env bash
# kbench against perf, the same work side by side, interleaved A B A B.
#
# Prints, per case, the median over pairs of kbench_time / perf_time (the time each
# tool reports for its own run). A ratio <= 1.00 means kbench is no slower than perf
# for the same work. The machine is shared and noisy: read medians, not single runs.
#
# usage: scripts/bench-vs-perf.sh [PAIRS]   (default 9; at least 7)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-9}
perf=${PERF:-/usr/bin/perf}
[[ -x $perf ]] || { echo "bench-vs-perf: $perf not found (apt-get install linux-perf)" >&2; exit 2; }
cargo build --release --locked -q
kbench=target/release/kbench

# The time a tool reports: usecs/op for pipe (finer than the ms total), else seconds.
reported() {
    awk '/usecs\/op/ {print $1; found=1} /Total time/ {t=$3} END {if (!found) print t}'
}

run_case() {
    local name=$1 pin=$2 kb_args=$3 perf_args=$4
    local ratios=() i kb pf
    for ((i = 0; i < pairs; i++)); do
        # Alternate which tool goes first, so drift hits both sides alike.
        if ((i % 2 == 0)); then
            kb=$($pin $kbench bench $kb_args | reported)
            pf=$($pin $perf bench $perf_args | reported)
        else
            pf=$($pin $perf bench $perf_args | reported)
            kb=$($pin $kbench bench $kb_args | reported)
        fi
        ratios+=("$kb $pf")
    done
    printf '%s\n' "${ratios[@]}" | python3 -c '
import statistics, sys
name = sys.argv[1]
pairs = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
ratios = [k / p for k, p in pairs if p > 0]
kb = statistics.median(k for k, _ in pairs); pf = statistics.median(p for _, p in pairs)
print(f"{name:<34} pairs {len(ratios):>2}  kbench {kb:>10.4f}  perf {pf:>10.4f}  "
      f"median ratio {statistics.median(ratios):.3f}  (min {min(ratios):.3f}, max {max(ratios):.3f})")
' "$name"
}

echo "kbench $(git rev-parse --short HEAD 2>/dev/null || echo '?') vs $($perf --version), $(nproc) CPUs, $(uname -r)"
run_case "pipe pingpong -l 200000, CPU 0" "taskset -c 0" "sched pipe --pingpong -l 200000" "sched pipe -l 200000"
run_case "pipe pingpong -l 100000, unpinned" "" "sched pipe --pingpong -l 100000" "sched pipe -l 100000"
run_case "messaging -g 10 -l 100" "" "sched messaging -g 10 -l 100" "sched messaging -g 10 -l 100"
run_case "messaging -t -p -g 10 -l 100" "" "sched messaging -t -p -g 10 -l 100" "sched messaging -t -p -g 10 -l 100"
