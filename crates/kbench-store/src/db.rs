//! What the store needs of a database, whichever it is: statements with numbered
//! parameters, rows of plain values, and write transactions. [`crate::Store`] writes
//! each query once in the SQL both SQLite and PostgreSQL accept (`?1`-style
//! parameters, `RETURNING`, `ON CONFLICT`); a backend translates what it must.
use crate::error::StoreError;

/// One value in a row or a parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Cell {
    /// Sets the cell to `text`, in the buffer it holds when it holds text already: a
    /// query read row by row refills one row, without an allocation a cell.
    pub(crate) fn set_text(&mut self, text: &str) {
        match self {
            Cell::Text(held) => {
                held.clear();
                held.push_str(text);
            }
            other => *other = Cell::Text(text.to_owned()),
        }
    }
}

impl From<i64> for Cell {
    fn from(v: i64) -> Cell {
        Cell::Int(v)
    }
}

impl From<u32> for Cell {
    fn from(v: u32) -> Cell {
        Cell::Int(i64::from(v))
    }
}

impl From<i32> for Cell {
    fn from(v: i32) -> Cell {
        Cell::Int(i64::from(v))
    }
}

impl From<bool> for Cell {
    /// Flags are integers 0 and 1 in both backends' schemas.
    fn from(v: bool) -> Cell {
        Cell::Int(i64::from(v))
    }
}

impl From<f64> for Cell {
    fn from(v: f64) -> Cell {
        Cell::Real(v)
    }
}

impl From<&str> for Cell {
    fn from(v: &str) -> Cell {
        Cell::Text(v.to_string())
    }
}

impl From<String> for Cell {
    fn from(v: String) -> Cell {
        Cell::Text(v)
    }
}

impl From<&String> for Cell {
    fn from(v: &String) -> Cell {
        Cell::Text(v.clone())
    }
}

impl From<Vec<u8>> for Cell {
    fn from(v: Vec<u8>) -> Cell {
        Cell::Blob(v)
    }
}

impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Cell {
        v.map_or(Cell::Null, Into::into)
    }
}

/// Parameters for a statement, `?1` first.
#[macro_export]
#[doc(hidden)]
macro_rules! cells {
    ($($value:expr),* $(,)?) => {
        &[$($crate::db::Cell::from($value)),*][..]
    };
}

/// A row to store, as [`cells!`] makes parameters but owned: built in place, where
/// `cells![...].to_vec()` would copy every text (a record, an environment) again.
#[macro_export]
#[doc(hidden)]
macro_rules! cell_row {
    ($($value:expr),* $(,)?) => {
        vec![$($crate::db::Cell::from($value)),*]
    };
}

/// One result row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row(pub Vec<Cell>);

impl Row {
    /// Refills the row with a result row of `columns` cells, `fill` setting each in
    /// place (text into the buffer the cell holds): [`Db::query_each`]'s one row. The
    /// length is set each time, since a caller may have taken the cells.
    pub(crate) fn refill(
        &mut self,
        columns: usize,
        mut fill: impl FnMut(usize, &mut Cell) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.0.resize(columns, Cell::Null);
        for (i, cell) in self.0.iter_mut().enumerate() {
            fill(i, cell)?;
        }
        Ok(())
    }

    fn cell(&self, i: usize) -> Result<&Cell, StoreError> {
        self.0
            .get(i)
            .ok_or_else(|| StoreError::Corrupt(format!("a row without column {i}")))
    }

    fn mistyped(&self, i: usize, wanted: &str) -> StoreError {
        StoreError::Corrupt(format!(
            "column {i} holds {:?} where {wanted} belongs",
            self.0.get(i)
        ))
    }

