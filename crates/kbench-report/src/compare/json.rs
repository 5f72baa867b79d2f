//! The whole report as one JSON object (`rows`, `environment_differences`, ...); with
//! several labels, `{"base": ..., "comparisons": [report, ...]}`, one report per label.
//! Every row is there whatever the layout.
use super::{CompareFormat, CompareReport, Compared, Layout};

pub struct JsonFormat;

#[derive(serde::Serialize)]
struct Several<'a> {
    base: &'a str,
    comparisons: &'a [CompareReport],
}

impl CompareFormat for JsonFormat {
    fn render(&self, compared: Compared<'_>, _: Layout) -> String {
        let reports = compared.reports();
        // The report holds strings, numbers and lists only: serialisation cannot fail.
        let value = match reports {
            [one] => serde_json::to_string_pretty(one),
            _ => serde_json::to_string_pretty(&Several {
                base: reports.first().map_or("", |r| r.base.label.as_str()),
                comparisons: reports,
            }),
        };
        let mut text = value.unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
        text.push('\n');
        text
    }
}
