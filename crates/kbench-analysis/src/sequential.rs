//! Two labels looked at sequentially: every primary metric's units (boots, sessions,
//! or the runs of one interleaved `ab`) given to `kbench_stats::sequential`, whose
//! interval may be looked at after every unit. `compare --sequential` asks it once;
//! `vm-ab --until-decided` after every pair of boots.
use crate::calibration::{self, Calibration, ComponentKey};
use crate::group::{self, Key, SideObservations};
use crate::metric::MetricName;
use crate::{AnalysisError, LabelData};
use kbench_record::sequential::{self as record, LookOutcome, LookRow, RecordedDesign};
use kbench_stats::sequential::{self, Boundary, Decision, KnownNoise, Look, SequentialDesign};
use kbench_stats::{Level, Observation};
use kbench_store::Store;
use serde::Serialize;
use std::collections::BTreeMap;

pub use kbench_record::sequential::SequentialOptions;

/// One primary metric, looked at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SequentialRow {
    pub workload: String,
    pub params: String,
    pub variant: String,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// What the units are: boots, sessions, or runs.
    pub level: Level,
    /// Whether a calibration's between-session spread was pooled in.
    pub calibrated: bool,
    pub look: Look,
}

/// Every primary metric both labels have, looked at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SequentialReport {
    pub base: String,
    pub new: String,
    pub options: SequentialOptions,
    /// α for each row: the family's α split among the rows (Bonferroni).
    pub alpha_per_row: f64,
    pub rows: Vec<SequentialRow>,
    /// The design recorded for these labels and its looks, when this look used it.
    pub recorded: Option<RecordedDesign>,
}

impl SequentialReport {
    /// Whether every primary metric is decided (or at the bound).
    pub fn decided(&self) -> bool {
        !self.rows.is_empty() && self.rows.iter().all(|r| r.look.decision.is_final())
    }

    /// No more units will come (the time bound, or the last boot run with some of them
    /// failed): every metric still open is undecided, with its interval.
    pub fn close_undecided(&mut self) {
        for row in self.rows.iter_mut().filter(|r| !r.look.decision.is_final()) {
            row.look.decision = sequential::Decision::Undecided;
        }
    }
}

/// What a command asked of a design beyond the defaults: a recorded design must not
/// be changed after its data were seen.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AskedDesign {
    pub alpha: Option<f64>,
    pub delta_pct: Option<f64>,
    pub max_units_per_side: Option<usize>,
    pub no_calibration: bool,
}

impl AskedDesign {
    /// What of `fixed` (a recorded design's options) this asks to change, each as the
    /// recorded design has it: nothing when it asks for what was recorded.
    pub fn changes(&self, fixed: &SequentialOptions) -> Vec<String> {
        let mut changed = Vec::new();
        if self.alpha.is_some_and(|a| a != fixed.alpha) {
            changed.push(format!("α {}", fixed.alpha));
        }
        if self.delta_pct.is_some_and(|d| d != fixed.delta_pct) {
            changed.push(format!("δ {}%", fixed.delta_pct));
        }
        if self
            .max_units_per_side
            .is_some_and(|m| m != fixed.max_units_per_side)
        {
            changed.push(format!("at most {} a side", fixed.max_units_per_side));
        }
        if self.no_calibration && fixed.use_calibration {
            changed.push("with this machine's calibration".to_string());
        }
        changed
    }
}

/// The options to look with: the recorded design's, when the labels have one, else
/// `fresh`. Asking the recorded design for another α, δ, bound or calibration is
/// refused: choosing them after seeing the data would not hold the error rate.
pub fn options_for(
    recorded: Option<&RecordedDesign>,
    asked: AskedDesign,
    fresh: SequentialOptions,
) -> Result<SequentialOptions, AnalysisError> {
    let Some(recorded) = recorded else {
        return Ok(fresh);
    };
    let fixed = recorded.design.options;
    let changed = asked.changes(&fixed);
    match changed.is_empty() {
        true => Ok(fixed),
        false => Err(AnalysisError::Usage(format!(
            "{} and {} were looked at under a recorded design ({}; `{}`): another design after seeing the data would not hold its error rate",
            recorded.design.base_label,
            recorded.design.new_label,
            changed.join(", "),
            recorded.design.command_line
        ))),
    }
}

