//! What a comparison is asked for: its α, its δ, and what it reports.

/// Options of a comparison report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReportOptions {
    /// `--delta`: when `None`, each row's delta is the larger of 1 % and what this
    /// machine resolves with the row's units (from a calibration).
    pub delta_pct: Option<f64>,
    pub alpha: f64,
    /// Seed of the pooled-percentile bootstraps.
    pub seed: u64,
    /// Use a matching calibration of this machine.
    pub use_calibration: bool,
    /// The time the report is made, for the calibration's age.
    pub now_unix_ns: u64,
}

/// The two-sided error rate of every interval (confidence 1 − α).
pub const ALPHA: f64 = 0.05;

/// The default floor of delta, percent.
pub const DEFAULT_DELTA_PCT: f64 = 1.0;

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            delta_pct: None,
            alpha: ALPHA,
            seed: 20_261_201,
            use_calibration: true,
            now_unix_ns: 0,
        }
    }
}
