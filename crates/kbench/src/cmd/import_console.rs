//! `kbench import-console LOG --label L`: the boots in a board's serial capture, or in
//! a LAVA job's YAML log, read with the checks `kbench vm-ab` applies to its own.
//! `--label-a A --label-b B` reads the log of a `kbench lava-job` job, whose boots share
//! one kernel command line: a boot's console is what LAVA logged in its namespace, and
//! the namespace says which kernel it booted. [`kbench_import::lava`] reads the log.
use crate::boots::{config_sha256, store_boot};
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_boot::stored::{BootTarget, HostView};
use kbench_console::lava::Side;
use kbench_import::lava::{console_text, read_lava_job};
use kbench_record::KernelSource;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ImportConsoleArgs {
    /// A serial capture, or a LAVA job log (YAML, its `lvl: target` lines); `-` reads
    /// standard input.
    pub log: PathBuf,
    /// The label the boots are stored under.
    #[arg(long, conflicts_with_all = ["label_a", "label_b"])]
    pub label: Option<String>,
    /// For the log of a `kbench lava-job` job: the label of kernel A's boots.
    #[arg(long)]
    pub label_a: Option<String>,
    /// For the log of a `kbench lava-job` job: the label of kernel B's boots.
    #[arg(long)]
    pub label_b: Option<String>,
    /// The kernel release every boot must report (with --label).
    #[arg(long, value_name = "RELEASE", conflicts_with_all = ["label_a", "label_b"])]
    pub kernel_release: Option<String>,
    /// The booted kernel's configuration (a .config, or config.gz), stored with every
    /// boot so that compare can list the options two kernels differ in (with --label).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["label_a", "label_b"])]
    pub kernel_config: Option<PathBuf>,
    /// The commit the booted kernel was built from, stored with every boot (`kbench
    /// history --by commit`; with --label).
    #[arg(long, value_name = "REV", conflicts_with_all = ["label_a", "label_b"])]
    pub commit: Option<String>,
    /// For the log of a `kbench lava-job` job: the commit kernel A was built from.
    #[arg(long, value_name = "REV", requires = "label_a")]
    pub commit_a: Option<String>,
    /// For the log of a `kbench lava-job` job: the commit kernel B was built from.
    #[arg(long, value_name = "REV", requires = "label_b")]
    pub commit_b: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// The kernel of `commit` as `option` gave it, checked to be a revision.
fn kernel_of(option: &str, commit: &Option<String>) -> anyhow::Result<KernelSource> {
    Ok(KernelSource {
        kernel_commit: crate::args::checked_commit(option, commit.as_deref())?,
    })
}

pub fn run(args: ImportConsoleArgs) -> anyhow::Result<i32> {
    let labels = labels(&args)?;
    let config = match &args.kernel_config {
        Some(path) => Some(kbench_sys::kconfig::read_file(path).or_else(|e| usage(e.to_string()))?),
        None => None,
    };
    let bytes = read_log(&args.log)?;
    let text = String::from_utf8_lossy(&bytes);
    match labels {
        Labels::One(label) => import_boots(&args, label, config.as_deref(), &text),
        Labels::PerKernel(labels) => import_ab_job(&args, labels, &text),
    }
}

/// Where the boots go: all under one label, or each under its kernel's.
enum Labels<'a> {
    One(&'a str),
    PerKernel([&'a str; 2]),
}

/// The labels asked for, checked before any log is read.
fn labels(args: &ImportConsoleArgs) -> anyhow::Result<Labels<'_>> {
    let labels = match (&args.label, &args.label_a, &args.label_b) {
        (Some(label), None, None) => Labels::One(label),
        (None, Some(a), Some(b)) if a == b => {
            return usage("the two kernels need different labels (--label-a, --label-b)")
        }
        (None, Some(a), Some(b)) => Labels::PerKernel([a, b]),
        (None, None, None) => return usage(
            "give --label L, or --label-a A and --label-b B for the log of a `kbench lava-job` job",
        ),
        _ => return usage("--label-a and --label-b go together"),
    };
    match &labels {
        Labels::One(label) => session::check_label(label)?,
        Labels::PerKernel(pair) => {
            for label in pair {
                session::check_label(label)?;
            }
        }
    }
    Ok(labels)
}

fn read_log(path: &Path) -> anyhow::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)?;
        Ok(buf)
    } else {
        std::fs::read(path).or_else(|e| usage(format!("{}: {e}", path.display())))
    }
}