/// The sequential design of a verdict's options: its α and δ (when not given, the
/// default of the figures' clock: 1% timed, less counted), stopping undecided at
/// `max_units_per_side`, read against `boundary` (a declared maximum, or none).
pub fn options_of_report(
    options: &crate::ReportOptions,
    max_units_per_side: usize,
    boundary: Boundary,
    clock: kbench_record::Clock,
) -> SequentialOptions {
    SequentialOptions {
        boundary,
        alpha: options.alpha,
        delta_pct: options
            .delta_pct
            .unwrap_or(crate::clock::default_delta_pct(clock)),
        max_units_per_side,
        use_calibration: options.use_calibration,
    }
}

/// Records the design of a sequential comparison of `labels` by `by`, made by
/// `command_line` at `now_unix_ns`, before its first look: the design, with no looks yet.
pub fn record_design(
    store: &mut Store,
    labels: (&str, &str),
    options: SequentialOptions,
    by: record::DesignedBy,
    command_line: &str,
    max_time_s: Option<f64>,
    now_unix_ns: u64,
) -> Result<RecordedDesign, kbench_store::StoreError> {
    let design = design_record(labels, options, by, command_line, max_time_s, now_unix_ns);
    let id = store.insert_sequential_design(&design)?;
    Ok(RecordedDesign {
        id,
        design,
        looks: Vec::new(),
    })
}

/// Records a look under the labels' design (recording the design first, as made by
/// `command_line` at `now_unix_ns`, if they have none); the design with its looks. A
/// closed design, or a look at the same units as its last, adds nothing.
pub fn record_look(
    store: &mut Store,
    recorded: Option<RecordedDesign>,
    report: &SequentialReport,
    command_line: &str,
    now_unix_ns: u64,
) -> Result<RecordedDesign, kbench_store::StoreError> {
    let mut recorded = match recorded {
        Some(recorded) => recorded,
        None => {
            let (labels, by) = (
                (report.base.as_str(), report.new.as_str()),
                record::DesignedBy::Compare,
            );
            record_design(
                store,
                labels,
                report.options,
                by,
                command_line,
                None,
                now_unix_ns,
            )?
        }
    };
    let look = look_record(report, recorded.looks.len() as u64 + 1, now_unix_ns);
    if !recorded.is_closed() && is_new_look(&recorded, &look) {
        store.insert_sequential_look(recorded.id, &look)?;
        recorded.looks.push(look);
    }
    Ok(recorded)
}

/// `base` and `new` looked at under their `recorded` design, as it was when they ran,
/// and the fixed design's comparison of the same units, for its diagnostics.
pub fn decided_and_fixed(
    store: &Store,
    (base, new): (&str, &str),
    recorded: RecordedDesign,
    options: crate::ReportOptions,
    machines: &crate::Machines,
) -> Result<(SequentialReport, crate::CompareReport), AnalysisError> {
    let design = recorded.design.options;
    let (base_data, new_data) = (LabelData::load(store, base)?, LabelData::load(store, new)?);
    let mut look = sequential_of(store, &base_data, &new_data, design, Some(&recorded))?;
    look.recorded = Some(recorded);
    let fixed = crate::compare_loaded(store, &base_data, &new_data, options, machines)?;
    Ok((look, fixed))
}

/// How `compare BASE NEW` answers two labels a sequential design may have been
/// recorded for (`ab` or `vm-ab --until-decided`, `compare --sequential`).
#[derive(Debug)]
pub enum UnderRecorded {
    /// No design is recorded for them: the fixed design's verdict alone.
    NoDesign,
    /// One is, but what was asked only the fixed design gives (another design among
    /// it): its verdict, with a word that the recorded design's is another.
    FixedOnly(RecordedDesign),
    /// The sequential rule's verdict, as it was when they ran, and the fixed design's
    /// report of the same units for its diagnostics ([`decided_and_fixed`]).
    Decided(Box<(SequentialReport, crate::CompareReport)>),
}

