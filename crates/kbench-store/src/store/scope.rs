//! Which of a label's sessions a read takes.
use crate::db::Cell;

/// Which of a label's sessions a read takes: all of them, or one machine's as
/// [`MACHINE_SQL`] shows it ([`Store::machine_scope`]), by the plain columns the
/// `sessions_by_label_machine` index finds, so that one machine's history in a lab's
/// store reads that machine's runs only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionScope {
    /// ` AND ...` on sessions aliased `s`, with parameters from `?2` on.
    pub(super) condition: String,
    pub(super) params: Vec<Cell>,
}

impl SessionScope {
    /// Every session.
    pub fn all() -> SessionScope {
        SessionScope::default()
    }

    /// `label` as `?1`, then the scope's parameters.
    pub(super) fn params_after(&self, label: &str) -> Vec<Cell> {
        let mut params = vec![Cell::from(label)];
        params.extend(self.params.iter().cloned());
        params
    }
}

/// The measured runs of session `s` ([`StoredRun::is_measured`] in SQL), counted on
/// the index of measured runs (`runs_measured_by_session`, schema migration 10, whose
/// condition this repeats term for term) without reading a run's row.
pub(super) const MEASURED_RUNS_SQL: &str = "(SELECT count(*) FROM runs r WHERE r.session_id = s.id
    AND r.warmup = 0 AND r.error IS NULL AND coalesce(r.exit_status, 0) = 0)";
