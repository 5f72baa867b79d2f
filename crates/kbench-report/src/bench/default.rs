//! perf bench's default text format.
use super::latency_text::render_latency;
use super::perf_numbers::{c_14lf, ops_per_sec, total_time, usecs_per_op};
use super::RunFormat;
use kbench_record::RunRecord;

pub struct DefaultFormat;

impl RunFormat for DefaultFormat {
    fn banner(&self, workload_key: &str) -> Option<String> {
        Some(format!("# Running '{workload_key}' benchmark:\n"))
    }

    fn all_banner(&self, workload_key: &str) -> Option<String> {
        Some(format!("# Running {workload_key} benchmark...\n"))
    }

    fn render(&self, record: &RunRecord) -> String {
        let mut out = String::new();
        for line in &record.header_lines {
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&format!(
            " {:>14}: {} [sec]\n",
            "Total time",
            total_time(record.total_ns)
        ));
        if !record.series.is_empty() {
            // Latency workloads: the distributions replace usecs/op, which would only
            // be the wake gap over again.
            out.push_str(&render_latency(record));
            return out;
        }
        if let Some(loops) = signed_loops(record) {
            out.push('\n');
            out.push_str(&format!(
                " {} usecs/op\n",
                c_14lf(usecs_per_op(record.total_ns, loops))
            ));
            out.push_str(&format!(
                " {:>14} ops/sec\n",
                ops_per_sec(record.total_ns, loops)
            ));
        }
        out
    }
}

/// The loop count perf divides by: signed for pipe (`-l -5` prints negative
/// figures), the op count otherwise; none for workloads without per-op figures.
fn signed_loops(record: &RunRecord) -> Option<f64> {
    let ops = record.ops?;
    Some(record.perf_signed_loops.map_or(ops as f64, |l| l as f64))
}
