//! Two labels looked at sequentially: every primary metric's units (boots, sessions,
//! or the runs of one interleaved `ab`) given to `kbench_stats::sequential`, whose
//! interval may be looked at after every unit. `compare --sequential` asks it once;
//! `vm-ab --until-decided` after every pair of boots.
use crate::calibration::{self, Calibration, ComponentKey};
use crate::group::{self, Key, Side};
use crate::{AnalysisError, LabelData};
use kbench_stats::sequential::{self, KnownNoise, Look, SequentialDesign};
use kbench_stats::{Level, Observation};
use kbench_store::Store;
use serde::Serialize;
use std::collections::BTreeMap;

/// The design of a sequential comparison, fixed before its first unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SequentialOptions {
    /// The false-claim rate of all primary metrics together, over every look.
    pub alpha: f64,
    /// The practical threshold, percent.
    pub delta_pct: f64,
    /// Units a side at which the comparison stops undecided.
    pub max_units_per_side: usize,
    /// Borrow a calibration of this machine for session units.
    pub use_calibration: bool,
}

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

/// Reads both labels and looks at them (see [`sequential_loaded`]).
pub fn sequential_labels(
    store: &Store,
    base: &str,
    new: &str,
    options: SequentialOptions,
) -> Result<SequentialReport, AnalysisError> {
    if base == new {
        return Err(AnalysisError::Usage(format!(
            "compare {base} with another label, not with itself"
        )));
    }
    let (a, b) = (LabelData::load(store, base)?, LabelData::load(store, new)?);
    sequential_of(store, &a, &b, options)
}

/// Looks at two labels already loaded; `store` gives this machine's calibration.
pub fn sequential_of(
    store: &Store,
    a: &LabelData,
    b: &LabelData,
    options: SequentialOptions,
) -> Result<SequentialReport, AnalysisError> {
    for data in [a, b] {
        if data.sessions.is_empty() {
            return Err(AnalysisError::Usage(format!(
                "no label {:?} in the database (kbench list shows the labels)",
                data.label
            )));
        }
    }
    let calibration = match options.use_calibration {
        true => same_machine_calibration(store, a, b)?,
        false => None,
    };
    Ok(sequential_loaded(a, b, options, calibration.as_ref()))
}

/// The newest calibration of the machine both labels ran on, if they ran on one.
fn same_machine_calibration(
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
/// α split among them.
pub fn sequential_loaded(
    a: &LabelData,
    b: &LabelData,
    options: SequentialOptions,
    calibration: Option<&Calibration>,
) -> SequentialReport {
    let (groups_a, groups_b) = (
        group::group(&a.runs, &a.sessions),
        group::group(&b.runs, &b.sessions),
    );
    let primaries: Vec<(&Key, &Side, &Side)> = groups_a
        .iter()
        .filter(|(_, side)| side.primary)
        .filter_map(|(key, side_a)| Some((key, side_a, groups_b.get(key)?)))
        .collect();
    let count = primaries.len();
    let rows = primaries
        .into_iter()
        .map(|(key, side_a, side_b)| row(key, side_a, side_b, &options, count, calibration))
        .collect();
    SequentialReport {
        base: a.label.clone(),
        new: b.label.clone(),
        options,
        alpha_per_row: options.alpha / count.max(1) as f64,
        rows,
    }
}

fn row(
    key: &Key,
    a: &Side,
    b: &Side,
    options: &SequentialOptions,
    primaries: usize,
    calibration: Option<&Calibration>,
) -> SequentialRow {
    let level = kbench_stats::choose_design(&a.observations, &b.observations).level();
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
        calibrated: known.is_some(),
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
    let mut units: BTreeMap<String, (usize, f64, usize)> = BTreeMap::new();
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
        };
        let design = SequentialDesign {
            alpha: 0.05,
            delta_pct: 1.0,
            max_units_per_side: 20,
            primaries: 2,
            higher_is_better: false,
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
