//! Could a claimed saving explain a change? From a label's runs: how many events of a
//! kind each op takes, how long an op takes, and so the largest change of the primary
//! metric that saving NS per event could make (events per op × NS / time per op);
//! against an observed change, the saving per event it would need, set beside what
//! such an event costs on this machine in all, where kbench measured that. Counted
//! runs (boots under `--clock instructions`) do the same sums in instructions: an op's
//! instructions, and a saving of instructions per event.
//!
//! Kernel text has no instruction-level model here: the events per op and the costs
//! are measured, the saving is the user's.
use crate::event::ns_per_unit;
pub use crate::event::Event;
use crate::group::{self, RunKey};
use crate::model::CompareReport;
use kbench_record::{Role, WorkloadId};
use kbench_stats::Verdict;
use kbench_store::{RunRow, Store};
use serde::{Deserialize, Serialize};

/// What an op's cost and a saving are counted in: nanoseconds for timed runs,
/// instructions for counted ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostUnit {
    Ns,
    Insns,
}

impl CostUnit {
    pub fn symbol(self) -> &'static str {
        match self {
            CostUnit::Ns => "ns",
            CostUnit::Insns => "insns",
        }
    }
}

/// A saving the user claims: `amount` of `unit` per `event`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Saving {
    pub event: Event,
    pub amount: f64,
    pub unit: CostUnit,
}

/// `--saving`'s amounts: a number with a time unit (ns when none) or instructions.
/// Microseconds are `us`, or `µs` with the micro sign or the Greek mu.
fn parse_amount(text: &str) -> Option<(f64, CostUnit)> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| c.is_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let value: f64 = number.trim().parse().ok()?;
    let (scale, cost_unit) = match unit.trim() {
        "" | "ns" => (1.0, CostUnit::Ns),
        "us" | "\u{b5}s" | "\u{3bc}s" => (1e3, CostUnit::Ns),
        "ms" => (1e6, CostUnit::Ns),
        "insn" | "insns" => (1.0, CostUnit::Insns),
        _ => return None,
    };
    Some((value * scale, cost_unit)).filter(|(v, _)| v.is_finite() && *v > 0.0)
}

/// Every `--saving`, checked before anything is read.
pub fn parse_savings(texts: &[String]) -> Result<Vec<Saving>, crate::AnalysisError> {
    texts
        .iter()
        .map(|t| Saving::parse(t).map_err(crate::AnalysisError::Usage))
        .collect()
}

impl Saving {
    /// `EVENT=AMOUNT`, as `--saving` takes it: `ipi=300`, `irq=5ns`, `irq=0.3us` (a
    /// time, ns when no unit is given), or `ipi=28insns` (instructions, for counted
    /// runs).
    pub fn parse(text: &str) -> Result<Saving, String> {
        let (event, amount) = text.split_once('=').ok_or_else(|| {
            format!("--saving {text}: expected EVENT=NS, e.g. ipi=300, irq=0.3us or ipi=28insns")
        })?;
        let event = Event::parse(event.trim()).ok_or_else(|| {
            let names: Vec<&str> = Event::ALL.iter().map(|e| e.name()).collect();
            format!(
                "--saving {text}: unknown event (one of {})",
                names.join(", ")
            )
        })?;
        let (amount, unit) = parse_amount(amount).ok_or_else(|| {
            format!(
                "--saving {text}: the saving must be a positive number of ns (or us, ms), or of insns"
            )
        })?;
        Ok(Saving {
            event,
            amount,
            unit,
        })
    }
}

/// What an event costs on this machine in all, measured by one of kbench's workloads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredCost {
    /// In the row's [`CostUnit`].
    pub amount: f64,
    /// How it was measured, e.g. `ipi/ipi round trip p50`.
    pub source: String,
    /// An upper bound (an op holds more than one such event's worth of work).
    pub upper_bound: bool,
}

/// The observed change of a row's primary metric between two labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservedChange {
    pub base: String,
    pub shift_pct: f64,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub verdict: Verdict,
}

/// One workload and one saving.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlausibleRow {
    pub workload: String,
    pub params: String,
    pub variant: String,
    /// The primary metric and its median per op, in `cost_unit`: time (ns), or
    /// instructions for counted runs.
    pub metric: String,
    pub cost_per_op: f64,
    pub cost_unit: CostUnit,
    pub runs: usize,
    pub saving: Saving,
    /// Median events per op over the runs; `None` when the runs do not count it.
    pub events_per_op: Option<f64>,
    /// The largest change the saving could make: events/op × NS / time per op, in %.
    pub max_change_pct: Option<f64>,
    pub observed: Option<ObservedChange>,
    /// The saving per event the observed change needs, in `cost_unit`.
    pub needed_per_event: Option<f64>,
    pub measured_cost: Option<MeasuredCost>,
    /// How the observed change (its interval, else its estimate) stands to the largest
    /// change the saving could make.
    pub explains: Option<Explains>,
}

