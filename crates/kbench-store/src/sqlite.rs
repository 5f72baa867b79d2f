//! The embedded backend: one SQLite file, in WAL mode, with a busy timeout, so two
//! kbench processes can write one database.
use crate::db::busy_timeout;
use crate::db::{Cell, Db, Row};
use crate::error::StoreError;
use crate::schema::{current_version, MIGRATIONS};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::Duration;

pub struct SqliteDb {
    conn: Connection,
}

/// Opens (creating it and its directory if needed) and migrates the database.
pub fn open(path: &Path) -> Result<SqliteDb, StoreError> {
    if path.is_dir() {
        return Err(StoreError::Unusable(format!(
            "{}: a directory, not a kbench database",
            path.display()
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::Unusable(format!("cannot create {}: {e}", dir.display())))?;
    }
    open_with(path, OpenFlags::default())
}

/// Opens a database that must exist already (see [`crate::Store::open_existing`]).
pub fn open_existing(path: &Path) -> Result<SqliteDb, StoreError> {
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
    open_with(path, OpenFlags::default() - OpenFlags::SQLITE_OPEN_CREATE)
}

fn open_with(path: &Path, flags: OpenFlags) -> Result<SqliteDb, StoreError> {
    let conn = Connection::open_with_flags(path, flags).map_err(|e| unusable(path, e))?;
    conn.busy_timeout(busy_timeout())?;
    let mut db = SqliteDb { conn };
    match db.configure() {
        Ok(()) => {}
        // A database we may read but not write still serves list, show, compare
        // and export; a write then fails with one clear line.
        Err(e) if is_read_only(&e) => return open_read_only(path),
        Err(e) => return Err(unusable(path, e)),
    }
    match db.migrate(path) {
        Err(StoreError::Sqlite(e)) if is_read_only(&e) => open_read_only(path),
        other => other.map(|()| db),
    }
}

/// Opens an existing, current database without writing to it. A WAL database needs
/// its shared-memory file, which a reader without write access cannot create, so the
/// file is opened as immutable: a snapshot for reporting.
fn open_read_only(path: &Path) -> Result<SqliteDb, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
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
    Ok(SqliteDb { conn })
}

impl SqliteDb {
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
        // Reads through a memory map, not a read() per page: a label's runs with their
        // records span thousands of pages (scripts/bench-store.sh).
        self.conn.execute_batch(
            "PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL; PRAGMA mmap_size=268435456;",
        )
    }

    fn migrate(&mut self, path: &Path) -> Result<(), StoreError> {
        // BEGIN IMMEDIATE takes the write lock first, so two kbench processes opening a
        // new database at once migrate it once: the second sees the first's version.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > current_version() {
            return Err(StoreError::Unusable(format!(
                "{}: schema version {version} is newer than this kbench understands ({})",
                path.display(),
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
                path.display()
            )));
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tx.execute_batch(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        }
        tx.commit()?;
        Ok(())
    }
}

fn bind(stmt: &mut rusqlite::Statement<'_>, params: &[Cell]) -> Result<(), rusqlite::Error> {
    for (i, p) in params.iter().enumerate() {
        let index = i + 1;
        match p {
            Cell::Null => stmt.raw_bind_parameter(index, rusqlite::types::Null)?,
            Cell::Int(v) => stmt.raw_bind_parameter(index, v)?,
            Cell::Real(v) => stmt.raw_bind_parameter(index, v)?,
            Cell::Text(v) => stmt.raw_bind_parameter(index, v)?,
            Cell::Blob(v) => stmt.raw_bind_parameter(index, v)?,
        }
    }
    Ok(())
}

/// Sets `cell` to `value`, in the cell's own text buffer where it has one.
fn fill_cell(cell: &mut Cell, value: ValueRef<'_>) {
    match value {
        ValueRef::Null => *cell = Cell::Null,
        ValueRef::Integer(v) => *cell = Cell::Int(v),
        ValueRef::Real(v) => *cell = Cell::Real(v),
        // Valid text (all of it, in practice) is checked on the fast path and copied once.
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(text) => cell.set_text(text),
            Err(_) => cell.set_text(&String::from_utf8_lossy(t)),
        },
        ValueRef::Blob(b) => *cell = Cell::Blob(b.to_vec()),
    }
}

impl Db for SqliteDb {
    fn execute(&mut self, sql: &str, params: &[Cell]) -> Result<u64, StoreError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        bind(&mut stmt, params)?;
        Ok(stmt.raw_execute()? as u64)
    }

    fn query_each(
        &mut self,
        sql: &str,
        params: &[Cell],
        each: &mut dyn FnMut(&mut Row) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        bind(&mut stmt, params)?;
        let columns = stmt.column_count();
        let mut rows = stmt.raw_query();
        let mut row = Row::default();
        while let Some(r) = rows.next()? {
            row.refill(columns, |i, cell| {
                fill_cell(cell, r.get_ref(i)?);
                Ok(())
            })?;
            each(&mut row)?;
        }
        Ok(())
    }

    fn begin_write(&mut self) -> Result<(), StoreError> {
        // BEGIN IMMEDIATE: a deferred transaction that reads before it writes cannot be
        // promoted once another connection has committed since its read
        // (SQLITE_BUSY_SNAPSHOT, which the busy timeout does not wait out), so two
        // kbench writing one database would fail.
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.conn.execute_batch("COMMIT")?;
        Ok(())
    }

    fn rollback(&mut self) {
        // A failed statement may have ended the transaction already; nothing to undo then.
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn integrity_check(&mut self) -> Result<String, StoreError> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }

    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Cell>],
    ) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            columns.join(", "),
            crate::db::numbered(1, columns.len())
        );
        for row in rows {
            self.execute(&sql, row)?;
        }
        Ok(())
    }

    fn reserve_ids(&mut self, table: &str, n: usize) -> Result<Vec<i64>, StoreError> {
        // Inside BEGIN IMMEDIATE no other connection writes, and an INTEGER PRIMARY
        // KEY without AUTOINCREMENT takes the largest id plus one anyway.
        let largest: i64 = self.conn.query_row(
            &format!("SELECT coalesce(max(id), 0) FROM {table}"),
            [],
            |r| r.get(0),
        )?;
        Ok((1..=n as i64).map(|i| largest + i).collect())
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

pub use crate::backend_errors::{is_busy, is_disk_full, is_read_only};

fn unusable(path: &Path, e: rusqlite::Error) -> StoreError {
    StoreError::Unusable(format!(
        "{}: not a usable kbench database ({e})",
        path.display()
    ))
}
