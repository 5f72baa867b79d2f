//! Why the database could not be used, on either backend.

/// Why the database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is not a kbench database, or is from a newer kbench: the user's input.
    #[error("{0}")]
    Unusable(String),
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[cfg(feature = "postgres")]
    #[error("PostgreSQL: {}", describe_error(.0))]
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
