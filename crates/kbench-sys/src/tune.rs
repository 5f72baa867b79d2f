//! `kbench env --tune` / `--reset`: apply the checklist fixes that are safe to apply at run
//! time, record the original contents of every file written, and restore them.
//!
//! What tune changes: cpufreq governor → performance, boost/turbo → off, ASLR → full,
//! clocksource hpet/acpi_pm → tsc. What it leaves alone, on purpose: SMT (hot-unplugging
//! siblings disturbs the running system), isolation (a boot parameter), idle states (kbench
//! measures wakeups as the machine is configured), scaling_min_freq (pyperf's min=max left
//! machines slow until reset, pyperf#158).
use crate::cpufreq::read_policies;
use crate::{SysError, Sysroot};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One write tune wants to make.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneAction {
    /// The machine path (`/sys/devices/system/cpu/cpufreq/policy0/scaling_governor`).
    pub path: String,
    /// The value to write (a trailing newline is added, as `echo` does).
    pub value: String,
    /// Why.
    pub reason: String,
}

/// One write tune made, with what was there before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneChange {
    /// The machine path.
    pub path: String,
    /// The file's contents before tune, byte for byte as read.
    pub original: String,
    /// What tune wrote.
    pub written: String,
    /// Why.
    pub reason: String,
}

/// The state file: what to undo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneState {
    /// Format version of this file.
    pub version: u32,
    /// The sysroot the changes were made under.
    pub sysroot: PathBuf,
    /// The changes, in the order made.
    pub changes: Vec<TuneChange>,
}

/// The outcome of [`apply`] or [`reset`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneReport {
    /// Writes made (tune) or restored (reset).
    pub done: Vec<TuneChange>,
    /// Writes that failed, with the error.
    pub failed: Vec<(String, String)>,
    /// The state file used.
    pub state_file: PathBuf,
}

const STATE_VERSION: u32 = 1;

/// `$XDG_STATE_HOME/kbench/tune.json`, else `$HOME/.local/state/kbench/tune.json`, else
/// `./kbench-tune.json`.
pub fn default_state_path() -> PathBuf {
    let from_env = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(state) = from_env("XDG_STATE_HOME") {
        return state.join("kbench/tune.json");
    }
    if let Some(home) = from_env("HOME") {
        return home.join(".local/state/kbench/tune.json");
    }
    PathBuf::from("kbench-tune.json")
}

/// The writes tune would make now (only files whose value differs from the target).
pub fn plan(root: &Sysroot) -> Vec<TuneAction> {
    let mut actions = Vec::new();
    let mut want = |path: String, value: &str, reason: &str| {
        let current = root.read_trimmed(&path);
        if current.is_some() && current.as_deref() != Some(value) {
            actions.push(TuneAction {
                path,
                value: value.to_string(),
                reason: reason.to_string(),
            });
        }
    };
    for policy in read_policies(root) {
        let offers_performance = policy.available_governors.is_empty()
            || policy
                .available_governors
                .iter()
                .any(|g| g == "performance");
        if offers_performance {
            want(
                format!("{}/scaling_governor", policy.dir),
                "performance",
                "governor",
            );
        }
        if policy.boost.is_some() {
            want(format!("{}/boost", policy.dir), "0", "boost off");
        }
    }
    want(
        "/sys/devices/system/cpu/intel_pstate/no_turbo".to_string(),
        "1",
        "turbo off",
    );
    want(
        "/sys/devices/system/cpu/cpufreq/boost".to_string(),
        "0",
        "boost off",
    );
    want(
        "/proc/sys/kernel/randomize_va_space".to_string(),
        "2",
        "full ASLR",
    );
    let clock = "/sys/devices/system/clocksource/clocksource0";
    let slow_clock = matches!(
        root.read_trimmed(&format!("{clock}/current_clocksource"))
            .as_deref(),
        Some("hpet" | "acpi_pm")
    );
    let tsc_available = root
        .read(&format!("{clock}/available_clocksource"))
        .is_some_and(|a| a.split_whitespace().any(|c| c == "tsc"));
    if slow_clock && tsc_available {
        want(
            format!("{clock}/current_clocksource"),
            "tsc",
            "fast clocksource",
        );
    }
    actions
}

