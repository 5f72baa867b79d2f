//! The summary-only results of imported sessions.
use super::handle::Store;
use super::scope::SessionScope;
use crate::cells;
use crate::db::{to_i64, Db};
use crate::error::StoreError;
use kbench_record::legacy_primary;
use kbench_record::stored::SummaryRow;
use std::collections::BTreeSet;

pub(super) fn insert_summary(
    db: &mut dyn Db,
    session_id: i64,
    m: &SummaryRow,
) -> Result<(), StoreError> {
    db.execute(
        "INSERT INTO summaries (session_id, workload, metric, unit, mean, std_error, n,
                                higher_is_better, is_primary)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        cells![
            session_id,
            &m.workload,
            &m.metric,
            &m.unit,
            m.mean,
            m.std_error,
            to_i64(m.n),
            m.higher_is_better,
            m.primary
        ],
    )?;
    Ok(())
}

impl Store {
    /// The summary-only results of `label`.
    pub fn summaries(&self, label: &str) -> Result<Vec<SummaryRow>, StoreError> {
        self.summaries_in(label, &SessionScope::all())
    }

    /// The summary-only results of `label`'s sessions in `scope`.
    pub fn summaries_in(
        &self,
        label: &str,
        scope: &SessionScope,
    ) -> Result<Vec<SummaryRow>, StoreError> {
        let rows = self.db().query(
            &format!(
                "SELECT m.session_id, m.workload, m.metric, m.unit, m.mean, m.std_error, m.n,
                        m.higher_is_better, m.is_primary
                 FROM summaries m JOIN sessions s ON s.id = m.session_id
                 WHERE s.label = ?1{} ORDER BY m.id",
                scope.condition
            ),
            &scope.params_after(label),
        )?;
        let mut rows: Vec<SummaryRow> = rows
            .into_iter()
            .map(|mut r| {
                Ok(SummaryRow {
                    session_id: r.i64(0)?,
                    workload: r.text(1)?,
                    metric: r.text(2)?,
                    unit: r.text(3)?,
                    mean: r.f64(4)?,
                    std_error: r.f64(5)?,
                    n: r.u64(6)?,
                    higher_is_better: r.flag(7)?,
                    primary: r.flag(8)?,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        // Rows of an older kbench: the legacy primary of each session's workload.
        let marked: BTreeSet<(i64, String)> = rows
            .iter()
            .filter(|s| s.primary)
            .map(|s| (s.session_id, s.workload.clone()))
            .collect();
        for s in &mut rows {
            if !marked.contains(&(s.session_id, s.workload.clone())) {
                s.primary = legacy_primary(&s.workload, &s.metric);
            }
        }
        Ok(rows)
    }
}
