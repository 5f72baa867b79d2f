//! CLOCK_MONOTONIC in nanoseconds, read through the vDSO, and the waits built on it.
use rustix::time::{ClockId, Timespec};

/// CLOCK_MONOTONIC now, in ns: the same timeline on every CPU, tens of ns per read when
/// the clocksource is vDSO-capable (x86 `tsc`, arm64 `arch_sys_counter`).
#[inline]
pub fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(ClockId::Monotonic);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

/// Busy-waits until CLOCK_MONOTONIC reaches `deadline_ns`.
#[inline]
pub fn spin_until_ns(deadline_ns: u64) {
    while now_ns() < deadline_ns {
        std::hint::spin_loop();
    }
}

/// Sleeps until CLOCK_MONOTONIC reaches `deadline_ns` (absolute, so signals and early
/// returns do not stretch the schedule). Returns at once if it is already past.
pub fn sleep_until_ns(deadline_ns: u64) {
    let request = Timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as _,
        tv_nsec: (deadline_ns % 1_000_000_000) as _,
    };
    while now_ns() < deadline_ns {
        if rustix::thread::clock_nanosleep_absolute(ClockId::Monotonic, &request).is_ok() {
            break;
        }
    }
}

/// The median cost of one clock read, from back-to-back reads (like `cyclictest -R`).
pub fn read_cost_ns() -> u64 {
    const READS: usize = 1001;
    let mut deltas: Vec<u64> = (0..READS)
        .map(|_| {
            let a = now_ns();
            now_ns().saturating_sub(a)
        })
        .collect();
    deltas.sort_unstable();
    deltas[READS / 2]
}

/// The current clocksource (`tsc`, `hpet`, `arch_sys_counter`), if readable. A non-vDSO
/// one (`hpet`, `acpi_pm`) makes every read a syscall and sub-us results meaningless.
pub fn clocksource() -> Option<String> {
    kbench_sys::Sysroot::from_env()
        .read_trimmed("/sys/devices/system/clocksource/clocksource0/current_clocksource")
}

/// Voluntary context switches of the calling thread so far (`getrusage(RUSAGE_THREAD)`):
/// one more after a blocking call proves the thread really slept.
pub fn thread_voluntary_switches() -> u64 {
    // SAFETY: rusage is plain data, all-zero is valid; getrusage writes it in full for
    // RUSAGE_THREAD and reads nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
        usage
    };
    u64::try_from(usage.ru_nvcsw).unwrap_or(0)
}
