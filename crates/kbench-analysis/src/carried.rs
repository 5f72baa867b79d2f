//! From micro to macro: what a micro-benchmark's change predicts for each real
//! workload both labels ran, from the events each takes per operation.
//!
//! A micro-benchmark's operation is built around one event: pipe's and
//! seccomp-notify's around context switches, wakeup's around a wake, the IPI round
//! trip around a function-call IPI. Its change per operation, divided by its events
//! per operation, is the change per event it implies, if the whole change were that
//! event's. A real workload that takes E such events per operation and T ns per
//! operation would then change by `change per event × E / T`. That is the most the
//! micro result can carry over through that event: the rest of the micro operation
//! (the syscalls, the copy) is charged to the event too.
//!
//! Everything comes from the comparison's own rows: the primary rows' base medians
//! (time per op), their shifts and intervals, and the event rows' base medians.
use crate::event::{ns_per_unit, Event};
pub use crate::model::{CarriedChange, Prediction};
use crate::model::{CompareRow, RowKind};
use kbench_record::WorkloadId;

/// The event a micro workload's operation is built around.
fn carrier_event(workload: WorkloadId) -> Option<Event> {
    match workload {
        WorkloadId::Pipe | WorkloadId::SeccompNotify => Some(Event::Csw),
        WorkloadId::Wakeup => Some(Event::Wake),
        WorkloadId::Ipi => Some(Event::IpiCall),
        _ => None,
    }
}

/// The rows of one comparison key: its pooled primary row and the rows beside it.
struct Key<'a> {
    primary: &'a CompareRow,
    rows: Vec<&'a CompareRow>,
}

impl Key<'_> {
    fn workload(&self) -> Option<WorkloadId> {
        WorkloadId::of(&self.primary.workload)
    }

    /// The base side's median time per op, in ns, when the primary metric is one.
    fn time_per_op_ns(&self) -> Option<f64> {
        let scale = ns_per_unit(&self.primary.unit)?;
        Some(self.primary.median_a? * scale).filter(|t| *t > 0.0)
    }

    /// The base side's events per op of `event`: its metrics' medians summed, or its
    /// count by definition.
    fn events_per_op(&self, event: Event) -> Option<f64> {
        if let Some(by_definition) = event.per_op_by_definition(&self.primary.workload) {
            return Some(by_definition);
        }
        let found: Vec<f64> = self
            .rows
            .iter()
            .filter(|r| event.metrics().contains(&r.metric.as_str()))
            .filter_map(|r| r.median_a)
            .collect();
        (!found.is_empty()).then(|| found.iter().sum())
    }
}

/// The pooled rows by comparison key (workload, parameters, variant), in report order.
fn keys(rows: &[CompareRow]) -> Vec<Key<'_>> {
    let pooled = rows
        .iter()
        .filter(|r| !r.is_split() && r.kind == RowKind::PerRun);
    let mut keys: Vec<Key<'_>> = Vec::new();
    for row in pooled.clone().filter(|r| r.is_primary()) {
        let same = |r: &&CompareRow| {
            r.workload == row.workload && r.params == row.params && r.variant == row.variant
        };
        keys.push(Key {
            primary: row,
            rows: pooled.clone().filter(same).collect(),
        });
    }
    keys
}

