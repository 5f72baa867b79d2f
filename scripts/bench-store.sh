#!/usr/bin/env bash
# The shared store's figures, on a private PostgreSQL server (scripts/pg-server.sh)
# beside an SQLite file on the same disk:
#   - `kbench push` of 10,000 runs (100 sessions of 100) into an empty PostgreSQL
#     database, and into an empty SQLite file for scale;
#   - `kbench compare` of two labels of 10,000 runs each, read from PostgreSQL and
#     from SQLite, the two interleaved.
# The runs are real: one `kbench run` of 100 pipe runs here, its sessions copied
# 100 times a label (new UUIDs, later start times), records and all.
# Prints each timing's median over REPEATS and the PostgreSQL/SQLite ratios.
#
# usage: scripts/bench-store.sh [REPEATS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-5}
cargo build --release --locked -q -p kbench
kbench=$PWD/target/release/kbench
work=$(mktemp -d)
chmod 755 "$work"
trap 'scripts/pg-server.sh stop "$work/pg" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$work/pg"
scripts/pg-server.sh start "$work/pg" >/dev/null
# shellcheck disable=SC1091
source "$work/pg/env"

"$kbench" run --label seed --runs 100 --warmup 0 'pipe:-l 2000' --seed 1 --db "$work/seed.db" >/dev/null
"$kbench" export seed --format json --db "$work/seed.db" >"$work/seed.json"
python3 - "$work" <<'PY'
import copy, json, sys, uuid
work = sys.argv[1]
seed = json.load(open(f"{work}/seed.json"))
one = seed["sessions"][0]
for label in ("base", "new"):
    sessions = []
    for i in range(100):
        s = copy.deepcopy(one)
        s["session"]["label"] = label
        s["session"]["uuid"] = str(uuid.uuid4())
        s["session"]["started_unix_ns"] += i * 1_000_000_000 + (label == "new")
        sessions.append(s)
    json.dump(dict(seed, label=label, sessions=sessions), open(f"{work}/{label}.json", "w"))
PY
"$kbench" import "$work/base.json" --label base --db "$work/local.db" >/dev/null
"$kbench" import "$work/new.json" --label new --db "$work/local.db" >/dev/null
pg_url=$KBENCH_TEST_PG
"$kbench" push base new --to "$(dirname "$pg_url")/postgres" --db "$work/local.db" >/dev/null

python3 - "$kbench" "$work" "$pg_url" "$repeats" <<'PY'
import statistics, subprocess, sys, time
kbench, work, pg, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
server = pg.rsplit("/", 1)[0]

def timed(*args):
    start = time.perf_counter()
    subprocess.run([kbench, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start

def psql(sql):
    subprocess.run(["psql", "-q", "-d", pg, "-c", sql], check=True, stdout=subprocess.DEVNULL)

push_pg, push_sqlite, compare_pg, compare_sqlite = [], [], [], []
for i in range(repeats):
    psql(f"DROP DATABASE IF EXISTS push_{i} WITH (FORCE)")
    psql(f"CREATE DATABASE push_{i}")
    push_pg.append(timed("push", "base", "--to", f"{server}/push_{i}", "--db", f"{work}/local.db"))
    push_sqlite.append(timed("push", "base", "--to", f"{work}/push_{i}.db", "--db", f"{work}/local.db"))
# The compares after every push: the server's own work after a bulk load (autovacuum,
# the checkpointer) is no part of a read.
psql("CHECKPOINT")
for i in range(repeats):
    compare_pg.append(timed("compare", "base", "new", "--db", pg))
    compare_sqlite.append(timed("compare", "base", "new", "--db", f"{work}/local.db"))

def line(what, pg_times, sqlite_times):
    p, s = statistics.median(pg_times), statistics.median(sqlite_times)
    print(f"{what}: PostgreSQL {p:.3f} s, SQLite {s:.3f} s (medians of {repeats}); ratio {p / s:.2f}")

line("push 10,000 runs (100 sessions)", push_pg, push_sqlite)
line("compare 2 x 10,000 runs", compare_pg, compare_sqlite)
PY
