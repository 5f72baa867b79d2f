#!/usr/bin/env bash
# `kbench history` and `kbench list` on a lab-sized history of one machine, from SQLite
# and from a private PostgreSQL server (scripts/pg-server.sh):
#   LABELS kernels (default 300) x BOOTS boots (5) x RUNS runs (10) of pipe, with a
#   step of +3% planted from the label at two thirds of the history on.
# The runs are real: one `kbench run` of RUNS pipe runs here, its session copied once
# a boot (new UUIDs and boot ids, later start times), records and all; each copy's
# usecs_per_op is the seed's times a boot effect (1%) and run noise (2%), seeded.
# Prints each timing's median over REPEATS and where history put the change.
#
# usage: scripts/bench-history.sh [REPEATS]   (default 3; LABELS, BOOTS, RUNS from the
#        environment)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
labels=${LABELS:-300} boots=${BOOTS:-5} runs=${RUNS:-10}
cargo build --release --locked -q -p kbench
kbench=$PWD/target/release/kbench
work=$(mktemp -d)
chmod 755 "$work"
trap 'scripts/pg-server.sh stop "$work/pg" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$work/pg"
scripts/pg-server.sh start "$work/pg" >/dev/null
# shellcheck disable=SC1091
source "$work/pg/env"

"$kbench" run --label seed --runs "$runs" --warmup 0 'pipe:-l 2000' --seed 1 --db "$work/seed.db" >/dev/null
"$kbench" export seed --format json --db "$work/seed.db" >"$work/seed.json"
python3 - "$work" "$labels" "$boots" <<'PY'
import copy, json, math, random, sys, uuid
work, labels, boots = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(20261203)
seed = json.load(open(f"{work}/seed.json"))
one = seed["sessions"][0]
step_at = labels * 2 // 3
start = one["session"]["started_unix_ns"]
for k in range(labels):
    label = f"k{k + 1:03d}"
    sessions = []
    for b in range(boots):
        s = copy.deepcopy(one)
        s["session"]["label"] = label
        s["session"]["uuid"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        s["session"]["boot_id"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        s["session"]["started_unix_ns"] = start + (k * boots + b) * 60_000_000_000
        boot = math.exp(rng.gauss(0, 0.01)) * (1.03 if k >= step_at else 1.0)
        for run in s["runs"]:
            for v in run["values"]:
                if v["metric"] == "usecs_per_op":
                    v["value"] *= boot * math.exp(rng.gauss(0, 0.02))
        sessions.append(s)
    json.dump(dict(seed, label=label, sessions=sessions), open(f"{work}/{label}.json", "w"))
print(f"planted: +3% from k{step_at + 1:03d} on")
PY
import_start=$SECONDS
for file in "$work"/k*.json; do
    label=$(basename "$file" .json)
    "$kbench" import "$file" --label "$label" --db "$work/lab.db" >/dev/null
done
echo "imported $labels labels x $boots boots x $runs runs into SQLite in $((SECONDS - import_start)) s"
pg_url=$KBENCH_TEST_PG
push_start=$SECONDS
"$kbench" push --to "$pg_url" --db "$work/lab.db" >/dev/null
echo "pushed them to PostgreSQL in $((SECONDS - push_start)) s"

python3 - "$kbench" "$work" "$pg_url" "$repeats" <<'PY'
import json, statistics, subprocess, sys, time
kbench, work, pg, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
dbs = {"SQLite": f"{work}/lab.db", "PostgreSQL": pg}

def timed(*args):
    start = time.perf_counter()
    out = subprocess.run([kbench, *args], check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, out

for what, args in [
    ("list", ["list"]),
    ("history of usecs_per_op", ["history", "--metric", "usecs_per_op", "--format", "json"]),
]:
    for name, db in dbs.items():
        times, out = [], ""
        for _ in range(repeats):
            t, out = timed(*args, "--db", db)
            times.append(t)
        print(f"{what}, {name}: {statistics.median(times):.2f} s (median of {repeats})")
        if what.startswith("history"):
            h = json.loads(out)["histories"][0]
            changes = [(c["before"], c["after"], round(c["step"]["change_pct"], 2)) for c in h["changes"]]
            print(f"  {len(h['labels'])} labels, {h['level']}s as units; change points: {changes}")
PY
