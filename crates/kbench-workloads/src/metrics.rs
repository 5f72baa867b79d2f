//! The metrics a workload declares in its record ([`RunRecord::metrics`]), for the
//! shapes the workloads share. Each workload calls one of these where it builds its
//! record, so what is compared, in which unit and which way, is decided here and not
//! guessed later from names.
use crate::record::{Direction, MetricValue, RunRecord};

const LOWER: Direction = Direction::LowerIsBetter;

/// The total time (perf's figure for messaging), primary, then the context switches
/// behind it, which tell a scheduling change from a code-path change.
pub fn total_time(rec: &RunRecord) -> Vec<MetricValue> {
    vec![
        MetricValue::primary("total_sec", rec.total_ns as f64 / 1e9, "s", LOWER),
        MetricValue::secondary("csw_total", rec.rusage.total_csw() as f64, "csw", LOWER),
    ]
}

/// usecs/op (perf's figure for pipe and seccomp-notify), primary, then the context
/// switches per op; the total time instead when there are no per-op figures (`-l 0`).
pub fn per_op(rec: &RunRecord) -> Vec<MetricValue> {
    match (rec.usecs_per_op, rec.ops) {
        (Some(usecs), Some(ops)) if ops > 0 => {
            let csw = rec.rusage.total_csw() as f64 / ops as f64;
            vec![
                MetricValue::primary("usecs_per_op", usecs, "us/op", LOWER),
                MetricValue::secondary("csw_per_op", csw, "csw/op", LOWER),
            ]
        }
        _ => total_time(rec),
    }
}

/// For latency workloads (wakeup, ipi): each series' p50 and p99 (the first series'
/// p50 primary), then the IPIs per operation on the target CPU of the first region by
/// kind, which say which path the wakes took.
pub fn latency(rec: &RunRecord) -> Vec<MetricValue> {
    let mut metrics = Vec::new();
    for (i, series) in rec.series.iter().enumerate() {
        let p = &series.percentiles;
        for (name, v) in [("p50", p.p50), ("p99", p.p99)] {
            if let Some(v) = v {
                let metric = format!("{}_{name}_ns", series.name);
                metrics.push(if i == 0 && name == "p50" {
                    MetricValue::primary(metric, v as f64, "ns", LOWER)
                } else {
                    MetricValue::secondary(metric, v as f64, "ns", LOWER)
                });
            }
        }
    }
    if let Some(region) = rec.ipis.first() {
        for cpu in region
            .cpus
            .iter()
            .filter(|c| c.role == "wakee" || c.role == "target")
        {
            metrics.push(MetricValue::secondary(
                "resched_ipis_per_op",
                cpu.per_op.reschedule,
                "IPI/op",
                LOWER,
            ));
            metrics.push(MetricValue::secondary(
                "call_ipis_per_op",
                cpu.per_op.function_call,
                "IPI/op",
                LOWER,
            ));
        }
    }
    metrics
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::LatencyRecorder;
    use crate::record::Role;

    fn primaries(metrics: &[MetricValue]) -> Vec<&str> {
        metrics
            .iter()
            .filter(|m| m.role == Role::Primary)
            .map(|m| m.name.as_str())
            .collect()
    }

    #[test]
    fn per_op_records_have_one_primary_figure() {
        let rec = RunRecord {
            total_ns: 2_000_000,
            ..RunRecord::default()
        }
        .with_per_op(1000);
        let m = per_op(&rec);
        assert_eq!(primaries(&m), ["usecs_per_op"]);
        assert_eq!((m[0].value, m[0].unit.as_str()), (2.0, "us/op"));
        assert_eq!(m[1].name, "csw_per_op");
        let zero = RunRecord {
            total_ns: 2_000_000,
            ..RunRecord::default()
        }
        .with_per_op(0);
        assert_eq!(primaries(&per_op(&zero)), ["total_sec"]);
    }

    #[test]
    fn latency_records_make_the_first_series_p50_primary() {
        let mut first = LatencyRecorder::new().unwrap();
        let mut second = LatencyRecorder::new().unwrap();
        for v in 1..=2000u64 {
            first.record(v);
            second.record(v * 2);
        }
        let rec = RunRecord {
            series: vec![
                first.summary("wake_latency", ""),
                second.summary("waker_cost", ""),
            ],
            ..RunRecord::default()
        };
        let m = latency(&rec);
        assert_eq!(primaries(&m), ["wake_latency_p50_ns"]);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "wake_latency_p50_ns",
                "wake_latency_p99_ns",
                "waker_cost_p50_ns",
                "waker_cost_p99_ns"
            ]
        );
    }
}
