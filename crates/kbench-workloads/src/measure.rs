//! The timed region and the resource usage around it.
use crate::record::RusageDelta;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Both clocks read together: CLOCK_MONOTONIC for the duration (perf uses
/// gettimeofday, which can jump), CLOCK_REALTIME for the record's timestamps.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    started: Instant,
    start_unix_ns: u64,
}

/// A finished stopwatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed {
    pub total_ns: u64,
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
}

impl Stopwatch {
    pub fn start() -> Self {
        Self {
            started: Instant::now(),
            start_unix_ns: unix_now_ns(),
        }
    }

    pub fn stop(&self) -> Elapsed {
        let total_ns = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        Elapsed {
            total_ns,
            start_unix_ns: self.start_unix_ns,
            end_unix_ns: unix_now_ns(),
        }
    }
}

/// CLOCK_REALTIME in nanoseconds since the epoch (0 before 1970, saturating in 2554).
pub fn unix_now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// `getrusage` of the process (all its threads) and of its reaped children.
#[derive(Debug, Clone, Copy)]
pub struct UsageSnapshot {
    own: libc::rusage,
    children: libc::rusage,
}

impl UsageSnapshot {
    pub fn take() -> Self {
        Self {
            own: getrusage(libc::RUSAGE_SELF),
            children: getrusage(libc::RUSAGE_CHILDREN),
        }
    }

    /// What happened between `self` and `later`.
    pub fn delta_to(&self, later: &UsageSnapshot) -> RusageDelta {
        let diff = |a: libc::c_long, b: libc::c_long| u64::try_from(b - a).unwrap_or(0);
        let user = total_us(&later.own, user_time) + total_us(&later.children, user_time)
            - total_us(&self.own, user_time)
            - total_us(&self.children, user_time);
        let sys = total_us(&later.own, sys_time) + total_us(&later.children, sys_time)
            - total_us(&self.own, sys_time)
            - total_us(&self.children, sys_time);
        RusageDelta {
            self_voluntary_csw: diff(self.own.ru_nvcsw, later.own.ru_nvcsw),
            self_involuntary_csw: diff(self.own.ru_nivcsw, later.own.ru_nivcsw),
            children_voluntary_csw: diff(self.children.ru_nvcsw, later.children.ru_nvcsw),
            children_involuntary_csw: diff(self.children.ru_nivcsw, later.children.ru_nivcsw),
            user_us: u64::try_from(user).unwrap_or(0),
            sys_us: u64::try_from(sys).unwrap_or(0),
        }
    }
}

fn user_time(r: &libc::rusage) -> libc::timeval {
    r.ru_utime
}

fn sys_time(r: &libc::rusage) -> libc::timeval {
    r.ru_stime
}

fn total_us(r: &libc::rusage, field: fn(&libc::rusage) -> libc::timeval) -> i64 {
    let t = field(r);
    t.tv_sec * 1_000_000 + t.tv_usec
}

fn getrusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: rusage is plain data; getrusage writes it in full for a valid `who`.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    }
}

/// A timed region with what is read around it, each outside what it must not see:
/// rusage and `/proc/interrupts` (file reads) outside the counters, the counters'
/// enabling and disabling outside the clock.
pub struct TimedRegion<'c> {
    usage_before: UsageSnapshot,
    interrupts: crate::ipiaccount::IpiWindow,
    counters: &'c mut crate::counters::RunCounters,
    stopwatch: Stopwatch,
}

/// What a [`TimedRegion`] measured.
pub struct RegionEnd {
    pub elapsed: Elapsed,
    pub usage: RusageDelta,
    pub interrupts: crate::ipiaccount::ClosedIpiWindow,
}

impl<'c> TimedRegion<'c> {
    /// Reads rusage and `/proc/interrupts`, enables the counters, starts the clock.
    pub fn start(counters: &'c mut crate::counters::RunCounters) -> Self {
        let usage_before = UsageSnapshot::take();
        let interrupts = crate::ipiaccount::IpiWindow::open();
        counters.start();
        TimedRegion {
            usage_before,
            interrupts,
            counters,
            stopwatch: Stopwatch::start(),
        }
    }

    /// Stops the clock, disables the counters, reads `/proc/interrupts` and rusage.
    pub fn stop(self) -> RegionEnd {
        let elapsed = self.stopwatch.stop();
        self.counters.stop();
        let interrupts = self.interrupts.close();
        RegionEnd {
            elapsed,
            usage: self.usage_before.delta_to(&UsageSnapshot::take()),
            interrupts,
        }
    }
}
