//! Commands around the measured ones, as hyperfine has them: `--setup` once before the
//! runs, `--prepare` before every run (warm-ups included), `--cleanup` once after, also
//! when a run or hook failed, as long as the setup succeeded. Each runs with `sh -c`,
//! untimed; its standard error comes through, its standard output only with
//! `--show-output`. A hook that exits non-zero stops the runs it belongs to.
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// The hooks of one arm (`kbench exec`'s command, each side of `kbench ab`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hooks {
    /// Before every run, warm-ups included, untimed.
    pub prepare: Option<String>,
    /// Once before the first run.
    pub setup: Option<String>,
    /// Once after the last run, also after a failed run or hook, unless the setup failed.
    pub cleanup: Option<String>,
    /// Let the hooks' standard output through.
    pub show_output: bool,
}

impl Hooks {
    /// The command of the hook `kind`, if there is one.
    pub fn command(&self, kind: HookKind) -> Option<&str> {
        match kind {
            HookKind::Setup => self.setup.as_deref(),
            HookKind::Prepare => self.prepare.as_deref(),
            HookKind::Cleanup => self.cleanup.as_deref(),
        }
    }
}

/// Which hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookKind {
    Setup,
    Prepare,
    Cleanup,
}

impl HookKind {
    fn name(self) -> &'static str {
        match self {
            HookKind::Setup => "setup",
            HookKind::Prepare => "prepare",
            HookKind::Cleanup => "cleanup",
        }
    }
}

/// A hook that did not exit 0.
#[derive(Debug, Clone, PartialEq)]
pub struct HookFailure {
    pub kind: HookKind,
    /// One line: `prepare hook 'false' exited with status 1`.
    pub message: String,
    /// Its exit code, 128 + signal when killed, 127 when it could not start.
    pub exit_status: i32,
}

/// Runs `command` (if any) with `sh -c`; its standard output reaches ours only when
/// `show_output`.
pub fn run_hook(
    kind: HookKind,
    command: Option<&str>,
    show_output: bool,
) -> Result<(), HookFailure> {
    let Some(command) = command else {
        return Ok(());
    };
    let stdout = if show_output {
        Stdio::inherit()
    } else {
        Stdio::null()
    };
    let status = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(stdout)
        .status();
    let what = format!("{} hook '{command}'", kind.name());
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(match (status.code(), status.signal()) {
            (Some(code), _) => HookFailure {
                kind,
                message: format!("{what} exited with status {code}"),
                exit_status: code,
            },
            (None, signal) => {
                let signal = signal.unwrap_or_default();
                HookFailure {
                    kind,
                    message: format!("{what} was killed by signal {signal}"),
                    exit_status: 128 + signal,
                }
            }
        }),
        Err(e) => Err(HookFailure {
            kind,
            message: format!("{what} could not start: {e}"),
            exit_status: 127,
        }),
    }
}
