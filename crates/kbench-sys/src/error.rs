//! The one error type of this crate: every variant is a message a user can act on.
use std::path::PathBuf;

/// Errors from kbench-sys. Reading the machine itself never fails (missing data is `None`);
/// these are for user input (CPU lists, `--cpus` specs, `--sysroot`) and for `--tune` I/O.
#[derive(Debug, thiserror::Error)]
pub enum SysError {
    /// A cpulist such as `0-3,6` could not be parsed.
    #[error("invalid CPU list '{input}': {reason}")]
    Cpulist {
        /// The list as given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `--cpus` spec names CPUs or a class that this machine does not have.
    #[error("{0}")]
    CpuSpec(String),
    /// The sysroot is not usable (not a directory, or no sysfs/procfs under it).
    #[error("sysroot {}: {reason}", path.display())]
    Sysroot {
        /// The root directory.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A file could not be read or written (tune state, sysfs knobs).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A kernel config file someone named could not be read, or is not one.
    #[error("kernel config {}: {reason}", path.display())]
    KernelConfig {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The tune state file is missing, unreadable or belongs to another sysroot.
    #[error("{0}")]
    TuneState(String),
}

impl SysError {
    /// Whether it is the user's input (a CPU list, a `--cpus` spec, a sysroot, a kernel
    /// config, the tune state): exit status 2. A file of /sys or /proc that cannot be
    /// read or written is not.
    pub fn is_usage(&self) -> bool {
        !matches!(self, SysError::Io { .. })
    }
}
