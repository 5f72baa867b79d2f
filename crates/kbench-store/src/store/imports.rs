//! Files measured elsewhere, stored under a label (`kbench import`, `import-trace`):
//! none twice, so that no run is counted twice.
use super::handle::Store;
use crate::error::StoreError;
use kbench_record::civil::utc;
use kbench_record::export::Export;
use kbench_record::stored::SessionWithRuns;
use kbench_record::{NewSession, RunRecord};
use std::collections::BTreeMap;

impl Store {
    /// Refuses `new`, the session of a file measured elsewhere
    /// ([`NewSession::measured_elsewhere`]), when its label holds that file's content
    /// already: importing it again would count its `what` (runs, wakes) twice.
    pub fn refuse_imported(&self, new: &NewSession, what: &str) -> Result<(), StoreError> {
        let Some(source) = &new.source else {
            return Ok(());
        };
        let Some(hash) = &source.content_hash else {
            return Ok(());
        };
        if self.has_source_content(&new.label, hash)? {
            return Err(StoreError::Refused(format!(
                "{}: already imported into label {}; importing it again would count its {what} twice",
                source.file, new.label
            )));
        }
        Ok(())
    }

    /// Stores the sessions of a kbench export read from `file` under `label`, in one
    /// transaction, and returns how many. An export without runs, or with a session
    /// `label` holds already, is refused.
    pub fn import_export(
        &mut self,
        file: &str,
        export: &mut Export,
        label: &str,
    ) -> Result<usize, StoreError> {
        let refused = |why: String| Err(StoreError::Refused(format!("{file}: {why}")));
        let sessions = &mut export.sessions;
        if sessions
            .iter()
            .all(|s| s.runs.is_empty() && s.summaries.is_empty())
        {
            return refused("a kbench export with no runs".to_string());
        }
        for s in sessions.iter_mut() {
            // Under another label than the export's it is a copy, a session of its
            // own with an identity of its own: a push then copies both.
            if s.session.label != label {
                s.session.uuid = None;
            }
            s.session.label = label.to_string();
            let (started, boot_id) = (s.session.started_unix_ns, s.session.boot_id.as_deref());
            if self.has_session(label, started, boot_id)? {
                return refused(format!(
                    "its session of {} is already in label {label}; importing it again would count its runs twice",
                    utc(started)
                ));
            }
            // Its session is here under another label: this copy is one of its own.
            if let Some(uuid) = &s.session.uuid {
                if self.has_uuid(uuid)? {
                    s.session.uuid = None;
                }
            }
        }
        let ids = self.insert_sessions(&export.sessions, &export.kernel_configs)?;
        Ok(ids.len())
    }

    /// Stores the runs of `records`, read from a file measured elsewhere (a trace of
    /// `kbench import-trace`), as `session`'s, in one transaction; it ended as it began.
    pub fn import_records(
        &mut self,
        session: NewSession,
        records: &[RunRecord],
    ) -> Result<i64, StoreError> {
        let runs = records.iter().enumerate();
        let runs = runs
            .map(|(i, rec)| kbench_record::stored_run(rec, i as u32, false, None, String::new()));
        let whole = SessionWithRuns {
            ended_unix_ns: Some(session.started_unix_ns),
            session,
            runs: runs.collect(),
            summaries: Vec::new(),
            kernel_config_hash: None,
        };
        let ids = self.insert_sessions(&[whole], &BTreeMap::new())?;
        Ok(ids[0])
    }
}
