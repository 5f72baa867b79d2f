//! What pipe, seccomp-notify and messaging record about the events of their timed
//! region: the interrupts on the CPUs their tasks used, the system calls they make
//! per operation by construction, and the counters of `--counters`.
use crate::ipiaccount::ClosedIpiWindow;
use crate::RunRecord;
use kbench_record::{CounterReading, EventAccounting};

/// The denominator of a workload's events and what its tasks do per operation.
pub struct PerOp<'a> {
    /// What one operation is (`loop`, `notification`, `message`).
    pub per: &'a str,
    pub ops: u64,
    pub syscalls_per_op: f64,
}

/// Adds the events of the timed region to `rec`: the interrupt accounting of the
/// `cpus` (with their roles) as its first IPI region, and the event accounting.
pub fn record_events(
    rec: &mut RunRecord,
    per_op: PerOp<'_>,
    interrupts: &ClosedIpiWindow,
    cpus: &[(u32, String)],
    counters: Vec<CounterReading>,
) {
    rec.ipis
        .extend(interrupts.account(per_op.per, per_op.ops, cpus));
    rec.events = Some(EventAccounting {
        per: per_op.per.to_string(),
        ops: per_op.ops,
        syscalls_per_op: per_op.syscalls_per_op,
        counters,
    });
}

/// The parameter a run with counters adds to its key: counting slows the context
/// switches it counts, so such runs are never compared with runs without. None
/// without, so runs stored before the option existed still compare with new ones.
pub fn counters_param(counters: bool) -> Option<(String, serde_json::Value)> {
    counters.then(|| ("counters".to_string(), true.into()))
}