/// `base` and `new` under their recorded design, if any, for a compare that asks
/// `asked` of it, and asks what only the fixed design gives when `fixed_only`.
pub fn under_recorded(
    store: &Store,
    labels: (&str, &str),
    (asked, fixed_only): (AskedDesign, bool),
    options: crate::ReportOptions,
    machines: &crate::Machines,
) -> Result<UnderRecorded, AnalysisError> {
    let Some(recorded) = store.sequential_design(labels.0, labels.1)? else {
        return Ok(UnderRecorded::NoDesign);
    };
    if fixed_only || !asked.changes(&recorded.design.options).is_empty() {
        return Ok(UnderRecorded::FixedOnly(recorded));
    }
    let decided = decided_and_fixed(store, labels, recorded, options, machines)?;
    Ok(UnderRecorded::Decided(Box::new(decided)))
}

/// The bound of a design `compare --sequential` records, in sessions or boots a side.
pub const COMPARE_MAX_UNITS: u32 = 20;

/// The design `compare --sequential` looks at `base` and `new` with: their `recorded`
/// one (a usage error when `asked` would change it), else one made now from `options`,
/// with the default δ of the labels' clock and, since nobody declared how many sessions
/// or boots will come, the always-valid rule.
pub fn design_for_labels(
    store: &Store,
    (base, new): (&str, &str),
    recorded: Option<&RecordedDesign>,
    asked: AskedDesign,
    options: &crate::ReportOptions,
    max_units_per_side: usize,
) -> Result<SequentialOptions, AnalysisError> {
    let clock =
        crate::clock::shared_clock((base, &store.sessions(base)?), (new, &store.sessions(new)?))?;
    let fresh = options_of_report(options, max_units_per_side, Boundary::AlwaysValid, clock);
    options_for(recorded, asked, fresh)
}

/// `compare --sequential`: `base` and `new` looked at with their recorded design
/// ([`design_for_labels`]), and the look recorded under it (the design first, when
/// they have none), as made by `command_line` at `now_unix_ns`. `false` beside the
/// report when the database may only be read: it still answers, and keeps no look.
pub fn look_and_record(
    store: &mut Store,
    labels: (&str, &str),
    asked: AskedDesign,
    options: &crate::ReportOptions,
    max_units_per_side: usize,
    (command_line, now_unix_ns): (&str, u64),
) -> Result<(SequentialReport, bool), AnalysisError> {
    let recorded = store.sequential_design(labels.0, labels.1)?;
    let design = design_for_labels(
        store,
        labels,
        recorded.as_ref(),
        asked,
        options,
        max_units_per_side,
    )?;
    let mut report = sequential_labels(store, labels.0, labels.1, design, recorded.as_ref())?;
    let recording = record_look(store, recorded.clone(), &report, command_line, now_unix_ns);
    let kept = match recording {
        Ok(recorded) => {
            report.recorded = Some(recorded);
            true
        }
        Err(kbench_store::StoreError::Sqlite(e)) if kbench_store::store::is_read_only(&e) => {
            report.recorded = recorded;
            false
        }
        Err(e) => return Err(e.into()),
    };
    Ok((report, kept))
}

/// The record of a design, before its first look.
pub fn design_record(
    labels: (&str, &str),
    options: SequentialOptions,
    by: record::DesignedBy,
    command_line: &str,
    max_time_s: Option<f64>,
    created_unix_ns: u64,
) -> record::DesignRecord {
    record::DesignRecord {
        base_label: labels.0.to_string(),
        new_label: labels.1.to_string(),
        by,
        created_unix_ns,
        kbench_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: command_line.to_string(),
        options,
        max_time_s,
    }
}

/// The record of one look.
pub fn look_record(
    report: &SequentialReport,
    index: u64,
    at_unix_ns: u64,
) -> record::SequentialLook {
    record::SequentialLook {
        index,
        at_unix_ns,
        rows: report
            .rows
            .iter()
            .map(|r| {
                look_row(
                    (&r.workload, &r.params, &r.variant, &r.metric),
                    &r.look,
                    r.level,
                )
            })
            .collect(),
    }
}

