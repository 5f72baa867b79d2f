//! The run database: open and migrate, write sessions and runs, read them back, on
//! either backend ([`crate::sqlite`], the default, or [`crate::postgres`], a lab's
//! shared store), with the same queries and the same semantics.
//!
//! Every run is its own transaction, so a crash loses at most the run in flight; a
//! session written whole (an import, a boot, a push) is one transaction.
use crate::db::{numbered, Cell, Db, Row};
use crate::kernel_config::{self, config_hash};
use crate::location::Location;
use crate::machine::MACHINE_SQL;
use crate::{cell_row, cells};
pub use kbench_record::stored::{SessionWithRuns, SummaryRow};
use kbench_record::{
    legacy_primary, mark_legacy_primary, ImportSource, Imported, NewSession, ObservedPlacement,
    RawJson, RunRecord, StoredRun, Value,
};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Names how many seconds a writer waits for another kbench to finish before giving
/// up; 30 when unset.
pub const BUSY_TIMEOUT_ENV: &str = "KBENCH_BUSY_TIMEOUT";

/// How long a writer waits for another to finish before giving up.
pub fn busy_timeout() -> Duration {
    std::env::var(BUSY_TIMEOUT_ENV)
        .ok()
        .and_then(|secs| secs.trim().parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs >= 0.0 && *secs < 1e6)
        .map_or(Duration::from_secs(30), Duration::from_secs_f64)
}

/// Why the database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is not a kbench database, or is from a newer kbench: the user's input.
    #[error("{0}")]
    Unusable(String),
    /// A read-only, full or locked database is the user's ([`StoreError::is_usage`]),
    /// and its text says which.
    #[error("{}", crate::error::sqlite_message(.0))]
    Sqlite(#[from] rusqlite::Error),
    #[cfg(feature = "postgres")]
    #[error("{}", crate::error::postgres_message(.0))]
    Postgres(#[from] ::tokio_postgres::Error),
    /// A stored value does not read back (a config that does not decompress).
    #[error("corrupt database: {0}")]
    Corrupt(String),
}

/// The database path kbench uses when `--db` is absent: `$KBENCH_DB`, else
/// `$XDG_DATA_HOME/kbench/kbench.db`, else `~/.local/share/kbench/kbench.db`.
pub fn default_path() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(path) = var("KBENCH_DB") {
        return PathBuf::from(path);
    }
    let data_home = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data_home.join("kbench").join("kbench.db")
}

/// A label's runs, whole ([`Store::runs`]).
const RUNS_WHOLE: &str = "SELECT r.id, r.session_id, s.boot_id, r.workload, r.params, r.variant,
        r.run_index, r.warmup, r.exit_status, r.start_unix_ns, r.end_unix_ns,
        r.pinned_cpus, r.cpus_used, r.rusage, r.tasks, r.record, r.error, r.ab_side,
        r.placement, s.started_unix_ns
    FROM runs r JOIN sessions s ON s.id = r.session_id
    WHERE s.label = ?1{scope}";

/// A label's runs as the analysis reads them ([`Store::runs_for_analysis`]).
const RUNS_FOR_ANALYSIS: &str = "SELECT r.id, r.session_id, s.boot_id, r.workload, r.params,
        r.variant, r.run_index, r.warmup, r.exit_status, r.start_unix_ns, r.end_unix_ns,
        r.pinned_cpus, r.cpus_used, NULL, NULL,
        CASE WHEN r.has_series = 1 THEN r.record END, r.error, r.ab_side, r.placement,
        s.started_unix_ns
    FROM runs r JOIN sessions s ON s.id = r.session_id
    WHERE s.label = ?1{scope}";

/// Which of a label's sessions a read takes: all of them, or one machine's as
/// [`MACHINE_SQL`] shows it ([`Store::machine_scope`]), by the plain columns the
/// `sessions_by_label_machine` index finds, so that one machine's history in a lab's
/// store reads that machine's runs only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionScope {
    /// ` AND ...` on sessions aliased `s`, with parameters from `?2` on.
    condition: String,
    params: Vec<Cell>,
}

impl SessionScope {
    /// Every session.
    pub fn all() -> SessionScope {
        SessionScope::default()
    }

    /// `label` as `?1`, then the scope's parameters.
    fn params_after(&self, label: &str) -> Vec<Cell> {
        let mut params = vec![Cell::from(label)];
        params.extend(self.params.iter().cloned());
        params
    }
}

