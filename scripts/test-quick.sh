#!/usr/bin/env bash
# The inner loop, for use while working: every test with the toolchain alone, in a
# minute or two after a build, but the kernel boots (group qemu) and the A/A
# experiment on real sessions (replication_cli, a minute and a half by itself:
# `cargo nextest run -p kbench --test replication_cli`). Tests that need a Debian
# package (perf, strace, PostgreSQL, Chromium) run where it is installed and skip
# where it is not. scripts/test.sh, which CI runs, runs everything. Arguments go to
# nextest (`scripts/test-quick.sh -p kbench-stats`).
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo nextest run --locked --workspace -E 'not (group(qemu) | binary(replication_cli))' "$@"
