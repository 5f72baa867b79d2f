//! A history: labels (kernels) in order on one machine, each metric's unit means per
//! label with their intervals, and the change points of the series
//! ([`kbench_stats::changepoint`]), found on unit means (boots, or sessions when the
//! whole history ran in one boot), never on runs.
use crate::bisect::MetricName;
use crate::compare::check_label;
use crate::group::{self, SideObservations};
use crate::label::LabelData;
use crate::model::machine_option;
use crate::sequential::log_unit_means;
use crate::AnalysisError;
use kbench_stats::changepoint::{e_divisive, step_between, ChangePointOptions, Step};
use kbench_stats::descriptive::mean;
use kbench_stats::parametric::mean_interval;
use kbench_stats::Level;
use kbench_store::{SessionScope, Store};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The order of the labels along the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryOrder {
    /// By each label's first session on the machine.
    Date,
    /// As the labels were given.
    Given,
    /// By where each label's commit stands in the tree's history
    /// ([`HistoryOptions::commit_positions`]).
    Commit,
}

impl HistoryOrder {
    /// The order `--by` names: `label`, `commit`, else by date.
    pub fn named(name: &str) -> HistoryOrder {
        match name {
            "label" => HistoryOrder::Given,
            "commit" => HistoryOrder::Commit,
            _ => HistoryOrder::Date,
        }
    }
}

/// What a history shows and how it looks for changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryOptions {
    pub order: HistoryOrder,
    /// Only this machine's sessions; every machine, each its own history, otherwise.
    pub machine: Option<String>,
    /// Only the metrics these specs name ([`MetricName::matches`]); the primary metrics
    /// otherwise.
    pub metrics: Vec<String>,
    /// The level of each label's interval and each step's.
    pub confidence: f64,
    pub change: ChangePointOptions,
    /// For [`HistoryOrder::Commit`]: each recorded commit's position along the tree's
    /// history, oldest first (the caller asks git).
    #[serde(skip)]
    pub commit_positions: BTreeMap<String, usize>,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            order: HistoryOrder::Date,
            machine: None,
            metrics: Vec::new(),
            confidence: 0.95,
            change: ChangePointOptions::default(),
            commit_positions: BTreeMap::new(),
        }
    }
}

/// One metric's history on one machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    /// The machine (`host: CPU model`), `None` for sessions that do not say.
    pub machine: Option<String>,
    pub metric: MetricName,
    pub unit: String,
    pub higher_is_better: bool,
    /// What a unit is: a boot, or a session when every label ran in one boot.
    pub level: Level,
    pub labels: Vec<HistoryLabel>,
    /// The runs of labels between change points: one segment when there is none.
    pub segments: Vec<HistorySegment>,
    pub changes: Vec<HistoryChange>,
}

/// Labels between two change points, pooled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistorySegment {
    /// Its first and last labels, indices into [`History::labels`].
    pub first: usize,
    pub last: usize,
    pub units: usize,
    /// The geometric mean of its units' means, with its t interval.
    pub mean: f64,
    pub ci: Option<(f64, f64)>,
}

/// A label's point of the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryLabel {
    pub label: String,
    pub units: usize,
    pub runs: usize,
    /// The geometric mean of its units' (geometric) means, in the metric's unit.
    pub mean: f64,
    /// Its t interval over the units, `None` with one unit.
    pub ci: Option<(f64, f64)>,
    /// Its first session on this machine.
    pub first_unix_ns: u64,
    /// The kernel release its first session ran, when recorded.
    pub kernel_release: Option<String>,
    /// The commit its kernel was built from, when recorded.
    pub commit: Option<String>,
}

/// A change point: where the series steps, between two labels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryChange {
    /// The first label after the change, an index into [`History::labels`].
    pub index: usize,
    pub before: String,
    pub after: String,
    /// From the units of the segment before to those of the segment after; `None` when
    /// a segment has fewer than two units.
    pub step: Option<Step>,
    /// Whether the step goes the metric's bad way (slower, fewer ops per second).
    pub regression: bool,
    pub p_value: f64,
    /// The command that compares the two labels on either side.
    pub compare: String,
}

/// The labels of a history, each read once: `labels`, or every label of the store, in
/// name order, when none is named; with `machine` (`--machine`), that machine's
/// sessions of them only.
pub fn load_labels(
    store: &Store,
    labels: &[String],
    machine: Option<&str>,
) -> Result<Vec<LabelData>, AnalysisError> {
    let names: Vec<String> = if labels.is_empty() {
        let mut all: Vec<String> = store.labels()?.into_iter().map(|l| l.label).collect();
        all.sort();
        all
    } else {
        for label in labels {
            check_label(store, label)?;
        }
        labels.to_vec()
    };
    // One machine's history reads that machine's sessions only: a lab's store holds
    // twenty machines' runs of every kernel.
    let scope = match machine {
        None => SessionScope::all(),
        Some(asked) => {
            let known = store.machines()?;
            let machine = crate::compare::resolve_machine(&known, asked);
            store.machine_scope(machine.as_deref().unwrap_or(asked))?
        }
    };
    names
        .iter()
        .map(|l| LabelData::load_in(store, l, &scope))
        .collect()
}

