#!/usr/bin/env bash
# A lab's store at a lab's size, in SQLite and on a private PostgreSQL server
# (scripts/pg-server.sh): MACHINES boards of one type (default 20; one host name and
# CPU model, told apart by their machine ids) x LABELS kernels (300) x BOOTS boots (5)
# x RUNS runs (10) of pipe: 300,000 runs with their values and records. A step of +3%
# is planted on one board (board-07) from the label at two thirds of the history on;
# every other board's history is A/A.
#
# The runs are real: one `kbench run` of RUNS pipe runs here, its session copied once
# a boot (new UUIDs and boot ids, later start times, the board's id), records and all;
# each copy's usecs_per_op is the seed's times a boot effect (1%) and run noise (2%),
# seeded. Prints:
#   - the import into SQLite and `kbench push` to PostgreSQL, in runs a second;
#   - the medians over REPEATS of `list`, `list --machines`, the history of one
#     metric on one board, and `compare` of two labels on one board, from each backend,
#     with PostgreSQL's time over SQLite's;
#   - where each history put its change points (board-07's, and an A/A board's);
#   - MACHINES pushes at once into a fresh database, each of its own share of the
#     labels and its neighbour's (every session pushed twice at once): sessions and
#     runs lost or stored twice.
#
# usage: scripts/bench-history.sh [REPEATS]   (default 3; MACHINES, LABELS, BOOTS,
#        RUNS, KEEP from the environment)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
machines=${MACHINES:-20} labels=${LABELS:-300} boots=${BOOTS:-5} runs=${RUNS:-10}
cargo build --release --locked -q -p kbench
kbench=$PWD/target/release/kbench
work=$(mktemp -d)
chmod 755 "$work"
# KEEP=1 leaves the databases (and the server running) for a closer look.
if [[ -n ${KEEP:-} ]]; then
    trap 'echo "kept: $work (scripts/pg-server.sh stop $work/pg)"' EXIT
else
    trap 'scripts/pg-server.sh stop "$work/pg" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
fi
mkdir -p "$work/pg"
scripts/pg-server.sh start "$work/pg" >/dev/null
# shellcheck disable=SC1091
source "$work/pg/env"
pg_url=$KBENCH_TEST_PG

