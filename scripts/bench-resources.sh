#!/usr/bin/env bash
# What the coordinator holds over a long session: `kbench run` of RUNS runs (one
# process per run, as always), its resident memory and open descriptors sampled from
# /proc every 100 ms. A leak of a pipe, a thread or a record per run shows as growth
# from the first tenth of the session to the last. Not a test: the figures are for
# reading (medians of each tenth).
#
# usage: scripts/bench-resources.sh [RUNS]   (default 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000}
cargo build --release --locked -q
kbench=$PWD/target/release/kbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

KBENCH_DB=$work/k.db "$kbench" run --label resources --runs "$runs" --warmup 0 \
    'pipe:-l 1000' >"$work/out" 2>"$work/err" &
pid=$!
start=$(date +%s.%N)
while [[ -d /proc/$pid ]] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
    now=$(date +%s.%N)
    [[ -n $rss ]] && echo "$(echo "$now - $start" | bc) $rss $fds $threads" >>"$work/samples"
    sleep 0.1
done
wait "$pid"
stored=$(KBENCH_DB=$work/k.db "$kbench" list | awk '$1 == "resources" {print $3}')

python3 - "$work/samples" "$runs" "$stored" <<'EOF'
import statistics, sys
samples = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 4]
runs, stored = sys.argv[2], sys.argv[3]
print(f"kbench run, {runs} runs of pipe:-l 1000: {stored} stored, "
      f"{samples[-1][0]:.1f} s, {len(samples)} samples of the coordinator")
print(f"{'tenth':>5} {'RSS KiB':>9} {'fds':>5} {'threads':>8}")
tenth = max(1, len(samples) // 10)
for i in range(0, len(samples), tenth):
    part = samples[i:i + tenth]
    med = lambda k: statistics.median(s[k] for s in part)
    print(f"{i // tenth + 1:>5} {med(1):>9.0f} {med(2):>5.0f} {med(3):>8.0f}")
rss = [s[1] for s in samples]
fds = [s[2] for s in samples]
print(f"RSS min {min(rss):.0f} max {max(rss):.0f} KiB; fds min {min(fds):.0f} max {max(fds):.0f}")
EOF
