//! The metrics a workload declares in its record ([`RunRecord::metrics`]), for the
//! shapes the workloads share. Each workload calls one of these where it builds its
//! record, so what is compared, in which unit and which way, is decided here and not
//! guessed later from names.
use crate::record::{Direction, MetricValue, RunRecord};
use kbench_record::{InterruptSourceKind, PerfCounter};

const LOWER: Direction = Direction::LowerIsBetter;

/// The events per operation of a run that accounted them (pipe, seccomp-notify,
/// messaging), all secondary: the system calls by construction, IPIs by kind and IRQs received by the CPUs the tasks
/// used, summed over those CPUs, then each counter that counted. The context-switches
/// counter is not declared: `csw_per_op` (rusage) is the same figure. Nothing for a
/// run without operations.
pub fn events(rec: &RunRecord) -> Vec<MetricValue> {
    let Some(events) = rec.events.as_ref().filter(|e| e.ops > 0) else {
        return Vec::new();
    };
    let mut metrics = vec![MetricValue::secondary(
        "syscalls_per_op",
        events.syscalls_per_op,
        "syscalls/op",
        LOWER,
    )];
    if let Some(region) = rec.ipis.first() {
        let ipis = region.ipis_per_op_summed();
        metrics.push(MetricValue::secondary(
            "resched_ipis_per_op",
            ipis.reschedule,
            "IPI/op",
            LOWER,
        ));
        metrics.push(MetricValue::secondary(
            "call_ipis_per_op",
            ipis.function_call,
            "IPI/op",
            LOWER,
        ));
        if let Some(irqs) = region.irqs_per_op_summed() {
            metrics.push(MetricValue::secondary(
                "irqs_per_op",
                irqs.device,
                "IRQ/op",
                LOWER,
            ));
            metrics.push(MetricValue::secondary(
                "timer_irqs_per_op",
                irqs.local_timer,
                "IRQ/op",
                LOWER,
            ));
        }
    }
    for (counter, name, unit) in COUNTER_METRICS {
        if let Some(value) = events.counter_per_op(counter) {
            metrics.push(MetricValue::secondary(name, value, unit, LOWER));
        }
    }
    metrics
}

