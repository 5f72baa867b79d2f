//! Per-task scheduler counters from `/proc/PID/task/TID/sched` (CONFIG_SCHED_DEBUG).
use crate::Sysroot;
use serde::{Deserialize, Serialize};

/// The counters kbench checks after a run: did the task migrate, did it really sleep?
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedStats {
    /// `se.nr_migrations`: times the task moved to another CPU.
    pub nr_migrations: Option<u64>,
    /// `nr_switches`.
    pub nr_switches: Option<u64>,
    /// `nr_voluntary_switches`: the task blocked.
    pub nr_voluntary_switches: Option<u64>,
    /// `nr_involuntary_switches`: the task was preempted.
    pub nr_involuntary_switches: Option<u64>,
}

impl SchedStats {
    /// Parses the text of a `sched` file (`key : value` lines under a header).
    pub fn parse(text: &str) -> SchedStats {
        let mut stats = SchedStats::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value: Option<u64> = value.trim().parse().ok();
            match key.trim() {
                "se.nr_migrations" => stats.nr_migrations = value,
                "nr_switches" => stats.nr_switches = value,
                "nr_voluntary_switches" => stats.nr_voluntary_switches = value,
                "nr_involuntary_switches" => stats.nr_involuntary_switches = value,
                _ => {}
            }
        }
        stats
    }

    /// Reads the counters of thread `tid` of process `pid` under the root: from
    /// `/proc/PID/task/TID/sched`, else `/proc/PID/sched` when `tid == pid`. `None` when the
    /// kernel has no sched debug files or the task is gone.
    pub fn read(root: &Sysroot, pid: u32, tid: u32) -> Option<SchedStats> {
        let text = root
            .read(&format!("/proc/{pid}/task/{tid}/sched"))
            .or_else(|| (pid == tid).then(|| root.read(&format!("/proc/{pid}/sched")))?)?;
        Some(SchedStats::parse(&text))
    }
}

/// `se.nr_migrations` of a thread, read under [`Sysroot::from_env`]; `None` where the kernel
/// does not expose it.
pub fn nr_migrations(pid: u32, tid: u32) -> Option<u64> {
    SchedStats::read(&Sysroot::from_env(), pid, tid)?.nr_migrations
}
