//! When to stop repeating: asked before the first block and after every block.
use crate::arm::{ArmOutcome, MeasuredRun, Measurement};
use kbench_record::sequential::SequentialLook;
use std::time::Duration;

/// What the next block holds.
#[derive(Debug, Clone, PartialEq)]
pub enum NextBlock {
    /// Run these arms (in the schedule's order) in the next block.
    Continue(Vec<usize>),
    /// Every arm is done.
    Stop,
    /// Nothing will come of going on: why, as one line.
    GiveUp(String),
    /// The user's to mend, found by a look (labels of two clocks): one line.
    Refuse(String),
}

/// A rule for stopping, asked with everything the arms have given so far. The fixed
/// counts and `--precision` are [`StopPolicy`]; a sequential rule that stops when a
/// comparison of the arms is decided plugs in here too.
pub trait StopRule<M = MeasuredRun> {
    fn decide(&mut self, arms: &[ArmOutcome<M>], elapsed: Duration) -> NextBlock;

    /// Measured runs per arm to expect at first (a progress bar's length).
    fn expected_runs_per_arm(&self) -> u64;

    /// The looks made since the last call, for the sink to keep with their design.
    fn take_looks(&mut self) -> Vec<SequentialLook> {
        Vec::new()
    }
}

/// The rules kbench has had from the start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StopPolicy {
    /// Exactly this many measured attempts per arm, failed ones included: the runs of
    /// `exec`, and the blocks of `ab`, whose sides stay paired.
    Attempts(u32),
    /// This many measured runs per arm; failures do not count, but an arm that keeps
    /// failing stops (`kbench run`).
    Runs(u32),
    /// Until the 95% CI of the median is within ±`pct`% for every arm, with at least
    /// `min_runs` and at most `max_time` in all.
    Precision {
        pct: f64,
        min_runs: u32,
        max_time: Duration,
    },
}

/// Failures without a single measured run after which an arm is given up.
const HOPELESS_FAILURES: usize = 3;

impl StopPolicy {
    fn arm_done<M: Measurement>(&self, arm: &ArmOutcome<M>) -> bool {
        let values = arm.primary_values().len();
        let failures = arm.failures.len();
        match *self {
            StopPolicy::Attempts(n) => arm.attempts >= n,
            _ if failures >= HOPELESS_FAILURES && values == 0 => true,
            StopPolicy::Runs(n) => values as u32 >= n || failures as u32 >= 3 + n / 10,
            StopPolicy::Precision { pct, min_runs, .. } => {
                values as u32 >= min_runs && arm.precision_pct().is_some_and(|p| p <= pct)
            }
        }
    }

    fn out_of_time(&self, elapsed: Duration) -> bool {
        matches!(*self, StopPolicy::Precision { max_time, .. } if elapsed >= max_time)
    }

    /// Every arm failed again and again without one measured run.
    fn hopeless<M: Measurement>(&self, arms: &[ArmOutcome<M>]) -> Option<String> {
        if matches!(self, StopPolicy::Attempts(_)) {
            return None;
        }
        let all_failing = arms
            .iter()
            .all(|a| a.primary_values().is_empty() && a.failures.len() >= HOPELESS_FAILURES);
        let first = arms.first()?.failures.first()?;
        all_failing.then(|| {
            format!(
                "every workload failed three times; stopping: {}",
                first.message
            )
        })
    }
}

impl<M: Measurement> StopRule<M> for StopPolicy {
    fn decide(&mut self, arms: &[ArmOutcome<M>], elapsed: Duration) -> NextBlock {
        if let Some(why) = self.hopeless(arms) {
            return NextBlock::GiveUp(why);
        }
        let pending: Vec<usize> = (0..arms.len())
            .filter(|&arm| !self.arm_done(&arms[arm]))
            .collect();
        if pending.is_empty() || self.out_of_time(elapsed) {
            NextBlock::Stop
        } else {
            NextBlock::Continue(pending)
        }
    }

    fn expected_runs_per_arm(&self) -> u64 {
        match *self {
            StopPolicy::Attempts(n) | StopPolicy::Runs(n) => u64::from(n),
            StopPolicy::Precision { min_runs, .. } => u64::from(min_runs),
        }
    }
}

pub use kbench_stats::descriptive::precision_pct;
