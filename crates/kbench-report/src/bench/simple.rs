//! perf bench's `-f simple` format: the total time alone.
use super::perf_numbers::total_time;
use super::RunFormat;
use kbench_record::RunRecord;

pub struct SimpleFormat;

impl RunFormat for SimpleFormat {
    fn banner(&self, _workload_key: &str) -> Option<String> {
        None
    }

    fn all_banner(&self, workload_key: &str) -> Option<String> {
        // perf prints this line for `sched all` whatever the format.
        Some(format!("# Running {workload_key} benchmark...\n"))
    }

    /// perf's total time; for latency workloads (which perf lacks) the one figure a
    /// script wants instead: the p50 of the primary series in microseconds, three
    /// decimals (ns resolution), or `n/a` when the run had too few valid samples.
    fn render(&self, record: &RunRecord) -> String {
        match record.series.first() {
            Some(primary) => match primary.p50() {
                Some(p50_ns) => format!("{:.3}\n", p50_ns as f64 / 1e3),
                None => "n/a\n".to_string(),
            },
            None => format!("{}\n", total_time(record.total_ns)),
        }
    }
}