/// The observed change against the largest one a saving could make, ±max.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Explains {
    /// The whole interval lies within ±max: the saving could explain the change.
    Within,
    /// The whole interval lies beyond ±max: the saving cannot explain the change
    /// alone.
    Beyond,
    /// The interval holds changes both within and beyond ±max: more runs decide.
    Undecided,
}

/// Where `observed` stands to ±`max_pct`, by its interval when it has one.
fn explains(observed: &ObservedChange, max_pct: f64) -> Explains {
    let (lo, hi) = match (observed.ci_low_pct, observed.ci_high_pct) {
        (Some(lo), Some(hi)) => (lo, hi),
        _ => (observed.shift_pct, observed.shift_pct),
    };
    let nearest_to_zero = if lo <= 0.0 && hi >= 0.0 {
        0.0
    } else {
        lo.abs().min(hi.abs())
    };
    let farthest = lo.abs().max(hi.abs());
    if farthest <= max_pct {
        Explains::Within
    } else if nearest_to_zero > max_pct {
        Explains::Beyond
    } else {
        Explains::Undecided
    }
}

/// Every workload of a label against every claimed saving.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlausibleReport {
    pub label: String,
    pub rows: Vec<PlausibleRow>,
}

/// The plausibility of `savings` for the runs of `label`; with `observed`, a
/// comparison whose new side is `label`, the changes to explain.
pub fn plausible(
    store: &Store,
    label: &str,
    savings: &[Saving],
    observed: Option<&CompareReport>,
) -> Result<PlausibleReport, crate::AnalysisError> {
    plausible_of(label, &store.runs(label)?, savings, observed)
}

/// [`plausible`] of the runs of `label` as read (every run; the measured ones count).
pub fn plausible_of(
    label: &str,
    runs: &[RunRow],
    savings: &[Saving],
    observed: Option<&CompareReport>,
) -> Result<PlausibleReport, crate::AnalysisError> {
    let runs: Vec<&RunRow> = runs.iter().filter(|r| r.is_measured()).collect();
    if runs.is_empty() {
        return Err(crate::AnalysisError::Usage(format!(
            "no measured runs under '{label}'"
        )));
    }
    let workloads = by_workload(&runs);
    let costs = measured_costs(&workloads);
    let mut rows = Vec::new();
    for (key, runs) in &workloads {
        let Some((metric, cost_per_op, cost_unit)) = cost_per_op(runs) else {
            continue;
        };
        for saving in savings {
            if saving.unit != cost_unit {
                let (kind, wanted) = match cost_unit {
                    CostUnit::Insns => ("counted", "instructions, e.g. ipi=28insns"),
                    CostUnit::Ns => ("timed", "time, e.g. ipi=300ns"),
                };
                return Err(crate::AnalysisError::Usage(format!(
                    "'{label}' is {kind} ({} {metric} per op): give --saving {} in {wanted}",
                    cost_unit.symbol(),
                    saving.event.name(),
                )));
            }
            let events_per_op = saving
                .event
                .per_op_by_definition(&key.workload)
                .or_else(|| events_per_op(runs, saving.event));
            let max_change_pct = events_per_op.map(|e| 100.0 * e * saving.amount / cost_per_op);
            let change = observed.and_then(|r| observed_change(r, key, &metric));
            let needed_per_event = match (&change, events_per_op) {
                (Some(c), Some(e)) if e > 0.0 => Some(c.shift_pct.abs() / 100.0 * cost_per_op / e),
                _ => None,
            };
            let verdict = change
                .as_ref()
                .zip(max_change_pct)
                .map(|(c, max)| explains(c, max));
            rows.push(PlausibleRow {
                workload: key.workload.clone(),
                params: key.params.clone(),
                variant: key.variant.clone(),
                metric: metric.clone(),
                cost_per_op,
                cost_unit,
                runs: runs.len(),
                saving: *saving,
                events_per_op,
                max_change_pct,
                observed: change,
                needed_per_event,
                measured_cost: costs
                    .iter()
                    .find(|(e, _)| *e == saving.event)
                    .map(|(_, c)| c.clone()),
                explains: verdict,
            });
        }
    }
    Ok(PlausibleReport {
        label: label.to_string(),
        rows,
    })
}

