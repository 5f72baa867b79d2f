//! Which of the store's errors are the user's to fix, and the one line that says so:
//! a database they named that is not one, is read-only, sits on a full disk or stays
//! locked by another writer, a server that refuses their role or went away. The
//! binary asks [`StoreError::is_usage`] for its exit status (2) and prints the error's
//! text, which for those already says what is wrong.
use crate::backend_errors::{busy_timeout, BUSY_TIMEOUT_ENV};
use crate::backend_errors::{is_busy, is_disk_full, is_read_only};

/// Why the database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is not a kbench database, or is from a newer kbench: the user's input.
    #[error("{0}")]
    Unusable(String),
    /// What the user asked to store would count runs twice, or holds none (an import
    /// of a file or session already there): theirs, and the text says which.
    #[error("{0}")]
    Refused(String),
    /// A read-only, full or locked database is the user's ([`StoreError::is_usage`]),
    /// and its text says which.
    #[error("{}", sqlite_message(.0))]
    Sqlite(#[from] rusqlite::Error),
    #[cfg(feature = "postgres")]
    #[error("{}", postgres_message(.0))]
    Postgres(#[from] ::tokio_postgres::Error),
    /// A stored value does not read back (a config that does not decompress).
    #[error("corrupt database: {0}")]
    Corrupt(String),
}

/// The server's own message where there is one (`ERROR: permission denied for table
/// sessions`), else the client's.
#[cfg(feature = "postgres")]
pub fn describe_error(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                let s_text = s.to_string();
                if !text.contains(&s_text) {
                    text.push_str(": ");
                    text.push_str(&s_text);
                }
                source = s.source();
            }
            text
        }
    }
}

impl StoreError {
    /// Whether the user can fix it by naming, freeing or waiting for another database
    /// (exit status 2), rather than a fault of kbench or of the database itself.
    pub fn is_usage(&self) -> bool {
        match self {
            StoreError::Unusable(_) | StoreError::Refused(_) => true,
            StoreError::Sqlite(e) => is_read_only(e) || is_disk_full(e) || is_busy(e),
            #[cfg(feature = "postgres")]
            StoreError::Postgres(e) => {
                use crate::backend_errors::{
                    is_connection_lost, is_lock_timeout, is_permission_denied,
                };
                is_permission_denied(e) || is_lock_timeout(e) || is_connection_lost(e)
            }
            StoreError::Corrupt(_) => false,
        }
    }
}

/// The text of [`StoreError::Sqlite`].
pub(crate) fn sqlite_message(e: &rusqlite::Error) -> String {
    if is_read_only(e) {
        format!("the database is read-only: {e}")
    } else if is_disk_full(e) {
        format!("the disk holding the database is full: {e}")
    } else if is_busy(e) {
        format!(
            "the database stayed locked by another process for {} s (${BUSY_TIMEOUT_ENV}): {e}",
            busy_timeout().as_secs_f64()
        )
    } else {
        format!("database error: {e}")
    }
}

/// The text of [`StoreError::Postgres`]: the server's own message where there is one.
#[cfg(feature = "postgres")]
pub(crate) fn postgres_message(e: &tokio_postgres::Error) -> String {
    use crate::backend_errors::{is_connection_lost, is_lock_timeout, is_permission_denied};
    let described = describe_error(e);
    if is_permission_denied(e) {
        format!("the database refused this role (one that may read may not write): {described}")
    } else if is_lock_timeout(e) {
        format!(
            "another writer held a lock in the database for {} s (${BUSY_TIMEOUT_ENV}): {described}",
            busy_timeout().as_secs_f64()
        )
    } else if is_connection_lost(e) {
        format!("the connection to the PostgreSQL server was lost: {described}")
    } else {
        format!("PostgreSQL: {described}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite_error(code: std::ffi::c_int) -> StoreError {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(code),
            Some("the message".into()),
        ))
    }

    #[test]
    fn a_read_only_full_or_locked_database_is_the_users_and_says_so() {
        let read_only = sqlite_error(rusqlite::ffi::SQLITE_READONLY);
        assert!(read_only.is_usage());
        assert_eq!(
            read_only.to_string(),
            "the database is read-only: the message"
        );
        let full = sqlite_error(rusqlite::ffi::SQLITE_FULL);
        assert!(full.is_usage());
        assert_eq!(
            full.to_string(),
            "the disk holding the database is full: the message"
        );
        let busy = sqlite_error(rusqlite::ffi::SQLITE_BUSY);
        assert!(busy.is_usage());
        assert!(busy
            .to_string()
            .starts_with("the database stayed locked by another process for "));
        assert!(StoreError::Unusable("x: not a kbench database".into()).is_usage());
    }

    #[test]
    fn any_other_database_error_is_kbenchs() {
        let other = sqlite_error(rusqlite::ffi::SQLITE_IOERR);
        assert!(!other.is_usage());
        assert_eq!(other.to_string(), "database error: the message");
        assert!(!StoreError::Corrupt("a config".into()).is_usage());
    }
}
