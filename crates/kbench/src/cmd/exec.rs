//! `kbench exec --label L -- CMD ARGS...`: a real workload (a kernel build) timed as a
//! whole, with the figures it prints itself (perf bench, perf stat, hackbench, ...) read
//! as metrics of each run. A run that exits non-zero is recorded and reported, never
//! averaged in; a hook that fails is recorded and stops the runs.
use crate::args::{resolve_optional_cpus, run_timeout, FigureArgs, HookArgs};
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_runner::child::shell_join;
use kbench_runner::{ArmOutcome, CommandExecutor, FigureReader, HookKind, Order, StopPolicy};
use kbench_store::Value;

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
    check_runnable(&args.command[0])?;
    let mut store = args.db.open()?;
    let session_id = session::begin_session(
        &mut store,
        &args
            .identity
            .apply(session::new_session(&args.label, "exec", None))?,
    )?;
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
    let mut stop = StopPolicy::Attempts(args.runs);
    let schedule = kbench_runner::Schedule {
        order: Order::Abba,
        warmup: args.warmup,
        hooks: vec![args.hooks.hooks(None, args.show_output)],
        stop: &mut stop,
    };
    let mut sink = session::StoreSink::one(&mut store, session_id);
    let result = kbench_runner::scheduler::run(
        schedule,
        &mut [&mut command],
        &mut sink,
        &mut kbench_runner::scheduler::NoProgress,
    );
    store.end_session(session_id, session::unix_now_ns())?;
    let outcome = result?.remove(0);
    out!("{}", summary(&args, &outcome, command.reader.source_format));
    let failed = !outcome.failures.is_empty() || !outcome.hook_failures.is_empty();
    Ok(i32::from(failed))
}

/// A command that cannot start is refused before a session is stored for it: a path
/// must be an executable file, a bare name one found in $PATH.
fn check_runnable(program: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &std::path::Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = if program.contains('/') {
        executable(std::path::Path::new(program))
    } else {
        std::env::var_os("PATH").is_some_and(|paths| {
            std::env::split_paths(&paths).any(|dir| executable(&dir.join(program)))
        })
    };
    if found {
        Ok(())
    } else {
        usage(format!("cannot run '{program}': no such executable"))
    }
}

/// The table of every metric of the measured runs, the primary one first.
fn summary(args: &ExecArgs, outcome: &ArmOutcome, source_format: Option<&str>) -> String {
    let command = shell_join(&args.command);
    let mut out = format!("kbench exec: label {}, {command}\n", args.label);
    let Some(first) = outcome.measured.first().map(|run| &run.values) else {
        out.push_str("\nno measured run exited 0\n");
        out.push_str(&failure_lines(outcome));
        return out;
    };
    let mut metrics: Vec<&Value> = first.iter().collect();
    metrics.sort_by_key(|v| !v.primary);
    let primary = metrics[0].metric.as_str();
    match source_format {
        Some(format) => out.push_str(&format!(
            "figures read from its {format} output; primary metric {primary}\n\n"
        )),
        None => out.push_str(&format!("primary metric {primary}\n\n")),
    }
    let width = metrics.iter().map(|v| v.metric.len()).max().unwrap_or(6);
    out.push_str(&format!(
        "{:<width$} {:>4} {:>12} {:>12} {:>12} {:>7}  unit\n",
        "metric", "n", "median", "min", "max", "CV%"
    ));
    for metric in metrics {
        let values: Vec<f64> = outcome
            .measured
            .iter()
            .filter_map(|run| run.values.iter().find(|v| v.metric == metric.metric))
            .map(|v| v.value)
            .collect();
        let d = kbench_stats::describe(&values);
        let figure = kbench_report::compare::figure;
        out.push_str(&format!(
            "{:<width$} {:>4} {:>12} {:>12} {:>12} {:>7}  {}\n",
            metric.metric,
            d.n,
            figure(d.median),
            figure(d.min),
            figure(d.max),
            d.cv_pct
                .map(|c| format!("{c:.2}"))
                .unwrap_or_else(|| "-".into()),
            metric.unit
        ));
    }
    out.push_str(&failure_lines(outcome));
    out
}

/// The failed runs and hooks, each on its own line after a blank one.
fn failure_lines(outcome: &ArmOutcome) -> String {
    let mut out = String::new();
    for failure in &outcome.failures {
        out.push_str(&format!(
            "\nrun {} exited with status {}: recorded, not counted in the figures above",
            failure.attempt, failure.exit_status
        ));
    }
    for failure in &outcome.hook_failures {
        let stopped = match failure.kind {
            HookKind::Cleanup => "",
            HookKind::Setup | HookKind::Prepare => "; no run after it",
        };
        out.push_str(&format!(
            "\n{}: recorded as a failed run{stopped}",
            failure.message
        ));
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}