/// The measured runs of session `s` ([`StoredRun::is_measured`] in SQL), counted on
/// the index of measured runs (`runs_measured_by_session`, schema migration 10, whose
/// condition this repeats term for term) without reading a run's row.
const MEASURED_RUNS_SQL: &str = "(SELECT count(*) FROM runs r WHERE r.session_id = s.id
    AND r.warmup = 0 AND r.error IS NULL AND coalesce(r.exit_status, 0) = 0)";

impl RunRow {
    /// See [`StoredRun::is_measured`].
    pub fn is_measured(&self) -> bool {
        self.run.is_measured()
    }

    /// See [`StoredRun::record`].
    pub fn record(&self) -> Option<RunRecord> {
        self.run.record()
    }
}

/// A stored run with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub session_id: i64,
    pub label: String,
    pub boot_id: Option<String>,
    #[serde(flatten)]
    pub run: StoredRun,
    /// Where its two tasks ran, as its record says, kept in a column of its own.
    #[serde(skip)]
    pub placement: Option<ObservedPlacement>,
}

/// A machine's noise, measured by A/A sessions, to be stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewCalibration {
    pub label: String,
    pub created_unix_ns: u64,
    pub kbench_version: String,
    /// Which machine (JSON, written and read by the analysis).
    pub fingerprint: serde_json::Value,
    pub sessions: u64,
    pub boots: u64,
    pub components: Vec<CalibrationComponent>,
}

/// The noise of one metric (or pooled percentile) of one comparison key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationComponent {
    pub workload: String,
    pub params: String,
    pub variant: String,
    pub metric: String,
    pub pooled_quantile: Option<f64>,
    /// JSON, written and read by the analysis.
    pub components: serde_json::Value,
}

/// A stored calibration, without its components.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRow {
    pub id: i64,
    pub label: String,
    pub created_unix_ns: u64,
    pub kbench_version: String,
    pub fingerprint: serde_json::Value,
    pub sessions: u64,
    pub boots: u64,
}

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

/// Which machines hold a label's sessions (`kbench list --machines`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineLabel {
    /// [`crate::machine_of`]; `None` for sessions that recorded no environment.
    pub machine: Option<String>,
    pub label: String,
    pub sessions: u64,
    pub runs: u64,
    pub first_unix_ns: u64,
    pub last_unix_ns: u64,
}

/// The kernel a label's last session ran, as `kbench list` shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelKernel {
    /// `uname -r`.
    pub release: Option<String>,
    /// The commit it was built from, when recorded.
    pub commit: Option<String>,
}

/// One label at a glance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelInfo {
    pub label: String,
    pub sessions: u64,
    pub runs: u64,
    pub boots: u64,
    pub first_unix_ns: u64,
    pub last_unix_ns: u64,
}

/// Which database a [`Store`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The run database, on either backend. Reads take `&self`, as the analysis shares
/// one store; each call uses the connection alone, one after another.
pub struct Store {
    db: RefCell<Box<dyn Db>>,
    /// Where it is, for messages: the file, or the server's URL without its password.
    path: PathBuf,
    backend: Backend,
    /// Where it is, to open it again ([`Store::reopen`]).
    location: Location,
    /// Statements run outside a transaction (every read), for tests that count them;
    /// shared with the stores [`Store::reopen`] opens.
    queries: Arc<AtomicU64>,
}

pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn json_text<T: serde::Serialize>(value: &Option<T>) -> Option<String> {
    value.as_ref().and_then(|v| serde_json::to_string(v).ok())
}

/// A JSON column as its type; `None` when it is empty or does not read as one (a
/// hand-made database's environment that is no object).
fn parse_json<T: serde::de::DeserializeOwned>(text: Option<&str>) -> Option<T> {
    text.and_then(|t| serde_json::from_str(t).ok())
}

/// A new session's identity: a random (version 4) UUID.
pub fn new_session_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

