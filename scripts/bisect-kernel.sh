#!/usr/bin/env bash
# The worked example of docs/bisect.md: `kbench bisect` of a real kernel, built.
#
# Debian's linux-source-6.1 becomes the first commit of a short history; the next
# commit adds a small x86-64 configuration (tinyconfig plus what kbench's guest needs);
# then seven commits, one of which slows pipe_write on purpose (a 30 µs busy wait per
# write). `kbench bisect` builds each candidate it asks for (incrementally, in its own
# worktree) and boots it under qemu with kbench as /init, and must name that commit.
# Prints kbench's answer and where the time went.
#
#   scripts/bisect-kernel.sh [WORK_DIR]    # default: a new directory under /tmp, kept
#
# KBENCH names the kbench to run (default: scripts/build-static.sh's release build),
# KBENCH_INIT the static one to boot as /init (default: KBENCH), KBENCH_CLOCK the
# boots' clock: `wall` (default) or `instructions` (counted boots, TCG's icount:
# docs/vm-ab.md). Run again with the same WORK_DIR, it resumes the bisection.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${1:-$(mktemp -d /tmp/kbench-bisect-kernel.XXXXXX)}
mkdir -p "$work"
log() { echo "bisect-kernel: $*" >&2; }

scripts/install-packages.sh linux-source-6.1 build-essential flex bison bc libelf-dev \
    libssl-dev cpio git qemu-system-x86 xz-utils
kbench=${KBENCH:-$root/$(scripts/build-static.sh)}
init=${KBENCH_INIT:-$kbench}
tree=$work/linux

start=$SECONDS
if [[ ! -d $tree/.git ]]; then
    log "unpacking /usr/src/linux-source-6.1.tar.xz into $tree"
    rm -rf "$tree"
    mkdir -p "$tree"
    tar -xaf /usr/src/linux-source-6.1.tar.xz -C "$tree" --strip-components=1
    # Debian's .gitignore ignores everything at the top level (its packaging keeps the
    # source elsewhere); a kernel tree's own rules are the ones above that block.
    sed -i '/^# Debian packaging/,$d' "$tree/.gitignore"
    git -C "$tree" init -q -b main
    git -C "$tree" config user.email bisect@example.org
    git -C "$tree" config user.name "kbench bisect-kernel.sh"
    git -C "$tree" add -A
    git -C "$tree" commit -q -m "Debian linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1)"

    # What kbench's guest needs on top of tinyconfig: a 64-bit SMP kernel that finds
    # its other CPUs (MP tables, IO-APIC, ACPI, which also powers qemu off), the
    # serial console, an initramfs (gzip), ELF binaries, proc, sysfs, devtmpfs, tmpfs,
    # the syscalls the workloads make (futex, epoll, eventfd, timerfd, seccomp with
    # user notification, membarrier, Unix sockets), /proc/config.gz, and software perf
    # events.
    cat >"$tree/kbench.config" <<'EOF'
CONFIG_64BIT=y
CONFIG_SMP=y
CONFIG_NR_CPUS=8
CONFIG_X86_MPPARSE=y
CONFIG_X86_LOCAL_APIC=y
CONFIG_X86_IO_APIC=y
CONFIG_PCI=y
CONFIG_ACPI=y
CONFIG_PRINTK=y
CONFIG_TTY=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_RD_GZIP=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_PROC_FS=y
CONFIG_PROC_SYSCTL=y
CONFIG_SYSFS=y
CONFIG_DEVTMPFS=y
CONFIG_DEVTMPFS_MOUNT=y
CONFIG_TMPFS=y
CONFIG_MULTIUSER=y
CONFIG_FUTEX=y
CONFIG_EPOLL=y
CONFIG_EVENTFD=y
CONFIG_SIGNALFD=y
CONFIG_TIMERFD=y
CONFIG_POSIX_TIMERS=y
CONFIG_HIGH_RES_TIMERS=y
CONFIG_SECCOMP=y
CONFIG_SECCOMP_FILTER=y
CONFIG_MEMBARRIER=y
CONFIG_NET=y
CONFIG_UNIX=y
CONFIG_PERF_EVENTS=y
CONFIG_IKCONFIG=y
CONFIG_IKCONFIG_PROC=y
CONFIG_UNWINDER_FRAME_POINTER=y
EOF
    git -C "$tree" add kbench.config
    git -C "$tree" commit -q -m "kbench: a small configuration for the guest"

    # Seven commits; the fourth slows every pipe write.
    for i in 1 2 3 4 5 6 7; do
        if [[ $i == 4 ]]; then
            python3 - "$tree/fs/pipe.c" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
anchor = "\tbool wake_next_writer = false;\n\n"
assert anchor in text, "pipe_write's declarations moved"
text = text.replace(anchor, anchor + "\tudelay(30);\t/* kbench's planted slowdown */\n\n", 1)
if "#include <linux/delay.h>" not in text:
    text = text.replace("#include <linux/mm.h>\n", "#include <linux/mm.h>\n#include <linux/delay.h>\n", 1)
open(path, "w").write(text)
PY
            git -C "$tree" commit -q -am "pipe: wait 30 us in every write"
        else
            # A comment in a file every build compiles: each build is incremental
            # but not empty.
            echo "/* kbench bisect-kernel.sh: commit $i */" >>"$tree/kernel/sched/core.c"
            git -C "$tree" commit -q -am "sched: note $i"
        fi
    done
fi
log "history ready in $((SECONDS - start)) s: $(git -C "$tree" rev-list --count HEAD) commits"

build='make -s tinyconfig >/dev/null &&
    ./scripts/kconfig/merge_config.sh -m .config kbench.config >/dev/null &&
    make -s olddefconfig >/dev/null &&
    make -s -j"$(nproc)" bzImage &&
    cp arch/x86/boot/bzImage "$KBENCH_OUT/image"'
db=$work/bisect.db
# random.trust_cpu=on: this kernel has no other early entropy, and the guest's
# getrandom (a session's UUID) would block until the pool fills, minutes under TCG.
# Counted, one vCPU: a 6.1 kernel under qemu 7.2's icount hangs bringing up its second
# CPU (docs/vm-ab.md), and pipe on one CPU needs no other.
clock=${KBENCH_CLOCK:-wall}
smp=()
[[ $clock == instructions ]] && smp=(--smp 1)
args=(--tree "$tree" --db "$db" --init "$init" --accel tcg --exit-timeout 2
    --kernel-arg random.trust_cpu=on --clock "$clock" "${smp[@]}"
    --suite 'pipe:-l 2000 --placement same-cpu' --runs 3)
if [[ -f $db ]]; then
    "$kbench" bisect --resume "${args[@]}"
else
    "$kbench" bisect --good main~7 --bad main --build "$build" "${args[@]}"
fi
log "whole run: $((SECONDS - start)) s; builds and their logs in $tree/.git/kbench-bisect"