/// One metric's look, as recorded; the key is (workload, params, variant, metric),
/// `level` what its units were.
pub fn look_row(key: (&str, &str, &str, &str), look: &Look, level: Level) -> LookRow {
    LookRow {
        unit_level: Some(level),
        workload: key.0.to_string(),
        params: key.1.to_string(),
        variant: key.2.to_string(),
        metric: key.3.to_string(),
        n_a: look.n_a as u64,
        n_b: look.n_b as u64,
        shift_pct: look.shift_pct,
        interval_pct: look.interval_pct,
        outcome: outcome_of(&look.decision),
    }
}

fn outcome_of(decision: &Decision) -> LookOutcome {
    match decision {
        Decision::Continue { .. } => LookOutcome::Continue,
        Decision::Regression => LookOutcome::Regression,
        Decision::Improvement => LookOutcome::Improvement,
        Decision::Changed => LookOutcome::Changed,
        Decision::Equivalent => LookOutcome::Equivalent,
        Decision::Undecided => LookOutcome::Undecided,
    }
}

/// Whether `look` saw other units than the design's last recorded look: a look at
/// the same units again adds nothing to the record.
pub fn is_new_look(recorded: &RecordedDesign, look: &record::SequentialLook) -> bool {
    let units = |l: &record::SequentialLook| -> Vec<(u64, u64)> {
        l.rows.iter().map(|r| (r.n_a, r.n_b)).collect()
    };
    recorded
        .looks
        .last()
        .is_none_or(|last| units(last) != units(look))
}

/// Reads both labels and looks at them (see [`sequential_of`]).
pub fn sequential_labels(
    store: &Store,
    base: &str,
    new: &str,
    options: SequentialOptions,
    recorded: Option<&RecordedDesign>,
) -> Result<SequentialReport, AnalysisError> {
    if base == new {
        return Err(AnalysisError::Usage(format!(
            "compare {base} with another label, not with itself"
        )));
    }
    let (a, b) = (LabelData::load(store, base)?, LabelData::load(store, new)?);
    sequential_of(store, &a, &b, options, recorded)
}

/// Looks at two labels already loaded, under `recorded`, the design the caller holds
/// for them, if any ([`FixedAtFirstLook`]); `store` gives this machine's calibration.
pub fn sequential_of(
    store: &Store,
    a: &LabelData,
    b: &LabelData,
    options: SequentialOptions,
    recorded: Option<&RecordedDesign>,
) -> Result<SequentialReport, AnalysisError> {
    for data in [a, b] {
        if data.sessions.is_empty() {
            return Err(AnalysisError::Usage(format!(
                "no label {:?} in the database (kbench list shows the labels)",
                data.label
            )));
        }
    }
    crate::clock::shared_clock((&a.label, &a.sessions), (&b.label, &b.sessions))?;
    let calibration = match options.use_calibration {
        true => same_machine_calibration(store, a, b)?,
        false => None,
    };
    let fixed = recorded.and_then(FixedAtFirstLook::of);
    Ok(sequential_loaded(
        a,
        b,
        options,
        calibration.as_ref(),
        fixed.as_ref(),
    ))
}

/// What a design's first look fixed for the whole decision: which primary metrics share
/// α, so the Bonferroni count is the same at every look, and what each one's units are,
/// so one sequence of looks spends its α. Without it, labels grown by a second
/// interleaved `ab` would be looked at first with runs as units and then with sessions:
/// two sequences under one α, up to 2α.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedAtFirstLook {
    /// Each primary metric of the first look, with its units' level when recorded.
    pub levels: BTreeMap<MetricName, Option<Level>>,
}

impl FixedAtFirstLook {
    /// `None` before the design's first look.
    pub fn of(recorded: &RecordedDesign) -> Option<FixedAtFirstLook> {
        let first = recorded.looks.iter().find(|l| !l.rows.is_empty())?;
        let levels = first
            .rows
            .iter()
            .map(|r| (MetricName::of_look_row(r), r.unit_level))
            .collect();
        Some(FixedAtFirstLook { levels })
    }

