//! The store itself: which database it holds, and the connection every read and
//! write goes through.
use crate::db::Db;
use crate::error::StoreError;
use crate::location::Location;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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

    /// Refreshes the planner's statistics after a bulk load ([`Db::refresh_statistics`]).
    pub fn refresh_statistics(&mut self) -> Result<(), StoreError> {
        self.db().refresh_statistics()
    }

    /// The database's own consistency check: "ok" for a sound database.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.db().integrity_check()
    }
}
