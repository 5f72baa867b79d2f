//! The suites kbench runs when none is named: each is a list of workload specs.

/// The default suite: perf's three sched benchmarks, idle-CPU wakeup latency and IPI
/// cost, sized for about ten minutes on two cores (about one with `--quick`).
///
/// pipe and seccomp-notify run with their tasks pinned: left free, a run lands on one
/// CPU (a context switch per round trip) or on two (a cross-CPU wakeup, often an IPI
/// and an idle exit), several times slower, and the mix of the two swamps any change.
/// Cross-CPU is the path wakeups and IPIs take, so both measure it; pipe on one CPU
/// is the second spec, the context-switch path alone.
pub const SUITE: &[&str] = &[
    "messaging:-g 10 -l 100",
    "pipe:-l 100000 --placement cross-cpu",
    "pipe:-l 100000 --placement same-cpu",
    "seccomp-notify:-l 100000 --placement cross-cpu",
    "wakeup:--wakes 1000",
    "ipi:--iterations 20000",
];
pub const QUICK_SUITE: &[&str] = &[
    "messaging:-g 4 -l 50",
    "pipe:-l 20000 --placement cross-cpu",
    "pipe:-l 20000 --placement same-cpu",
    "seccomp-notify:-l 20000 --placement cross-cpu",
    "wakeup:--wakes 300 --gap-us 1000",
    "ipi:--iterations 5000",
];
/// `--real`: work that takes device interrupts and crosses the network stack, next
/// to which a micro-benchmark's change can be weighed (docs/real-workloads.md).
/// blkio reads its file in /var/tmp (on a disk: O_DIRECT); netrr runs its two
/// processes on two CPUs, the path of a wakeup across CPUs.
pub const REAL_SUITE: &[&str] = &[
    "blkio:--ios 20000",
    "netrr:--transactions 20000 --placement cross-cpu",
];
pub const QUICK_REAL_SUITE: &[&str] = &[
    "blkio:--ios 5000",
    "netrr:--transactions 5000 --placement cross-cpu",
];
/// `--real` in a guest: sized for boots under TCG, where an IO takes ten times longer.
pub const GUEST_REAL_SUITE: &[&str] = &[
    "blkio:--path /dev/vda --ios 2000 --warmup 100",
    "netrr:--transactions 2000 --warmup 100 --placement cross-cpu",
];
