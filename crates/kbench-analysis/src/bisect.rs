//! What a bisection decides with, from labels already loaded: the boots of each commit
//! as units of its primary metrics, the check that good and bad differ (the sequential
//! rule of `vm-ab --until-decided`), and each step's look ([`kbench_stats::bisect`]).
use crate::group;
use crate::label::LabelData;
pub use crate::metric::MetricName;
use crate::sequential::log_unit_means;
use kbench_stats::bisect::{noise_of, step_look, StepLook};
use kbench_stats::sequential::{look, Boundary, KnownNoise, Look, SequentialDesign};
use kbench_stats::Level;
use std::collections::{BTreeMap, BTreeSet};

/// One metric's boots: the mean log value of each successful boot, in the order they
/// were stored, its direction, and whether it is one of the suite's primary metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BootUnits {
    pub units: Vec<f64>,
    pub higher_is_better: bool,
    pub primary: bool,
}

/// The label's first `sessions` sessions (in the order they were stored: a bisection
/// resumed decides on the boots it had then, not on later ones), as boot units of each
/// metric.
pub fn boot_units(data: &LabelData, sessions: usize) -> BTreeMap<MetricName, BootUnits> {
    let mut ids: Vec<i64> = data.sessions.iter().map(|s| s.id).collect();
    ids.sort_unstable();
    let kept: BTreeSet<i64> = ids.into_iter().take(sessions).collect();
    let used = data.of_sessions(|s| kept.contains(&s.id));
    group::group(&used.runs, &used.sessions)
        .into_iter()
        .map(|(key, side)| {
            (
                MetricName::of(&key),
                BootUnits {
                    units: log_unit_means(&side.observations, Level::Boot),
                    higher_is_better: side.higher_is_better,
                    primary: side.primary,
                },
            )
        })
        .collect()
}

/// Whether two commits differ on a metric (good and bad; the first bad commit and its
/// parent): the sequential rule over their boots, at `alpha` with the practical
/// threshold `delta_pct` and a bound of `max_boots` a side. `known`: the spread of
/// other boots of this machine and suite (the endpoints', for the confirmation).
pub fn endpoints_look(
    good: &BootUnits,
    bad: &BootUnits,
    alpha: f64,
    delta_pct: f64,
    max_boots: usize,
    known: Option<KnownNoise>,
) -> Look {
    let design = SequentialDesign {
        alpha,
        delta_pct,
        max_units_per_side: max_boots,
        primaries: 1,
        higher_is_better: good.higher_is_better,
        boundary: Boundary::DeclaredMaximum,
    };
    look(&design, &good.units, &bad.units, known)
}

/// The spread of boots of both ends, pooled, as a known spread for later comparisons.
pub fn endpoints_noise(good: &BootUnits, bad: &BootUnits) -> Option<KnownNoise> {
    noise_of(&[&good.units, &bad.units])
}

/// One look at a step: the candidate's boots against the endpoints'.
pub fn candidate_look(
    good: &BootUnits,
    bad: &BootUnits,
    candidate: &BootUnits,
    alpha: f64,
    max_boots: usize,
) -> StepLook {
    step_look(&good.units, &bad.units, &candidate.units, alpha, max_boots)
}

/// α for each decision of a bisection over `commits` commits: one α for the whole
/// bisection, by the union bound over the decisions it makes: good against bad, the
/// ⌈log2(commits + 1)⌉ steps, and the confirmation. Good against bad once had α of its
/// own, and the steps α again: 2α in all.
pub fn alpha_per_step(alpha: f64, commits: usize) -> f64 {
    let steps = (commits as f64 + 1.0).log2().ceil().max(1.0);
    alpha / (steps + 2.0)
}

/// What a bisection did, for its closing lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BisectCounts {
    pub built: usize,
    pub kept_builds: usize,
    pub failed_builds: usize,
    pub booted: usize,
    pub reused_boots: usize,
    pub failed_boots: usize,
}

/// What a step came to.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// The build failed, for this reason: skipped.
    BuildFailed(String),
    /// This many boots failed: skipped.
    BootsFailed(usize),
    /// The step rule's last look: placed, like neither, or undecided (skipped).
    Looked(StepLook),
}

impl StepOutcome {
    pub fn is_neither(&self) -> bool {
        matches!(self, StepOutcome::Looked(l) if l.decision == kbench_stats::bisect::StepDecision::Neither)
    }
}

/// One step, as the closing lines list it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLine {
    pub commit: String,
    pub subject: String,
    pub outcome: StepOutcome,
}

/// How the first bad commit compared with its parent.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirmation {
    Look { parent: String, look: Look },
    NoParent,
    ParentDoesNotBuild(String),
    NoBoots,
}

/// How a bisection that had a change to bisect ended.
#[derive(Debug, Clone, PartialEq)]
pub enum BisectEnd {
    /// The first bad commit, its subject, and its confirmation against its parent.
    Found {
        commit: String,
        subject: String,
        confirmation: Confirmation,
    },
    /// Only skipped commits are left; the first bad one is one of these.
    OnlySkipped(Vec<String>),
    /// A fresh boot of an end landed nearer the other end: why, as one line.
    Drifted(String),
    /// This commit is like neither good nor bad.
    Neither(String),
}

/// A bisection's result, for its closing lines.
#[derive(Debug, Clone, PartialEq)]
pub struct BisectReport {
    pub name: String,
    pub good: String,
    pub bad: String,
    pub metric: MetricName,
    /// Good against bad, as decided.
    pub endpoints: Look,
    pub delta_pct: f64,
    pub steps: Vec<StepLine>,
    pub end: BisectEnd,
    pub counts: BisectCounts,
    pub elapsed_s: f64,
    /// Where `git bisect log` is kept.
    pub log_path: String,
}

/// How much of good against bad's change the first bad commit makes, percent (of the
/// log shifts).
pub fn share_of_change(first_bad: &Look, endpoints: &Look) -> Option<f64> {
    let log = |pct: f64| (1.0 + pct / 100.0).ln();
    let (part, whole) = (log(first_bad.shift_pct?), log(endpoints.shift_pct?));
    (whole != 0.0).then(|| 100.0 * part / whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_is_named_by_its_metric_or_its_workload_and_metric() {
        let name = MetricName {
            workload: "sched/pipe".into(),
            params: String::new(),
            variant: "same-cpu".into(),
            metric: "usecs_per_op".into(),
        };
        assert!(name.matches("usecs_per_op"));
        assert!(name.matches("pipe:usecs_per_op"));
        assert!(name.matches("sched/pipe:usecs_per_op"));
        assert!(!name.matches("messaging:usecs_per_op"));
        assert!(!name.matches("ops_per_sec"));
        assert_eq!(name.to_string(), "sched/pipe usecs_per_op (same-cpu)");
    }

    #[test]
    fn twelve_commits_are_good_against_bad_four_steps_and_the_confirmation() {
        assert!((alpha_per_step(0.05, 12) - 0.05 / 6.0).abs() < 1e-12);
        assert!((alpha_per_step(0.05, 1) - 0.05 / 3.0).abs() < 1e-12);
    }
}
