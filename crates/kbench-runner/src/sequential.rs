//! The sequential stop rule: two arms (A, B) in ABBA blocks until every primary metric
//! is decided by `kbench_stats::sequential` or the bound (units a side, time) is reached.
use crate::scheduler::ArmOutcome;
use crate::stop::{Decision, StopRule};
use kbench_stats::sequential::{self, Boundary, KnownNoise, Look, SequentialDesign};
use std::time::Duration;

/// One primary metric's units so far: the mean log value of each unit of each side.
#[derive(Debug, Clone, PartialEq)]
pub struct PrimaryUnits {
    pub metric: String,
    pub higher_is_better: bool,
    pub a_log_units: Vec<f64>,
    pub b_log_units: Vec<f64>,
    /// A calibrated between-unit spread of this metric, if one matches.
    pub known: Option<KnownNoise>,
}

/// Where one primary metric stands: its latest look, final once decided.
#[derive(Debug, Clone, PartialEq)]
pub struct PrimaryState {
    pub metric: String,
    pub look: Look,
}

impl PrimaryState {
    pub fn decided(&self) -> bool {
        self.look.decision.is_final()
    }
}

/// From the arms' outcomes to each primary metric's units (runs as units in `ab`; a
/// boot's runs averaged in `vm-ab`).
pub type UnitsOf = Box<dyn Fn(&[ArmOutcome]) -> Vec<PrimaryUnits>>;

/// Stops when every primary metric is decided, or at `max_units_per_side`, or after
/// `max_time`; α is split among the primaries (see [`SequentialDesign`]). A metric once
/// decided stays decided: its later units do not reopen it.
pub struct SequentialRule {
    alpha: f64,
    delta_pct: f64,
    max_units_per_side: usize,
    max_time: Duration,
    units_of: UnitsOf,
    states: Vec<PrimaryState>,
    /// The primary metrics of the first look that saw any: the design's, fixed for the
    /// whole decision, so the Bonferroni count does not move with what a look happens to
    /// have (a metric missing from one block would give the others more α).
    metrics: Option<Vec<String>>,
}

/// Failures without a single measured run after which the comparison is given up.
const HOPELESS_FAILURES: usize = 3;

impl SequentialRule {
    pub fn new(
        alpha: f64,
        delta_pct: f64,
        max_units_per_side: usize,
        max_time: Duration,
        units_of: UnitsOf,
    ) -> SequentialRule {
        SequentialRule {
            alpha,
            delta_pct,
            max_units_per_side,
            max_time,
            units_of,
            states: Vec::new(),
            metrics: None,
        }
    }

    /// Each primary metric's latest look (the final one once it is decided).
    pub fn states(&self) -> &[PrimaryState] {
        &self.states
    }

    /// The practical threshold the looks are read against, percent.
    pub fn delta_pct(&self) -> f64 {
        self.delta_pct
    }

    fn design(&self, primaries: usize, higher_is_better: bool) -> SequentialDesign {
        SequentialDesign {
            alpha: self.alpha,
            delta_pct: self.delta_pct,
            max_units_per_side: self.max_units_per_side,
            primaries,
            higher_is_better,
            // The bound is declared before the first run (`ab --max-runs`).
            boundary: Boundary::DeclaredMaximum,
        }
    }

    /// Looks again at every primary metric of the design not decided yet.
    fn look_at(&mut self, primaries: Vec<PrimaryUnits>) {
        if self.metrics.is_none() && !primaries.is_empty() {
            self.metrics = Some(primaries.iter().map(|p| p.metric.clone()).collect());
        }
        let Some(metrics) = &self.metrics else {
            return;
        };
        let count = metrics.len();
        let of_the_design: Vec<PrimaryUnits> = primaries
            .into_iter()
            .filter(|p| metrics.contains(&p.metric))
            .collect();
        for units in of_the_design {
            let design = self.design(count, units.higher_is_better);
            let look =
                sequential::look(&design, &units.a_log_units, &units.b_log_units, units.known);
            match self.states.iter_mut().find(|s| s.metric == units.metric) {
                Some(state) if state.decided() => {}
                Some(state) => state.look = look,
                None => self.states.push(PrimaryState {
                    metric: units.metric,
                    look,
                }),
            }
        }
    }

    /// Metrics still open when the time bound stops the rule: their interval, no
    /// decision.
    fn close_undecided(&mut self) {
        for state in self.states.iter_mut().filter(|s| !s.decided()) {
            state.look.decision = sequential::Decision::Undecided;
        }
    }
}

impl StopRule for SequentialRule {
    fn decide(&mut self, arms: &[ArmOutcome], elapsed: Duration) -> Decision {
        if arms.len() != 2 {
            return Decision::GiveUp(format!(
                "a sequential comparison needs two sides, not {}",
                arms.len()
            ));
        }
        let hopeless = arms
            .iter()
            .find(|a| a.primary_values().is_empty() && a.failures.len() >= HOPELESS_FAILURES);
        if let Some(arm) = hopeless {
            let why = arm.failures.first().map_or("", |f| f.message.as_str());
            return Decision::GiveUp(format!("a side failed three times; stopping: {why}"));
        }
        self.look_at((self.units_of)(arms));
        let all_decided = !self.states.is_empty() && self.states.iter().all(PrimaryState::decided);
        if all_decided {
            Decision::Stop
        } else if elapsed >= self.max_time {
            self.close_undecided();
            Decision::Stop
        } else {
            Decision::Continue(vec![0, 1])
        }
    }

    fn expected_runs_per_arm(&self) -> u64 {
        self.max_units_per_side as u64
    }
}
