//! Where the run database is: an SQLite file (the default), or a PostgreSQL server
//! named by a URL or by the directory holding its socket.
use std::path::{Path, PathBuf};

/// A database location, as `--db` or `KBENCH_DB` name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    /// `postgres://` or `postgresql://` URL, or a socket directory (kept as given).
    Postgres(PostgresTarget),
}

/// A PostgreSQL server as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostgresTarget {
    Url(String),
    /// A directory holding `.s.PGSQL.PORT`: connect there as `$PGUSER` (else
    /// `$USER`) to database `$PGDATABASE` (else the user's name).
    SocketDir {
        dir: PathBuf,
        port: u16,
    },
}

impl Location {
    /// A `postgres://` or `postgresql://` URL, a directory with a PostgreSQL socket in
    /// it, or else an SQLite file.
    pub fn of(path: &Path) -> Location {
        let text = path.to_string_lossy();
        if is_postgres_url(&text) {
            return Location::Postgres(PostgresTarget::Url(text.into_owned()));
        }
        match socket_port(path) {
            Some(port) => Location::Postgres(PostgresTarget::SocketDir {
                dir: path.to_path_buf(),
                port,
            }),
            None => Location::Sqlite(path.to_path_buf()),
        }
    }

    /// Where it is, for messages: a URL's password is never shown.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(PostgresTarget::Url(url)) => without_password(url),
            Location::Postgres(PostgresTarget::SocketDir { dir, .. }) => {
                format!("PostgreSQL at {}", dir.display())
            }
        }
    }
}

/// What a build without the PostgreSQL client (the guest build) says of a server's
/// location: it still knows one when it sees it, so the user hears why, not that a
/// file named `postgres:` cannot be made.
pub fn built_without_postgres(location: &Location) -> crate::StoreError {
    crate::StoreError::Unusable(format!(
        "this kbench was built without the PostgreSQL client (a guest build): {} needs the full kbench",
        location.display()
    ))
}

pub fn is_postgres_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// The port of the PostgreSQL socket in `dir` (`.s.PGSQL.5432`), if there is one.
fn socket_port(dir: &Path) -> Option<u16> {
    if !dir.is_dir() {
        return None;
    }
    let mut ports: Vec<u16> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let port = name.to_str()?.strip_prefix(".s.PGSQL.")?;
            // `.s.PGSQL.5432.lock` is the server's lock file, not its socket.
            port.parse::<u16>().ok()
        })
        .collect();
    ports.sort_unstable();
    ports.first().copied()
}

/// Where a URL's credentials end and its query starts, read as the PostgreSQL
/// client reads them: the credentials run to the first `@` (a password may hold `/`
/// or `?`), the query from the first `?` after them.
fn url_spans(url: &str) -> Option<(usize, usize, Option<usize>)> {
    let scheme_end = url.find("://")? + 3;
    let rest = &url[scheme_end..];
    let at = rest.find('@').map(|i| scheme_end + i);
    let host_start = at.map_or(scheme_end, |i| i + 1);
    let query = url[host_start..].find('?').map(|i| host_start + i);
    Some((scheme_end, host_start, query))
}

/// The URL before its query, and the query (without `?`).
pub fn split_query(url: &str) -> (&str, Option<&str>) {
    match url_spans(url) {
        Some((_, _, Some(q))) => (&url[..q], Some(&url[q + 1..])),
        _ => (url, None),
    }
}

/// The URL with `user:password@` shown as `user:***@`, and a `password=` parameter
/// as `password=***`.
pub fn without_password(url: &str) -> String {
    let Some((scheme_end, host_start, query_start)) = url_spans(url) else {
        return url.to_string();
    };
    let mut out = url[..scheme_end].to_string();
    // A raw `@` in a password ends the credentials for the client, but the rest of
    // the password must not show: mask to the last `@` before the path or query.
    let path_start = url[host_start..]
        .find('/')
        .map(|slash| host_start + slash)
        .into_iter()
        .chain(query_start)
        .min()
        .unwrap_or(url.len());
    let host_start = url[..path_start]
        .rfind('@')
        .map_or(host_start, |at| at + 1)
        .max(host_start);
    if host_start > scheme_end {
        let userinfo = &url[scheme_end..host_start - 1];
        match userinfo.split_once(':') {
            Some((user, _password)) => out.push_str(&format!("{user}:***@")),
            None => out.push_str(&url[scheme_end..host_start]),
        }
    }
    let (base, query) = split_query(url);
    out.push_str(&base[host_start.min(base.len())..]);
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some(("password", _)) => "password=***".to_string(),
                _ => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_postgres_and_paths_are_sqlite() {
        assert!(matches!(
            Location::of(Path::new("postgres://u@h/db")),
            Location::Postgres(PostgresTarget::Url(_))
        ));
        assert!(matches!(
            Location::of(Path::new("postgresql:///db?host=/tmp")),
            Location::Postgres(PostgresTarget::Url(_))
        ));
        assert_eq!(
            Location::of(Path::new("/nonexistent/k.db")),
            Location::Sqlite(PathBuf::from("/nonexistent/k.db"))
        );
    }

    #[test]
    fn a_directory_with_a_socket_is_a_server() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(Location::of(dir.path()), Location::Sqlite(_)));
        std::fs::write(dir.path().join(".s.PGSQL.5433.lock"), "").unwrap();
        assert!(matches!(Location::of(dir.path()), Location::Sqlite(_)));
        let _socket =
            std::os::unix::net::UnixListener::bind(dir.path().join(".s.PGSQL.5433")).unwrap();
        assert_eq!(
            Location::of(dir.path()),
            Location::Postgres(PostgresTarget::SocketDir {
                dir: dir.path().to_path_buf(),
                port: 5433
            })
        );
    }

    #[test]
    fn a_build_without_postgres_names_the_server_on_one_line() {
        let location = Location::of(Path::new("postgres://lab:s3cret@db.lab/k"));
        let message = built_without_postgres(&location).to_string();
        assert_eq!(
            message,
            "this kbench was built without the PostgreSQL client (a guest build): \
             postgres://lab:***@db.lab/k needs the full kbench"
        );
    }

    /// The guest build (`--no-default-features`) refuses a server instead of making
    /// an SQLite file named after its URL.
    #[cfg(not(feature = "postgres"))]
    #[test]
    fn a_build_without_postgres_refuses_a_server() {
        let url = Path::new("postgres://lab@db.lab/k");
        let expected = built_without_postgres(&Location::of(url)).to_string();
        for opened in [crate::Store::open(url), crate::Store::open_existing(url)] {
            match opened {
                Err(e @ crate::StoreError::Unusable(_)) => assert_eq!(e.to_string(), expected),
                Err(e) => panic!("{e}"),
                Ok(_) => panic!("a guest build opened {}", url.display()),
            }
        }
    }

    #[test]
    fn passwords_are_never_displayed() {
        assert_eq!(
            without_password("postgres://lab:s3cr@t@db.lab:5432/k?sslmode=require"),
            "postgres://lab:***@db.lab:5432/k?sslmode=require"
        );
        assert_eq!(
            without_password("postgres://lab@db/k"),
            "postgres://lab@db/k"
        );
        assert_eq!(
            without_password("postgres:///k?host=/run/pg"),
            "postgres:///k?host=/run/pg"
        );
    }
}
