//! The plain data a workload hands back, and nothing else: serde types without I/O,
//! so the store and the renderers can read records without linking the workloads.
//!
//! - [`RunRecord`]: one execution of one workload, with [`RusageDelta`] and [`TaskCpus`];
//! - [`latency`]: the latency distributions of a run ([`LatencySeries`]);
//! - [`ipi`]: the IPIs and other interrupts counted over a run ([`IpiAccounting`]);
//! - [`environment`]: what a session recorded of its machine ([`SessionEnvironment`]);
//! - [`events`]: system calls and perf_event_open counters per operation
//!   ([`EventAccounting`], [`EventsPerOp`]);
//! - [`metric`]: the figures a run declares for comparison ([`MetricValue`]);
//! - [`placement`]: where a run's two tasks ran relative to each other;
//! - [`wakephases`]: the phases of each wake as the kernel traced them;
//! - [`workload`]: the workloads kbench reads records of by meaning ([`WorkloadId`]);
//! - [`export`]: kbench's JSON export of a label's sessions ([`export::Export`]);
//! - [`imported`]: what a reader of another tool's output hands the store ([`Imported`]);
//! - [`sequential`]: a sequential comparison's design and its looks, as stored;
//! - [`stored`]: a run as the store keeps it ([`StoredRun`], its [`Value`]s), whatever
//!   produced it (the runner, an importer, a guest's console), with [`RawJson`].
pub mod civil;
pub mod clock;
pub mod environment;
pub mod events;
pub mod export;
pub mod imported;
pub mod ipi;
pub mod json;
pub mod latency;
pub mod metric;
pub mod placement;
pub mod record;
pub mod sequential;
pub mod stored;
pub mod wakephases;
pub mod workload;

pub use clock::{counted_value, Clock};
pub use environment::{
    BootEnvironment, CallCosts, GuestUptimes, KernelSource, SessionEnvironment, VcpuPin,
};
pub use events::{CounterOutcome, CounterReading, EventAccounting, EventsPerOp, PerfCounter};
pub use imported::{Imported, ImportedRun, ImportedSummary};
pub use ipi::{
    InterruptSource, InterruptSourceKind, IpiAccounting, IpiCounts, IpiCpu, IpiRates, IrqCounts,
    IrqRates,
};
pub use json::RawJson;
pub use latency::{LatencySeries, Log2Bin, Percentiles, QUANTILES};
pub use metric::{Direction, MetricValue, Role};
pub use placement::{ObservedPlacement, PlacementKind, PlacementRequest};
pub use record::{RunRecord, RusageDelta, TaskCpus};
pub use stored::{
    legacy_primary, mark_legacy_primary, stored_run, values_of, AbSide, ImportSource, NewSession,
    RecordFacts, SessionWithRuns, StoredRun, SummaryRow, Value,
};
pub use wakephases::{
    Incomplete, Milestone, OnePhase, OneWake, PhaseSeries, WakePath, WakePhases, EACH_WAKE_MAX,
};
pub use workload::WorkloadId;

/// FNV-1a, 64 bits: a cheap fingerprint of some text (an imported file's content, a
/// kernel command line), to tell equal from different; not a security measure.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
