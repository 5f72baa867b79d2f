#!/usr/bin/env bash
# The real workloads against the tools people trust, side by side and interleaved:
# kbench's blkio against fio (same file, block size, depth and engine) and netrr
# against sockperf's TCP ping-pong on loopback (same message size and CPUs).
#
#   scripts/bench-real.sh [KBENCH]      # default target/release/kbench (built if missing)
#
# Environment: ROUNDS (default 5) rounds; in each, every case runs once with each
# tool, the tool that goes first alternating from round to round. FILE (default
# /var/tmp/kbench-parity.dat, on a disk: O_DIRECT) is made once, 64 MiB. IOS (default
# 20000) IOs per blkio/fio run; SECS (default 3) seconds per sockperf run, and netrr
# runs about as many transactions.
#
# Prints, per case, the medians of each tool and their ratio (kbench / reference):
# IOPS and the p50 latency of one IO for blkio/fio; transactions per second and the
# p50 of a whole round trip for netrr/sockperf (sockperf prints half a round trip by
# default: --full-rtt makes it a whole one). Then, for each parameter moved from the
# first case of its group, the direction each tool saw.
set -euo pipefail
cd "$(dirname "$0")/.."
kbench=${1:-target/release/kbench}
rounds=${ROUNDS:-5}
file=${FILE:-/var/tmp/kbench-parity.dat}
ios=${IOS:-20000}
secs=${SECS:-3}
for tool in fio sockperf taskset python3; do
    command -v "$tool" >/dev/null || {
        echo "bench-real.sh: $tool is not installed (scripts/install-packages.sh fio sockperf)" >&2
        exit 2
    }
done
if [[ ! -x $kbench ]]; then
    cargo build --release --locked -q -p kbench
