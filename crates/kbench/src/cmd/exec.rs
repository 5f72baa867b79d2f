//! `kbench exec --label L -- CMD ARGS...`: a real workload (a kernel build) timed as a
//! whole, with the figures it prints itself (perf bench, perf stat, hackbench, ...) read
//! as metrics of each run. A run that exits non-zero is recorded and reported, never
//! averaged in; a hook that fails is recorded and stops the runs.
use crate::args::{resolve_optional_cpus, run_timeout, FigureArgs, HookArgs};
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_runner::child::shell_join;
use kbench_runner::scheduler::run_alone;
use kbench_runner::{CommandExecutor, FigureReader, HookKind};

#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The label these runs are stored under.
    #[arg(long)]
    pub label: String,
    /// Measured runs.
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
    /// Warm-up runs, recorded and excluded.
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
    /// Let the command's output through (kept to read its figures either way).
    #[arg(long)]
    pub show_output: bool,
    /// Pin the command: a cpulist or `class:NAME`.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Kill a run, with every process it started, and record it as failed after this
    /// many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 86400.0)]
    pub run_timeout: f64,
    #[command(flatten)]
    pub figures: FigureArgs,
    #[command(flatten)]
    pub hooks: HookArgs,
    #[command(flatten)]
    pub identity: crate::args::IdentityArgs,
    #[command(flatten)]
    pub db: DbArgs,
    /// The command and its arguments (no shell), after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(args: ExecArgs) -> anyhow::Result<i32> {
    session::check_label(&args.label)?;
    if args.runs == 0 {
        return usage("--runs must be at least 1");
    }
    let cpus = resolve_optional_cpus(args.cpus.as_deref())?;
    let timeout = run_timeout(args.run_timeout)?;
    kbench_runner::child::check_runnable(&args.command[0])?;
    let mut store = args.db.open()?;
    let new = (args.identity).apply(session::new_session(&args.label, "exec", None))?;
    let session_id = session::begin_session(&mut store, &new)?;
    let display = shell_join(&args.command);
    let mut command = CommandExecutor {
        show_output: args.show_output,
        pinned: cpus.as_deref().map(kbench_sys::format_cpulist),
        cpus,
        ..CommandExecutor::direct(
            &args.command,
            FigureReader::new(&args.figures.options(), &display),
            timeout,
        )
    };
    let hooks = args.hooks.hooks(None, args.show_output);
    let mut sink = session::StoreSink::one(&mut store, session_id);
    let result = run_alone(&mut command, args.warmup, args.runs, hooks, &mut sink);
    store.end_session(session_id, session::unix_now_ns())?;
    let outcome = result?;
    let (runs, failures) = (&outcome.measured, &outcome.failures);
    let summary = kbench_report::exec::ExecSummary {
        label: &args.label,
        command: &display,
        source_format: command.reader.source_format,
        runs: runs.iter().map(|r| r.values.as_slice()).collect(),
        failed_runs: failures
            .iter()
            .map(|f| (f.attempt, f.exit_status))
            .collect(),
        failed_hooks: (outcome.hook_failures.iter())
            .map(|f| (f.message.as_str(), f.kind != HookKind::Cleanup))
            .collect(),
    };
    out!("{}", kbench_report::exec::summary(&summary));
    let failed = !outcome.failures.is_empty() || !outcome.hook_failures.is_empty();
    Ok(i32::from(failed))
}
