#!/usr/bin/env bash
# What a booted A/B costs per boot under this machine's qemu: the initramfs's size,
# then `kbench vm-ab` with Debian's 6.1 and 6.12 cloud kernels, once with a suite of
# one pipe loop (as near empty as a suite gets: one run, no warm-up) and once with
# --quick. Per boot, from the host's clock and the guest's /proc/uptime (both stored
# with each boot's session):
#
#   kernel  uptime at /init: the kernel's own boot, not kbench's
#   setup   /init to the first run: mounts, environment, governor, BEGIN
#   suite   the runs
#   after   the last run to the results sent (END)
#   qemu    qemu's start to its exit, as the host timed it
#
# kbench's own overhead per boot is setup + after. Under TCG every figure is an
# emulator's, not the kernel's speed. Not a test: read medians.
#
# usage: scripts/bench-boot.sh [BOOTS_A_SIDE]   (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
boots=${1:-2}
bin=$PWD/$(scripts/build-static.sh)
cache=$(scripts/fetch-kernels.sh)
kernel_a=$(compgen -G "$cache/linux-image-6.1.0-*_amd64.deb" | sort -V | tail -n 1)
kernel_b=$(compgen -G "$cache/linux-image-6.12.*_amd64.deb" | sort -V | tail -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin" initramfs -o "$work/initramfs.gz"
"$bin" initramfs --compress none -o "$work/initramfs.cpio"
printf 'initramfs: %s bytes gzip, %s bytes uncompressed (kbench %s bytes)\n' \
    "$(stat -c %s "$work/initramfs.gz")" "$(stat -c %s "$work/initramfs.cpio")" \
    "$(stat -c %s "$bin")"

boot_suite() {
    local name=$1
    shift
    if ! "$bin" vm-ab --db "$work/$name.db" --init "$bin" --accel tcg \
        --kernel-a "$kernel_a" --kernel-b "$kernel_b" --label-a a --label-b b \
        --boots "$boots" "$@" >"$work/$name.out" 2>"$work/$name.err"; then
        echo "bench-boot: vm-ab ($name) failed:" >&2
        tail -n 5 "$work/$name.err" >&2
        exit 1
    fi
    python3 - "$work/$name.db" "$name" <<'EOF'
import json, sqlite3, statistics, sys
db, name = sys.argv[1], sys.argv[2]
rows = []
for (env,) in sqlite3.connect(db).execute(
        "SELECT environment FROM sessions WHERE kind = 'vm-ab' ORDER BY id"):
    env = json.loads(env)
    up = env.get("vm_uptime_s") or {}
    try:
        rows.append({
            "kernel": up["init"],
            "setup": up["suite_start"] - up["init"],
            "suite": up["suite_end"] - up["suite_start"],
            "after": up["results"] - up["suite_end"],
            "qemu": env["vm_qemu_wall_s"],
        })
    except (KeyError, TypeError):
        print(f"{name}: a boot without its uptimes (failed?)", file=sys.stderr)
cols = ["kernel", "setup", "suite", "after", "qemu"]
print(f"\n{name}: {len(rows)} boots, seconds")
print("  boot " + "".join(f"{c:>9}" for c in cols) + "  overhead")
for i, r in enumerate(rows, 1):
    print(f"  {i:>4} " + "".join(f"{r[c]:9.3f}" for c in cols)
          + f"  {r['setup'] + r['after']:8.3f}")
if rows:
    med = {c: statistics.median(r[c] for r in rows) for c in cols}
    over = statistics.median(r["setup"] + r["after"] for r in rows)
    print("  med  " + "".join(f"{med[c]:9.3f}" for c in cols) + f"  {over:8.3f}")
EOF
}

boot_suite one-loop --suite 'pipe:-l 1' --runs 1 --kernel-arg kbench.warmup=0
boot_suite quick --quick --runs 1