/// Applies [`plan`] and records every change in `state_file`. An existing state file is
/// extended, keeping the first original of each path, so `--tune` twice then `--reset`
/// still restores the machine as it was before the first tune.
pub fn apply(root: &Sysroot, state_file: &Path) -> Result<TuneReport, SysError> {
    let mut state = match load_state(state_file)? {
        Some(state) => check_same_root(state, root, state_file)?,
        None => TuneState {
            version: STATE_VERSION,
            sysroot: root.root().to_path_buf(),
            changes: Vec::new(),
        },
    };
    let mut report = TuneReport {
        state_file: state_file.to_path_buf(),
        ..TuneReport::default()
    };
    for action in plan(root) {
        let Some(original) = root.read(&action.path) else {
            continue;
        };
        let written = format!("{}\n", action.value);
        match write_file(&root.path(&action.path), &written) {
            Ok(()) => {
                let change = TuneChange {
                    path: action.path.clone(),
                    original,
                    written,
                    reason: action.reason,
                };
                if !state.changes.iter().any(|c| c.path == change.path) {
                    state.changes.push(change.clone());
                }
                report.done.push(change);
            }
            Err(e) => report.failed.push((action.path, e.to_string())),
        }
    }
    if !state.changes.is_empty() {
        save_state(state_file, &state)?;
    }
    Ok(report)
}

/// Restores every file recorded in `state_file`, newest change first, then removes the state
/// file (or rewrites it with the changes that could not be restored).
pub fn reset(root: &Sysroot, state_file: &Path) -> Result<TuneReport, SysError> {
    let state = load_state(state_file)?.ok_or_else(|| {
        SysError::TuneState(format!(
            "nothing to reset: no tune state file at {}",
            state_file.display()
        ))
    })?;
    let mut state = check_same_root(state, root, state_file)?;
    let mut report = TuneReport {
        state_file: state_file.to_path_buf(),
        ..TuneReport::default()
    };
    let mut left = Vec::new();
    for change in state.changes.iter().rev() {
        match write_file(&root.path(&change.path), &change.original) {
            Ok(()) => report.done.push(change.clone()),
            Err(e) => {
                report.failed.push((change.path.clone(), e.to_string()));
                left.insert(0, change.clone());
            }
        }
    }
    if left.is_empty() {
        std::fs::remove_file(state_file).map_err(|source| SysError::Io {
            path: state_file.to_path_buf(),
            source,
        })?;
    } else {
        state.changes = left;
        save_state(state_file, &state)?;
    }
    Ok(report)
}

fn check_same_root(
    state: TuneState,
    root: &Sysroot,
    state_file: &Path,
) -> Result<TuneState, SysError> {
    if state.sysroot != root.root() {
        return Err(SysError::TuneState(format!(
            "tune state file {} belongs to sysroot {}, not {}",
            state_file.display(),
            state.sysroot.display(),
            root.root().display()
        )));
    }
    Ok(state)
}

fn load_state(state_file: &Path) -> Result<Option<TuneState>, SysError> {
    let text = match std::fs::read_to_string(state_file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SysError::Io {
                path: state_file.to_path_buf(),
                source,
            })
        }
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        SysError::TuneState(format!(
            "tune state file {} is damaged: {e}",
            state_file.display()
        ))
    })
}

fn save_state(state_file: &Path, state: &TuneState) -> Result<(), SysError> {
    let io = |source| SysError::Io {
        path: state_file.to_path_buf(),
        source,
    };
    if let Some(dir) = state_file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let text =
        serde_json::to_string_pretty(state).map_err(|e| SysError::TuneState(e.to_string()))?;
    std::fs::write(state_file, text + "\n").map_err(io)
}

/// Writes a knob. Truncating is harmless on sysfs/procfs and needed on fixture copies so
/// that a reset restores them byte for byte.
fn write_file(path: &Path, contents: &str) -> Result<(), std::io::Error> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    file.write_all(contents.as_bytes())
}
