//! `kbench exec --label L -- CMD ARGS...`: a real workload (a kernel build) timed as a
//! whole, with the figures it prints itself (perf bench, perf stat, hackbench, ...) read
//! as metrics of each run. A run that exits non-zero is recorded and reported, never
//! averaged in; a hook that fails is recorded and stops the runs.
use crate::error::usage;
use crate::runner::child::{
    run_command, shell_join, stored_command_failure, stored_command_run, timed_out_message,
};
use crate::runner::figures::{FigureArgs, FigureReader};
use crate::runner::hooks::{run_hook, HookArgs, HookFailure, HookKind};
use crate::session::{self, DbArgs};
use kbench_store::{Store, Value};

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
    pub db: DbArgs,
    /// The command and its arguments (no shell), after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Where this session's runs go.
struct Target<'a> {
    store: &'a mut Store,
    session_id: i64,
    pinned: Option<String>,
}

/// What the session's runs gave.
#[derive(Debug, Default)]
struct Outcome {
    /// The values of each measured run that exited 0.
    measured: Vec<Vec<Value>>,
    /// (measured run number, exit status) of each measured run that did not.
    failures: Vec<(u32, i32)>,
    /// The hooks that failed, each recorded as a failed run.
    hook_failures: Vec<HookFailure>,
    /// The run index the next stored run gets.
    next_index: u32,
    /// The reader that understood the command's output, if one did.
    source_format: Option<&'static str>,
}

pub fn run(args: ExecArgs) -> anyhow::Result<i32> {
    session::check_label(&args.label)?;
    if args.runs == 0 {
        return usage("--runs must be at least 1");
    }
    let cpus = match &args.cpus {
        Some(spec) => Some(crate::cmd::run::resolve_cpus(spec)?),
        None => None,
    };
    let timeout = crate::cmd::run::run_timeout(args.run_timeout)?;
    check_runnable(&args.command[0])?;
    let mut store = args.db.open()?;
    let session_id =
        session::begin_session(&mut store, &session::new_session(&args.label, "exec", None))?;
    let mut target = Target {
        store: &mut store,
        session_id,
        pinned: cpus.as_deref().map(kbench_sys::format_cpulist),
    };
    let mut outcome = Outcome::default();
    let show = args.show_output;
    let result = match run_hook(HookKind::Setup, args.hooks.setup.as_deref(), show) {
        Err(failure) => record_hook_failure(&mut target, &args, &failure, &mut outcome),
        Ok(()) => {
            let runs = run_all(&mut target, &args, cpus.as_deref(), timeout, &mut outcome);
            // Like a `finally`: the cleanup undoes the setup whatever the runs did.
            let cleanup = match run_hook(HookKind::Cleanup, args.hooks.cleanup.as_deref(), show) {
                Err(failure) => record_hook_failure(&mut target, &args, &failure, &mut outcome),
                Ok(()) => Ok(()),
            };
            runs.and(cleanup)
        }
    };
    store
        .end_session(session_id, session::unix_now_ns())
        .map_err(session::store_error)?;
    result?;
    out!("{}", summary(&args, &outcome));
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

/// The warm-ups and measured runs, each after its prepare hook; a failed hook stops them.
fn run_all(
    target: &mut Target,
    args: &ExecArgs,
    cpus: Option<&[u32]>,
    timeout: std::time::Duration,
    outcome: &mut Outcome,
) -> anyhow::Result<()> {
    let mut reader = FigureReader::new(&args.figures, &shell_join(&args.command));
    for i in 0..args.warmup + args.runs {
        let warmup = i < args.warmup;
        let prepare = args.hooks.prepare.as_deref();
        if let Err(failure) = run_hook(HookKind::Prepare, prepare, args.show_output) {
            return record_hook_failure(target, args, &failure, outcome);
        }
        let run = run_command(&args.command, args.show_output, cpus, timeout).or_else(usage)?;
        if let Some(after) = run.timed_out_after {
            errln!(
                "kbench: {}",
                timed_out_message(&shell_join(&args.command), after)
            );
        }
        let values = reader.values(&run)?;
        let stored = stored_command_run(
            &args.command,
            &run,
            i,
            warmup,
            target.pinned.clone(),
            values.clone(),
        );
        target
            .store
            .insert_run(target.session_id, &stored)
            .map_err(session::store_error)?;
        outcome.next_index = i + 1;
        outcome.source_format = reader.source_format.or(outcome.source_format);
        if warmup {
            continue;
        }
        if run.exit_status == 0 {
            outcome.measured.push(values);
        } else {
            outcome
                .failures
                .push((i + 1 - args.warmup, run.exit_status));
        }
    }
    Ok(())
}

/// Stores a failed hook as a failed run and says so.
fn record_hook_failure(
    target: &mut Target,
    args: &ExecArgs,
    failure: &HookFailure,
    outcome: &mut Outcome,
) -> anyhow::Result<()> {
    errln!("kbench: {}", failure.message);
    let stored = stored_command_failure(
        &args.command,
        failure,
        outcome.next_index,
        target.pinned.clone(),
    );
    target
        .store
        .insert_run(target.session_id, &stored)
        .map_err(session::store_error)?;
    outcome.next_index += 1;
    outcome.hook_failures.push(failure.clone());
    Ok(())
}

/// The table of every metric of the measured runs, the primary one first.
fn summary(args: &ExecArgs, outcome: &Outcome) -> String {
    let command = shell_join(&args.command);
    let mut out = format!("kbench exec: label {}, {command}\n", args.label);
    let Some(first) = outcome.measured.first() else {
        out.push_str("\nno measured run exited 0\n");
        out.push_str(&failure_lines(outcome));
        return out;
    };
    let mut metrics: Vec<&Value> = first.iter().collect();
    metrics.sort_by_key(|v| !v.primary);
    let primary = metrics[0].metric.as_str();
    match outcome.source_format {
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
            .filter_map(|run| run.iter().find(|v| v.metric == metric.metric))
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
fn failure_lines(outcome: &Outcome) -> String {
    let mut out = String::new();
    for (run, status) in &outcome.failures {
        out.push_str(&format!(
            "\nrun {run} exited with status {status}: recorded, not counted in the figures above"
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
