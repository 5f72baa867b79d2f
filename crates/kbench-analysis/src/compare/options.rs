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

impl ReportOptions {
    /// The options `--delta`, `--alpha`, `--seed` and `--no-calibration` ask for, at
    /// `now_unix_ns`; a usage error for a δ or an α out of range.
    pub fn asked(
        delta_pct: Option<f64>,
        alpha: Option<f64>,
        seed: u64,
        use_calibration: bool,
        now_unix_ns: u64,
    ) -> Result<ReportOptions, crate::AnalysisError> {
        let usage = |message: &str| Err(crate::AnalysisError::Usage(message.to_string()));
        if delta_pct.is_some_and(|delta| !(delta > 0.0 && delta < 100.0)) {
            return usage("--delta takes a percentage in (0, 100)");
        }
        if alpha.is_some_and(|alpha| !(alpha > 0.0 && alpha < 1.0)) {
            return usage("--alpha takes a rate in (0, 1)");
        }
        Ok(ReportOptions {
            delta_pct,
            alpha: alpha.unwrap_or(ALPHA),
            seed,
            use_calibration,
            now_unix_ns,
        })
    }
}
