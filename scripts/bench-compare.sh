#!/usr/bin/env bash
# How long `kbench compare` takes on two labels of 10,000 runs each (two metrics a
# run: 20,000 values a side), on a real database. Prints the median of 5 timings.
#
# usage: scripts/bench-compare.sh [RUNS_PER_LABEL]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000}
cargo build --release --locked -q
kbench=$PWD/target/release/kbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KBENCH_DB=$work/bench.db

# Two labels of lognormal noise, B 2% slower, as kbench exports (seeded).
python3 - "$work" "$runs" <<'PY'
import json, random, sys
work, runs = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261130)
for label, center in (("base", 10.0), ("new", 10.2)):
    records = [{
        "workload": "sched/pipe", "params": {"loop": 100000}, "variant": "symmetric",
        "run_index": i, "warmup": False, "exit_status": 0, "cpus_used": "0-1",
        "values": [
            {"metric": "usecs_per_op", "value": center * rng.lognormvariate(0, 0.02), "unit": "us/op", "higher_is_better": False},
            {"metric": "csw_per_op", "value": 1.0 + rng.random() * 0.01, "unit": "csw/op", "higher_is_better": False},
        ],
    } for i in range(runs)]
    export = {"format": "kbench-export", "version": 1, "label": label, "sessions": [{
        "session": {"label": label, "kind": "run", "boot_id": "b", "started_unix_ns": 1,
                    "kbench_version": "bench", "command_line": "bench", "seed": 1,
                    "environment": None, "source": None},
        "ended_unix_ns": 2, "runs": records, "summaries": []}]}
    json.dump(export, open(f"{work}/{label}.json", "w"))
PY
"$kbench" import "$work/base.json" --label base >/dev/null
"$kbench" import "$work/new.json" --label new >/dev/null

times=()
for _ in 1 2 3 4 5; do
    start=$(date +%s%N)
    "$kbench" compare base new >/dev/null
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000000 )))
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n | tr '\n' ' ')
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
echo "kbench compare, 2 labels x $runs runs x 2 metrics: median ${median} ms (all: ${sorted}ms)"
"$kbench" compare base new | sed -n '3,6p'
