//! The injectable root under which `/sys` and `/proc` are read.
use crate::cpulist::parse_cpulist;
use crate::SysError;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Files larger than this are not machine files we understand; refuse to slurp them so a
/// hostile or broken fixture cannot exhaust memory (`/proc/interrupts` on 8192 CPUs is ~10 MB).
const MAX_FILE_BYTES: u64 = 64 << 20;

/// The root directory that stands for `/` when reading `/sys` and `/proc`.
///
/// Tests and `kbench env --sysroot DIR` point it at a fixture tree; everything else uses
/// [`Sysroot::from_env`], which honours `KBENCH_SYSROOT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sysroot {
    root: PathBuf,
}

impl Default for Sysroot {
    fn default() -> Self {
        Self::host()
    }
}

impl Sysroot {
    /// The environment variable that overrides the root everywhere in kbench.
    pub const ENV_VAR: &'static str = "KBENCH_SYSROOT";

    /// A sysroot at `root` (not checked; see [`Sysroot::validate`]).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The running machine: `/`.
    pub fn host() -> Self {
        Self::new("/")
    }

    /// `KBENCH_SYSROOT` if set and non-empty, otherwise `/`.
    pub fn from_env() -> Self {
        match std::env::var_os(Self::ENV_VAR) {
            Some(v) if !v.is_empty() => Self::new(v),
            _ => Self::host(),
        }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when this is the real machine (`/`), where writes need root.
    pub fn is_host(&self) -> bool {
        self.root == Path::new("/")
    }

    /// Checks that the root is a directory holding at least a CPU directory or a cpuinfo.
    pub fn validate(&self) -> Result<(), SysError> {
        let fail = |reason: &str| SysError::Sysroot {
            path: self.root.clone(),
            reason: reason.to_string(),
        };
        if !self.root.is_dir() {
            return Err(fail("not a directory"));
        }
        if !self.exists("/sys/devices/system/cpu") && !self.exists("/proc/cpuinfo") {
            return Err(fail(
                "no sys/devices/system/cpu or proc/cpuinfo under it (not a machine root)",
            ));
        }
        Ok(())
    }

    /// Maps an absolute machine path (`/proc/cpuinfo`) to its place under the root.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.root.join(abs.trim_start_matches('/'))
    }

    /// True when the file or directory exists under the root.
    pub fn exists(&self, abs: &str) -> bool {
        self.path(abs).exists()
    }

    /// The raw contents of a file, `None` if missing or unreadable. Invalid UTF-8 is
    /// replaced rather than rejected: a stray byte in a DMI string must not hide the rest.
    pub fn read(&self, abs: &str) -> Option<String> {
        let path = self.path(abs);
        let meta = std::fs::metadata(&path).ok()?;
        // sysfs reports 4096 for every attribute and procfs 0; only real files can be huge.
        if meta.len() > MAX_FILE_BYTES {
            return None;
        }
        let bytes = std::fs::read(&path).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The contents with surrounding whitespace removed; `None` if missing.
    pub fn read_trimmed(&self, abs: &str) -> Option<String> {
        self.read(abs).map(|s| s.trim().to_string())
    }

    /// The contents trimmed and non-empty; `None` if missing or empty.
    pub fn read_value(&self, abs: &str) -> Option<String> {
        self.read_trimmed(abs).filter(|s| !s.is_empty())
    }

    /// The trimmed contents parsed as `T`; `None` if missing or not parseable.
    pub fn read_parse<T: FromStr>(&self, abs: &str) -> Option<T> {
        self.read_trimmed(abs)?.parse().ok()
    }

    /// A cpulist file (`0-3,6`); `None` if missing or malformed, `Some(vec![])` if empty.
    pub fn read_cpulist(&self, abs: &str) -> Option<Vec<u32>> {
        parse_cpulist(&self.read(abs)?).ok()
    }

    /// The names in a directory, sorted; empty if it does not exist.
    pub fn list_dir(&self, abs: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.path(abs)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The numbers N of the entries named `{prefix}N` in a directory, sorted.
    pub fn numbered_entries(&self, abs: &str, prefix: &str) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .list_dir(abs)
            .iter()
            .filter_map(|name| name.strip_prefix(prefix)?.parse().ok())
            .collect();
        ids.sort_unstable();
        ids
    }
}
