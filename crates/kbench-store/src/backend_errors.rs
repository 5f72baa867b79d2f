//! What the backends' own errors mean, for the store's one error type: which say the
//! database is read-only, full, locked or gone, and how long a writer waits for a lock.
//! It imports nothing of the crate, so the error type and the backends both read it.
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

#[cfg(feature = "postgres")]
mod postgres {
    use tokio_postgres::error::SqlState;

    /// Whether a lock stayed held by another writer past the lock timeout.
    pub fn is_lock_timeout(e: &tokio_postgres::Error) -> bool {
        e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE)
    }

    /// Whether the server refused this role (a read-only role writing, a standby, a
    /// role without SELECT reading).
    pub fn is_permission_denied(e: &tokio_postgres::Error) -> bool {
        matches!(
            e.code(),
            Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE || *c == SqlState::READ_ONLY_SQL_TRANSACTION
        )
    }

    /// Whether the connection to the server was lost (the server stopped or went away).
    pub fn is_connection_lost(e: &tokio_postgres::Error) -> bool {
        e.is_closed()
            || matches!(
                e.code(),
                Some(c) if *c == SqlState::ADMIN_SHUTDOWN || *c == SqlState::CRASH_SHUTDOWN
                    || *c == SqlState::CANNOT_CONNECT_NOW
            )
            || (e.as_db_error().is_none()
                && std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()))
    }
}

#[cfg(feature = "postgres")]
pub use postgres::{is_connection_lost, is_lock_timeout, is_permission_denied};