    pub fn opt_i64(&self, i: usize) -> Result<Option<i64>, StoreError> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            Cell::Int(v) => Ok(Some(*v)),
            _ => Err(self.mistyped(i, "an integer")),
        }
    }

    pub fn i64(&self, i: usize) -> Result<i64, StoreError> {
        self.opt_i64(i)?
            .ok_or_else(|| self.mistyped(i, "an integer"))
    }

    /// A count or time stored as a signed integer; negative reads as 0.
    pub fn u64(&self, i: usize) -> Result<u64, StoreError> {
        Ok(u64::try_from(self.i64(i)?).unwrap_or(0))
    }

    /// A time or seed stored as a signed integer; `None` when NULL or negative.
    pub fn opt_u64(&self, i: usize) -> Result<Option<u64>, StoreError> {
        Ok(self.opt_i64(i)?.and_then(|v| u64::try_from(v).ok()))
    }

    pub fn flag(&self, i: usize) -> Result<bool, StoreError> {
        Ok(self.i64(i)? != 0)
    }

    pub fn opt_f64(&self, i: usize) -> Result<Option<f64>, StoreError> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            Cell::Real(v) => Ok(Some(*v)),
            // SQLite hands back a REAL column's integral value as an integer when it
            // was written as one.
            Cell::Int(v) => Ok(Some(*v as f64)),
            _ => Err(self.mistyped(i, "a number")),
        }
    }

    pub fn f64(&self, i: usize) -> Result<f64, StoreError> {
        self.opt_f64(i)?.ok_or_else(|| self.mistyped(i, "a number"))
    }

    pub fn opt_str(&self, i: usize) -> Result<Option<&str>, StoreError> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            Cell::Text(v) => Ok(Some(v)),
            _ => Err(self.mistyped(i, "text")),
        }
    }

    pub fn str(&self, i: usize) -> Result<&str, StoreError> {
        self.opt_str(i)?.ok_or_else(|| self.mistyped(i, "text"))
    }

    /// Moves a text out of the row (a record can be megabytes: no copy).
    pub fn take_text(&mut self, i: usize) -> Result<Option<String>, StoreError> {
        match self.0.get_mut(i).map(|c| std::mem::replace(c, Cell::Null)) {
            None | Some(Cell::Null) => Ok(None),
            Some(Cell::Text(v)) => Ok(Some(v)),
            Some(other) => {
                self.0[i] = other;
                Err(self.mistyped(i, "text"))
            }
        }
    }

    pub fn text(&mut self, i: usize) -> Result<String, StoreError> {
        self.take_text(i)?.ok_or_else(|| self.mistyped(i, "text"))
    }

    pub fn take_blob(&mut self, i: usize) -> Result<Option<Vec<u8>>, StoreError> {
        match self.0.get_mut(i).map(|c| std::mem::replace(c, Cell::Null)) {
            None | Some(Cell::Null) => Ok(None),
            Some(Cell::Blob(v)) => Ok(Some(v)),
            Some(other) => {
                self.0[i] = other;
                Err(self.mistyped(i, "bytes"))
            }
        }
    }
}

/// A database the store can use.
pub trait Db: Send {
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Cell]) -> Result<u64, StoreError>;
    /// Runs a query and hands `each` its rows as they come, one at a time in one row
    /// refilled: a label's 100,000 values are read without holding them all at once.
    fn query_each(
        &mut self,
        sql: &str,
        params: &[Cell],
        each: &mut dyn FnMut(&mut Row) -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;
    /// Runs a query; returns every row.
    fn query(&mut self, sql: &str, params: &[Cell]) -> Result<Vec<Row>, StoreError> {
        let mut rows = Vec::new();
        self.query_each(sql, params, &mut |row| {
            rows.push(std::mem::take(row));
            Ok(())
        })?;
        Ok(rows)
    }
    /// Starts a transaction that writes: SQLite takes the write lock at once.
    fn begin_write(&mut self) -> Result<(), StoreError>;
    fn commit(&mut self) -> Result<(), StoreError>;
    fn rollback(&mut self);
    /// "ok" when the database's own check finds nothing wrong.
    fn integrity_check(&mut self) -> Result<String, StoreError>;
    /// Inserts `rows`, one cell per column each, into `table`, within the caller's
    /// write transaction: a bulk load where the backend has one (PostgreSQL's COPY, one
    /// round trip for thousands of rows), else row by row through one prepared
    /// statement (SQLite, in the process).
    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Cell>],
    ) -> Result<(), StoreError>;
    /// `n` new ids for `table`'s `id` column, to insert rows with in this write
    /// transaction: their children can then name them without a round trip a row.
    fn reserve_ids(&mut self, table: &str, n: usize) -> Result<Vec<i64>, StoreError>;
    /// Tells the query planner what a bulk load changed, where the planner needs
    /// telling: PostgreSQL plans from statistics that its autovacuum refreshes only
    /// a while later, and a query planned on an empty table's statistics in between
    /// can take minutes. SQLite plans from its indexes alone.
    fn refresh_statistics(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
}

impl dyn Db + '_ {
    /// The first row of a query, if any.
    pub fn query_opt(&mut self, sql: &str, params: &[Cell]) -> Result<Option<Row>, StoreError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The one row a query must return.
    pub fn query_one(&mut self, sql: &str, params: &[Cell]) -> Result<Row, StoreError> {
        self.query_opt(sql, params)?
            .ok_or_else(|| StoreError::Corrupt(format!("no row from {}", first_words(sql))))
    }

    /// Runs `work` in a write transaction: committed when it succeeds, rolled back
    /// when it fails, so nothing is ever half-written.
    pub fn in_transaction<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Db) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.begin_write()?;
        match work(self) {
            // SQLite may keep the transaction open after a failed COMMIT: end it, so
            // the connection's next BEGIN works.
            Ok(value) => match self.commit() {
                Ok(()) => Ok(value),
                Err(e) => {
                    self.rollback();
                    Err(e)
                }
            },
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }
}

/// `?first, ?first+1, ...`: `n` numbered parameters.
pub(crate) fn numbered(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn first_words(sql: &str) -> String {
    sql.split_whitespace().take(4).collect::<Vec<_>>().join(" ")
}

pub use crate::backend_errors::{busy_timeout, BUSY_TIMEOUT_ENV};

pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) fn json_text<T: serde::Serialize>(value: &Option<T>) -> Option<String> {
    value.as_ref().and_then(|v| serde_json::to_string(v).ok())
}

/// A JSON column as its type; `None` when it is empty or does not read as one (a
/// hand-made database's environment that is no object).
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(text: Option<&str>) -> Option<T> {
    text.and_then(|t| serde_json::from_str(t).ok())
}