/// Every boot in the log under one label.
fn import_boots(
    args: &ImportConsoleArgs,
    label: &str,
    config: Option<&str>,
    text: &str,
) -> anyhow::Result<i32> {
    let kernel = kernel_of("--commit", &args.commit)?;
    if read_lava_job(text).is_some() {
        // Its boots share one nonce: read as one capture they would be one broken boot.
        return usage(format!(
            "{} is the log of a `kbench lava-job` job: import it with --label-a and --label-b",
            args.log.display()
        ));
    }
    let console = console_text(text);
    let split = kbench_console::split_boots(&console);
    if split.boots.is_empty() {
        return usage(format!(
            "{}: no kbench console records in it",
            args.log.display()
        ));
    }
    let mut store = args.db.open()?;
    let command_line = session::command_line();
    let config_sha256 = config_sha256(config);
    let target = BootTarget {
        label,
        expected_release: args.kernel_release.as_deref().unwrap_or(""),
        accel: None,
        kind: "console",
        shared_log: true,
        kernel_config_sha256: config_sha256.as_deref(),
        command_line: &command_line,
        kernel: &kernel,
        // A board's capture: its own clock, wall time.
        clock: kbench_record::Clock::Wall,
    };
    let mut failed = 0;
    // Each boot is judged on its own stretch of the capture: a panic in one boot's
    // kernel fails that boot, not every boot of the job.
    for boot in &split.boots {
        let judged = boot.judged_text();
        if !store_boot(
            &mut store,
            &target,
            config,
            &boot.nonce,
            judged,
            &HostView::default(),
        )? {
            failed += 1;
        }
        warn_of_deaths_between_boots(boot.after_end());
    }
    warn_of_deaths_between_boots(split.head);
    for nonce in &split.replayed {
        errln!(
            "kbench import-console: lines of boot {nonce} appear again after another boot's (a serial line replaying old output); they were not read again"
        );
    }
    outln!(
        "kbench import-console: {} boot(s) under {}, {} failed",
        split.boots.len(),
        label,
        failed
    );
    Ok(i32::from(failed > 0))
}

/// A kernel that died where no boot was reporting: one that never reached /init, or
/// one dying after its results were complete. No boot is blamed; it is said.
fn warn_of_deaths_between_boots(text: &str) {
    if let Some(panic) = kbench_console::parse(text, "").panics.first() {
        errln!(
            "kbench import-console: a kernel died between boots (one that never reported?): {panic}"
        );
    }
}

/// The boots of a `kbench lava-job` job, each under its kernel's label: every boot LAVA
/// started is stored, a boot that printed nothing of kbench's as failed.
fn import_ab_job(args: &ImportConsoleArgs, labels: [&str; 2], text: &str) -> anyhow::Result<i32> {
    let Some(job) = read_lava_job(text) else {
        return usage(format!(
            "{}: not the LAVA log of a `kbench lava-job` job (no namespace kbench-NN-a or kbench-NN-b in it)",
            args.log.display()
        ));
    };
    let kernels = [
        kernel_of("--commit-a", &args.commit_a)?,
        kernel_of("--commit-b", &args.commit_b)?,
    ];
    let mut store = args.db.open()?;
    let command_line = session::command_line();
    let mut per_side = [0usize; 2];
    let mut failed = 0;
    for boot in &job.boots {
        let side = usize::from(boot.side == Side::B);
        let label = labels[side];
        per_side[side] += 1;
        // A replay is kept as a failed boot with its log, as every failed boot is.
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
            label,
            expected_release: "",
            accel: None,
            kind: "lava",
            shared_log: false,
            kernel_config_sha256: None,
            command_line: &command_line,
            kernel: &kernels[side],
            clock: kbench_record::Clock::Wall,
        };
        if !store_boot(&mut store, &target, None, &job.nonce, &boot.console, &host)? {
            failed += 1;
        }
    }
    outln!(
        "kbench import-console: {} boot(s): {} of {}, {} of {}, {} failed",
        job.boots.len(),
        per_side[0],
        labels[0],
        per_side[1],
        labels[1],
        failed
    );
    Ok(i32::from(failed > 0))
}
