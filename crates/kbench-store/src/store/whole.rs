//! Sessions written whole in one transaction: an import, a boot, a kbench export, a push.
use super::handle::Store;
use super::kernel_configs::{keep_normalized_config, set_kernel_config_tx};
use super::runs::insert_runs_tx;
use super::sessions::{insert_session, session_cells, SESSION_COLUMNS};
use super::summaries::insert_summary;
use crate::cells;
use crate::db::{numbered, to_i64, Cell, Db};
use crate::error::StoreError;
use crate::kernel_config::{self, config_hash};
use kbench_record::stored::{SessionWithRuns, SummaryRow};
use kbench_record::{Imported, NewSession, StoredRun, Value};
use std::collections::{BTreeMap, HashMap};

/// One boot of a kernel as `kbench vm-ab` or `import-console` stores it.
#[derive(Debug, Clone)]
pub struct NewBoot<'a> {
    pub session: &'a NewSession,
    /// The boot's console log as captured; stored gzipped.
    pub console_log: &'a str,
    pub kernel_config: Option<&'a str>,
    /// The guest's runs, or the one failed `boot` run saying why it failed.
    pub runs: &'a [StoredRun],
    pub ended_unix_ns: u64,
}

/// A session with everything `kbench push` copies: its runs and summaries, and the
/// console log and kernel config kept with it.
#[derive(Debug, Clone, PartialEq)]
pub struct PushedSession {
    pub whole: SessionWithRuns,
    pub console_log_gzip: Option<Vec<u8>>,
    /// Shared by the sessions of one config: a push batch holds hundreds of sessions.
    pub kernel_config: Option<std::sync::Arc<str>>,
}

/// A pushed session's UUID (checked to be there before it is stored).
fn pushed_uuid(s: &PushedSession) -> &str {
    s.whole.session.uuid.as_deref().unwrap_or_default()
}

/// Keeps the pushed sessions' kernel configs, each once by the hash the source kept
/// it under (a lab's sessions share a few configs); returns each session's hash here.
fn keep_pushed_configs(
    db: &mut dyn Db,
    sessions: &[&PushedSession],
) -> Result<Vec<Option<String>>, StoreError> {
    // Normalised and hashed once a source config; kept in hash order, so that two
    // batches stored at once (a push's writers) that bring the same new configs
    // take their rows' locks in one order, and never deadlock.
    let mut by_source: HashMap<&str, String> = HashMap::new();
    let mut new: BTreeMap<String, String> = BTreeMap::new();
    let mut hashes = Vec::with_capacity(sessions.len());
    for s in sessions {
        let Some(text) = &s.kernel_config else {
            hashes.push(None);
            continue;
        };
        let source = s.whole.kernel_config_hash.as_deref();
        if let Some(hash) = source.and_then(|source| by_source.get(source)) {
            hashes.push(Some(hash.clone()));
            continue;
        }
        let text = kernel_config::normalized(text);
        let hash = config_hash(&text);
        if let Some(source) = source {
            by_source.insert(source, hash.clone());
        }
        hashes.push(Some(hash.clone()));
        new.entry(hash).or_insert(text);
    }
    for (hash, text) in &new {
        keep_normalized_config(db, hash, text)?;
    }
    Ok(hashes)
}

/// Pushed sessions a statement inserts at most: 18 parameters each, well inside both
/// backends' limits.
const PUSHED_PER_INSERT: usize = 200;

/// Inserts the pushed sessions the database lacks (by UUID), each with its end,
/// console log and kernel config hash (`config_hashes`, in the same order), in as few
/// multi-row statements; returns the new sessions' ids by UUID.
fn insert_pushed_sessions(
    db: &mut dyn Db,
    sessions: &[&PushedSession],
    config_hashes: &[Option<String>],
) -> Result<HashMap<String, i64>, StoreError> {
    let mut ids = HashMap::new();
    let columns = SESSION_COLUMNS.len() + 3;
    let rows: Vec<(&PushedSession, &Option<String>)> =
        sessions.iter().copied().zip(config_hashes).collect();
    for chunk in rows.chunks(PUSHED_PER_INSERT) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| format!("({})", numbered(1 + i * columns, columns)))
            .collect();
        let params: Vec<Cell> = chunk
            .iter()
            .flat_map(|(s, hash)| {
                let mut cells = session_cells(&s.whole.session);
                cells.extend([
                    Cell::from(s.whole.ended_unix_ns.map(to_i64)),
                    Cell::from(s.console_log_gzip.clone()),
                    Cell::from((*hash).clone()),
                ]);
                cells
            })
            .collect();
        let inserted = db.query(
            &format!(
                "INSERT INTO sessions ({}, ended_unix_ns, console_log, kernel_config_hash)
                 VALUES {} ON CONFLICT (uuid) DO NOTHING RETURNING id, uuid",
                SESSION_COLUMNS.join(", "),
                values.join(", ")
            ),
            &params,
        )?;
        for row in inserted {
            ids.insert(row.str(1)?.to_string(), row.i64(0)?);
        }
    }
    Ok(ids)
}

/// Inserts a session with everything in it (within the caller's transaction).
fn insert_whole_session(
    db: &mut dyn Db,
    s: &SessionWithRuns,
    kernel_config: Option<&str>,
    console_log_gzip: Option<&[u8]>,
) -> Result<i64, StoreError> {
    let id = insert_session(db, &s.session)?;
    fill_session(db, id, s, kernel_config, console_log_gzip)?;
    Ok(id)
}