/// The metric each counter gives, per operation, and its unit.
const COUNTER_METRICS: [(PerfCounter, &str, &str); 7] = [
    (PerfCounter::TaskClock, "task_clock_ns_per_op", "ns/op"),
    (
        PerfCounter::CpuMigrations,
        "migrations_per_op",
        "migrations/op",
    ),
    (PerfCounter::PageFaults, "page_faults_per_op", "faults/op"),
    (
        PerfCounter::InstructionsUser,
        "instructions_user_per_op",
        "instructions/op",
    ),
    (
        PerfCounter::InstructionsKernel,
        "instructions_kernel_per_op",
        "instructions/op",
    ),
    (PerfCounter::CyclesUser, "cycles_user_per_op", "cycles/op"),
    (
        PerfCounter::CyclesKernel,
        "cycles_kernel_per_op",
        "cycles/op",
    ),
];

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
///
/// A series traced from the kernel (a wake phase, the kernel-side total) declares its
/// mean instead: its timestamps come in ticks (1 us in tracefs text), so a run's
/// median sticks to a tick and two runs differ by a whole tick or not at all, which
/// compare would read as a certain change; the mean of many durations, each cut off
/// at a random point of the tick, is not bound to the tick.
pub fn latency(rec: &RunRecord) -> Vec<MetricValue> {
    let mut metrics = Vec::new();
    for (i, series) in rec.series.iter().enumerate() {
        if is_traced(rec, &series.name) {
            if series.count > 0 {
                metrics.push(MetricValue::secondary(
                    format!("{}_mean_ns", series.name),
                    series.mean,
                    "ns",
                    LOWER,
                ));
            }
            continue;
        }
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

/// The softirq vectors of I/O: what a block completion or a packet raises. The
/// timer, scheduler and RCU vectors move with time, not with operations.
const IO_SOFTIRQS: [&str; 4] = ["NET_RX", "NET_TX", "BLOCK", "IRQ_POLL"];

/// For the real workloads (blkio, netrr): the first series' p50 primary and its p99,
/// the rate of operations (`rate_name`, higher is better), the context switches per
/// op, the events per op of [`events`], and the I/O softirqs per op.
pub fn io_latency(rec: &RunRecord, rate_name: &str, rate_unit: &str) -> Vec<MetricValue> {
    let mut metrics = Vec::new();
    if let Some(series) = rec.series.first() {
        let p = &series.percentiles;
        if let Some(p50) = p.p50 {
            let name = format!("{}_p50_ns", series.name);
            metrics.push(MetricValue::primary(name, p50 as f64, "ns", LOWER));
        }
        if let Some(p99) = p.p99 {
            let name = format!("{}_p99_ns", series.name);
            metrics.push(MetricValue::secondary(name, p99 as f64, "ns", LOWER));
        }
    }
    if let Some(rate) = rec.ops_per_sec {
        metrics.push(MetricValue::secondary(
            rate_name,
            rate,
            rate_unit,
            Direction::HigherIsBetter,
        ));
    }
    if let Some(ops) = rec.ops.filter(|&ops| ops > 0) {
        let csw = rec.rusage.total_csw() as f64 / ops as f64;
        metrics.push(MetricValue::secondary("csw_per_op", csw, "csw/op", LOWER));
        // A task that blocks (a voluntary switch) runs again only after a wake.
        let usage = &rec.rusage;
        let blocked = usage.self_voluntary_csw + usage.children_voluntary_csw;
        let wakes = blocked as f64 / ops as f64;
        metrics.push(MetricValue::secondary(
            "wakes_per_op",
            wakes,
            "wakes/op",
            LOWER,
        ));
    }
    metrics.extend(events(rec));
    let softirqs: Vec<f64> = rec
        .interrupt_sources
        .iter()
        .filter(|s| {
            s.kind == InterruptSourceKind::Softirq && IO_SOFTIRQS.contains(&s.name.as_str())
        })
        .map(|s| s.per_op)
        .collect();
    // Counted where /proc is read: the interrupts' accounting says it was.
    if !rec.ipis.is_empty() {
        metrics.push(MetricValue::secondary(
            "softirqs_per_op",
            softirqs.iter().sum(),
            "softirq/op",
            LOWER,
        ));
    }
    metrics
}

/// Whether `series` is one of the run's traced wake phases or their total.
fn is_traced(rec: &RunRecord, series: &str) -> bool {
    rec.wake_phases
        .as_ref()
        .is_some_and(|w| w.total_series == series || w.phases.iter().any(|p| p.series == series))
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
    fn event_metrics_come_from_the_region_and_the_counters_that_counted() {
        use kbench_record::{
            CounterOutcome, CounterReading, EventAccounting, IpiAccounting, IpiCounts, IpiCpu,
            IrqCounts,
        };
        let ops = 500;
        let cpu = |cpu: u32, reschedule: u64, local_timer: u64| {
            let counts = IpiCounts {
                reschedule,
                ..IpiCounts::default()
            };
            let irqs = IrqCounts {
                device: 1,
                local_timer,
                other: 0,
            };
            IpiCpu {
                cpu,
                role: "worker".into(),
                counts,
                per_op: counts.per_op(ops),
                irqs: Some(irqs),
                irqs_per_op: Some(irqs.per_op(ops)),
            }
        };
        let mut rec = RunRecord {
            ipis: vec![IpiAccounting {
                label: "timed_region".into(),
                per: "loop".into(),
                ops,
                cpus: vec![cpu(0, 100, 10), cpu(1, 150, 40)],
            }],
            events: Some(EventAccounting {
                per: "loop".into(),
                ops,
                syscalls_per_op: 4.0,
                counters: vec![
                    CounterReading {
                        counter: PerfCounter::TaskClock,
                        outcome: CounterOutcome::Counted {
                            value: 1_000_000,
                            enabled_ns: 1,
                            running_ns: 1,
                        },
                    },
                    CounterReading {
                        counter: PerfCounter::CyclesUser,
                        outcome: CounterOutcome::NotSupported {
                            reason: "no PMU".into(),
                        },
                    },
                ],
            }),
            ..RunRecord::default()
        };
        let m = events(&rec);
        let named: Vec<(&str, f64)> = m.iter().map(|m| (m.name.as_str(), m.value)).collect();
        assert_eq!(
            named,
            [
                ("syscalls_per_op", 4.0),
                ("resched_ipis_per_op", 0.5),
                ("call_ipis_per_op", 0.0),
                ("irqs_per_op", 0.004),
                ("timer_irqs_per_op", 0.1),
                ("task_clock_ns_per_op", 2000.0),
            ]
        );
        assert!(m.iter().all(|m| m.role == Role::Secondary));
        rec.events.as_mut().unwrap().ops = 0;
        assert!(events(&rec).is_empty());
        rec.events = None;
        assert!(events(&rec).is_empty());
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
