//! The run database: open and migrate, write sessions and runs, read them back.
//!
//! WAL and a busy timeout let two kbench processes write one database; every run is
//! its own transaction, so a crash loses at most the run in flight.
use crate::import::Imported;
use crate::json::RawJson;
use crate::kernel_config::{self, config_hash};
use crate::record::{legacy_primary, mark_legacy_primary};
use crate::schema::{current_version, MIGRATIONS};
use kbench_record::RunRecord;
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
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
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
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

/// A new session's description.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewSession {
    pub label: String,
    pub kind: String,
    pub boot_id: Option<String>,
    pub started_unix_ns: u64,
    pub kbench_version: String,
    pub command_line: String,
    pub seed: Option<u64>,
    pub environment: Option<serde_json::Value>,
    /// The file an `import` session was read from; `None` for sessions run here.
    #[serde(default, deserialize_with = "source_of_any_version")]
    pub source: Option<ImportSource>,
    /// Sessions whose runs alternate (the two sides of one `kbench ab`) share a group:
    /// for replication they are one session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave_group: Option<String>,
}

/// Where an imported session came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportSource {
    /// The path given to `kbench import` (`-` for standard input).
    pub file: String,
    /// The reader that understood it: `perf-bench`, `perf-stat`, `hyperfine`.
    pub format: String,
    /// A fingerprint of the file's content (16 hex digits), so that the same file is
    /// never imported twice into one label.
    #[serde(default)]
    pub content_hash: Option<String>,
}

impl ImportSource {
    /// The one-line text older kbench versions stored, `FILE (FORMAT, content HASH)`.
    pub fn from_legacy_text(text: &str) -> ImportSource {
        let parsed = text.strip_suffix(')').and_then(|t| {
            let (rest, hash) = t.rsplit_once(", content ")?;
            let (file, format) = rest.rsplit_once(" (")?;
            Some(ImportSource {
                file: file.into(),
                format: format.into(),
                content_hash: Some(hash.into()),
            })
        });
        parsed.unwrap_or_else(|| ImportSource {
            file: text.into(),
            ..ImportSource::default()
        })
    }
}

/// An export's `source`: an [`ImportSource`], or the text of a version 1 export.
fn source_of_any_version<'de, D>(d: D) -> Result<Option<ImportSource>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum AnyVersion {
        Typed(ImportSource),
        Text(String),
    }
    Ok(match Option::<AnyVersion>::deserialize(d)? {
        Some(AnyVersion::Typed(s)) => Some(s),
        Some(AnyVersion::Text(t)) => Some(ImportSource::from_legacy_text(&t)),
        None => None,
    })
}

/// One measured value of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Value {
    pub metric: String,
    pub value: f64,
    pub unit: String,
    pub higher_is_better: bool,
    /// The run's primary metric (one per run). Read back from a run of an older kbench,
    /// none of whose values is marked, it is [`crate::legacy_primary`]'s choice.
    #[serde(default)]
    pub primary: bool,
}

/// A run as stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    pub workload: String,
    pub params: BTreeMap<String, serde_json::Value>,
    pub variant: String,
    pub run_index: u32,
    pub warmup: bool,
    pub exit_status: Option<i32>,
    pub start_unix_ns: Option<u64>,
    pub end_unix_ns: Option<u64>,
    pub pinned_cpus: Option<String>,
    pub cpus_used: Option<String>,
    /// The getrusage figures, as JSON: a workload's [`kbench_record::RusageDelta`], or a
    /// command's (`voluntary_csw`, `user_us`, `max_rss_kib`, ...).
    pub rusage: Option<RawJson>,
    /// Per task, the CPUs it ran on: JSON of [`kbench_record::TaskCpus`].
    pub tasks: Option<RawJson>,
    /// The workload's own run record (a [`RunRecord`], see [`StoredRun::record`]), when
    /// there is one; the same for a `kbench ab` run. Kept as text until asked for.
    pub record: Option<RawJson>,
    pub values: Vec<Value>,
    /// Why the run produced no record, when it failed (a timeout, a crash); such a run
    /// keeps its workload and, if known, its variant.
    #[serde(default)]
    pub error: Option<String>,
    /// For a run of `kbench ab`: which side it was and what that side really ran.
    #[serde(default)]
    pub ab_side: Option<AbSide>,
}