impl HistoryOptions {
    /// A usage error for options no history can be looked at with.
    pub fn check(&self) -> Result<(), AnalysisError> {
        let significance = self.change.significance;
        if !(significance > 0.0 && significance < 1.0) {
            return Err(AnalysisError::Usage(format!(
                "--significance {significance} is not a probability between 0 and 1"
            )));
        }
        Ok(())
    }
}

/// The commits `labels` recorded, sorted and each once, for their places along a git
/// tree's history ([`HistoryOptions::commit_positions`]); every label must have one.
pub fn recorded_commits(labels: &[LabelData]) -> Result<Vec<String>, AnalysisError> {
    let without: Vec<&str> = labels
        .iter()
        .filter(|l| label_commit(l).is_none())
        .map(|l| l.label.as_str())
        .collect();
    if !without.is_empty() {
        return Err(AnalysisError::Usage(format!(
            "--by commit: no commit recorded for {} (run --commit REV, or $KBENCH_COMMIT)",
            without.join(", ")
        )));
    }
    let mut commits: Vec<String> = labels
        .iter()
        .filter_map(|l| label_commit(l).map(str::to_string))
        .collect();
    commits.sort();
    commits.dedup();
    Ok(commits)
}

/// Every history the labels hold, with the options they were made with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryReport {
    pub options: HistoryOptions,
    pub histories: Vec<History>,
}

impl HistoryReport {
    /// The report, unless it is empty because of the machine or the metrics asked for:
    /// then a usage error saying where to find what there is.
    pub fn checked(self) -> Result<HistoryReport, AnalysisError> {
        if !self.histories.is_empty() {
            return Ok(self);
        }
        if let Some(machine) = &self.options.machine {
            return Err(AnalysisError::Usage(format!(
                "no runs on machine '{machine}' in these labels (kbench list --machines shows the machines)"
            )));
        }
        if !self.options.metrics.is_empty() {
            return Err(AnalysisError::Usage(format!(
                "no runs of --metric {} in these labels (kbench show LABEL shows their metrics)",
                self.options.metrics.join(", ")
            )));
        }
        Ok(self)
    }
}

/// The histories of `labels`: per machine, per metric. Labels without runs of a
/// metric on a machine are left out of that history.
pub fn history_report(labels: &[LabelData], opts: &HistoryOptions) -> HistoryReport {
    HistoryReport {
        options: opts.clone(),
        histories: histories(labels, opts),
    }
}

fn histories(labels: &[LabelData], opts: &HistoryOptions) -> Vec<History> {
    let mut out = Vec::new();
    for machine in machines(labels, opts.machine.as_deref()) {
        let mut on_machine: Vec<LabelData> = labels
            .iter()
            .map(|data| data.of_sessions(|s| s.machine == machine))
            .filter(|data| !data.sessions.is_empty())
            .collect();
        // Stable sorts: labels of one date or commit keep the order given.
        match opts.order {
            HistoryOrder::Date => on_machine.sort_by_key(first_start),
            HistoryOrder::Commit => on_machine.sort_by_key(|data| {
                label_commit(data)
                    .and_then(|c| opts.commit_positions.get(c).copied())
                    .unwrap_or(usize::MAX)
            }),
            HistoryOrder::Given => {}
        }
        let grouped: Vec<BTreeMap<MetricName, SideObservations>> =
            on_machine.iter().map(by_metric).collect();
        for metric in wanted_metrics(&grouped, &opts.metrics) {
            let history = history_of(&machine, &metric, &on_machine, &grouped, opts);
            // A metric whose every value is zero has no unit on the log scale.
            if !history.labels.is_empty() {
                out.push(history);
            }
        }
    }
    out
}

/// The machines whose histories are shown: `only` as `--machine` names it
/// ([`crate::compare::resolve_machine`]), or every machine of the labels.
fn machines(labels: &[LabelData], only: Option<&str>) -> Vec<Option<String>> {
    let all: BTreeSet<Option<String>> = labels
        .iter()
        .flat_map(|l| l.sessions.iter().map(|s| s.machine.clone()))
        .collect();
    if let Some(asked) = only {
        let known: Vec<&String> = all.iter().flatten().collect();
        let machine = crate::compare::resolve_machine(known.iter().copied(), asked);
        return vec![Some(machine.unwrap_or_else(|| asked.to_string()))];
    }
    all.into_iter().collect()
}

/// The commit the label's first session with one recorded (`--commit`, a bisection).
pub fn label_commit(data: &LabelData) -> Option<&str> {
    data.sessions
        .iter()
        .filter_map(|s| s.environment.as_ref()?.kernel.kernel_commit.as_deref())
        .next()
}

fn first_start(data: &LabelData) -> u64 {
    data.sessions
        .iter()
        .map(|s| s.started_unix_ns)
        .min()
        .unwrap_or(0)
}

