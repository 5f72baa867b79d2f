//! What a reader of another tool's output hands the store: the runs and summaries of one
//! file, as plain data. The readers are kbench-import's; the store writes these without
//! linking them.
use crate::MetricValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything read from one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// Which reader understood the file: `perf-bench`, `perf-stat`, `hyperfine`,
    /// `hackbench`, `cyclictest`, `kbench-record`.
    pub source_format: String,
    /// Individual runs, in file order.
    pub runs: Vec<ImportedRun>,
    /// Summary-only results (what `perf stat -r` prints: mean, its standard error, n).
    pub summaries: Vec<ImportedSummary>,
}

/// One run read from a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedRun {
    /// `sched/pipe`, `sched/messaging`, `command` (hyperfine), ...
    pub workload: String,
    /// Parameters known from the file (e.g. `loop`, `group`); may be empty.
    pub params: BTreeMap<String, serde_json::Value>,
    /// e.g. `pingpong` for perf 6.1's pipe output when the version is known, else
    /// `perf-unknown-version` (see kbench-import's `perf_bench`); `hyperfine` for
    /// hyperfine runs.
    pub variant: String,
    /// The values, as the reader declares them (unit, direction, one primary):
    /// `total_sec`, `usecs_per_op`, `ops_per_sec`, `wall_sec`, ..., in name order.
    pub values: Vec<MetricValue>,
    /// 1-based line in the file where the run starts (for error messages and provenance).
    pub line: usize,
    /// Exit status when the file records one (hyperfine `exit_codes`).
    pub exit_status: Option<i32>,
}

impl ImportedRun {
    /// The value of metric `name`, if the run has it.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.values.iter().find(|v| v.name == name).map(|v| v.value)
    }
}

/// A summary-only result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedSummary {
    /// What was measured: the command perf stat ran (without its quotes).
    pub workload: String,
    /// The event name (`task-clock`, `context-switches`) or `time_elapsed_sec`.
    pub metric: String,
    /// As perf printed it (`msec`), `s` for the elapsed time, empty for plain counts.
    pub unit: String,
    pub mean: f64,
    /// Standard error of the mean (perf stat's `+- x%` times the mean / 100).
    pub std_error: f64,
    pub n: u64,
    pub line: usize,
    /// Which way the metric improves (perf stat's counters and times: lower).
    pub higher_is_better: bool,
    /// The headline figure of its block (perf stat: the elapsed time).
    pub primary: bool,
}
