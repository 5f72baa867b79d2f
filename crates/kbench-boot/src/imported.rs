//! The boots of a log kbench did not watch itself (`kbench import-console`): a board's
//! serial capture, or a LAVA job's YAML log, read with the checks `kbench vm-ab` applies
//! to its own boots ([`crate::stored`]). The log of a `kbench lava-job` job holds boots
//! sharing one kernel command line: a boot's console is what LAVA logged in its
//! namespace, and the namespace says which kernel it booted. [`kbench_import::lava`]
//! reads the log; the caller judges and stores each boot ([`StoreBoot`]) as it comes.
use crate::stored::{BootTarget, HostView};
use kbench_console::lava::KernelSide;
use kbench_import::lava::{console_text, read_lava_job, LavaJob};
use kbench_record::{Clock, KernelSource};

/// Judges one boot's log (the lines of a nonce) as [`crate::stored::JudgedBoot::judge`]
/// does and stores it: true when the boot succeeded.
pub type StoreBoot<'s> =
    dyn FnMut(&BootTarget<'_>, &str, &str, &HostView) -> anyhow::Result<bool> + 's;

/// A log, or labels for it, that cannot be imported: the user's to fix.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConsoleImportError {
    #[error("the two kernels need different labels (--label-a, --label-b)")]
    SameLabels,
    #[error(
        "give --label L, or --label-a A and --label-b B for the log of a `kbench lava-job` job"
    )]
    NoLabel,
    #[error("--label-a and --label-b go together")]
    HalfPair,
    #[error("{log} is the log of a `kbench lava-job` job: import it with --label-a and --label-b")]
    JobLogUnderOneLabel { log: String },
    #[error("{log}: no kbench console records in it")]
    NoRecords { log: String },
    #[error("{log}: not the LAVA log of a `kbench lava-job` job (no namespace kbench-NN-a or kbench-NN-b in it)")]
    NotJobLog { log: String },
}

impl ConsoleImportError {
    /// Whether the user can fix it (exit status 2): every case is a log or a label.
    pub fn is_usage(&self) -> bool {
        true
    }
}

/// Where a log's boots go: all under one label, or each under its kernel's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportLabels<'a> {
    One(&'a str),
    PerKernel([&'a str; 2]),
}

impl<'a> ImportLabels<'a> {
    /// `--label`, or `--label-a` with `--label-b`.
    pub fn of(
        label: Option<&'a str>,
        label_a: Option<&'a str>,
        label_b: Option<&'a str>,
    ) -> Result<ImportLabels<'a>, ConsoleImportError> {
        match (label, label_a, label_b) {
            (Some(label), None, None) => Ok(ImportLabels::One(label)),
            (None, Some(a), Some(b)) if a == b => Err(ConsoleImportError::SameLabels),
            (None, Some(a), Some(b)) => Ok(ImportLabels::PerKernel([a, b])),
            (None, None, None) => Err(ConsoleImportError::NoLabel),
            _ => Err(ConsoleImportError::HalfPair),
        }
    }

    /// Every label named.
    pub fn all(&self) -> &[&'a str] {
        match self {
            ImportLabels::One(label) => std::slice::from_ref(label),
            ImportLabels::PerKernel(pair) => pair,
        }
    }
}

/// What an import stored, as its last line says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootsImported {
    ConsoleCapture {
        label: String,
        boots: usize,
        failed: usize,
    },
    Job {
        labels: [String; 2],
        per_side: [usize; 2],
        failed: usize,
    },
}

impl BootsImported {
    /// The boots that failed.
    pub fn failed(&self) -> usize {
        match self {
            BootsImported::ConsoleCapture { failed, .. } | BootsImported::Job { failed, .. } => {
                *failed
            }
        }
    }
}

impl std::fmt::Display for BootsImported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BootsImported::ConsoleCapture {
                label,
                boots,
                failed,
            } => write!(
                f,
                "kbench import-console: {boots} boot(s) under {label}, {failed} failed"
            ),
            BootsImported::Job {
                labels: [a, b],
                per_side: [in_a, in_b],
                failed,
            } => write!(
                f,
                "kbench import-console: {} boot(s): {in_a} of {a}, {in_b} of {b}, {failed} failed",
                in_a + in_b
            ),
        }
    }
}

/// One boot of a serial capture: its nonce, the stretch of the capture it is judged
/// on, and the death of a kernel after it, where no boot was reporting.
#[derive(Debug, Clone)]
struct CapturedBoot {
    nonce: String,
    log: String,
    death_after: Option<String>,
}

/// The boots of a board's serial capture (or of a LAVA log's `target` lines), read and
/// checked, not judged yet.
#[derive(Debug, Clone)]
pub struct ConsoleCapture {
    boots: Vec<CapturedBoot>,
    death_before: Option<String>,
    replayed: Vec<String>,
}

/// What the boots of a capture are stored as, besides their label.
#[derive(Debug, Clone, Copy)]
pub struct CaptureKernel<'a> {
    /// The kernel release every boot must report; empty when unknown.
    pub expected_release: &'a str,
    /// The sha256 of the booted kernel's configuration, when it was given.
    pub config_sha256: Option<&'a str>,
    pub source: &'a KernelSource,
    /// The host's command line, which each session keeps.
    pub command_line: &'a str,
}

/// A kernel that died where no boot was reporting: one that never reached /init, or
/// one dying after its results were complete.
fn death_in(text: &str) -> Option<String> {
    let panic = kbench_console::parse(text, "").panics.into_iter().next()?;
    Some(panic.to_string())
}

