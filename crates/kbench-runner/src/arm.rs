//! What the arms of a schedule gave so far: the stop rules and observers read it.
use crate::hooks::HookFailure;
use kbench_record::{PlacementKind, Value};
use kbench_stats::descriptive::precision_pct;

/// One measured run that succeeded.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredRun {
    /// Its values, one of them primary.
    pub values: Vec<Value>,
    /// Where its two tasks mostly ran (pipe, seccomp-notify).
    pub placement: Option<PlacementKind>,
}

/// One measured attempt that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFailure {
    /// Which measured attempt of its arm, from 1.
    pub attempt: u32,
    pub message: String,
    /// The command's exit status, or 1 for a workload that gave no record.
    pub exit_status: i32,
}

/// What one arm gave: its units that counted (runs, or boots), and those that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmOutcome<M = MeasuredRun> {
    pub measured: Vec<M>,
    pub failures: Vec<RunFailure>,
    /// The hooks that failed, each stored as a failed run of the arm.
    pub hook_failures: Vec<HookFailure>,
    /// Measured attempts, failed ones included.
    pub attempts: u32,
    /// The run index the arm's next stored run gets.
    pub next_index: u32,
}

impl<M> Default for ArmOutcome<M> {
    fn default() -> Self {
        ArmOutcome {
            measured: Vec::new(),
            failures: Vec::new(),
            hook_failures: Vec::new(),
            attempts: 0,
            next_index: 0,
        }
    }
}

/// What the fixed rules read of a measured unit: its primary value, if it has one.
pub trait Measurement {
    fn primary_value(&self) -> Option<f64>;
}

impl Measurement for MeasuredRun {
    fn primary_value(&self) -> Option<f64> {
        self.values.iter().find(|v| v.primary).map(|v| v.value)
    }
}

/// Blocks every arm has had: pairs of units when the blocks are ABBA pairs.
pub fn blocks_done<M>(arms: &[ArmOutcome<M>]) -> u32 {
    arms.iter().map(|a| a.attempts).min().unwrap_or(0)
}

impl<M: Measurement> ArmOutcome<M> {
    /// The primary value of each measured unit that has one, in order.
    pub fn primary_values(&self) -> Vec<f64> {
        self.measured
            .iter()
            .filter_map(Measurement::primary_value)
            .collect()
    }

    /// Half-width of the 95% CI of the median of the primary values, in percent of it.
    pub fn precision_pct(&self) -> Option<f64> {
        precision_pct(&self.primary_values())
    }
}
