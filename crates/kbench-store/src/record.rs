//! From a workload's run record to the values kept for comparison.
use crate::store::{StoredRun, Value};
use kbench_record::RunRecord;

fn value(metric: &str, v: f64, unit: &str, higher_is_better: bool) -> Value {
    Value {
        metric: metric.into(),
        value: v,
        unit: unit.into(),
        higher_is_better,
    }
}

/// The metrics compared for a run: the figure perf prints (usecs/op for per-op
/// workloads, the total time otherwise) and the context switches behind it, which
/// tell a scheduling change from a code-path change.
pub fn values_of(record: &RunRecord) -> Vec<Value> {
    if !record.series.is_empty() {
        return latency_values(record);
    }
    let mut values = Vec::new();
    let csw = record.rusage.total_csw() as f64;
    match (record.usecs_per_op, record.ops) {
        (Some(usecs), Some(ops)) if ops > 0 => {
            values.push(value("usecs_per_op", usecs, "us/op", false));
            values.push(value("csw_per_op", csw / ops as f64, "csw/op", false));
        }
        _ => {
            values.push(value("total_sec", record.total_ns as f64 / 1e9, "s", false));
            values.push(value("csw_total", csw, "csw", false));
        }
    }
    values
}

/// For latency workloads (wakeup, ipi): each series' p50 and p99, then the IPIs per
/// operation on the target CPU by kind, which say which path the wakes took.
fn latency_values(record: &RunRecord) -> Vec<Value> {
    let mut values = Vec::new();
    for series in &record.series {
        let p = &series.percentiles;
        for (name, v) in [("p50", p.p50), ("p99", p.p99)] {
            if let Some(v) = v {
                values.push(value(
                    &format!("{}_{name}_ns", series.name),
                    v as f64,
                    "ns",
                    false,
                ));
            }
        }
    }
    if let Some(region) = record.ipis.first() {
        for cpu in region
            .cpus
            .iter()
            .filter(|c| c.role == "wakee" || c.role == "target")
        {
            values.push(value(
                "resched_ipis_per_op",
                cpu.per_op.reschedule,
                "IPI/op",
                false,
            ));
            values.push(value(
                "call_ipis_per_op",
                cpu.per_op.function_call,
                "IPI/op",
                false,
            ));
        }
    }
    values
}

/// A stored run from a workload's record.
pub fn stored_run(
    record: &RunRecord,
    run_index: u32,
    warmup: bool,
    pinned_cpus: Option<String>,
    cpus_used: String,
) -> StoredRun {
    StoredRun {
        workload: record.workload.clone(),
        params: record.params.clone(),
        variant: record.variant.clone(),
        run_index,
        warmup,
        exit_status: Some(0),
        start_unix_ns: Some(record.start_unix_ns),
        end_unix_ns: Some(record.end_unix_ns),
        pinned_cpus,
        cpus_used: Some(cpus_used),
        rusage: serde_json::to_value(record.rusage).ok(),
        tasks: serde_json::to_value(&record.tasks).ok(),
        record: serde_json::to_value(record).ok(),
        values: values_of(record),
    }
}
