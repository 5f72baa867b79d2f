//! The PostgreSQL servers tests use: the private one `scripts/test.sh` starts
//! (`KBENCH_TEST_PG`), with a fresh database per test, and servers of a test's own
//! that it may stop and start. Included by the store's and the CLI's tests.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

/// The test script's server, or `None` (the test skips, saying so) where none was
/// started; under `KBENCH_REQUIRE_POSTGRES=1`, as in CI, a missing server fails.
pub fn admin_url() -> Option<String> {
    match std::env::var("KBENCH_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
    {
        Some(url) => Some(url),
        None if std::env::var("KBENCH_REQUIRE_POSTGRES").as_deref() == Ok("1") => {
            panic!("KBENCH_REQUIRE_POSTGRES=1 but no KBENCH_TEST_PG: scripts/test.sh starts one")
        }
        None => {
            eprintln!("skipped: no PostgreSQL server (KBENCH_TEST_PG; scripts/test.sh starts one)");
            None
        }
    }
}

/// The test CA the server's certificate is signed by.
pub fn test_ca() -> Option<PathBuf> {
    std::env::var_os("KBENCH_TEST_PG_CA").map(PathBuf::from)
}

/// The URL of `url`'s server with database `name`.
pub fn with_database(url: &str, name: &str) -> String {
    let (server, _) = url.rsplit_once('/').expect("a URL with a database");
    format!("{server}/{name}")
}

/// Runs SQL statements as the server's superuser on `url`.
pub fn sql(url: &str, statements: &str) {
    let mut client = postgres::Client::connect(url, postgres::NoTls)
        .unwrap_or_else(|e| panic!("connect {url}: {e}"));
    client
        .batch_execute(statements)
        .unwrap_or_else(|e| panic!("{statements}: {e:?}"));
}

/// The first column of the first row of a query, as text.
pub fn sql_value(url: &str, query: &str) -> String {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let rows = client.simple_query(query).unwrap();
    rows.iter()
        .find_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("NULL").to_string()),
            _ => None,
        })
        .expect("a row")
}

/// A new, empty database for one test on `admin`'s server (dropped first if a run
/// before left it), named after the test and this process.
pub fn fresh_database_on(admin: &str, test: &str) -> String {
    let name: String = format!("t_{}_{}", std::process::id(), test)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(63)
        .collect();
    // One statement each: several in one call are one transaction, which these refuse.
    sql(
        admin,
        &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    );
    sql(admin, &format!("CREATE DATABASE {name}"));
    with_database(admin, &name)
}

/// A fresh database on the test script's server, if there is one.
pub fn fresh_database(test: &str) -> Option<String> {
    Some(fresh_database_on(&admin_url()?, test))
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-server.sh")
}

/// A server of the test's own, which it may stop and start again.
pub struct PrivateServer {
    dir: tempfile::TempDir,
    /// Its superuser's URL, database `postgres`.
    pub url: String,
}

impl PrivateServer {
    /// Starts one where the test script's server runs (the same packages are there).
    pub fn start() -> Option<PrivateServer> {
        admin_url()?;
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(script())
            .arg("start")
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg-server.sh start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let env = String::from_utf8_lossy(&out.stdout).into_owned();
        let url = env
            .lines()
            .find_map(|l| l.strip_prefix("KBENCH_TEST_PG="))
            .expect("the server's URL")
            .to_string();
        Some(PrivateServer { dir, url })
    }

    fn script(&self, command: &str) {
        let out = Command::new(script())
            .arg(command)
            .arg(self.dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg-server.sh {command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn stop(&self) {
        self.script("stop");
    }

    pub fn restart(&self) {
        self.script("restart");
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("stop")
            .arg(self.dir.path())
            .output();
    }
}
