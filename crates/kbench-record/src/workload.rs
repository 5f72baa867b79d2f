//! The workloads kbench reads records of by meaning: which figure was primary before
//! runs declared it, which event a workload measures by definition, which cost a
//! workload's runs measure. A record keeps its workload as text (`sched/pipe`, `ab`,
//! whatever an importer read); the text is turned into a [`WorkloadId`] here, once.
use std::fmt;

/// A workload kbench knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkloadId {
    /// `perf bench sched messaging`.
    Messaging,
    /// `perf bench sched pipe`.
    Pipe,
    /// `perf bench sched seccomp-notify`.
    SeccompNotify,
    /// kbench's wakeup latency.
    Wakeup,
    /// kbench's IPI round trip.
    Ipi,
    /// kbench's O_DIRECT IO on a file or device: a real workload.
    Blkio,
    /// kbench's TCP request/response: a real workload.
    Netrr,
    /// A command timed as a whole (`exec`, hyperfine's runs).
    Command,
    /// perf bench's simple format, which does not say which benchmark printed it.
    Unknown,
}

impl WorkloadId {
    pub const ALL: [WorkloadId; 9] = [
        WorkloadId::Messaging,
        WorkloadId::Pipe,
        WorkloadId::SeccompNotify,
        WorkloadId::Wakeup,
        WorkloadId::Ipi,
        WorkloadId::Blkio,
        WorkloadId::Netrr,
        WorkloadId::Command,
        WorkloadId::Unknown,
    ];

    /// The name records carry: `collection/name` for a benchmark.
    pub fn key(self) -> &'static str {
        match self {
            WorkloadId::Messaging => "sched/messaging",
            WorkloadId::Pipe => "sched/pipe",
            WorkloadId::SeccompNotify => "sched/seccomp-notify",
            WorkloadId::Wakeup => "sched/wakeup",
            WorkloadId::Ipi => "ipi/ipi",
            WorkloadId::Blkio => "blkio/blkio",
            WorkloadId::Netrr => "netrr/netrr",
            WorkloadId::Command => "command",
            WorkloadId::Unknown => "unknown",
        }
    }

    /// The workload a record's name means, if kbench knows it.
    pub fn of(key: &str) -> Option<WorkloadId> {
        WorkloadId::ALL.into_iter().find(|w| w.key() == key)
    }

    /// Whether it is real work (device IO, network transactions, a build) rather
    /// than a micro-benchmark of one kernel path: `compare` carries the micro
    /// results' changes over to these.
    pub fn is_real(self) -> bool {
        matches!(self, WorkloadId::Blkio | WorkloadId::Netrr)
    }

    /// The metric that was primary before runs declared one.
    pub fn legacy_primary_metric(self) -> &'static str {
        match self {
            WorkloadId::Pipe | WorkloadId::SeccompNotify => "usecs_per_op",
            WorkloadId::Messaging | WorkloadId::Unknown => "total_sec",
            WorkloadId::Wakeup => "wake_latency_p50_ns",
            WorkloadId::Ipi => "ipi_round_trip_p50_ns",
            WorkloadId::Blkio => "io_latency_p50_ns",
            WorkloadId::Netrr => "rr_latency_p50_ns",
            WorkloadId::Command => "wall_sec",
        }
    }
}

impl fmt::Display for WorkloadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_reads_back_as_its_workload() {
        for id in WorkloadId::ALL {
            assert_eq!(WorkloadId::of(id.key()), Some(id));
        }
        assert_eq!(WorkloadId::of("ab"), None);
        assert_eq!(WorkloadId::of("pipe"), None);
    }
}
