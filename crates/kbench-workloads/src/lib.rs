//! The workloads kernel developers trust, one file each, behind one registry.
//!
//! A workload knows nothing about storage or statistics: it takes its parsed
//! options and kbench's [`Instruments`], runs once, and returns a [`RunRecord`].
// eprint! panics when stderr's reader has gone, in a forked worker too: errln! instead.
#![deny(clippy::print_stdout, clippy::print_stderr)]
pub mod blkio;
pub mod cgroup;
pub mod clock;
pub mod counters;
pub mod cpus;
pub mod events;
pub mod ipi;
pub mod ipiaccount;
pub mod latency;
pub mod measure;
pub mod messaging;
pub mod metrics;
pub mod netrr;
pub mod perfbench;
pub mod perfopt;
pub mod pipe;
pub mod placement;
pub mod preflight;
pub mod record;
pub mod seccomp_notify;
pub mod shared;
pub mod wakechan;
pub mod wakephases;
pub mod waketrace;
pub mod wakeup;
pub mod workers;

pub use record::{RunRecord, RusageDelta, TaskCpus};

// `eprintln!` that never panics, kbench-term's, as `crate::errln!` here.
pub(crate) use kbench_term::errln;

use perfopt::{OptSpec, ParsedOptions};

/// Why a run produced no record.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The request cannot be run as given (limits too low, bad parameter): exit 2.
    #[error("{0}")]
    Usage(String),
    /// The machine lacks something the workload needs (a kernel feature): exit 1.
    #[error("{0}")]
    Unsupported(String),
    /// The run started and failed: exit 1.
    #[error("{0}")]
    Failed(String),
}

impl WorkloadError {
    /// Whether the request is the user's to change (exit status 2); a machine without
    /// what the workload needs, or a failed run, is exit status 1.
    pub fn is_usage(&self) -> bool {
        matches!(self, WorkloadError::Usage(_))
    }

    pub fn failed(context: &str, err: impl std::fmt::Display) -> Self {
        WorkloadError::Failed(format!("{context}: {err}"))
    }
}

/// A validation failure of one option, reported in perf's option-error layout.
pub struct OptionProblem {
    pub long: &'static str,
    pub message: String,
}

/// What kbench adds to a run's measurement beyond the workload's own (perf's) options:
/// chosen outside perf's option parser, so a benchmark's options and help stay perf's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Instruments {
    /// perf_event_open counters over the timed region (`--counters`): opt-in, since
    /// counting slows every context switch of the counted tasks.
    pub counters: bool,
}

/// One benchmark: its perf name, option table and entry point.
pub struct Workload {
    /// perf's collection (`sched`) and benchmark name (`pipe`).
    pub collection: &'static str,
    pub name: &'static str,
    /// The one-line description perf lists.
    pub summary: &'static str,
    /// The usage string of its help, e.g. `perf bench sched pipe <options>`.
    pub usage: &'static str,
    pub options: &'static [OptSpec],
    /// The task name perf gives the process (`sched-pipe`), at most 15 bytes.
    pub comm: &'static str,
    /// Whether `perf bench <collection> all` runs it: perf's own benchmarks do,
    /// kbench's additions do not, so `sched all` prints what perf prints.
    pub in_perf_all: bool,
    /// Checks done at parse time, as perf's option callbacks do.
    pub check: fn(&ParsedOptions) -> Result<(), OptionProblem>,
    /// Checks the values as `run` would, without running: lets `kbench run` refuse a
    /// bad spec before it starts a session.
    pub validate: fn(&ParsedOptions) -> Result<(), String>,
    /// Whether it can count perf_event_open counters over its run (`--counters`).
    pub takes_counters: bool,
    /// Runs once with the given options (defaults for those absent).
    pub run: fn(&ParsedOptions, Instruments) -> Result<RunRecord, WorkloadError>,
}

impl Workload {
    /// `collection/name`, the key used in records.
    pub fn key(&self) -> String {
        format!("{}/{}", self.collection, self.name)
    }

    /// The id the analysis knows its records by.
    pub fn id(&self) -> Option<kbench_record::WorkloadId> {
        kbench_record::WorkloadId::of(&self.key())
    }
}

/// No checks beyond the option parser's.
pub fn no_validate(_: &ParsedOptions) -> Result<(), String> {
    Ok(())
}

/// No parse-time checks.
pub fn no_check(_: &ParsedOptions) -> Result<(), OptionProblem> {
    Ok(())
}

/// Every workload, in the order `sched all` runs them.
pub static REGISTRY: &[&Workload] = &[
    &messaging::WORKLOAD,
    &pipe::WORKLOAD,
    &seccomp_notify::WORKLOAD,
    &wakeup::WORKLOAD,
    &ipi::WORKLOAD,
    &blkio::WORKLOAD,
    &netrr::WORKLOAD,
];

/// The workload `collection/name`, if kbench has it.
pub fn find(collection: &str, name: &str) -> Option<&'static Workload> {
    REGISTRY
        .iter()
        .copied()
        .find(|w| w.collection == collection && w.name == name)
}

/// The workloads of one collection, in registry order.
pub fn collection(collection: &str) -> impl Iterator<Item = &'static Workload> + '_ {
    REGISTRY
        .iter()
        .copied()
        .filter(move |w| w.collection == collection)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The analysis reads these workloads' records by their id: a renamed workload
    /// must be renamed there too.
    #[test]
    fn every_workload_has_its_own_id() {
        let ids: Vec<_> = REGISTRY.iter().map(|w| w.id()).collect();
        assert!(ids.iter().all(Option::is_some), "{ids:?}");
        let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), REGISTRY.len());
    }
}