impl ConsoleCapture {
    /// The boots of the capture `text` (named `log_name`); a `kbench lava-job` job's
    /// log, or a log without kbench's records, is refused.
    pub fn read(log_name: &str, text: &str) -> Result<ConsoleCapture, ConsoleImportError> {
        if read_lava_job(text).is_some() {
            // Its boots share one nonce: read as one capture they would be one broken boot.
            return Err(ConsoleImportError::JobLogUnderOneLabel {
                log: log_name.to_string(),
            });
        }
        let console = console_text(text);
        let split = kbench_console::split_boots(&console);
        if split.boots.is_empty() {
            return Err(ConsoleImportError::NoRecords {
                log: log_name.to_string(),
            });
        }
        let boots = split.boots.iter().map(|boot| CapturedBoot {
            nonce: boot.nonce.clone(),
            log: boot.judged_text().to_string(),
            death_after: death_in(boot.after_end()),
        });
        Ok(ConsoleCapture {
            boots: boots.collect(),
            death_before: death_in(split.head),
            replayed: split.replayed.clone(),
        })
    }

    /// Judges every boot, each on its own stretch of the capture (a panic in one boot's
    /// kernel fails that boot, not every boot of the job), and hands it to `sink`
    /// under `label`; what the capture holds besides is said on stderr.
    pub fn import(
        self,
        label: &str,
        kernel: &CaptureKernel<'_>,
        store: &mut StoreBoot<'_>,
    ) -> anyhow::Result<BootsImported> {
        let target = BootTarget {
            label,
            expected_release: kernel.expected_release,
            accel: None,
            kind: "console",
            shared_log: true,
            kernel_config_sha256: kernel.config_sha256,
            command_line: kernel.command_line,
            kernel: kernel.source,
            // A board's capture: its own clock, wall time.
            clock: Clock::Wall,
        };
        let mut failed = 0;
        let boots = self.boots.len();
        for boot in self.boots {
            let host = HostView::default();
            failed += usize::from(!store(&target, &boot.nonce, &boot.log, &host)?);
            warn_of_death_between_boots(boot.death_after);
        }
        warn_of_death_between_boots(self.death_before);
        for nonce in &self.replayed {
            errln!(
                "kbench import-console: lines of boot {nonce} appear again after another boot's (a serial line replaying old output); they were not read again"
            );
        }
        Ok(BootsImported::ConsoleCapture {
            label: label.to_string(),
            boots,
            failed,
        })
    }
}

/// No boot is blamed for a kernel that died between boots; it is said.
fn warn_of_death_between_boots(panic: Option<String>) {
    if let Some(panic) = panic {
        errln!(
            "kbench import-console: a kernel died between boots (one that never reported?): {panic}"
        );
    }
}

/// The boots of the `kbench lava-job` job whose LAVA log is `text` (named `log_name`).
pub fn read_ab_job(log_name: &str, text: &str) -> Result<LavaJob, ConsoleImportError> {
    read_lava_job(text).ok_or_else(|| ConsoleImportError::NotJobLog {
        log: log_name.to_string(),
    })
}

/// The boots of a `kbench lava-job` job, each stored under its kernel's label (with the
/// commit it was built from, when given): every boot LAVA started, a boot that printed nothing of
/// kbench's as failed, and a replay of another boot's results as failed with its log.
pub fn import_ab_job(
    job: &LavaJob,
    labels: [&str; 2],
    commits: [Option<String>; 2],
    command_line: &str,
    store: &mut StoreBoot<'_>,
) -> anyhow::Result<BootsImported> {
    let kernels = commits.map(|kernel_commit| KernelSource { kernel_commit });
    let mut per_side = [0usize; 2];
    let mut failed = 0;
    for boot in &job.boots {
        let side = usize::from(boot.side == KernelSide::B);
        per_side[side] += 1;
        let host = HostView {
            failure: boot.repeats.as_ref().map(|first| {
                format!(
                    "boot {} repeats the boot id of {first}: its results are another boot's",
                    boot.namespace
                )
            }),
            ..HostView::default()
        };
        let target = BootTarget {
            label: labels[side],
            expected_release: "",
            accel: None,
            kind: "lava",
            shared_log: false,
            kernel_config_sha256: None,
            command_line,
            kernel: &kernels[side],
            clock: Clock::Wall,
        };
        failed += usize::from(!store(&target, &job.nonce, &boot.console, &host)?);
    }
    Ok(BootsImported::Job {
        labels: labels.map(str::to_string),
        per_side,
        failed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_one_or_a_pair_of_two() {
        assert_eq!(
            ImportLabels::of(Some("x"), None, None),
            Ok(ImportLabels::One("x"))
        );
        assert_eq!(
            ImportLabels::of(None, Some("a"), Some("b")).unwrap().all(),
            ["a", "b"]
        );
        assert_eq!(
            ImportLabels::of(None, Some("a"), Some("a")),
            Err(ConsoleImportError::SameLabels)
        );
        assert_eq!(
            ImportLabels::of(None, None, None),
            Err(ConsoleImportError::NoLabel)
        );
        assert_eq!(
            ImportLabels::of(None, Some("a"), None),
            Err(ConsoleImportError::HalfPair)
        );
    }

    #[test]
    fn a_log_without_records_is_refused_and_a_summary_counts_both_sides() {
        let refused =
            ConsoleCapture::read("board.log", "[    0.0] Linux version 6.1\n").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "board.log: no kbench console records in it"
        );
        assert!(refused.is_usage());
        let done = BootsImported::Job {
            labels: ["base".into(), "patched".into()],
            per_side: [2, 2],
            failed: 0,
        };
        assert_eq!(
            done.to_string(),
            "kbench import-console: 4 boot(s): 2 of base, 2 of patched, 0 failed"
        );
    }
}