"$kbench" run --label seed --runs "$runs" --warmup 0 'pipe:-l 2000' --seed 1 --db "$work/seed.db" >/dev/null
"$kbench" export seed --format json --db "$work/seed.db" >"$work/seed.json"
python3 - "$work" "$machines" "$labels" "$boots" <<'PY'
import copy, json, math, random, sys, uuid
work, machines, labels, boots = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(20261204)
seed = json.load(open(f"{work}/seed.json"))
one = seed["sessions"][0]
one["session"]["environment"]["hostname"] = "lab-board"
step_at = labels * 2 // 3
start = one["session"]["started_unix_ns"]
for k in range(labels):
    label = f"k{k + 1:03d}"
    sessions = []
    for m in range(machines):
        board = f"board-{m + 1:02d}"
        for b in range(boots):
            s = copy.deepcopy(one)
            s["session"]["label"] = label
            s["session"]["uuid"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            s["session"]["boot_id"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            s["session"]["started_unix_ns"] = start + ((k * boots + b) * machines + m) * 60_000_000_000
            s["session"]["environment"]["machine_id"] = f"dt:{board}"
            step = 1.03 if board == "board-07" and k >= step_at else 1.0
            boot = math.exp(rng.gauss(0, 0.01)) * step
            for run in s["runs"]:
                for v in run["values"]:
                    if v["metric"] == "usecs_per_op":
                        v["value"] *= boot * math.exp(rng.gauss(0, 0.02))
            sessions.append(s)
    json.dump(dict(seed, label=label, sessions=sessions), open(f"{work}/{label}.json", "w"))
print(f"planted: +3% on board-07 from k{step_at + 1:03d} on")
PY
total_runs=$((machines * labels * boots * runs))
rate() { python3 -c "import sys; print(f'{$total_runs / float(sys.argv[1]):,.0f}')" "$1"; }
import_start=$(date +%s.%N)
for file in "$work"/k*.json; do
    label=$(basename "$file" .json)
    "$kbench" import "$file" --label "$label" --db "$work/lab.db" >/dev/null
done
import_s=$(python3 -c "print(f'{$(date +%s.%N) - $import_start:.1f}')")
echo "imported $machines boards x $labels labels x $boots boots x $runs runs ($total_runs runs) into SQLite in $import_s s: $(rate "$import_s") runs/s"
push_start=$(date +%s.%N)
"$kbench" push --to "$pg_url" --db "$work/lab.db" >/dev/null
push_s=$(python3 -c "print(f'{$(date +%s.%N) - $push_start:.1f}')")
echo "pushed them to PostgreSQL in $push_s s: $(rate "$push_s") runs/s"

python3 - "$kbench" "$work" "$pg_url" "$repeats" "$labels" <<'PY'
import json, statistics, subprocess, sys, time
kbench, work, pg, repeats, labels = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
dbs = {"SQLite": f"{work}/lab.db", "PostgreSQL": pg}
middle = [f"k{labels // 3:03d}", f"k{labels // 3 + 1:03d}"]

def timed(*args):
    start = time.perf_counter()
    out = subprocess.run([kbench, *args], check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, out

history = ["history", "--metric", "usecs_per_op", "--format", "json", "--machine"]
for what, args in [
    ("list", ["list"]),
    ("list --machines", ["list", "--machines"]),
    ("history of usecs_per_op on board-07", history + ["dt:board-07"]),
    ("history of usecs_per_op on board-03", history + ["dt:board-03"]),
    (f"compare {' '.join(middle)} on board-07", ["compare", *middle, "--machine", "dt:board-07", "--format", "json"]),
]:
    medians = {}
    for name, db in dbs.items():
        times, out = [], ""
        for _ in range(repeats):
            t, out = timed(*args, "--db", db)
            times.append(t)
        medians[name] = statistics.median(times)
        print(f"{what}, {name}: {medians[name]:.2f} s (median of {repeats})")
        if what.startswith("history"):
            h = json.loads(out)["histories"][0]
            changes = [(c["before"], c["after"], round(c["step"]["change_pct"], 2)) for c in h["changes"]]
            print(f"  {h['machine']}: {len(h['labels'])} labels, {h['level']}s as units; change points: {changes}")
    print(f"  PostgreSQL / SQLite: {medians['PostgreSQL'] / medians['SQLite']:.2f}")
PY

# MACHINES pushes at once into a fresh database: pusher i pushes the i-th share of the
# labels and the next share, so every session is pushed by two pushers at once.
psql -q "$pg_url" -c "CREATE DATABASE lab_at_once" >/dev/null
at_once=${pg_url%/*}/lab_at_once
mapfile -t all_labels < <(seq -f 'k%03g' 1 "$labels")
share=$(((labels + machines - 1) / machines))
pids=()
at_once_start=$(date +%s.%N)
for ((i = 0; i < machines; i++)); do
    mine=("${all_labels[@]:$((i * share)):share}")
    next=("${all_labels[@]:$((((i + 1) % machines) * share)):share}")
    "$kbench" push "${mine[@]}" "${next[@]}" --to "$at_once" --db "$work/lab.db" >"$work/push-$i.log" 2>&1 &
    pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
at_once_s=$(python3 -c "print(f'{$(date +%s.%N) - $at_once_start:.1f}')")
count() { psql -tA "$1" -c "$2"; }
sessions_there=$(count "$at_once" "SELECT count(*) FROM sessions")
distinct_there=$(count "$at_once" "SELECT count(DISTINCT uuid) FROM sessions")
runs_there=$(count "$at_once" "SELECT count(*) FROM runs")
sessions_here=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM sessions').fetchone()[0])" "$work/lab.db")
echo "$machines pushes at once, each session pushed twice: $at_once_s s, $failed pushes failed;" \
    "$sessions_there sessions stored ($distinct_there distinct) of $sessions_here, $runs_there runs of $total_runs"
