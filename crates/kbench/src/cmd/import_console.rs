//! `kbench import-console LOG --label L` (`--label-a A --label-b B` for a `kbench lava-job`
//! job's log): [`kbench_boot::imported`] reads and judges the boots, and this stores them.
use crate::args::checked_commit;
use crate::boots::store_boot;
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_boot::imported::{
    import_ab_job, read_ab_job, CaptureKernel, ConsoleCapture, ImportLabels,
};
use kbench_record::KernelSource;
use std::path::PathBuf;

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

pub fn run(args: ImportConsoleArgs) -> anyhow::Result<i32> {
    let (a, b) = (args.label_a.as_deref(), args.label_b.as_deref());
    let labels = ImportLabels::of(args.label.as_deref(), a, b)?;
    for label in labels.all() {
        session::check_label(label)?;
    }
    let read_config = |path| kbench_sys::kconfig::read_file(path).or_else(|e| usage(e.to_string()));
    let config = args.kernel_config.as_deref().map(read_config).transpose()?;
    let (config, config_sha256) = (
        config.as_deref(),
        config.as_deref().map(kbench_store::config_hash),
    );
    let text = String::from_utf8_lossy(&crate::input::read_bytes(&args.log)?).into_owned();
    let log = args.log.display().to_string();
    let command_line = session::command_line();
    let commit = |option, commit: &Option<String>| checked_commit(option, commit.as_deref());
    let done = match labels {
        ImportLabels::One(label) => {
            let commit = commit("--commit", &args.commit)?;
            let capture = ConsoleCapture::read(&log, &text)?;
            let kernel = CaptureKernel {
                expected_release: args.kernel_release.as_deref().unwrap_or(""),
                config_sha256: config_sha256.as_deref(),
                source: &KernelSource {
                    kernel_commit: commit,
                },
                command_line: &command_line,
            };
            let mut store = args.db.open()?;
            capture.import(label, &kernel, &mut |target, nonce, log, host| {
                store_boot(&mut store, target, config, nonce, log, host)
            })?
        }
        ImportLabels::PerKernel(labels) => {
            let job = read_ab_job(&log, &text)?;
            let a = commit("--commit-a", &args.commit_a)?;
            let commits = [a, commit("--commit-b", &args.commit_b)?];
            let mut store = args.db.open()?;
            import_ab_job(&job, labels, commits, &command_line, &mut |t, n, log, h| {
                store_boot(&mut store, t, None, n, log, h)
            })?
        }
    };
    outln!("{done}");
    Ok(i32::from(done.failed() > 0))
}
