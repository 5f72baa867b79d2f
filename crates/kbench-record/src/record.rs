//! The plain data a workload hands back: one value plus everything about how it was made.
use crate::events::{EventAccounting, EventsPerOp, PerfCounter};
use crate::ipi::IpiAccounting;
use crate::latency::LatencySeries;
use crate::metric::MetricValue;
pub use crate::placement::TaskCpus;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One execution of one workload with fixed parameters.
///
/// Everything a reviewer may ask about a run is here: the parameters and the
/// variant (so incomparable runs are never pooled), the raw time, the context
/// switches, and which CPUs each task was seen on.
///
/// Latency workloads (`sched/wakeup`, `ipi/ipi`) also fill the optional fields below
/// (distributions, IPI accounting, invalid samples); pipe, seccomp-notify and messaging
/// fill the IPI accounting of their timed region and its events. Empty ones are left
/// out of the JSON, so older records and readers are unaffected.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// `collection/name`, e.g. `sched/pipe`.
    pub workload: String,
    /// Every parameter, defaults included, by its perf long-option name.
    pub params: BTreeMap<String, serde_json::Value>,
    /// The semantics of the workload loop; runs of different variants are never compared.
    pub variant: String,
    /// Wall time of the timed region, CLOCK_MONOTONIC.
    pub total_ns: u64,
    /// Operations the per-op figures divide by (pipe loops, notified syscalls), when the
    /// workload reports per-op figures.
    pub ops: Option<u64>,
    /// `total_ns / 1000 / ops`, full precision (perf's text output truncates first).
    pub usecs_per_op: Option<f64>,
    /// `ops / (total_ns / 1e9)`, full precision.
    pub ops_per_sec: Option<f64>,
    /// Payload bytes the workload moved, counted by the receiving side.
    pub bytes_transferred: Option<u64>,
    /// The loop count as perf divides by it when printing per-op figures: pipe's, which
    /// perf keeps signed (`-l -5` prints negative figures) while `ops` cannot be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf_signed_loops: Option<i64>,
    /// Context switches and CPU time of the coordinator and of its reaped workers.
    pub rusage: RusageDelta,
    /// The CPUs each task was seen running on (sampled with getcpu in the task itself).
    pub tasks: Vec<TaskCpus>,
    /// The union of all tasks' CPUs.
    pub cpus_used: Vec<u32>,
    /// Where the two tasks of a two-task workload (pipe, seccomp-notify) ran relative
    /// to each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::placement::ObservedPlacement>,
    /// Start and end of the timed region, CLOCK_REALTIME, nanoseconds since the epoch.
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    /// The `# ...` lines perf prints above the result, in default format.
    #[serde(skip)]
    pub header_lines: Vec<String>,
    /// Latency distributions, the primary one first (`wake_latency`, `ipi_round_trip`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<LatencySeries>,
    /// IPIs counted in `/proc/interrupts` over the timed region(s), per CPU involved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ipis: Vec<IpiAccounting>,
    /// What the tasks did per operation: system calls by construction and, with
    /// `--counters`, perf_event_open counters (pipe, seccomp-notify, messaging).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<EventAccounting>,
    /// Samples kept out of `series`, by reason (`wrong_cpu`, `did_not_block`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub invalid_samples: BTreeMap<String, u64>,
    /// How the run was made beyond its parameters (clocksource, clock read cost, seed use).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meta: BTreeMap<String, serde_json::Value>,
    /// Findings a reader must see next to the numbers ("target not idle ...").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The figures compared across runs, as the workload declares them: exactly one
    /// primary, the others secondary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricValue>,
    /// The wake phases the kernel traced (`sched wakeup --trace`, `import-trace`); their
    /// distributions are in `series`, named here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_phases: Option<crate::wakephases::WakePhases>,
    /// The device interrupt lines and softirq vectors that moved over the timed region,
    /// per operation (blkio, netrr): which device and which part of the kernel a real
    /// workload's operations went through.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interrupt_sources: Vec<crate::ipi::InterruptSource>,
}

/// The difference of `getrusage` before and after a run, for the coordinator
/// (`RUSAGE_SELF`, which includes its threads) and its reaped children.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RusageDelta {
    pub self_voluntary_csw: u64,
    pub self_involuntary_csw: u64,
    pub children_voluntary_csw: u64,
    pub children_involuntary_csw: u64,
    pub user_us: u64,
    pub sys_us: u64,
}

impl RusageDelta {
    /// Voluntary plus involuntary switches of the coordinator and its children.
    pub fn total_csw(&self) -> u64 {
        self.self_voluntary_csw
            + self.self_involuntary_csw
            + self.children_voluntary_csw
            + self.children_involuntary_csw
    }
}

impl RunRecord {
    /// Fills the per-op figures from `total_ns` and `ops`.
    pub fn with_per_op(mut self, ops: u64) -> Self {
        self.ops = Some(ops);
        if ops > 0 && self.total_ns > 0 {
            self.usecs_per_op = Some(self.total_ns as f64 / 1e3 / ops as f64);
            self.ops_per_sec = Some(ops as f64 / (self.total_ns as f64 / 1e9));
        }
        self
    }

    /// The primary metric, if the workload declared one.
    pub fn primary_metric(&self) -> Option<&MetricValue> {
        self.metrics.iter().find(|m| m.is_primary())
    }

    /// The events per operation of a run that accounted them (pipe, seccomp-notify,
    /// messaging), from its events and its first IPI region; `None` for the others,
    /// for older records, and for runs without operations.
    pub fn events_per_op(&self) -> Option<EventsPerOp> {
        let events = self.events.as_ref().filter(|e| e.ops > 0)?;
        let per_op = |n: u64| n as f64 / events.ops as f64;
        let region = self.ipis.first();
        Some(EventsPerOp {
            per: events.per.clone(),
            syscalls: events.syscalls_per_op,
            context_switches: events
                .counter_per_op(PerfCounter::ContextSwitches)
                .unwrap_or_else(|| per_op(self.rusage.total_csw())),
            migrations: events.counter_per_op(PerfCounter::CpuMigrations),
            ipis: region.map(IpiAccounting::ipis_per_op_summed),
            irqs: region.and_then(IpiAccounting::irqs_per_op_summed),
        })
    }
}
