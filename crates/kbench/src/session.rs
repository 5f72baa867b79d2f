//! Opening the database and starting a session with everything about this boot.
use kbench_store::{NewSession, Store};
use std::path::{Path, PathBuf};

/// The `--db` option every database command takes.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// The run database: an SQLite file, or a lab's PostgreSQL as
    /// `postgres://USER@HOST/DB` or the directory of its socket [default: $KBENCH_DB,
    /// else $XDG_DATA_HOME/kbench/kbench.db, else ~/.local/share/kbench/kbench.db]
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    pub fn path(&self) -> PathBuf {
        self.db.clone().unwrap_or_else(kbench_store::default_path)
    }

    /// The database to write to, made (with its directory) when there is none.
    pub fn open(&self) -> anyhow::Result<Store> {
        open_store(&self.path())
    }

    /// The database to read: it must exist; a command that only reads makes nothing.
    pub fn open_existing(&self) -> anyhow::Result<Store> {
        Ok(Store::open_existing(&self.path())?)
    }
}

pub fn open_store(path: &Path) -> anyhow::Result<Store> {
    Ok(Store::open(path)?)
}

pub use kbench_workloads::measure::unix_now_ns;

/// The command line as the user typed it (quoted where needed).
pub fn command_line() -> String {
    // argv[0] may be a build path; the command to give a reader is `kbench`.
    let args: Vec<String> = std::iter::once("kbench".to_string())
        .chain(std::env::args().skip(1).map(|a| without_password(&a)))
        .collect();
    kbench_runner::child::shell_join(&args)
}

/// A database's location as it may be kept: a PostgreSQL URL without its password.
pub fn masked(location: &str) -> String {
    match kbench_store::location::is_postgres_url(location) {
        true => kbench_store::location::without_password(location),
        false => location.to_string(),
    }
}

/// An argument as it may be stored and shown: a PostgreSQL URL's password masked
/// (`--db URL`, `--db=URL`, `--to URL`), since every reader of the database sees
/// a session's command line.
fn without_password(arg: &str) -> String {
    let (option, value) = match arg.split_once('=') {
        Some((option, value)) if option.starts_with("--") => (Some(option), value),
        _ => (None, arg),
    };
    if !kbench_store::location::is_postgres_url(value) {
        return arg.to_string();
    }
    let masked = kbench_store::location::without_password(value);
    match option {
        Some(option) => format!("{option}={masked}"),
        None => masked,
    }
}

/// A session for `label` with this boot's id, environment snapshot and command line.
pub fn new_session(label: &str, kind: &str, seed: Option<u64>) -> NewSession {
    kbench_runner::session::new_session(label, kind, seed, &command_line())
}

/// Names the running kernel's config file (text or gzip) where the kernel has neither
/// /proc/config.gz nor /boot/config-RELEASE: a kernel booted straight from a build
/// tree, or a test's fixture.
pub const KERNEL_CONFIG_ENV: &str = "KBENCH_KERNEL_CONFIG";

/// The running kernel's config: the file `$KBENCH_KERNEL_CONFIG` names, else
/// /proc/config.gz, else /boot/config-RELEASE (both under `$KBENCH_SYSROOT`); `None`
/// when there is none. A named file that is not a config is the user's error.
pub fn running_kernel_config() -> anyhow::Result<Option<String>> {
    match std::env::var_os(KERNEL_CONFIG_ENV).filter(|v| !v.is_empty()) {
        Some(path) => kbench_sys::kconfig::read_file(Path::new(&path))
            .map(Some)
            .or_else(|e| crate::error::usage(format!("${KERNEL_CONFIG_ENV}: {e}"))),
        None => {
            let root = kbench_sys::Sysroot::from_env();
            Ok(kbench_sys::kconfig::read_running(&root).map(|c| c.text))
        }
    }
}

/// Starts a session measured on this machine's running kernel, keeping that kernel's
/// config with it when it is known, so that compare can tell two kernels' configs
/// apart. The config is read first: a bad `$KBENCH_KERNEL_CONFIG` starts nothing.
pub fn begin_session(store: &mut Store, new: &NewSession) -> anyhow::Result<i64> {
    let config = running_kernel_config()?;
    let id = store.begin_session(new)?;
    if let Some(text) = config {
        store.set_kernel_config(id, &text)?;
    }
    Ok(id)
}

/// Labels name sides in reports and shell commands ([`kbench_store::check_label`]).
pub fn check_label(label: &str) -> anyhow::Result<()> {
    Ok(kbench_store::check_label(label)?)
}

pub use kbench_runner::sink::StoreSink;