/// What each micro row of `rows` predicts for each real workload among them; nothing
/// when the comparison lacks either.
pub fn carried_over(rows: &[CompareRow]) -> Vec<CarriedChange> {
    let keys = keys(rows);
    let micro: Vec<(&Key<'_>, Event)> = keys
        .iter()
        .filter_map(|k| Some((k, carrier_event(k.workload()?)?)))
        .collect();
    if micro.is_empty() {
        return Vec::new();
    }
    keys.iter()
        .filter(|k| k.workload().is_some_and(WorkloadId::is_real))
        .filter_map(|real| {
            let time_per_op_ns = real.time_per_op_ns()?;
            let prediction = micro
                .iter()
                .filter_map(|(m, event)| predict(m, *event, real, time_per_op_ns))
                .max_by(|a, b| a.predicted_pct.abs().total_cmp(&b.predicted_pct.abs()));
            Some(CarriedChange {
                workload: real.primary.workload.clone(),
                params: real.primary.params.clone(),
                variant: real.primary.variant.clone(),
                metric: real.primary.metric.clone(),
                time_per_op_ns,
                observed_pct: real.primary.shift_pct,
                observed_low_pct: real.primary.ci_low_pct,
                observed_high_pct: real.primary.ci_high_pct,
                prediction,
            })
        })
        .collect()
}

/// The prediction of micro row `m` (built around `event`) for `real`.
fn predict(m: &Key<'_>, event: Event, real: &Key<'_>, real_ns: f64) -> Option<Prediction> {
    let shift = m.primary.shift_pct?;
    let micro_ns = m.time_per_op_ns()?;
    let micro_events = m.events_per_op(event).filter(|e| *e > 0.0)?;
    let real_events = real.events_per_op(event).filter(|e| *e > 0.0)?;
    // A change of the micro op, as ns per event: a higher-is-better metric has none
    // here (every micro primary is a time).
    let per_event = |pct: f64| pct / 100.0 * micro_ns / micro_events;
    let carried = |pct: f64| 100.0 * per_event(pct) * real_events / real_ns;
    Some(Prediction {
        micro_workload: m.primary.workload.clone(),
        micro_params: m.primary.params.clone(),
        micro_shift_pct: shift,
        event,
        ns_per_event: per_event(shift),
        ns_per_event_low: m.primary.ci_low_pct.map(per_event),
        ns_per_event_high: m.primary.ci_high_pct.map(per_event),
        real_events_per_op: real_events,
        predicted_pct: carried(shift),
        predicted_low_pct: m.primary.ci_low_pct.map(carried),
        predicted_high_pct: m.primary.ci_high_pct.map(carried),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_record::Role;

    fn row(
        workload: &str,
        metric: &str,
        unit: &str,
        median_a: f64,
        shift: Option<f64>,
    ) -> CompareRow {
        CompareRow {
            workload: workload.into(),
            metric: metric.into(),
            unit: unit.into(),
            params: String::new(),
            variant: String::new(),
            cpu_classes: String::new(),
            placement: None,
            kind: RowKind::PerRun,
            role: if shift.is_some() {
                Role::Primary
            } else {
                Role::Secondary
            },
            higher_is_better: false,
            n_a: 10,
            n_b: 10,
            design: None,
            units_a: 10,
            units_b: 10,
            median_a: Some(median_a),
            median_b: None,
            shift_pct: shift,
            ci_low_pct: shift.map(|s| s - 1.0),
            ci_high_pct: shift.map(|s| s + 1.0),
            p_value: None,
            q_value: None,
            delta_pct: 1.0,
            verdict: kbench_stats::Verdict::Inconclusive,
            runs_needed: None,
            units_needed: None,
            settle: None,
            method: String::new(),
            diagnostics: Vec::new(),
        }
    }

    #[test]
    fn a_micro_change_per_event_is_carried_over_by_the_real_workloads_events() {
        let rows = vec![
            // pipe: 2 us per loop, 2 context switches each, 10% slower: +100 ns per csw.
            row("sched/pipe", "usecs_per_op", "us/op", 2.0, Some(10.0)),
            row("sched/pipe", "csw_per_op", "csw/op", 2.0, None),
            // blkio: 50 us per IO, 1 context switch each: +100 ns is +0.2%.
            row(
                "blkio/blkio",
                "io_latency_p50_ns",
                "ns",
                50_000.0,
                Some(0.5),
            ),
            row("blkio/blkio", "csw_per_op", "csw/op", 1.0, None),
            row("blkio/blkio", "wakes_per_op", "wakes/op", 1.0, None),
            // The IPI round trip moved 1% of 4 us: 40 ns per IPI; blkio takes none.
            row("ipi/ipi", "ipi_round_trip_p50_ns", "ns", 4_000.0, Some(1.0)),
        ];
        let carried = carried_over(&rows);
        assert_eq!(carried.len(), 1);
        let c = &carried[0];
        assert_eq!(
            (c.workload.as_str(), c.observed_pct),
            ("blkio/blkio", Some(0.5))
        );
        let p = c.prediction.as_ref().expect("a prediction");
        assert_eq!(
            (p.micro_workload.as_str(), p.event),
            ("sched/pipe", Event::Csw)
        );
        assert!((p.ns_per_event - 100.0).abs() < 1e-9, "{p:?}");
        assert!((p.predicted_pct - 0.2).abs() < 1e-9, "{p:?}");
        // The interval [9%, 11%] carries over as [0.18%, 0.22%].
        assert!((p.predicted_low_pct.unwrap() - 0.18).abs() < 1e-9);
        assert!((p.predicted_high_pct.unwrap() - 0.22).abs() < 1e-9);
    }

    #[test]
    fn without_a_real_workload_or_a_shared_event_nothing_is_predicted() {
        let micro_only = vec![
            row("sched/pipe", "usecs_per_op", "us/op", 2.0, Some(10.0)),
            row("sched/pipe", "csw_per_op", "csw/op", 2.0, None),
        ];
        assert!(carried_over(&micro_only).is_empty());
        let real_only = vec![row(
            "blkio/blkio",
            "io_latency_p50_ns",
            "ns",
            5e4,
            Some(1.0),
        )];
        assert!(carried_over(&real_only).is_empty());
        let unshared = vec![
            row("ipi/ipi", "ipi_round_trip_p50_ns", "ns", 4_000.0, Some(1.0)),
            row(
                "netrr/netrr",
                "rr_latency_p50_ns",
                "ns",
                20_000.0,
                Some(-0.3),
            ),
            row("netrr/netrr", "call_ipis_per_op", "IPI/op", 0.0, None),
        ];
        let carried = carried_over(&unshared);
        assert_eq!(carried.len(), 1);
        assert_eq!(carried[0].prediction, None);
    }
}
