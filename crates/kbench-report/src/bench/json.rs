//! kbench's own format: one JSON object per run, on one line.
use super::RunFormat;
use kbench_record::RunRecord;

pub struct RunJsonFormat;

impl RunFormat for RunJsonFormat {
    fn banner(&self, _workload_key: &str) -> Option<String> {
        None
    }

    fn all_banner(&self, _workload_key: &str) -> Option<String> {
        None
    }

    fn render(&self, record: &RunRecord) -> String {
        // A RunRecord holds only strings, numbers and maps: serialisation cannot fail.
        let line =
            serde_json::to_string(record).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
        format!("{line}\n")
    }
}
