//! perf bench's `-f simple` format: the total time alone.
use super::perf_numbers::total_time;
use super::RunFormat;
use kbench_workloads::RunRecord;

pub struct SimpleFormat;

impl RunFormat for SimpleFormat {
    fn banner(&self, _workload_key: &str) -> Option<String> {
        None
    }

    fn all_banner(&self, workload_key: &str) -> Option<String> {
        // perf prints this line for `sched all` whatever the format.
        Some(format!("# Running {workload_key} benchmark...\n"))
    }

    fn render(&self, record: &RunRecord) -> String {
        format!("{}\n", total_time(record.total_ns))
    }
}