fn by_workload<'a>(runs: &[&'a RunRow]) -> Vec<(RunKey, Vec<&'a RunRow>)> {
    let mut groups: Vec<(RunKey, Vec<&RunRow>)> = Vec::new();
    for &run in runs {
        let key = group::run_key(run);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(run),
            None => groups.push((key, vec![run])),
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    groups
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

/// The primary metric and its median per op in its cost unit, when it is a time per op
/// (pipe's usecs/op, a latency in ns) or, counted, instructions per op; a total is not.
fn cost_per_op(runs: &[&RunRow]) -> Option<(String, f64, CostUnit)> {
    let primary = runs[0].run.values.iter().find(|v| v.primary)?;
    let (scale, unit) = cost_per_unit(&primary.unit)?;
    let values = runs
        .iter()
        .filter_map(|r| r.run.values.iter().find(|v| v.metric == primary.metric))
        .map(|v| v.value * scale)
        .collect();
    Some((primary.metric.clone(), median(values)?, unit))
}

/// How many ns (or, counted, instructions) one unit of a per-op metric is; `None` for
/// a metric that is no cost per op.
fn cost_per_unit(unit: &str) -> Option<(f64, CostUnit)> {
    match unit {
        "insns" | "insns/op" => Some((1.0, CostUnit::Insns)),
        _ => Some((ns_per_unit(unit)?, CostUnit::Ns)),
    }
}

/// The median over runs of the sum of the event's per-op metrics; `None` when no run
/// has any of them.
fn events_per_op(runs: &[&RunRow], event: Event) -> Option<f64> {
    let per_run: Vec<f64> = runs
        .iter()
        .filter_map(|r| {
            let found: Vec<f64> = r
                .run
                .values
                .iter()
                .filter(|v| event.metrics().contains(&v.metric.as_str()))
                .map(|v| v.value)
                .collect();
            (!found.is_empty()).then(|| found.iter().sum())
        })
        .collect();
    median(per_run)
}

/// The primary row of `key` in a comparison (any placement or class split of it: the
/// first, as the compact report shows it).
fn observed_change(report: &CompareReport, key: &RunKey, metric: &str) -> Option<ObservedChange> {
    let row = report.rows.iter().find(|r| {
        r.role == Role::Primary
            && r.workload == key.workload
            && r.params == key.params
            && r.variant == key.variant
            && r.metric == metric
    })?;
    Some(ObservedChange {
        base: report.base.label.clone(),
        shift_pct: row.shift_pct?,
        ci_low_pct: row.ci_low_pct,
        ci_high_pct: row.ci_high_pct,
        verdict: row.verdict,
    })
}

/// What events cost here in all, from the label's own runs of the workloads that
/// measure them: the IPI round trip (`ipi`), a wake of an idle CPU (`wakeup`), and a
/// context switch as at most a same-CPU pipe op per switch; counted runs' in
/// instructions.
fn measured_costs(workloads: &[(RunKey, Vec<&RunRow>)]) -> Vec<(Event, MeasuredCost)> {
    let metric_median = |runs: &[&RunRow], metric: &str| -> Option<f64> {
        median(
            runs.iter()
                .filter_map(|r| r.run.values.iter().find(|v| v.metric == metric))
                .map(|v| v.value)
                .collect(),
        )
    };
    // A figure timed (ns, or pipe's us) or counted (instructions), in its cost unit.
    let either = |runs: &[&RunRow], timed: &str, ns_per: f64, counted: &str| {
        metric_median(runs, timed)
            .map(|v| v * ns_per)
            .or_else(|| metric_median(runs, counted))
    };
    let mut costs = Vec::new();
    for (key, runs) in workloads {
        let same_cpu = key.params.contains("placement=same-cpu");
        match WorkloadId::of(&key.workload) {
            Some(WorkloadId::Ipi) => {
                let round_trip = either(
                    runs,
                    "ipi_round_trip_p50_ns",
                    1.0,
                    "ipi_round_trip_p50_insns",
                );
                if let Some(amount) = round_trip {
                    for event in [Event::Ipi, Event::IpiCall] {
                        costs.push((event, cost(amount, "ipi/ipi round trip p50", false)));
                    }
                }
            }
            Some(WorkloadId::Wakeup) => {
                let wake = either(runs, "wake_latency_p50_ns", 1.0, "wake_latency_p50_insns");
                if let Some(amount) = wake {
                    costs.push((Event::Wake, cost(amount, "sched/wakeup latency p50", false)));
                }
            }
            Some(WorkloadId::Pipe) if same_cpu => {
                let per_op = either(runs, "usecs_per_op", 1e3, "insns_per_op")
                    .zip(metric_median(runs, "csw_per_op"));
                if let Some((op, csw)) = per_op.filter(|(_, csw)| *csw > 0.0) {
                    let source = "sched/pipe same-cpu: per op over csw/op";
                    costs.push((Event::Csw, cost(op / csw, source, true)));
                }
            }
            _ => {}
        }
    }
    // One cost per event: the first workload that measured it.
    let mut unique: Vec<(Event, MeasuredCost)> = Vec::new();
    for (event, c) in costs {
        if !unique.iter().any(|(e, _)| *e == event) {
            unique.push((event, c));
        }
    }
    unique
}

fn cost(amount: f64, source: &str, upper_bound: bool) -> MeasuredCost {
    MeasuredCost {
        amount,
        source: source.to_string(),
        upper_bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(shift: f64, ci: Option<(f64, f64)>) -> ObservedChange {
        ObservedChange {
            base: "base".into(),
            shift_pct: shift,
            ci_low_pct: ci.map(|c| c.0),
            ci_high_pct: ci.map(|c| c.1),
            verdict: Verdict::Inconclusive,
        }
    }

    #[test]
    fn the_interval_decides_whether_a_saving_explains_a_change() {
        // -6.5% [-8.1, -4.9] against a saving worth at most 0.4%: beyond.
        assert_eq!(
            explains(&change(-6.5, Some((-8.1, -4.9))), 0.4),
            Explains::Beyond
        );
        assert_eq!(
            explains(&change(-0.2, Some((-0.3, -0.1))), 0.4),
            Explains::Within
        );
        // An interval across zero that reaches past the bound: more runs decide.
        assert_eq!(
            explains(&change(9.3, Some((-7.5, 29.1))), 0.4),
            Explains::Undecided
        );
        assert_eq!(explains(&change(2.0, None), 0.4), Explains::Beyond);
        assert_eq!(explains(&change(0.3, None), 0.4), Explains::Within);
    }

    #[test]
    fn savings_parse_or_say_what_is_wrong() {
        assert_eq!(
            Saving::parse("ipi:call=250").unwrap(),
            Saving {
                event: Event::IpiCall,
                amount: 250.0,
                unit: CostUnit::Ns,
            }
        );
        // A time with its unit, or instructions for counted runs.
        let amount = |text: &str| {
            let s = Saving::parse(text).unwrap();
            (s.amount, s.unit)
        };
        assert_eq!(amount("irq=5ns"), (5.0, CostUnit::Ns));
        assert_eq!(amount("irq=0.3us"), (300.0, CostUnit::Ns));
        // µs as the micro sign (U+00B5) and as the Greek mu (U+03BC) write it.
        assert_eq!(amount("irq=0.3\u{b5}s"), (300.0, CostUnit::Ns));
        assert_eq!(amount("irq=0.3\u{3bc}s"), (300.0, CostUnit::Ns));
        assert_eq!(amount("irq=1ms"), (1e6, CostUnit::Ns));
        assert_eq!(amount("irq=0.002ms"), (2000.0, CostUnit::Ns));
        assert_eq!(amount("irq=5 ns"), (5.0, CostUnit::Ns));
        assert_eq!(amount("irq=5"), (5.0, CostUnit::Ns));
        assert_eq!(amount("irq=1e3"), (1000.0, CostUnit::Ns));
        assert_eq!(amount("ipi=28insns"), (28.0, CostUnit::Insns));
        assert_eq!(amount("ipi=28 insn"), (28.0, CostUnit::Insns));
        assert!(Saving::parse("ipi").unwrap_err().contains("EVENT=NS"));
        for bad in ["irq=5s", "irq=5\u{b5}", "irq=5ns5", "irq=\u{b5}s"] {
            assert!(
                Saving::parse(bad).unwrap_err().contains("positive number"),
                "{bad}"
            );
        }
        assert!(Saving::parse("ipi=5cycles")
            .unwrap_err()
            .contains("positive number"));
        assert!(Saving::parse("dma=5")
            .unwrap_err()
            .contains("unknown event"));
        for bad in ["csw=-1", "csw=0", "csw=NaN", "csw=inf", "csw=x"] {
            assert!(
                Saving::parse(bad).unwrap_err().contains("positive"),
                "{bad}"
            );
        }
    }
}
