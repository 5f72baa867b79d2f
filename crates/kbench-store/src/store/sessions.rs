//! Sessions: begun, ended, their console logs, and read back.
use super::handle::Store;
use super::scope::{SessionScope, MEASURED_RUNS_SQL};
use crate::db::{json_text, numbered, parse_json, to_i64, Cell, Db, Row};
use crate::error::StoreError;
use crate::kernel_config::{self};
use crate::machine::MACHINE_SQL;
use crate::{cell_row, cells};
use kbench_record::{ImportSource, NewSession};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A stored session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRow {
    pub id: i64,
    pub label: String,
    pub kind: String,
    pub boot_id: Option<String>,
    pub started_unix_ns: u64,
    pub ended_unix_ns: Option<u64>,
    pub kbench_version: String,
    pub command_line: String,
    pub seed: Option<u64>,
    pub environment: Option<kbench_record::SessionEnvironment>,
    pub source: Option<ImportSource>,
    /// See [`NewSession::interleave_group`].
    pub interleave_group: Option<String>,
    /// Its measured runs ([`StoredRun::is_measured`]).
    pub runs: u64,
    /// The kernel config it ran on ([`Store::kernel_config_by_hash`]), when known.
    #[serde(default)]
    pub kernel_config_hash: Option<String>,
    /// See [`NewSession::uuid`].
    #[serde(default)]
    pub uuid: String,
    /// The machine it ran on ([`crate::machine_of`]), when its environment says.
    #[serde(default)]
    pub machine: Option<String>,
}

impl SessionRow {
    /// The session as it was begun, to store it again elsewhere (export, push): the
    /// same UUID, so it is never stored twice.
    pub fn as_new_session(&self) -> NewSession {
        NewSession {
            label: self.label.clone(),
            kind: self.kind.clone(),
            boot_id: self.boot_id.clone(),
            started_unix_ns: self.started_unix_ns,
            kbench_version: self.kbench_version.clone(),
            command_line: self.command_line.clone(),
            seed: self.seed,
            environment: self.environment.clone(),
            source: self.source.clone(),
            interleave_group: self.interleave_group.clone(),
            uuid: Some(self.uuid.clone()).filter(|u| !u.is_empty()),
        }
    }
}

/// A new session's identity: a random (version 4) UUID.
pub fn new_session_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub(super) fn session_row(mut r: Row) -> Result<SessionRow, StoreError> {
    let source = match r.take_text(10)? {
        Some(file) => Some(ImportSource {
            file,
            format: r.take_text(11)?.unwrap_or_default(),
            content_hash: r.take_text(12)?,
        }),
        None => None,
    };
    Ok(SessionRow {
        id: r.i64(0)?,
        label: r.text(1)?,
        kind: r.text(2)?,
        boot_id: r.take_text(3)?,
        started_unix_ns: r.u64(4)?,
        ended_unix_ns: r.opt_u64(5)?,
        kbench_version: r.text(6)?,
        command_line: r.text(7)?,
        seed: r.opt_u64(8)?,
        environment: parse_json(r.opt_str(9)?),
        source,
        runs: r.u64(13)?,
        interleave_group: r.take_text(14)?,
        kernel_config_hash: r.take_text(15)?,
        uuid: r.take_text(16)?.unwrap_or_default(),
        machine: r.take_text(17)?,
    })
}

pub(super) fn insert_session(db: &mut dyn Db, s: &NewSession) -> Result<i64, StoreError> {
    db.query_one(
        &format!(
            "INSERT INTO sessions ({}) VALUES ({}) RETURNING id",
            SESSION_COLUMNS.join(", "),
            numbered(1, SESSION_COLUMNS.len())
        ),
        &session_cells(s),
    )?
    .i64(0)
}

/// The columns of a new session's row, in [`session_cells`]'s order.
pub(super) const SESSION_COLUMNS: [&str; 15] = [
    "label",
    "kind",
    "boot_id",
    "started_unix_ns",
    "kbench_version",
    "command_line",
    "seed",
    "environment",
    "source_file",
    "source_format",
    "source_hash",
    "interleave_group",
    "uuid",
    "machine",
    "machine_id",
];

/// A new session as the cells of [`SESSION_COLUMNS`], with a new UUID when it has none.
pub(super) fn session_cells(s: &NewSession) -> Vec<Cell> {
    let uuid = s.uuid.clone().unwrap_or_else(new_session_uuid);
    cell_row![
        &s.label,
        &s.kind,
        s.boot_id.as_ref(),
        to_i64(s.started_unix_ns),
        &s.kbench_version,
        &s.command_line,
        s.seed.map(to_i64),
        json_text(&s.environment),
        s.source.as_ref().map(|s| &s.file),
        s.source.as_ref().map(|s| &s.format),
        s.source.as_ref().and_then(|s| s.content_hash.as_ref()),
        s.interleave_group.as_ref(),
        uuid,
        crate::machine::machine_of(s.environment.as_ref()),
        crate::machine::machine_id_of(s.environment.as_ref()),
    ]
}