    /// What `report`, a design's first look that saw any metric, fixes.
    pub fn of_report(report: &SequentialReport) -> Option<FixedAtFirstLook> {
        let levels: BTreeMap<MetricName, Option<Level>> = report
            .rows
            .iter()
            .map(|r| {
                let name = MetricName {
                    workload: r.workload.clone(),
                    params: r.params.clone(),
                    variant: r.variant.clone(),
                    metric: r.metric.clone(),
                };
                (name, Some(r.level))
            })
            .collect();
        (!levels.is_empty()).then_some(FixedAtFirstLook { levels })
    }

    fn primaries(&self) -> usize {
        self.levels.len()
    }

    /// Whether `key` is one of the design's metrics, and its level if recorded.
    fn level_of(&self, key: &Key) -> Option<Option<Level>> {
        self.levels.get(&MetricName::of(key)).copied()
    }
}

/// The newest calibration of the machine both labels ran on, if they ran on one.
pub fn same_machine_calibration(
    store: &Store,
    a: &LabelData,
    b: &LabelData,
) -> Result<Option<Calibration>, AnalysisError> {
    match (
        calibration::fingerprint_of(&a.sessions),
        calibration::fingerprint_of(&b.sessions),
    ) {
        (Some(fa), Some(fb)) if fa.same_machine(&fb) => calibration::matching(store, &fb),
        _ => Ok(None),
    }
}

/// Every primary metric of both labels, its units given to the sequential rule with
/// α split among them. Under a design already looked at (`fixed`), only the metrics of
/// its first look, α split as it was then, each with the units it had then.
pub fn sequential_loaded(
    a: &LabelData,
    b: &LabelData,
    options: SequentialOptions,
    calibration: Option<&Calibration>,
    fixed: Option<&FixedAtFirstLook>,
) -> SequentialReport {
    let (groups_a, groups_b) = (
        group::group(&a.runs, &a.sessions),
        group::group(&b.runs, &b.sessions),
    );
    let primaries: Vec<(&Key, &SideObservations, &SideObservations, Option<Level>)> = groups_a
        .iter()
        .filter(|(_, side)| side.primary)
        .filter_map(|(key, side_a)| {
            let level = match fixed {
                Some(fixed) => fixed.level_of(key)?,
                None => None,
            };
            Some((key, side_a, groups_b.get(key)?, level))
        })
        .collect();
    let count = fixed.map_or(primaries.len(), FixedAtFirstLook::primaries);
    let rows = primaries
        .into_iter()
        .map(|(key, side_a, side_b, level)| {
            let level = level.unwrap_or_else(|| {
                kbench_stats::choose_design(&side_a.observations, &side_b.observations).level()
            });
            row(key, (side_a, side_b), level, &options, count, calibration)
        })
        .collect();
    SequentialReport {
        base: a.label.clone(),
        new: b.label.clone(),
        options,
        alpha_per_row: options.alpha / count.max(1) as f64,
        rows,
        recorded: None,
    }
}

fn row(
    key: &Key,
    (a, b): (&SideObservations, &SideObservations),
    level: Level,
    options: &SequentialOptions,
    primaries: usize,
    calibration: Option<&Calibration>,
) -> SequentialRow {
    let known = match level {
        Level::Session => calibration.and_then(|c| session_noise(c, key)),
        Level::Run | Level::Boot => None,
    };
    let design = SequentialDesign {
        alpha: options.alpha,
        delta_pct: options.delta_pct,
        max_units_per_side: options.max_units_per_side,
        primaries,
        higher_is_better: a.higher_is_better,
        boundary: options.boundary,
    };
    let look = sequential::look(
        &design,
        &log_unit_means(&a.observations, level),
        &log_unit_means(&b.observations, level),
        known,
    );
    SequentialRow {
        workload: key.run.workload.clone(),
        params: key.run.params.clone(),
        variant: key.run.variant.clone(),
        metric: key.metric.clone(),
        unit: a.unit.clone(),
        higher_is_better: a.higher_is_better,
        level,
        calibrated: look.borrowed_calibration(),
        look,
    }
}