impl Store {
    /// Opens (creating it and its directory if needed) and migrates the database at
    /// `path`: an SQLite file, or a PostgreSQL server (a `postgres://` URL or a
    /// directory holding its socket, [`Location::of`]).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_location(&Location::of(path), false)
    }

    /// Opens a database that must exist already, for the commands that only read: a
    /// mistyped path is an error, never a new empty database or directory. An empty
    /// file is refused too, as opening it would make it a database; a PostgreSQL
    /// database without kbench's tables is refused rather than given them.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        Store::open_location(&Location::of(path), true)
    }

    fn open_location(location: &Location, existing: bool) -> Result<Store, StoreError> {
        let (db, backend): (Box<dyn Db>, Backend) = match location {
            Location::Sqlite(path) if existing => (
                Box::new(crate::sqlite::open_existing(path)?),
                Backend::Sqlite,
            ),
            Location::Sqlite(path) => (Box::new(crate::sqlite::open(path)?), Backend::Sqlite),
            #[cfg(feature = "postgres")]
            Location::Postgres(target) => (
                Box::new(crate::postgres::open(target, existing)?),
                Backend::Postgres,
            ),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(_) => return Err(crate::location::built_without_postgres(location)),
        };
        Ok(Store {
            db: RefCell::new(db),
            path: PathBuf::from(location.display()),
            backend,
            location: location.clone(),
            queries: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Opens the same database on a connection of its own, wherever it is called: two
    /// labels are read at once, each on its connection, and a PostgreSQL connection's
    /// set-up overlaps the other read. The store it opens counts its reads with this
    /// one's.
    pub fn reopener(&self) -> impl FnOnce() -> Result<Store, StoreError> + Send + 'static {
        let (location, queries) = (self.location.clone(), Arc::clone(&self.queries));
        move || {
            let mut store = Store::open_location(&location, true)?;
            store.queries = queries;
            Ok(store)
        }
    }

    /// The file, or the server's URL without its password.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// How many statements were run outside a transaction (every read) so far.
    pub fn queries(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }

    /// The database, for one statement.
    pub(crate) fn db(&self) -> std::cell::RefMut<'_, Box<dyn Db>> {
        self.queries.fetch_add(1, Ordering::Relaxed);
        self.db.borrow_mut()
    }

    pub(crate) fn in_transaction<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Db) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.db.get_mut().as_mut().in_transaction(work)
    }

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

    /// Stores one run and its values in one transaction.
    pub fn insert_run(&mut self, session_id: i64, run: &StoredRun) -> Result<i64, StoreError> {
        self.in_transaction(|db| insert_run_tx(db, session_id, run))
    }

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

    /// Refreshes the planner's statistics after a bulk load ([`Db::refresh_statistics`]).
    pub fn refresh_statistics(&mut self) -> Result<(), StoreError> {
        self.db().refresh_statistics()
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

    /// Every label with its counts (runs: the measured ones), oldest first.
    pub fn labels(&self) -> Result<Vec<LabelInfo>, StoreError> {
        let rows = self.db().query(
            &format!(
                "SELECT s.label, count(*), CAST(coalesce(sum({MEASURED_RUNS_SQL}), 0) AS BIGINT),
                        count(DISTINCT s.boot_id), min(s.started_unix_ns),
                        max(coalesce(s.ended_unix_ns, s.started_unix_ns))
                 FROM sessions s GROUP BY s.label"
            ),
            &[],
        )?;
        // Sorted here: PostgreSQL's ORDER BY on text follows the server's collation.
        let mut labels = rows
            .into_iter()
            .map(|r| {
                Ok(LabelInfo {
                    label: r.str(0)?.to_string(),
                    sessions: r.u64(1)?,
                    runs: r.u64(2)?,
                    boots: r.u64(3)?,
                    first_unix_ns: r.u64(4)?,
                    last_unix_ns: r.u64(5)?,
                })
            })
            .collect::<Result<Vec<LabelInfo>, StoreError>>()?;
        labels.sort_by(|a, b| (a.first_unix_ns, &a.label).cmp(&(b.first_unix_ns, &b.label)));
        Ok(labels)
    }

    /// Per label, the kernel its last session recorded: one environment read a label,
    /// not one a session, and only for the callers that show it.
    pub fn label_kernels(&self) -> Result<BTreeMap<String, LabelKernel>, StoreError> {
        let rows = self.db().query(
            "SELECT s.label, s.environment FROM sessions s
             WHERE s.id IN (SELECT max(id) FROM sessions GROUP BY label)",
            &[],
        )?;
        rows.into_iter()
            .map(|r| {
                let env: Option<kbench_record::SessionEnvironment> = parse_json(r.opt_str(1)?);
                let release = env
                    .as_ref()
                    .and_then(|e| e.snapshot.as_ref()?.kernel_release.clone());
                let commit = env.and_then(|e| e.kernel.kernel_commit);
                Ok((r.str(0)?.to_string(), LabelKernel { release, commit }))
            })
            .collect()
    }

    /// Every machine the store holds sessions of, as [`MACHINE_SQL`] shows them, sorted.
    pub fn machines(&self) -> Result<Vec<String>, StoreError> {
        let rows = self.db().query(
            &format!("SELECT DISTINCT {MACHINE_SQL} FROM sessions s WHERE s.machine IS NOT NULL"),
            &[],
        )?;
        let mut machines = rows
            .iter()
            .map(|r| Ok(r.str(0)?.to_string()))
            .collect::<Result<Vec<String>, StoreError>>()?;
        machines.sort();
        Ok(machines)
    }

    /// The sessions of `machine` as [`MACHINE_SQL`] shows it: by the name, with any id
    /// or none while one id at most is seen under the name, else only those without
    /// one; `name [id]` by both. A machine the store does not hold has no sessions.
    pub fn machine_scope(&self, machine: &str) -> Result<SessionScope, StoreError> {
        let row = self.db().as_mut().query_one(
            "SELECT count(DISTINCT machine_id), count(*) FROM sessions WHERE machine = ?1",
            cells![machine],
        )?;
        let (ids, sessions) = (row.i64(0)?, row.i64(1)?);
        let scope = |condition: &str, params: Vec<Cell>| SessionScope {
            condition: condition.to_string(),
            params,
        };
        if sessions > 0 {
            let condition = match ids > 1 {
                true => " AND s.machine = ?2 AND s.machine_id IS NULL",
                false => " AND s.machine = ?2",
            };
            return Ok(scope(condition, vec![machine.into()]));
        }
        match crate::machine::split_machine_key(machine) {
            Some((name, id)) => Ok(scope(
                " AND s.machine = ?2 AND s.machine_id = ?3",
                vec![name.into(), id.into()],
            )),
            None => Ok(scope(" AND 1 = 0", Vec::new())),
        }
    }

    /// Which machines hold which labels: per machine and label, the sessions and
    /// measured runs, machine then first session order.
    pub fn machine_labels(&self) -> Result<Vec<MachineLabel>, StoreError> {
        let rows = self.db().query(
            &format!(
                "SELECT m.machine, m.label, count(*), CAST(coalesce(sum(m.runs), 0) AS BIGINT),
                        min(m.started_unix_ns), max(coalesce(m.ended_unix_ns, m.started_unix_ns))
                 FROM (SELECT s.label, s.started_unix_ns, s.ended_unix_ns,
                              {MACHINE_SQL} AS machine, {MEASURED_RUNS_SQL} AS runs
                       FROM sessions s) m
                 GROUP BY m.machine, m.label"
            ),
            &[],
        )?;
        let mut machines = rows
            .into_iter()
            .map(|r| {
                Ok(MachineLabel {
                    machine: r.opt_str(0)?.map(str::to_string),
                    label: r.str(1)?.to_string(),
                    sessions: r.u64(2)?,
                    runs: r.u64(3)?,
                    first_unix_ns: r.u64(4)?,
                    last_unix_ns: r.u64(5)?,
                })
            })
            .collect::<Result<Vec<MachineLabel>, StoreError>>()?;
        // Known machines by name, the unknown last; each machine's labels oldest first.
        machines.sort_by(|a, b| {
            let key = |m: &MachineLabel| {
                (
                    m.machine.is_none(),
                    m.machine.clone(),
                    m.first_unix_ns,
                    m.label.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        Ok(machines)
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

    /// Whether any session carries `label`.
    pub fn has_label(&self, label: &str) -> Result<bool, StoreError> {
        Ok(self
            .db()
            .as_mut()
            .query_opt(
                "SELECT 1 FROM sessions WHERE label = ?1 LIMIT 1",
                cells![label],
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

    /// Every run of `label` (warm-ups included, flagged), in session then run order,
    /// each with its values in metric order. Two queries whatever the number of runs;
    /// the JSON columns stay text until asked for ([`StoredRun::record`]).
    pub fn runs(&self, label: &str) -> Result<Vec<RunRow>, StoreError> {
        self.runs_with(label, &SessionScope::all(), RUNS_WHOLE)
    }

    /// Every run of `label` as [`Store::runs`], with what the analysis reads: no
    /// rusage or tasks, and the record only of a run with latency series (its placement
    /// is in [`RunRow::placement`]). A label's records are most of what it holds.
    pub fn runs_for_analysis(&self, label: &str) -> Result<Vec<RunRow>, StoreError> {
        self.runs_for_analysis_in(label, &SessionScope::all())
    }

    /// [`Store::runs_for_analysis`] of the sessions in `scope`.
    pub fn runs_for_analysis_in(
        &self,
        label: &str,
        scope: &SessionScope,
    ) -> Result<Vec<RunRow>, StoreError> {
        self.runs_with(label, scope, RUNS_FOR_ANALYSIS)
    }

    fn runs_with(
        &self,
        label: &str,
        scope: &SessionScope,
        sql: &str,
    ) -> Result<Vec<RunRow>, StoreError> {
        // Runs of one workload share their parameters: parse each distinct text once.
        let mut last_params: Option<(String, BTreeMap<String, serde_json::Value>)> = None;
        // Each run with its session's start: the order is made here, not with ORDER BY,
        // so that the server sends rows as it scans them rather than first sorting a
        // label's wide rows (on PostgreSQL in parallel workers, on the cores the reader
        // decodes them with).
        let mut runs: Vec<(i64, RunRow)> = Vec::new();
        self.db().query_each(
            &sql.replace("{scope}", &scope.condition),
            &scope.params_after(label),
            &mut |r| {
                let params = match &last_params {
                    Some((text, params)) if text == r.str(4)? => params.clone(),
                    _ => {
                        let text = r.text(4)?;
                        let params: BTreeMap<String, serde_json::Value> =
                            serde_json::from_str(&text).unwrap_or_default();
                        last_params = Some((text, params.clone()));
                        params
                    }
                };
                let session_started_unix_ns = r.i64(19)?;
                let row = RunRow {
                    id: r.i64(0)?,
                    session_id: r.i64(1)?,
                    label: label.to_string(),
                    boot_id: r.take_text(2)?,
                    run: StoredRun {
                        workload: r.text(3)?,
                        params,
                        variant: r.text(5)?,
                        run_index: u32::try_from(r.i64(6)?).unwrap_or(u32::MAX),
                        warmup: r.flag(7)?,
                        exit_status: r.opt_i64(8)?.and_then(|v| i32::try_from(v).ok()),
                        start_unix_ns: r.opt_u64(9)?,
                        end_unix_ns: r.opt_u64(10)?,
                        pinned_cpus: r.take_text(11)?,
                        cpus_used: r.take_text(12)?,
                        rusage: r.take_text(13)?.map(RawJson::from_stored),
                        tasks: r.take_text(14)?.map(RawJson::from_stored),
                        record: r.take_text(15)?.map(RawJson::from_stored),
                        values: Vec::new(),
                        error: r.take_text(16)?,
                        ab_side: r.opt_str(17)?.and_then(|t| serde_json::from_str(t).ok()),
                    },
                    placement: r.opt_str(18)?.and_then(|t| serde_json::from_str(t).ok()),
                };
                runs.push((session_started_unix_ns, row));
                Ok(())
            },
        )?;
        let mut runs = in_session_order(runs);
        self.attach_values(label, scope, &mut runs)?;
        Ok(runs)
    }

    /// The values of every run of `label` in `scope`, in one query, onto `rows`.
    fn attach_values(
        &self,
        label: &str,
        scope: &SessionScope,
        rows: &mut [RunRow],
    ) -> Result<(), StoreError> {
        let index: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        let mut current: Option<(i64, usize)> = None;
        let (sql, params) = values_query(label, scope, rows);
        // No ORDER BY: SQLite walks run_values by its (run_id, metric) key, so the rows
        // come grouped by run; any order is taken, and the metric order is made sure of
        // below.
        self.db().query_each(&sql, &params, &mut |r| {
            let run_id = r.i64(0)?;
            let i = match current {
                Some((id, i)) if id == run_id => i,
                _ => match index.get(&run_id) {
                    Some(&i) => {
                        current = Some((run_id, i));
                        i
                    }
                    // A run committed between the two queries.
                    None => return Ok(()),
                },
            };
            rows[i].run.values.push(Value {
                metric: r.str(1)?.to_string(),
                value: r.f64(2)?,
                unit: r.str(3)?.to_string(),
                higher_is_better: r.flag(4)?,
                primary: r.flag(5)?,
            });
            Ok(())
        })?;
        for row in rows {
            let values = &mut row.run.values;
            if !values.windows(2).all(|w| w[0].metric <= w[1].metric) {
                values.sort_by(|a, b| a.metric.cmp(&b.metric));
            }
            mark_legacy_primary(&row.run.workload, values);
        }
        Ok(())
    }

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

    /// Stores a calibration and its components in one transaction.
    pub fn insert_calibration(&mut self, c: &NewCalibration) -> Result<i64, StoreError> {
        self.in_transaction(|db| {
            let id = db
                .query_one(
                    "INSERT INTO calibrations (label, created_unix_ns, kbench_version, fingerprint,
                                               sessions, boots)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
                    cells![
                        &c.label,
                        to_i64(c.created_unix_ns),
                        &c.kbench_version,
                        c.fingerprint.to_string(),
                        to_i64(c.sessions),
                        to_i64(c.boots)
                    ],
                )?
                .i64(0)?;
            for m in &c.components {
                db.execute(
                    "INSERT INTO calibration_components (calibration_id, workload, params, variant,
                                                         metric, pooled_quantile, components)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    cells![
                        id,
                        &m.workload,
                        &m.params,
                        &m.variant,
                        &m.metric,
                        m.pooled_quantile,
                        m.components.to_string()
                    ],
                )?;
            }
            Ok(id)
        })
    }

    /// Every calibration, oldest first.
    pub fn calibrations(&self) -> Result<Vec<CalibrationRow>, StoreError> {
        let rows = self.db().query(
            "SELECT id, label, created_unix_ns, kbench_version, fingerprint, sessions, boots
             FROM calibrations ORDER BY created_unix_ns, id",
            &[],
        )?;
        rows.into_iter()
            .map(|mut r| {
                Ok(CalibrationRow {
                    id: r.i64(0)?,
                    label: r.text(1)?,
                    created_unix_ns: r.u64(2)?,
                    kbench_version: r.text(3)?,
                    fingerprint: parse_json(r.opt_str(4)?).unwrap_or_default(),
                    sessions: r.u64(5)?,
                    boots: r.u64(6)?,
                })
            })
            .collect()
    }

    /// The components of calibration `id`.
    pub fn calibration_components(&self, id: i64) -> Result<Vec<CalibrationComponent>, StoreError> {
        let rows = self.db().query(
            "SELECT workload, params, variant, metric, pooled_quantile, components
             FROM calibration_components WHERE calibration_id = ?1",
            cells![id],
        )?;
        rows.into_iter()
            .map(|mut r| {
                Ok(CalibrationComponent {
                    workload: r.text(0)?,
                    params: r.text(1)?,
                    variant: r.text(2)?,
                    metric: r.text(3)?,
                    pooled_quantile: r.opt_f64(4)?,
                    components: parse_json(r.opt_str(5)?).unwrap_or_default(),
                })
            })
            .collect()
    }

    /// The database's own consistency check: "ok" for a sound database.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.db().integrity_check()
    }
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

fn session_row(mut r: Row) -> Result<SessionRow, StoreError> {
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

fn insert_session(db: &mut dyn Db, s: &NewSession) -> Result<i64, StoreError> {
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
const SESSION_COLUMNS: [&str; 15] = [
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
fn session_cells(s: &NewSession) -> Vec<Cell> {
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

/// Keeps a config (compressed only when its hash is new) and points the session at it.
fn set_kernel_config_tx(
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
fn keep_kernel_config(db: &mut dyn Db, text: &str) -> Result<String, StoreError> {
    let text = kernel_config::normalized(text);
    let hash = config_hash(&text);
    keep_normalized_config(db, &hash, &text)?;
    Ok(hash)
}

/// Keeps a normalised config under its hash, unless the database has it.
fn keep_normalized_config(db: &mut dyn Db, hash: &str, text: &str) -> Result<(), StoreError> {
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

fn insert_summary(db: &mut dyn Db, session_id: i64, m: &SummaryRow) -> Result<(), StoreError> {
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

fn insert_run_tx(db: &mut dyn Db, session_id: i64, run: &StoredRun) -> Result<i64, StoreError> {
    let ids = insert_runs_tx(db, &[(session_id, run)])?;
    ids.first()
        .copied()
        .ok_or_else(|| StoreError::Corrupt("no run id".into()))
}

/// The columns of a run row, in [`run_cells`]'s order.
const RUN_COLUMNS: [&str; 19] = [
    "id",
    "session_id",
    "workload",
    "params",
    "variant",
    "run_index",
    "warmup",
    "exit_status",
    "start_unix_ns",
    "end_unix_ns",
    "pinned_cpus",
    "cpus_used",
    "rusage",
    "tasks",
    "record",
    "error",
    "ab_side",
    "placement",
    "has_series",
];

/// The columns of a value row, in [`value_cells`]'s order.
const VALUE_COLUMNS: [&str; 6] = [
    "run_id",
    "metric",
    "value",
    "unit",
    "higher_is_better",
    "is_primary",
];

/// Inserts runs (each with the session it belongs to) and their values in three
/// statements whatever their number: their ids reserved first, then the runs and the
/// values as bulk loads ([`Db::insert_rows`]). Returns the runs' ids in order.
fn insert_runs_tx(db: &mut dyn Db, runs: &[(i64, &StoredRun)]) -> Result<Vec<i64>, StoreError> {
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let ids = db.reserve_ids("runs", runs.len())?;
    let run_rows: Vec<Vec<Cell>> = runs
        .iter()
        .zip(&ids)
        .map(|((session_id, run), id)| run_cells(*id, *session_id, run))
        .collect();
    db.insert_rows("runs", &RUN_COLUMNS, &run_rows)?;
    let value_rows: Vec<Vec<Cell>> = runs
        .iter()
        .zip(&ids)
        .flat_map(|((_, run), id)| {
            distinct_values(&run.values)
                .into_iter()
                .map(move |v| value_cells(*id, v))
        })
        .collect();
    db.insert_rows("run_values", &VALUE_COLUMNS, &value_rows)?;
    Ok(ids)
}

/// At most this many ranges of run ids make a values query; more (a label whose runs
/// interleave another's, as `ab` writes them) and the query finds the runs by label.
const MAX_VALUE_RANGES: usize = 16;

/// The query of the values of `runs`, read just before as `label`'s in `scope`: by the
/// ranges of consecutive ids they make, where there are a few, which need no join (the
/// values' key finds them); else through the runs' sessions, by label, which joins
/// every run and value of the tables (four times the server's time on two labels of
/// 10,000 runs). A run stored after `runs` were read is in none of the ranges, which
/// hold their ids only, and the join's rows of it are passed over.
fn values_query(label: &str, scope: &SessionScope, runs: &[RunRow]) -> (String, Vec<Cell>) {
    const COLUMNS: &str =
        "SELECT v.run_id, v.metric, v.value, v.unit, v.higher_is_better, v.is_primary";
    let ranges = id_ranges(runs.iter().map(|r| r.id));
    if ranges.len() > MAX_VALUE_RANGES {
        let sql = format!(
            "{COLUMNS} FROM run_values v JOIN runs r ON r.id = v.run_id
                 JOIN sessions s ON s.id = r.session_id
             WHERE s.label = ?1{}",
            scope.condition
        );
        return (sql, scope.params_after(label));
    }
    if ranges.is_empty() {
        return (
            format!("{COLUMNS} FROM run_values v WHERE 0 = 1"),
            Vec::new(),
        );
    }
    let conditions: Vec<String> = (0..ranges.len())
        .map(|i| format!("v.run_id BETWEEN ?{} AND ?{}", 2 * i + 1, 2 * i + 2))
        .collect();
    let params = ranges
        .iter()
        .flat_map(|&(first, last)| [Cell::Int(first), Cell::Int(last)])
        .collect();
    let sql = format!(
        "{COLUMNS} FROM run_values v WHERE {}",
        conditions.join(" OR ")
    );
    (sql, params)
}

/// The ranges of consecutive numbers `ids` make, in order, each as (first, last).
fn id_ranges(ids: impl Iterator<Item = i64>) -> Vec<(i64, i64)> {
    let mut ids: Vec<i64> = ids.collect();
    ids.sort_unstable();
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    for id in ids {
        match ranges.last_mut() {
            // Sorted: `id` is at least `last`.
            Some((_, last)) if id <= *last + 1 => *last = id,
            _ => ranges.push((id, id)),
        }
    }
    ranges
}

/// Runs in the order of their sessions' starts, then their own: already so as a rule
/// (rows come back as they were written), else sorted by a permutation, since moving
/// the rows themselves costs more than the comparisons.
fn in_session_order(runs: Vec<(i64, RunRow)>) -> Vec<RunRow> {
    let key = |(started, r): &(i64, RunRow)| (*started, r.session_id, r.run.run_index, r.id);
    if runs.windows(2).all(|w| key(&w[0]) <= key(&w[1])) {
        return runs.into_iter().map(|(_, row)| row).collect();
    }
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_unstable_by_key(|&i| key(&runs[i]));
    let mut slots: Vec<Option<RunRow>> = runs.into_iter().map(|(_, row)| Some(row)).collect();
    order.iter().filter_map(|&i| slots[i].take()).collect()
}

/// A run as the cells of [`RUN_COLUMNS`].
fn run_cells(id: i64, session_id: i64, run: &StoredRun) -> Vec<Cell> {
    let params_text = serde_json::to_string(&run.params).unwrap_or_else(|_| "{}".into());
    let facts = run.record_facts();
    cell_row![
        id,
        session_id,
        &run.workload,
        params_text,
        &run.variant,
        run.run_index,
        run.warmup,
        run.exit_status,
        run.start_unix_ns.map(to_i64),
        run.end_unix_ns.map(to_i64),
        run.pinned_cpus.as_ref(),
        run.cpus_used.as_ref(),
        run.rusage.as_ref().map(RawJson::as_str),
        run.tasks.as_ref().map(RawJson::as_str),
        run.record.as_ref().map(RawJson::as_str),
        run.error.as_ref(),
        run.ab_side
            .as_ref()
            .and_then(|a| serde_json::to_string(a).ok()),
        facts.placement.and_then(|p| serde_json::to_string(&p).ok()),
        facts.has_series,
    ]
}

/// A value as the cells of [`VALUE_COLUMNS`].
fn value_cells(run_id: i64, v: &Value) -> Vec<Cell> {
    vec![
        Cell::Int(run_id),
        Cell::from(&v.metric),
        Cell::Real(v.value),
        Cell::from(&v.unit),
        Cell::from(v.higher_is_better),
        Cell::from(v.primary),
    ]
}

/// A run's values, one per metric: a metric named twice keeps its last value, as a
/// map would.
fn distinct_values(values: &[Value]) -> Vec<&Value> {
    let last_of: HashMap<&str, usize> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (v.metric.as_str(), i))
        .collect();
    values
        .iter()
        .enumerate()
        .filter(|(i, v)| last_of[v.metric.as_str()] == *i)
        .map(|(_, v)| v)
        .collect()
}

pub use crate::sqlite::{is_busy, is_disk_full, is_read_only};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_ranges_are_the_stretches_of_consecutive_ids() {
        assert_eq!(id_ranges([].into_iter()), []);
        assert_eq!(id_ranges([7].into_iter()), [(7, 7)]);
        assert_eq!(
            id_ranges([5, 3, 4, 9, 10, 12, 4].into_iter()),
            [(3, 5), (9, 10), (12, 12)]
        );
    }

    #[test]
    fn values_are_read_by_ranges_up_to_the_bound_then_by_label() {
        let runs = |ids: &[i64]| -> Vec<RunRow> {
            ids.iter()
                .map(|&id| RunRow {
                    id,
                    session_id: 1,
                    label: "l".into(),
                    boot_id: None,
                    run: StoredRun::default(),
                    placement: None,
                })
                .collect()
        };
        let scope = SessionScope::all();
        let (sql, params) = values_query("l", &scope, &runs(&[1, 2, 3, 10]));
        assert!(sql.ends_with("v.run_id BETWEEN ?1 AND ?2 OR v.run_id BETWEEN ?3 AND ?4"));
        assert_eq!(params, [1, 3, 10, 10].map(Cell::Int));
        let alternate: Vec<i64> = (0..=MAX_VALUE_RANGES as i64).map(|i| 2 * i).collect();
        let (sql, params) = values_query("l", &scope, &runs(&alternate));
        assert!(sql.contains("WHERE s.label = ?1"), "{sql}");
        assert_eq!(params, [Cell::from("l")]);
    }
}