/// What one side of a `kbench ab` ran. Both sides' runs are stored as workload `ab`,
/// variant `ab`, with the pair of specs as parameters, so they share one comparison
/// key; this keeps what differed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AbSide {
    /// `a` or `b`.
    pub side: String,
    /// The workload key (`sched/pipe`) or `command`.
    pub workload: String,
    pub params: BTreeMap<String, serde_json::Value>,
    /// The workload's variant; empty when the run failed before it said.
    pub variant: String,
}

/// The condition of [`StoredRun::is_measured`] in SQL, on a `runs` row aliased `r`.
const MEASURED_SQL: &str = "r.warmup = 0 AND r.error IS NULL AND coalesce(r.exit_status, 0) = 0";

impl StoredRun {
    /// Whether the run counts: not a warm-up, not failed, and exited 0 (or has no exit
    /// status, as imported runs). The one definition for list, show, compare and ab;
    /// the store's SQL counts use the same condition.
    pub fn is_measured(&self) -> bool {
        !self.warmup && self.error.is_none() && matches!(self.exit_status, Some(0) | None)
    }

    /// The workload's run record, when one was stored and it reads as one (parsed on
    /// each call).
    pub fn record(&self) -> Option<RunRecord> {
        self.record.as_ref()?.parse()
    }

    /// Where the run's two tasks ran, read from its record without building the rest.
    pub fn placement(&self) -> Option<kbench_record::ObservedPlacement> {
        #[derive(Deserialize)]
        struct PlacementOnly {
            #[serde(default)]
            placement: Option<kbench_record::ObservedPlacement>,
        }
        let record = self.record.as_ref()?;
        // Most workloads have none: skip parsing their (possibly large) records.
        if !record.as_str().contains("\"placement\"") {
            return None;
        }
        record.parse::<PlacementOnly>()?.placement
    }
}

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
    pub environment: Option<serde_json::Value>,
    pub source: Option<ImportSource>,
    /// See [`NewSession::interleave_group`].
    pub interleave_group: Option<String>,
    /// Its measured runs ([`StoredRun::is_measured`]).
    pub runs: u64,
    /// The kernel config it ran on ([`Store::kernel_config_by_hash`]), when known.
    #[serde(default)]
    pub kernel_config_hash: Option<String>,
}

/// A stored summary-only result (perf stat -r).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    pub session_id: i64,
    pub workload: String,
    pub metric: String,
    pub unit: String,
    pub mean: f64,
    pub std_error: f64,
    pub n: u64,
    #[serde(default)]
    pub higher_is_better: bool,
    /// The headline figure of its workload in its session (perf stat: the elapsed
    /// time); for rows of an older kbench, [`crate::legacy_primary`]'s choice.
    #[serde(default)]
    pub primary: bool,
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

/// A session with everything in it, as exported and imported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionWithRuns {
    pub session: NewSession,
    pub ended_unix_ns: Option<u64>,
    pub runs: Vec<StoredRun>,
    pub summaries: Vec<SummaryRow>,
    /// The kernel config it ran on: its hash, the text kept once per export
    /// ([`crate::export::Export::kernel_configs`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_config_hash: Option<String>,
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

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: Option<i64>) -> Option<u64> {
    v.and_then(|v| u64::try_from(v).ok())
}

fn json_text(value: &Option<serde_json::Value>) -> Option<String> {
    value.as_ref().map(|v| v.to_string())
}

fn parse_json(text: Option<String>) -> Option<serde_json::Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

impl Store {
    /// Opens (creating it and its directory if needed) and migrates the database.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if path.is_dir() {
            return Err(StoreError::Unusable(format!(
                "{}: a directory, not a kbench database",
                path.display()
            )));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Unusable(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        Store::open_with(path, rusqlite::OpenFlags::default())
    }