/// The calibrated spread of a session's estimate of this metric, if calibrated.
fn session_noise(calibration: &Calibration, key: &Key) -> Option<KnownNoise> {
    let noise = calibration.find(&ComponentKey {
        run: key.run.clone(),
        metric: key.metric.clone(),
        pooled_quantile: None,
    })?;
    Some(KnownNoise {
        unit_sd: noise.session_sd?,
        df: noise.session_df as f64,
    })
    .filter(|k| k.df >= 1.0)
}

/// The mean log value of each unit at `level`, in order of first appearance; values
/// that are not positive have no log and are left out.
pub fn log_unit_means(observations: &[Observation], level: Level) -> Vec<f64> {
    let logs = observations
        .iter()
        .filter(|o| o.value > 0.0 && o.value.is_finite())
        .map(|o| (o, o.value.ln()));
    let unit_of = match level {
        Level::Run => return logs.map(|(_, log)| log).collect(),
        Level::Session => |o: &Observation| o.session.clone(),
        Level::Boot => |o: &Observation| o.boot.clone(),
    };
    // (first position, sum of logs, count) per unit.
    let mut units: BTreeMap<std::sync::Arc<str>, (usize, f64, usize)> = BTreeMap::new();
    for (i, (o, log)) in logs.enumerate() {
        let entry = units.entry(unit_of(o)).or_insert((i, 0.0, 0));
        entry.1 += log;
        entry.2 += 1;
    }
    let mut means: Vec<(usize, f64)> = units
        .into_values()
        .map(|(first, sum, n)| (first, sum / n as f64))
        .collect();
    means.sort_by_key(|&(first, _)| first);
    means.into_iter().map(|(_, mean)| mean).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(value: f64, boot: &str, session: &str) -> Observation {
        Observation {
            value,
            boot: boot.into(),
            session: session.into(),
            order: 0,
        }
    }

    #[test]
    fn closing_makes_open_metrics_undecided_and_keeps_decided_ones() {
        let options = SequentialOptions {
            alpha: 0.05,
            delta_pct: 1.0,
            max_units_per_side: 20,
            use_calibration: false,
            boundary: Boundary::AlwaysValid,
        };
        let design = SequentialDesign {
            alpha: 0.05,
            delta_pct: 1.0,
            max_units_per_side: 20,
            primaries: 2,
            higher_is_better: false,
            boundary: Boundary::AlwaysValid,
        };
        let row = |a: &[f64], b: &[f64]| SequentialRow {
            workload: "sched/pipe".into(),
            params: String::new(),
            variant: String::new(),
            metric: "usecs_per_op".into(),
            unit: "us/op".into(),
            higher_is_better: false,
            level: Level::Boot,
            calibrated: false,
            look: sequential::look(&design, a, b, None),
        };
        let spread = [0.0, 0.01, -0.01, 0.005, -0.005, 0.0, 0.002, -0.002];
        let doubled: Vec<f64> = spread.iter().map(|v| v + 2f64.ln()).collect();
        let mut report = SequentialReport {
            base: "a".into(),
            new: "b".into(),
            options,
            alpha_per_row: 0.025,
            rows: vec![row(&[0.0], &[0.1]), row(&spread, &doubled)],
            recorded: None,
        };
        assert!(!report.decided());
        assert_eq!(
            report.rows[1].look.decision,
            sequential::Decision::Regression
        );
        report.close_undecided();
        assert!(report.decided());
        assert_eq!(
            report.rows[0].look.decision,
            sequential::Decision::Undecided
        );
        assert_eq!(
            report.rows[1].look.decision,
            sequential::Decision::Regression
        );
    }

    #[test]
    fn units_are_mean_logs_in_order_of_first_appearance() {
        let o = [
            obs(4.0, "b2", "s2"),
            obs(1.0, "b1", "s1"),
            obs(16.0, "b2", "s3"),
            obs(0.0, "b1", "s1"),
        ];
        let near = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
        };
        assert!(near(&log_unit_means(&o, Level::Boot), &[8f64.ln(), 0.0]));
        assert!(near(
            &log_unit_means(&o, Level::Session),
            &[4f64.ln(), 0.0, 16f64.ln()]
        ));
        assert!(near(
            &log_unit_means(&o, Level::Run),
            &[4f64.ln(), 0.0, 16f64.ln()]
        ));
    }
}
