//! The kernel configs sessions ran on, each kept once per content.
use super::handle::Store;
use crate::cells;
use crate::db::Db;
use crate::error::StoreError;
use crate::kernel_config::{self, config_hash};

/// Keeps a config (compressed only when its hash is new) and points the session at it.
pub(super) fn set_kernel_config_tx(
    db: &mut dyn Db,
    session_id: i64,
    text: &str,
) -> Result<String, StoreError> {
    let hash = keep_kernel_config(db, text)?;
    let updated = db.execute(
        "UPDATE sessions SET kernel_config_hash = ?1 WHERE id = ?2",
        cells![&hash, session_id],
    )?;
    if updated == 0 {
        return Err(StoreError::Unusable(format!(
            "no session {session_id} to keep a kernel config with"
        )));
    }
    Ok(hash)
}

/// Keeps a config once per content; returns its hash.
pub(super) fn keep_kernel_config(db: &mut dyn Db, text: &str) -> Result<String, StoreError> {
    let text = kernel_config::normalized(text);
    let hash = config_hash(&text);
    keep_normalized_config(db, &hash, &text)?;
    Ok(hash)
}

/// Keeps a normalised config under its hash, unless the database has it.
pub(super) fn keep_normalized_config(
    db: &mut dyn Db,
    hash: &str,
    text: &str,
) -> Result<(), StoreError> {
    // Compressing a config costs more than a push's sessions otherwise do: only a
    // config the database lacks is compressed. Two writers may keep the same new
    // config at once: the second keeps the first's.
    let known = db
        .query_opt("SELECT 1 FROM kernel_configs WHERE hash = ?1", cells![hash])?
        .is_some();
    if !known {
        db.execute(
            "INSERT INTO kernel_configs (hash, config) VALUES (?1, ?2) ON CONFLICT (hash) DO NOTHING",
            cells![hash, kernel_config::gzip(text)],
        )?;
    }
    Ok(())
}

impl Store {
    /// Keeps the kernel config `text` a session ran on, once per content: sessions of
    /// one config share its row. Returns its hash ([`config_hash`]).
    pub fn set_kernel_config(&mut self, session_id: i64, text: &str) -> Result<String, StoreError> {
        self.in_transaction(|db| set_kernel_config_tx(db, session_id, text))
    }

    /// The kernel config a session ran on, if it is known.
    pub fn kernel_config(&self, session_id: i64) -> Result<Option<String>, StoreError> {
        let row = self.db().as_mut().query_opt(
            "SELECT kernel_config_hash FROM sessions WHERE id = ?1",
            cells![session_id],
        )?;
        match row {
            Some(mut row) => match row.take_text(0)? {
                Some(hash) => self.kernel_config_by_hash(&hash),
                None => Ok(None),
            },
            None => Ok(None),
        }
    }

    /// The kernel config stored under `hash` ([`SessionRow::kernel_config_hash`]).
    pub fn kernel_config_by_hash(&self, hash: &str) -> Result<Option<String>, StoreError> {
        let gzip = match self.db().as_mut().query_opt(
            "SELECT config FROM kernel_configs WHERE hash = ?1",
            cells![hash],
        )? {
            Some(mut row) => row.take_blob(0)?,
            None => None,
        };
        gzip.map(|bytes| {
            kernel_config::gunzip(&bytes)
                .map_err(|e| StoreError::Corrupt(format!("kernel config {hash}: {e}")))
        })
        .transpose()
    }
}