impl Store {
    /// Starts a session; returns its id.
    pub fn begin_session(&mut self, s: &NewSession) -> Result<i64, StoreError> {
        self.in_transaction(|db| insert_session(db, s))
    }

    /// Records the session's end time.
    pub fn end_session(&mut self, id: i64, ended_unix_ns: u64) -> Result<(), StoreError> {
        self.db().execute(
            "UPDATE sessions SET ended_unix_ns = ?1 WHERE id = ?2",
            cells![to_i64(ended_unix_ns), id],
        )?;
        Ok(())
    }

    /// Keeps a boot's console log with its session, gzip-compressed (a quick-suite
    /// boot's log is megabytes of base64 that compresses about fourfold).
    pub fn set_console_log(&mut self, session_id: i64, log: &str) -> Result<(), StoreError> {
        self.db().execute(
            "UPDATE sessions SET console_log = ?1 WHERE id = ?2",
            cells![kernel_config::gzip(log), session_id],
        )?;
        Ok(())
    }

    /// The console log kept with a session (gzip bytes), if any.
    pub fn console_log(&self, session_id: i64) -> Result<Option<Vec<u8>>, StoreError> {
        let row = self.db().as_mut().query_opt(
            "SELECT console_log FROM sessions WHERE id = ?1",
            cells![session_id],
        )?;
        match row {
            Some(mut row) => row.take_blob(0),
            None => Ok(None),
        }
    }

    /// The console log kept with a session, as text, if any.
    pub fn console_log_text(&self, session_id: i64) -> Result<Option<String>, StoreError> {
        self.console_log(session_id)?
            .map(|gzip| {
                kernel_config::gunzip(&gzip).map_err(|e| {
                    StoreError::Corrupt(format!("the console log of session {session_id}: {e}"))
                })
            })
            .transpose()
    }

    /// The UUIDs of the sessions of `label`.
    pub fn session_uuids(&self, label: &str) -> Result<BTreeSet<String>, StoreError> {
        let rows = self
            .db()
            .query("SELECT uuid FROM sessions WHERE label = ?1", cells![label])?;
        let mut uuids = BTreeSet::new();
        for row in rows {
            if let Some(uuid) = row.opt_str(0)? {
                uuids.insert(uuid.to_string());
            }
        }
        Ok(uuids)
    }

    /// Whether `label` already has a session started at `started_unix_ns` on boot
    /// `boot_id` (the same session imported twice).
    pub fn has_session(
        &self,
        label: &str,
        started_unix_ns: u64,
        boot_id: Option<&str>,
    ) -> Result<bool, StoreError> {
        Ok(self
            .db()
            .as_mut()
            .query_opt(
                "SELECT 1 FROM sessions WHERE label = ?1 AND started_unix_ns = ?2
                 AND coalesce(boot_id, '') = coalesce(?3, '') LIMIT 1",
                cells![label, to_i64(started_unix_ns), boot_id],
            )?
            .is_some())
    }

    /// Whether a session of this UUID is stored (under any label).
    pub fn has_uuid(&self, uuid: &str) -> Result<bool, StoreError> {
        Ok(self.label_of_uuid(uuid)?.is_some())
    }

    /// The label of the session of this UUID, if one is stored.
    pub fn label_of_uuid(&self, uuid: &str) -> Result<Option<String>, StoreError> {
        match self
            .db()
            .as_mut()
            .query_opt("SELECT label FROM sessions WHERE uuid = ?1", cells![uuid])?
        {
            Some(mut row) => row.take_text(0),
            None => Ok(None),
        }
    }

    /// Whether `label` has a session imported from a file of content `content_hash`
    /// (the same file imported twice).
    pub fn has_source_content(&self, label: &str, content_hash: &str) -> Result<bool, StoreError> {
        Ok(self
            .db()
            .as_mut()
            .query_opt(
                "SELECT 1 FROM sessions WHERE label = ?1 AND source_hash = ?2 LIMIT 1",
                cells![label, content_hash],
            )?
            .is_some())
    }

    /// The sessions of `label`, oldest first.
    pub fn sessions(&self, label: &str) -> Result<Vec<SessionRow>, StoreError> {
        self.sessions_in(label, &SessionScope::all())
    }

    /// The sessions of `label` in `scope`, oldest first.
    pub fn sessions_in(
        &self,
        label: &str,
        scope: &SessionScope,
    ) -> Result<Vec<SessionRow>, StoreError> {
        let rows = self.db().query(
            &format!(
                "SELECT s.id, s.label, s.kind, s.boot_id, s.started_unix_ns, s.ended_unix_ns,
                        s.kbench_version, s.command_line, s.seed, s.environment,
                        s.source_file, s.source_format, s.source_hash,
                        {MEASURED_RUNS_SQL},
                        s.interleave_group, s.kernel_config_hash, s.uuid, {MACHINE_SQL}
                 FROM sessions s WHERE s.label = ?1{} ORDER BY s.started_unix_ns, s.id",
                scope.condition
            ),
            &scope.params_after(label),
        )?;
        rows.into_iter().map(session_row).collect()
    }
}
