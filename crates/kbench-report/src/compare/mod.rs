//! The verdict of `kbench compare`, one file per format behind [`CompareFormat`].
mod csv;
mod json;
mod markdown;
mod text;

pub use csv::CsvFormat;
pub use json::JsonFormat;
pub use markdown::MarkdownFormat;
pub use text::TextFormat;

use serde::{Deserialize, Serialize};

/// Everything a comparison of two labels found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    pub base: String,
    pub new: String,
    pub delta_pct: f64,
    pub base_runs: usize,
    pub new_runs: usize,
    pub base_boots: usize,
    pub new_boots: usize,
    pub rows: Vec<CompareRow>,
    /// Records that exist on one side only, or with other parameters or variants:
    /// never pooled, never compared, always said.
    pub not_compared: Vec<String>,
    pub environment_differences: Vec<EnvDifference>,
    pub notes: Vec<String>,
    /// The kbench commands that reproduce this comparison.
    pub reproduce: Vec<String>,
}

/// One workload and metric, compared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    pub workload: String,
    pub metric: String,
    pub unit: String,
    /// The parameters shared by both sides, `name=value` separated by spaces.
    pub params: String,
    pub variant: String,
    /// The CPU classes this row is restricted to, when rows were split by class.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cpu_classes: String,
    pub n_a: usize,
    pub n_b: usize,
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    pub shift_pct: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub p_value: Option<f64>,
    /// Benjamini-Hochberg adjusted p across the rows of this report.
    pub q_value: Option<f64>,
    pub verdict: String,
    pub runs_needed: Option<usize>,
    pub method: String,
    pub summary_based: bool,
    pub diagnostics: Vec<String>,
}

/// An environment key whose value differs between the sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvDifference {
    pub key: String,
    pub base: String,
    pub new: String,
}

/// One way of printing a comparison.
pub trait CompareFormat {
    fn render(&self, report: &CompareReport) -> String;
}

/// The format named by `--format`, if kbench knows it.
pub fn by_name(name: &str) -> Option<Box<dyn CompareFormat>> {
    match name {
        "text" => Some(Box::new(TextFormat)),
        "markdown" => Some(Box::new(MarkdownFormat)),
        "json" => Some(Box::new(JsonFormat)),
        "csv" => Some(Box::new(CsvFormat)),
        _ => None,
    }
}

/// A number with about five significant digits, the way a person reads a median.
pub fn figure(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(v) if !v.is_finite() => v.to_string(),
        Some(v) => {
            let magnitude = if v == 0.0 {
                0
            } else {
                v.abs().log10().floor() as i32
            };
            let decimals = (4 - magnitude).clamp(0, 9) as usize;
            format!("{v:.decimals$}")
        }
    }
}

/// A signed percentage, `+1.29%`.
pub fn percent(value: Option<f64>) -> String {
    value
        .map(|v| format!("{v:+.2}%"))
        .unwrap_or_else(|| "-".into())
}

/// A p-value in at most six characters.
pub fn p_text(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) => format!("{p:.3}"),
    }
}
