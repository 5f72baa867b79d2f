//! The whole report as one JSON object (`rows`, `environment_differences`, ...).
use super::{CompareFormat, CompareReport};

pub struct JsonFormat;

impl CompareFormat for JsonFormat {
    fn render(&self, report: &CompareReport) -> String {
        // The report holds strings, numbers and lists only: serialisation cannot fail.
        let mut text = serde_json::to_string_pretty(report)
            .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
        text.push('\n');
        text
    }
}