    /// Opens a database that must exist already, for the commands that only read: a
    /// mistyped path is an error, never a new empty database or directory. An empty
    /// file is refused too, as opening it would make it a database.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        let not_a_database = |what: &str| {
            StoreError::Unusable(format!("{}: {what}, not a kbench database", path.display()))
        };
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::Unusable(format!(
                    "no kbench database at {} (kbench run --label NAME makes one)",
                    path.display()
                )))
            }
            Err(e) => return Err(StoreError::Unusable(format!("{}: {e}", path.display()))),
            Ok(meta) if meta.is_dir() => return Err(not_a_database("a directory")),
            Ok(meta) if meta.len() == 0 => return Err(not_a_database("an empty file")),
            Ok(_) => {}
        }
        // Without SQLITE_OPEN_CREATE: a file removed since the check is not recreated.
        let flags = rusqlite::OpenFlags::default() - rusqlite::OpenFlags::SQLITE_OPEN_CREATE;
        Store::open_with(path, flags)
    }

    fn open_with(path: &Path, flags: rusqlite::OpenFlags) -> Result<Store, StoreError> {
        let conn = Connection::open_with_flags(path, flags).map_err(|e| unusable(path, e))?;
        conn.busy_timeout(busy_timeout())?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        match store.configure() {
            Ok(()) => {}
            // A database we may read but not write still serves list, show, compare
            // and export; a write then fails with one clear line.
            Err(e) if is_read_only(&e) => return Store::open_read_only(path),
            Err(e) => return Err(unusable(path, e)),
        }
        match store.migrate() {
            Err(StoreError::Sqlite(e)) if is_read_only(&e) => Store::open_read_only(path),
            other => other.map(|()| store),
        }
    }

    /// Opens an existing, current database without writing to it. A WAL database
    /// needs its shared-memory file, which a reader without write access cannot
    /// create, so the file is opened as immutable: a snapshot for reporting.
    fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
            | rusqlite::OpenFlags::SQLITE_OPEN_URI;
        let uri = format!("file:{}?immutable=1", uri_path(path));
        let conn = Connection::open_with_flags(uri, flags).map_err(|e| unusable(path, e))?;
        conn.busy_timeout(busy_timeout())?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| unusable(path, e))?;
        if version != current_version() {
            return Err(StoreError::Unusable(format!(
                "{}: read-only, and at schema version {version} where this kbench needs {}",
                path.display(),
                current_version()
            )));
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn configure(&self) -> Result<(), rusqlite::Error> {
        // Switching a new database to WAL needs it to itself, and SQLite answers
        // SQLITE_BUSY at once rather than through the busy handler when another
        // process opens it at the same moment: retry within the busy timeout.
        let deadline = std::time::Instant::now() + busy_timeout();
        loop {
            match self.enable_wal() {
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    fn enable_wal(&self) -> Result<(), rusqlite::Error> {
        // journal_mode answers with a row; the first real read also proves the file is
        // SQLite at all.
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            let _: String = self
                .conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        }
        self.conn
            .execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        // BEGIN IMMEDIATE takes the write lock first, so two kbench processes opening a
        // new database at once migrate it once: the second sees the first's version.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > current_version() {
            return Err(StoreError::Unusable(format!(
                "{}: schema version {version} is newer than this kbench understands ({})",
                self.path.display(),
                current_version()
            )));
        }
        let tables: i64 = tx.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        if version == 0 && tables > 0 {
            return Err(StoreError::Unusable(format!(
                "{}: an SQLite database, but not a kbench one",
                self.path.display()
            )));
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Starts a session; returns its id.
    pub fn begin_session(&mut self, s: &NewSession) -> Result<i64, StoreError> {
        insert_session(&self.conn, s)
    }

    /// Records the session's end time.
    pub fn end_session(&mut self, id: i64, ended_unix_ns: u64) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE sessions SET ended_unix_ns = ?1 WHERE id = ?2",
            params![to_i64(ended_unix_ns), id],
        )?;
        Ok(())
    }

    /// Keeps a boot's console log with its session, gzip-compressed (a quick-suite
    /// boot's log is megabytes of base64 that compresses about fourfold).
    pub fn set_console_log(&mut self, session_id: i64, log: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE sessions SET console_log = ?1 WHERE id = ?2",
            params![crate::kernel_config::gzip(log), session_id],
        )?;
        Ok(())
    }

    /// The console log kept with a session (gzip bytes), if any.
    pub fn console_log(&self, session_id: i64) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.conn.query_row(
            "SELECT console_log FROM sessions WHERE id = ?1",
            params![session_id],
            |r| r.get(0),
        )?)
    }

    /// Keeps the kernel config `text` a session ran on, once per content: sessions of
    /// one config share its row. Returns its hash ([`config_hash`]).
    pub fn set_kernel_config(&mut self, session_id: i64, text: &str) -> Result<String, StoreError> {
        let tx = self.write_transaction()?;
        let hash = set_kernel_config_tx(&tx, session_id, text)?;
        tx.commit()?;
        Ok(hash)
    }

    /// The kernel config a session ran on, if it is known.
    pub fn kernel_config(&self, session_id: i64) -> Result<Option<String>, StoreError> {
        let hash: Option<String> = self
            .conn
            .query_row(
                "SELECT kernel_config_hash FROM sessions WHERE id = ?1",
                params![session_id],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        match hash {
            Some(hash) => self.kernel_config_by_hash(&hash),
            None => Ok(None),
        }
    }

    /// The kernel config stored under `hash` ([`SessionRow::kernel_config_hash`]).
    pub fn kernel_config_by_hash(&self, hash: &str) -> Result<Option<String>, StoreError> {
        let gzip: Option<Vec<u8>> = self
            .conn
            .query_row(
                "SELECT config FROM kernel_configs WHERE hash = ?1",
                params![hash],
                |r| r.get(0),
            )
            .optional()?;
        gzip.map(|bytes| {
            kernel_config::gunzip(&bytes)
                .map_err(|e| StoreError::Corrupt(format!("kernel config {hash}: {e}")))
        })
        .transpose()
    }

    /// A transaction that takes the write lock at its start (BEGIN IMMEDIATE). A
    /// deferred one that reads before it writes cannot be promoted once another
    /// connection has committed since its read (SQLITE_BUSY_SNAPSHOT, which the busy
    /// timeout does not wait out), so two kbench writing one database would fail.
    fn write_transaction(&mut self) -> Result<rusqlite::Transaction<'_>, StoreError> {
        Ok(self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?)
    }

    /// Stores one run and its values in one transaction.
    pub fn insert_run(&mut self, session_id: i64, run: &StoredRun) -> Result<i64, StoreError> {
        let tx = self.write_transaction()?;
        let id = insert_run_tx(&tx, session_id, run)?;
        tx.commit()?;
        Ok(id)
    }

    /// Stores a whole imported file as one session, in one transaction: all or nothing.
    pub fn import(&mut self, session: &NewSession, imported: &Imported) -> Result<i64, StoreError> {
        let tx = self.write_transaction()?;
        let session_id = insert_session(&tx, session)?;
        for (index, run) in imported.runs.iter().enumerate() {
            let stored = StoredRun {
                workload: run.workload.clone(),
                params: run.params.clone(),
                variant: run.variant.clone(),
                run_index: index as u32,
                exit_status: run.exit_status,
                values: run.values.iter().map(Value::from).collect(),
                ..StoredRun::default()
            };
            insert_run_tx(&tx, session_id, &stored)?;
        }
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
            insert_summary(&tx, session_id, &row)?;
        }
        tx.execute(
            "UPDATE sessions SET ended_unix_ns = started_unix_ns WHERE id = ?1",
            params![session_id],
        )?;
        tx.commit()?;
        Ok(session_id)
    }

    /// Stores one booted kernel's session whole, in one transaction: the session, its
    /// console log (gzip), its kernel config, its runs and its end. A kill midway leaves
    /// no session with half its runs.
    pub fn insert_boot(&mut self, boot: &NewBoot<'_>) -> Result<i64, StoreError> {
        let tx = self.write_transaction()?;
        let id = insert_session(&tx, boot.session)?;
        tx.execute(
            "UPDATE sessions SET console_log = ?1, ended_unix_ns = ?2 WHERE id = ?3",
            params![
                crate::kernel_config::gzip(boot.console_log),
                to_i64(boot.ended_unix_ns),
                id
            ],
        )?;
        if let Some(text) = boot.kernel_config {
            set_kernel_config_tx(&tx, id, text)?;
        }
        for run in boot.runs {
            insert_run_tx(&tx, id, run)?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Stores whole sessions with their runs, summaries and kernel configs (their text
    /// by hash in `kernel_configs`) in one transaction (the import of a kbench export):
    /// all or nothing. A hash without its text leaves the session's config unknown.
    pub fn insert_sessions(
        &mut self,
        sessions: &[SessionWithRuns],
        kernel_configs: &BTreeMap<String, String>,
    ) -> Result<Vec<i64>, StoreError> {
        let tx = self.write_transaction()?;
        let mut ids = Vec::new();
        for s in sessions {
            let id = insert_session(&tx, &s.session)?;
            if let Some(ended) = s.ended_unix_ns {
                tx.execute(
                    "UPDATE sessions SET ended_unix_ns = ?1 WHERE id = ?2",
                    params![to_i64(ended), id],
                )?;
            }
            for run in &s.runs {
                insert_run_tx(&tx, id, run)?;
            }
            for m in &s.summaries {
                insert_summary(&tx, id, m)?;
            }
            let config = s
                .kernel_config_hash
                .as_ref()
                .and_then(|h| kernel_configs.get(h));
            if let Some(text) = config {
                set_kernel_config_tx(&tx, id, text)?;
            }
            ids.push(id);
        }
        tx.commit()?;
        Ok(ids)
    }

    /// Every label with its counts (runs: the measured ones), oldest first.
    pub fn labels(&self) -> Result<Vec<LabelInfo>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT s.label, count(DISTINCT s.id), count(r.id), count(DISTINCT s.boot_id),
                    min(s.started_unix_ns), max(coalesce(s.ended_unix_ns, s.started_unix_ns))
             FROM sessions s LEFT JOIN runs r ON r.session_id = s.id AND {MEASURED_SQL}
             GROUP BY s.label ORDER BY min(s.started_unix_ns)"
        ))?;
        let rows = stmt.query_map([], |r| {
            Ok(LabelInfo {
                label: r.get(0)?,
                sessions: r.get::<_, i64>(1)? as u64,
                runs: r.get::<_, i64>(2)? as u64,
                boots: r.get::<_, i64>(3)? as u64,
                first_unix_ns: r.get::<_, i64>(4)? as u64,
                last_unix_ns: r.get::<_, i64>(5)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
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
            .conn
            .query_row(
                "SELECT 1 FROM sessions WHERE label = ?1 AND started_unix_ns = ?2
                 AND coalesce(boot_id, '') = coalesce(?3, '') LIMIT 1",
                params![label, to_i64(started_unix_ns), boot_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Whether `label` has a session imported from a file of content `content_hash`
    /// (the same file imported twice).
    pub fn has_source_content(&self, label: &str, content_hash: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM sessions WHERE label = ?1 AND source_hash = ?2 LIMIT 1",
                params![label, content_hash],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Whether any session carries `label`.
    pub fn has_label(&self, label: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM sessions WHERE label = ?1 LIMIT 1",
                params![label],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// The sessions of `label`, oldest first.
    pub fn sessions(&self, label: &str) -> Result<Vec<SessionRow>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT s.id, s.label, s.kind, s.boot_id, s.started_unix_ns, s.ended_unix_ns,
                    s.kbench_version, s.command_line, s.seed, s.environment,
                    s.source_file, s.source_format, s.source_hash,
                    (SELECT count(*) FROM runs r WHERE r.session_id = s.id AND {MEASURED_SQL}),
                    s.interleave_group, s.kernel_config_hash
             FROM sessions s WHERE s.label = ?1 ORDER BY s.started_unix_ns, s.id"
        ))?;
        let rows = stmt.query_map(params![label], |r| {
            Ok(SessionRow {
                id: r.get(0)?,
                label: r.get(1)?,
                kind: r.get(2)?,
                boot_id: r.get(3)?,
                started_unix_ns: r.get::<_, i64>(4)? as u64,
                ended_unix_ns: to_u64(r.get(5)?),
                kbench_version: r.get(6)?,
                command_line: r.get(7)?,
                seed: to_u64(r.get(8)?),
                environment: parse_json(r.get(9)?),
                source: r.get::<_, Option<String>>(10)?.map(|file| ImportSource {
                    file,
                    format: r
                        .get::<_, Option<String>>(11)
                        .ok()
                        .flatten()
                        .unwrap_or_default(),
                    content_hash: r.get(12).ok().flatten(),
                }),
                runs: r.get::<_, i64>(13)? as u64,
                interleave_group: r.get(14)?,
                kernel_config_hash: r.get(15)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every run of `label` (warm-ups included, flagged), in session then run order,
    /// each with its values in metric order. Two queries whatever the number of runs;
    /// the JSON columns stay text until asked for ([`StoredRun::record`]).
    pub fn runs(&self, label: &str) -> Result<Vec<RunRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT r.id, r.session_id, s.boot_id, r.workload, r.params, r.variant,
                    r.run_index, r.warmup, r.exit_status, r.start_unix_ns, r.end_unix_ns,
                    r.pinned_cpus, r.cpus_used, r.rusage, r.tasks, r.record, r.error, r.ab_side
             FROM runs r JOIN sessions s ON s.id = r.session_id
             WHERE s.label = ?1 ORDER BY s.started_unix_ns, s.id, r.run_index, r.id",
        )?;
        // Runs of one workload share their parameters: parse each distinct text once.
        let mut last_params: Option<(String, BTreeMap<String, serde_json::Value>)> = None;
        let mut rows: Vec<RunRow> = stmt
            .query_map(params![label], |r| {
                let params_text = r.get_ref(4)?.as_str()?;
                let params = match &last_params {
                    Some((text, params)) if text == params_text => params.clone(),
                    _ => {
                        let params: BTreeMap<String, serde_json::Value> =
                            serde_json::from_str(params_text).unwrap_or_default();
                        last_params = Some((params_text.to_string(), params.clone()));
                        params
                    }
                };
                Ok(RunRow {
                    id: r.get(0)?,
                    session_id: r.get(1)?,
                    label: label.to_string(),
                    boot_id: r.get(2)?,
                    run: StoredRun {
                        workload: r.get(3)?,
                        params,
                        variant: r.get(5)?,
                        run_index: r.get::<_, i64>(6)? as u32,
                        warmup: r.get::<_, i64>(7)? != 0,
                        exit_status: r.get(8)?,
                        start_unix_ns: to_u64(r.get(9)?),
                        end_unix_ns: to_u64(r.get(10)?),
                        pinned_cpus: r.get(11)?,
                        cpus_used: r.get(12)?,
                        rusage: r.get::<_, Option<String>>(13)?.map(RawJson::from_stored),
                        tasks: r.get::<_, Option<String>>(14)?.map(RawJson::from_stored),
                        record: r.get::<_, Option<String>>(15)?.map(RawJson::from_stored),
                        values: Vec::new(),
                        error: r.get(16)?,
                        ab_side: r
                            .get::<_, Option<String>>(17)?
                            .and_then(|t| serde_json::from_str(&t).ok()),
                    },
                })
            })?
            .collect::<Result<_, _>>()?;
        self.attach_values(label, &mut rows)?;
        Ok(rows)
    }

    /// The values of every run of `label`, in one query, onto `rows`.
    fn attach_values(&self, label: &str, rows: &mut [RunRow]) -> Result<(), StoreError> {
        let index: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        // No ORDER BY: SQLite walks run_values by its (run_id, metric) key, so the rows
        // come grouped by run; the metric order is made sure of below.
        let mut stmt = self.conn.prepare_cached(
            "SELECT v.run_id, v.metric, v.value, v.unit, v.higher_is_better, v.is_primary
             FROM run_values v JOIN runs r ON r.id = v.run_id
                  JOIN sessions s ON s.id = r.session_id
             WHERE s.label = ?1",
        )?;
        let mut values = stmt.query(params![label])?;
        let mut current: Option<(i64, usize)> = None;
        while let Some(r) = values.next()? {
            let run_id: i64 = r.get(0)?;
            let i = match current {
                Some((id, i)) if id == run_id => i,
                _ => match index.get(&run_id) {
                    Some(&i) => {
                        current = Some((run_id, i));
                        i
                    }
                    None => continue,
                },
            };
            rows[i].run.values.push(Value {
                metric: r.get(1)?,
                value: r.get(2)?,
                unit: r.get(3)?,
                higher_is_better: r.get::<_, i64>(4)? != 0,
                primary: r.get::<_, i64>(5)? != 0,
            });
        }
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
        let mut stmt = self.conn.prepare(
            "SELECT m.session_id, m.workload, m.metric, m.unit, m.mean, m.std_error, m.n,
                    m.higher_is_better, m.is_primary
             FROM summaries m JOIN sessions s ON s.id = m.session_id
             WHERE s.label = ?1 ORDER BY m.id",
        )?;
        let rows = stmt.query_map(params![label], |r| {
            Ok(SummaryRow {
                session_id: r.get(0)?,
                workload: r.get(1)?,
                metric: r.get(2)?,
                unit: r.get(3)?,
                mean: r.get(4)?,
                std_error: r.get(5)?,
                n: r.get::<_, i64>(6)? as u64,
                higher_is_better: r.get::<_, i64>(7)? != 0,
                primary: r.get::<_, i64>(8)? != 0,
            })
        })?;
        let mut rows: Vec<SummaryRow> = rows.collect::<Result<_, _>>()?;
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
        let tx = self.write_transaction()?;
        tx.execute(
            "INSERT INTO calibrations (label, created_unix_ns, kbench_version, fingerprint,
                                       sessions, boots)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                c.label,
                to_i64(c.created_unix_ns),
                c.kbench_version,
                c.fingerprint.to_string(),
                to_i64(c.sessions),
                to_i64(c.boots)
            ],
        )?;
        let id = tx.last_insert_rowid();
        for m in &c.components {
            tx.execute(
                "INSERT INTO calibration_components (calibration_id, workload, params, variant,
                                                     metric, pooled_quantile, components)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    m.workload,
                    m.params,
                    m.variant,
                    m.metric,
                    m.pooled_quantile,
                    m.components.to_string()
                ],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Every calibration, oldest first.
    pub fn calibrations(&self) -> Result<Vec<CalibrationRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, label, created_unix_ns, kbench_version, fingerprint, sessions, boots
             FROM calibrations ORDER BY created_unix_ns, id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(CalibrationRow {
                id: r.get(0)?,
                label: r.get(1)?,
                created_unix_ns: r.get::<_, i64>(2)? as u64,
                kbench_version: r.get(3)?,
                fingerprint: parse_json(r.get(4)?).unwrap_or_default(),
                sessions: r.get::<_, i64>(5)? as u64,
                boots: r.get::<_, i64>(6)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The components of calibration `id`.
    pub fn calibration_components(&self, id: i64) -> Result<Vec<CalibrationComponent>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT workload, params, variant, metric, pooled_quantile, components
             FROM calibration_components WHERE calibration_id = ?1",
        )?;
        let rows = stmt.query_map(params![id], |r| {
            Ok(CalibrationComponent {
                workload: r.get(0)?,
                params: r.get(1)?,
                variant: r.get(2)?,
                metric: r.get(3)?,
                pooled_quantile: r.get(4)?,
                components: parse_json(r.get(5)?).unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// `PRAGMA integrity_check`'s answer: "ok" for a sound database.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }
}

/// A path for an SQLite `file:` URI: the characters URIs reserve, percent-encoded.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Whether SQLite refused a write because the file (or its directory) is read-only.
pub fn is_read_only(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
    )
}

/// Whether a write failed for want of space (SQLITE_FULL).
pub fn is_disk_full(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
}

/// Whether another connection held the lock past the busy timeout.
pub fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn unusable(path: &Path, e: rusqlite::Error) -> StoreError {
    StoreError::Unusable(format!(
        "{}: not a usable kbench database ({e})",
        path.display()
    ))
}

fn insert_session(conn: &Connection, s: &NewSession) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO sessions (label, kind, boot_id, started_unix_ns, kbench_version,
                               command_line, seed, environment,
                               source_file, source_format, source_hash, interleave_group)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            s.label,
            s.kind,
            s.boot_id,
            to_i64(s.started_unix_ns),
            s.kbench_version,
            s.command_line,
            s.seed.map(to_i64),
            json_text(&s.environment),
            s.source.as_ref().map(|s| &s.file),
            s.source.as_ref().map(|s| &s.format),
            s.source.as_ref().and_then(|s| s.content_hash.as_ref()),
            s.interleave_group,
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Keeps a config (compressed only when its hash is new) and points the session at it.
fn set_kernel_config_tx(
    tx: &Transaction<'_>,
    session_id: i64,
    text: &str,
) -> Result<String, StoreError> {
    let text = kernel_config::normalized(text);
    let hash = config_hash(&text);
    let known = tx
        .query_row(
            "SELECT 1 FROM kernel_configs WHERE hash = ?1",
            params![hash],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !known {
        tx.execute(
            "INSERT INTO kernel_configs (hash, config) VALUES (?1, ?2)",
            params![hash, kernel_config::gzip(&text)],
        )?;
    }
    let updated = tx.execute(
        "UPDATE sessions SET kernel_config_hash = ?1 WHERE id = ?2",
        params![hash, session_id],
    )?;
    if updated == 0 {
        return Err(StoreError::Unusable(format!(
            "no session {session_id} to keep a kernel config with"
        )));
    }
    Ok(hash)
}

fn insert_summary(conn: &Connection, session_id: i64, m: &SummaryRow) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO summaries (session_id, workload, metric, unit, mean, std_error, n,
                                higher_is_better, is_primary)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            session_id,
            m.workload,
            m.metric,
            m.unit,
            m.mean,
            m.std_error,
            to_i64(m.n),
            m.higher_is_better,
            m.primary
        ],
    )?;
    Ok(())
}

fn insert_run_tx(
    tx: &Transaction<'_>,
    session_id: i64,
    run: &StoredRun,
) -> Result<i64, StoreError> {
    let params_text = serde_json::to_string(&run.params).unwrap_or_else(|_| "{}".into());
    tx.execute(
        "INSERT INTO runs (session_id, workload, params, variant, run_index, warmup, exit_status,
                           start_unix_ns, end_unix_ns, pinned_cpus, cpus_used, rusage, tasks, record,
                           error, ab_side)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        params![
            session_id,
            run.workload,
            params_text,
            run.variant,
            run.run_index,
            run.warmup,
            run.exit_status,
            run.start_unix_ns.map(to_i64),
            run.end_unix_ns.map(to_i64),
            run.pinned_cpus,
            run.cpus_used,
            run.rusage.as_ref().map(RawJson::as_str),
            run.tasks.as_ref().map(RawJson::as_str),
            run.record.as_ref().map(RawJson::as_str),
            run.error,
            run.ab_side.as_ref().and_then(|a| serde_json::to_string(a).ok()),
        ],
    )?;
    let run_id = tx.last_insert_rowid();
    for v in &run.values {
        tx.execute(
            "INSERT OR REPLACE INTO run_values (run_id, metric, value, unit, higher_is_better, is_primary)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![run_id, v.metric, v.value, v.unit, v.higher_is_better, v.primary],
        )?;
    }
    Ok(run_id)
}
