//! kbench-analysis: from stored runs to a comparison.
//!
//! It groups runs so that nothing that differs is pooled (workload, parameters,
//! pinning, variant, metric), finds the level of replication the two sides have
//! (runs interleaved in one session, sessions, boots; paired or not), borrows this
//! machine's calibrated noise for a side with one unit, and returns a
//! [`CompareReport`]: verdicts, diagnostics and notes as data for the renderers.
pub mod bisect;
pub mod calibration;
pub mod carried;
pub mod clock;
pub mod compare;
pub mod event;
pub mod group;
pub mod history;
pub mod label;
pub mod metric;
pub mod model;
pub mod modes;
pub mod outcome;
pub mod parallel;
pub mod plausible;
pub mod plots;
pub mod sequential;
pub mod shown;

pub use compare::{
    compare_each, compare_labels, compare_labels_on, compare_loaded, machines_of, Comparisons,
    FailOn, Machines, ReportOptions, ALPHA, DEFAULT_DELTA_PCT,
};
pub use label::LabelData;
pub use model::*;

/// Why a comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The request names something that is not there (a label, a calibration).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Store(#[from] kbench_store::StoreError),
}

impl AnalysisError {
    /// Whether the user can fix it (exit status 2): a label or calibration that is not
    /// there, or a database of theirs that cannot be used ([`kbench_store::StoreError::is_usage`]).
    pub fn is_usage(&self) -> bool {
        match self {
            AnalysisError::Usage(_) => true,
            AnalysisError::Store(e) => e.is_usage(),
        }
    }
}

/// A session's environment snapshot, when it has one that reads.
pub fn snapshot(session: &kbench_store::SessionRow) -> Option<&kbench_sys::EnvSnapshot> {
    session.environment.as_ref()?.snapshot.as_ref()
}