fi
work=$(mktemp -d)
server_pid=""
cleanup() {
    [[ -z $server_pid ]] || kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The file, made by blkio itself (filled with data, not holes).
"$kbench" bench blkio --path "$file" --size 64M --ios 1 --warmup 0 >/dev/null

# Cases: NAME|BLKIO OPTIONS|FIO OPTIONS. Both tools pinned to one CPU, the last: left
# free, where the submitter runs against where the device's interrupt lands moves an
# IO's latency by a third on a two-CPU guest, and fio's forked job and kbench land
# apart.
cpu=$(($(nproc) - 1))
blk_cases=(
    "psync 4k qd1|--engine sync --block-size 4k|--ioengine=psync --bs=4k --iodepth=1"
    "io_uring 4k qd1|--engine io_uring --block-size 4k|--ioengine=io_uring --bs=4k --iodepth=1"
    "io_uring 4k qd8|--engine io_uring --block-size 4k --depth 8|--ioengine=io_uring --bs=4k --iodepth=8"
    "psync 64k qd1|--engine sync --block-size 64k|--ioengine=psync --bs=64k --iodepth=1"
)
# Cases: NAME|SIZE|CLIENT CPU|SERVER CPU
net_cases=(
    "64 B cross-cpu|64|0|1"
    "64 B same-cpu|64|0|0"
    "16 KiB cross-cpu|16384|0|1"
)

# blkio NAME OPTIONS -> "IOPS P50_NS"
run_blkio() {
    "$kbench" bench --format json blkio --path "$file" --ios "$ios" --rw randread --cpu "$cpu" $1 |
        python3 -c '
import json, sys
r = json.load(sys.stdin)
m = {v["name"]: v["value"] for v in r["metrics"]}
print(m["iops"], m["io_latency_p50_ns"])'
}
# fio OPTIONS -> "IOPS P50_NS" (lat_percentiles: submission to completion, as blkio)
run_fio() {
    fio --name=parity --filename="$file" --direct=1 --rw=randread --size=64M \
        --number_ios="$ios" --randrepeat=1 --norandommap --lat_percentiles=1 \
        --cpus_allowed="$cpu" --output-format=json $1 |
        python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]["read"]
print(j["iops"], j["lat_ns"]["percentile"]["50.000000"])'
}
# netrr SIZE CLIENT SERVER -> "TPS P50_NS"
run_netrr() {
    local placement=cross-cpu
    [[ $2 != "$3" ]] || placement=same-cpu
    "$kbench" bench --format json netrr --size "$1" --transactions "$netrr_transactions" \
        --placement "$placement" |
        python3 -c '
import json, sys
r = json.load(sys.stdin)
m = {v["name"]: v["value"] for v in r["metrics"]}
print(m["transactions_per_sec"], m["rr_latency_p50_ns"])'
}
# sockperf SIZE CLIENT SERVER -> "TPS P50_NS", the server restarted on its CPU
run_sockperf() {
    local port=$((20000 + RANDOM % 20000))
    taskset -c "$3" sockperf sr --tcp -i 127.0.0.1 -p "$port" >/dev/null 2>&1 &
    server_pid=$!
    sleep 0.5
    taskset -c "$2" sockperf pp --tcp -i 127.0.0.1 -p "$port" -m "$1" -t "$secs" --full-rtt 2>&1 |
        python3 -c '
import re, sys
text = re.sub(r"\x1b\[[0-9;]*m", "", sys.stdin.read())
valid = re.search(r"\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", text)
p50 = re.search(r"percentile 50\.000 =\s*([0-9.]+)", text)
print(int(valid.group(2)) / float(valid.group(1)), float(p50.group(1)) * 1000)'
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

# About as many transactions as sockperf makes in its time, from one short run.
netrr_transactions=5000
netrr_transactions=$(run_netrr 64 0 1 | awk -v s="$secs" '{n = int($1 * s); print (n < 1000 ? 1000 : n)}')

for round in $(seq 1 "$rounds"); do
    for c in "${blk_cases[@]}"; do
        IFS='|' read -r name kopts fopts <<<"$c"
        if ((round % 2)); then
            echo "$name|kbench|$(run_blkio "$kopts")" >>"$work/blk"
            echo "$name|fio|$(run_fio "$fopts")" >>"$work/blk"
        else
            echo "$name|fio|$(run_fio "$fopts")" >>"$work/blk"
            echo "$name|kbench|$(run_blkio "$kopts")" >>"$work/blk"
        fi
    done
    for c in "${net_cases[@]}"; do
        IFS='|' read -r name size client server <<<"$c"
        if ((round % 2)); then
            echo "$name|kbench|$(run_netrr "$size" "$client" "$server")" >>"$work/net"
            echo "$name|sockperf|$(run_sockperf "$size" "$client" "$server")" >>"$work/net"
        else
            echo "$name|sockperf|$(run_sockperf "$size" "$client" "$server")" >>"$work/net"
            echo "$name|kbench|$(run_netrr "$size" "$client" "$server")" >>"$work/net"
        fi
    done
    echo "bench-real.sh: round $round of $rounds done" >&2
done

python3 - "$work/blk" "$work/net" "$rounds" <<'EOF'
import statistics, sys

def table(path, reference, rate_name):
    cases, values = [], {}
    for line in open(path):
        name, tool, figures = line.rstrip("\n").split("|")
        rate, p50 = map(float, figures.split())
        if name not in cases:
            cases.append(name)
        values.setdefault((name, tool), []).append((rate, p50))
    med = lambda name, tool, i: statistics.median(v[i] for v in values[(name, tool)])
    print(f"{'case':<20} {rate_name + ' kbench':>14} {reference:>10} {'ratio':>6}   "
          f"{'p50 ns kbench':>13} {reference:>10} {'ratio':>6}")
    for name in cases:
        kr, rr = med(name, "kbench", 0), med(name, reference, 0)
        kp, rp = med(name, "kbench", 1), med(name, reference, 1)
        print(f"{name:<20} {kr:>14.0f} {rr:>10.0f} {kr / rr:>6.3f}   {kp:>13.0f} {rp:>10.0f} {kp / rp:>6.3f}")
    first = cases[0]
    for name in cases[1:]:
        for i, what in ((0, rate_name), (1, "p50")):
            k = med(name, "kbench", i) / med(first, "kbench", i) - 1
            r = med(name, reference, i) / med(first, reference, i) - 1
            # A change both tools see as under 10% is within run-to-run noise here:
            # it has no direction to compare.
            if abs(k) < 0.1 and abs(r) < 0.1:
                same = "both under 10%: no direction to compare"
            elif (k > 0) == (r > 0):
                same = "same direction"
            else:
                same = "OPPOSITE DIRECTIONS"
            print(f"  {first} -> {name}, {what}: kbench {k:+.1%}, {reference} {r:+.1%}: {same}")
    print()

rounds = sys.argv[3]
print(f"medians of {rounds} interleaved rounds")
table(sys.argv[1], "fio", "IOPS")
table(sys.argv[2], "sockperf", "tx/s")
EOF