/// What a whole session brings beside its row: its end, console log, runs,
/// summaries and kernel config.
fn fill_session(
    db: &mut dyn Db,
    id: i64,
    s: &SessionWithRuns,
    kernel_config: Option<&str>,
    console_log_gzip: Option<&[u8]>,
) -> Result<(), StoreError> {
    if let Some(ended) = s.ended_unix_ns {
        db.execute(
            "UPDATE sessions SET ended_unix_ns = ?1 WHERE id = ?2",
            cells![to_i64(ended), id],
        )?;
    }
    if let Some(log) = console_log_gzip {
        db.execute(
            "UPDATE sessions SET console_log = ?1 WHERE id = ?2",
            cells![log.to_vec(), id],
        )?;
    }
    let runs: Vec<(i64, &StoredRun)> = s.runs.iter().map(|run| (id, run)).collect();
    insert_runs_tx(db, &runs)?;
    for m in &s.summaries {
        insert_summary(db, id, m)?;
    }
    if let Some(text) = kernel_config {
        set_kernel_config_tx(db, id, text)?;
    }
    Ok(())
}

impl Store {
    /// Stores a whole imported file as one session, in one transaction: all or nothing.
    pub fn import(&mut self, session: &NewSession, imported: &Imported) -> Result<i64, StoreError> {
        self.in_transaction(|db| {
            let session_id = insert_session(db, session)?;
            let stored: Vec<StoredRun> = imported
                .runs
                .iter()
                .enumerate()
                .map(|(index, run)| StoredRun {
                    workload: run.workload.clone(),
                    params: run.params.clone(),
                    variant: run.variant.clone(),
                    run_index: index as u32,
                    exit_status: run.exit_status,
                    values: run.values.iter().map(Value::from).collect(),
                    ..StoredRun::default()
                })
                .collect();
            let runs: Vec<(i64, &StoredRun)> = stored.iter().map(|run| (session_id, run)).collect();
            insert_runs_tx(db, &runs)?;
            for s in &imported.summaries {
                let row = SummaryRow {
                    session_id,
                    workload: s.workload.clone(),
                    metric: s.metric.clone(),
                    unit: s.unit.clone(),
                    mean: s.mean,
                    std_error: s.std_error,
                    n: s.n,
                    higher_is_better: s.higher_is_better,
                    primary: s.primary,
                };
                insert_summary(db, session_id, &row)?;
            }
            db.execute(
                "UPDATE sessions SET ended_unix_ns = started_unix_ns WHERE id = ?1",
                cells![session_id],
            )?;
            Ok(session_id)
        })
    }

    /// Stores one booted kernel's session whole, in one transaction: the session, its
    /// console log (gzip), its kernel config, its runs and its end. A kill midway leaves
    /// no session with half its runs.
    pub fn insert_boot(&mut self, boot: &NewBoot<'_>) -> Result<i64, StoreError> {
        self.in_transaction(|db| {
            let id = insert_session(db, boot.session)?;
            db.execute(
                "UPDATE sessions SET console_log = ?1, ended_unix_ns = ?2 WHERE id = ?3",
                cells![
                    kernel_config::gzip(boot.console_log),
                    to_i64(boot.ended_unix_ns),
                    id
                ],
            )?;
            if let Some(text) = boot.kernel_config {
                set_kernel_config_tx(db, id, text)?;
            }
            let runs: Vec<(i64, &StoredRun)> = boot.runs.iter().map(|run| (id, run)).collect();
            insert_runs_tx(db, &runs)?;
            Ok(id)
        })
    }

    /// Stores whole sessions with their runs, summaries and kernel configs (their text
    /// by hash in `kernel_configs`) in one transaction (the import of a kbench export):
    /// all or nothing. A hash without its text leaves the session's config unknown.
    pub fn insert_sessions(
        &mut self,
        sessions: &[SessionWithRuns],
        kernel_configs: &BTreeMap<String, String>,
    ) -> Result<Vec<i64>, StoreError> {
        self.in_transaction(|db| {
            let mut ids = Vec::new();
            for s in sessions {
                let config = s
                    .kernel_config_hash
                    .as_ref()
                    .and_then(|h| kernel_configs.get(h));
                ids.push(insert_whole_session(
                    db,
                    s,
                    config.map(String::as_str),
                    None,
                )?);
            }
            Ok(ids)
        })
    }

    /// Stores pushed sessions (`kbench push`) that the database lacks, each whole with
    /// its console log and kernel config, in one transaction: all of them, or none
    /// when it fails. Says of each whether it was stored now (`false`: another
    /// push stored it first). The sessions are taken in UUID order, so two pushes of
    /// overlapping batches wait for each other rather than deadlock; their runs and
    /// values go in as one bulk load each.
    pub fn insert_pushed_batch(
        &mut self,
        sessions: &[PushedSession],
    ) -> Result<Vec<bool>, StoreError> {
        if sessions.iter().any(|s| s.whole.session.uuid.is_none()) {
            return Err(StoreError::Unusable(
                "a pushed session must carry its UUID".into(),
            ));
        }
        let mut ordered: Vec<&PushedSession> = sessions.iter().collect();
        ordered.sort_by(|a, b| a.whole.session.uuid.cmp(&b.whole.session.uuid));
        self.in_transaction(|db| {
            let config_hashes = keep_pushed_configs(db, &ordered)?;
            let ids = insert_pushed_sessions(db, &ordered, &config_hashes)?;
            let mut runs: Vec<(i64, &StoredRun)> = Vec::new();
            for s in &ordered {
                let Some(&id) = ids.get(pushed_uuid(s)) else {
                    continue;
                };
                for m in &s.whole.summaries {
                    insert_summary(db, id, m)?;
                }
                runs.extend(s.whole.runs.iter().map(|run| (id, run)));
            }
            insert_runs_tx(db, &runs)?;
            Ok(sessions
                .iter()
                .map(|s| ids.contains_key(pushed_uuid(s)))
                .collect())
        })
    }
}
