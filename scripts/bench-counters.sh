#!/usr/bin/env bash
# What `--counters` costs: the same workload with and without perf_event_open
# counters, interleaved (A B, B A, ...), so drift hits both sides alike.
#
# Prints, per case, the median of the primary figure with and without counters and
# the median over pairs of with/without. Counting adds work to every context switch
# of the counted tasks, so the same-CPU pipe (a switch per round trip) shows the most.
# The machine is shared and noisy: read medians, not single runs. Not a test.
#
# usage: scripts/bench-counters.sh [PAIRS]   (default 15)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-15}
cargo build --release --locked -q
kbench=target/release/kbench

primary() {
    python3 -c 'import json, sys
r = json.load(sys.stdin)
print(next(m["value"] for m in r["metrics"] if m["role"] == "primary"))'
}

run_case() {
    local name=$1 args=$2
    local rows=() i off on
    for ((i = 0; i < pairs; i++)); do
        if ((i % 2 == 0)); then
            off=$($kbench bench --json $args | primary)
            on=$($kbench bench --json --counters $args | primary)
        else
            on=$($kbench bench --json --counters $args | primary)
            off=$($kbench bench --json $args | primary)
        fi
        rows+=("$off $on")
    done
    printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
name = sys.argv[1]
pairs = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
ratios = [on / off for off, on in pairs if off > 0]
off = statistics.median(o for o, _ in pairs); on = statistics.median(c for _, c in pairs)
print(f"{name:<32} pairs {len(ratios):>2}  without {off:>9.4f}  with {on:>9.4f}  "
      f"median ratio {statistics.median(ratios):.3f}  (min {min(ratios):.3f}, max {max(ratios):.3f})")
' "$name"
}

echo "kbench $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs, $(uname -r)"
run_case "pipe same-cpu us/op" "sched pipe -l 100000 --placement same-cpu"
run_case "pipe cross-cpu us/op" "sched pipe -l 100000 --placement cross-cpu"
run_case "seccomp-notify cross-cpu us/op" "sched seccomp-notify -l 100000 --placement cross-cpu"
run_case "messaging -g 10 -l 100 s" "sched messaging -g 10 -l 100"
