//! Output of single benchmark runs (`kbench bench`), one file per format.
//!
//! `default` and `simple` reproduce perf bench's text byte for byte, so scripts
//! written for perf parse kbench unchanged; `json` is kbench's own, one object a run.
//! Latency workloads, which perf does not have, print their distributions instead of
//! the per-op lines (default) or their primary p50 (simple).
mod default;
mod json;
pub mod latency_text;
pub mod list;
pub mod perf_numbers;
mod simple;

pub use default::DefaultFormat;
pub use json::RunJsonFormat;
pub use simple::SimpleFormat;

use kbench_record::RunRecord;

/// One way of printing single runs.
pub trait RunFormat {
    /// The line printed before the benchmark parses its options (perf's
    /// `# Running 'sched/pipe' benchmark:`), if this format has one.
    fn banner(&self, workload_key: &str) -> Option<String>;
    /// The line `sched all` prints before each benchmark.
    fn all_banner(&self, workload_key: &str) -> Option<String>;
    /// The result of one run, each line ending in `\n`.
    fn render(&self, record: &RunRecord) -> String;
}

/// The format named on the command line (`-f`), if kbench knows it.
pub fn by_name(name: &str) -> Option<Box<dyn RunFormat>> {
    match name {
        "default" => Some(Box::new(DefaultFormat)),
        "simple" => Some(Box::new(SimpleFormat)),
        "json" => Some(Box::new(RunJsonFormat)),
        _ => None,
    }
}