fn by_metric(data: &LabelData) -> BTreeMap<MetricName, SideObservations> {
    group::group(&data.runs, &data.sessions)
        .into_iter()
        .map(|(key, side)| (MetricName::of(&key), side))
        .collect()
}

/// The metrics the specs name, or every primary metric, in name order.
fn wanted_metrics(
    grouped: &[BTreeMap<MetricName, SideObservations>],
    specs: &[String],
) -> Vec<MetricName> {
    let all: BTreeMap<&MetricName, bool> = grouped
        .iter()
        .flat_map(|metrics| metrics.iter().map(|(name, side)| (name, side.primary)))
        .collect();
    all.into_iter()
        .filter(|(name, primary)| {
            if specs.is_empty() {
                *primary
            } else {
                specs.iter().any(|spec| name.matches(spec))
            }
        })
        .map(|(name, _)| name.clone())
        .collect()
}

fn history_of(
    machine: &Option<String>,
    metric: &MetricName,
    on_machine: &[LabelData],
    grouped: &[BTreeMap<MetricName, SideObservations>],
    opts: &HistoryOptions,
) -> History {
    let with_metric: Vec<(&LabelData, &SideObservations)> = on_machine
        .iter()
        .zip(grouped)
        .filter_map(|(data, metrics)| Some((data, metrics.get(metric)?)))
        .collect();
    let level = unit_level(with_metric.iter().map(|(_, side)| *side));
    // A label whose values are all zero or negative has no unit on the log scale.
    let (sides, units): (Vec<(&LabelData, &SideObservations)>, Vec<Vec<f64>>) = with_metric
        .into_iter()
        .map(|(data, side)| ((data, side), log_unit_means(&side.observations, level)))
        .filter(|(_, units)| !units.is_empty())
        .unzip();
    let labels: Vec<HistoryLabel> = sides
        .iter()
        .zip(&units)
        .map(|((data, side), units)| history_label(data, side, units, opts.confidence))
        .collect();
    let points = e_divisive(&units, &opts.change);
    let first = sides.first().map(|(_, side)| *side);
    let higher_is_better = first.is_some_and(|side| side.higher_is_better);
    let mut bounds: Vec<usize> = points.iter().map(|p| p.index).collect();
    bounds.insert(0, 0);
    bounds.push(units.len());
    let pooled: Vec<Vec<f64>> = bounds
        .windows(2)
        .map(|w| units[w[0]..w[1]].concat())
        .collect();
    let segments = bounds
        .windows(2)
        .zip(&pooled)
        .filter(|(w, _)| w[1] > w[0])
        .map(|(w, units)| {
            let (mean, ci) = geometric_interval(units, opts.confidence);
            HistorySegment {
                first: w[0],
                last: w[1] - 1,
                units: units.len(),
                mean,
                ci,
            }
        })
        .collect();
    let changes = points
        .iter()
        .enumerate()
        .map(|(i, point)| {
            let (before, after) = (&pooled[i], &pooled[i + 1]);
            let went_up = mean(after) > mean(before);
            let (before_label, after_label) =
                (&labels[point.index - 1].label, &labels[point.index].label);
            HistoryChange {
                index: point.index,
                before: before_label.clone(),
                after: after_label.clone(),
                step: step_between(before, after, opts.confidence),
                regression: went_up != higher_is_better,
                p_value: point.p_value,
                compare: format!(
                    "kbench compare {before_label} {after_label}{}",
                    machine.as_deref().map(machine_option).unwrap_or_default()
                ),
            }
        })
        .collect();
    History {
        machine: machine.clone(),
        metric: metric.clone(),
        unit: first.map(|side| side.unit.clone()).unwrap_or_default(),
        higher_is_better,
        level,
        labels,
        segments,
        changes,
    }
}

/// The geometric mean of log unit values and its t interval (`None` with one unit).
fn geometric_interval(units: &[f64], confidence: f64) -> (f64, Option<(f64, f64)>) {
    let ci = mean_interval(units, confidence).map(|(low, high)| (low.exp(), high.exp()));
    (mean(units).exp(), ci)
}

/// Boots, unless every run of the history ran in one boot: then sessions.
fn unit_level<'a>(sides: impl Iterator<Item = &'a SideObservations>) -> Level {
    let mut boots = BTreeSet::new();
    for side in sides {
        boots.extend(side.observations.iter().map(|o| o.boot.clone()));
        if boots.len() > 1 {
            return Level::Boot;
        }
    }
    Level::Session
}

fn history_label(
    data: &LabelData,
    side: &SideObservations,
    units: &[f64],
    confidence: f64,
) -> HistoryLabel {
    let (mean, ci) = geometric_interval(units, confidence);
    let first = data.sessions.iter().min_by_key(|s| s.started_unix_ns);
    HistoryLabel {
        label: data.label.clone(),
        units: units.len(),
        runs: side.observations.len(),
        mean,
        ci,
        first_unix_ns: first.map_or(0, |s| s.started_unix_ns),
        kernel_release: first
            .and_then(crate::snapshot)
            .and_then(|snap| snap.kernel_release.clone()),
        commit: label_commit(data).map(str::to_string),
    }
}
