//! `kbench exec --label L -- CMD ARGS...`: a real workload (a kernel build) timed as a
//! whole. A run that exits non-zero is recorded and reported, never averaged in.
use crate::error::usage;
use crate::runner::child::{run_command, stored_command_run, CommandRun};
use crate::session::{self, DbArgs};

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
    /// Let the command's output through (discarded by default).
    #[arg(long)]
    pub show_output: bool,
    /// Pin the command: a cpulist or `class:NAME`.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
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
    let cpus = match &args.cpus {
        Some(spec) => Some(crate::cmd::run::resolve_cpus(spec)?),
        None => None,
    };
    let pinned = cpus.as_deref().map(kbench_sys::format_cpulist);
    let mut store = args.db.open()?;
    let session_id = store
        .begin_session(&session::new_session(&args.label, "exec", None))
        .map_err(session::store_error)?;
    let mut measured: Vec<CommandRun> = Vec::new();
    let mut failures = Vec::new();
    for i in 0..args.warmup + args.runs {
        let warmup = i < args.warmup;
        let run = run_command(&args.command, args.show_output, cpus.as_deref()).or_else(usage)?;
        let index = i;
        store
            .insert_run(
                session_id,
                &stored_command_run(&args.command, &run, index, warmup, pinned.clone()),
            )
            .map_err(session::store_error)?;
        if warmup {
            continue;
        }
        if run.exit_status == 0 {
            measured.push(run);
        } else {
            failures.push((i + 1 - args.warmup, run.exit_status));
        }
    }
    store
        .end_session(session_id, session::unix_now_ns())
        .map_err(session::store_error)?;
    print!("{}", summary(&args, &measured, &failures));
    Ok(i32::from(!failures.is_empty()))
}

/// Reads one figure of a command run.
type Metric = fn(&CommandRun) -> f64;

fn summary(args: &ExecArgs, runs: &[CommandRun], failures: &[(u32, i32)]) -> String {
    let command = crate::runner::child::shell_join(&args.command);
    let mut out = format!("kbench exec: label {}, {command}\n\n", args.label);
    out.push_str(&format!(
        "{:<10} {:>4} {:>12} {:>12} {:>12} {:>7}\n",
        "metric", "n", "median", "min", "max", "CV%"
    ));
    let rows: [(&str, Metric); 4] = [
        ("wall s", |r| r.wall_ns as f64 / 1e9),
        ("user s", |r| r.user_us as f64 / 1e6),
        ("sys s", |r| r.sys_us as f64 / 1e6),
        ("maxrss KiB", |r| r.max_rss_kib as f64),
    ];
    for (name, get) in rows {
        let values: Vec<f64> = runs.iter().map(get).collect();
        let d = kbench_stats::describe(&values);
        let f = |v: Option<f64>| v.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "{:<10} {:>4} {:>12} {:>12} {:>12} {:>7}\n",
            name,
            d.n,
            f(d.median),
            f(d.min),
            f(d.max),
            d.cv_pct
                .map(|c| format!("{c:.2}"))
                .unwrap_or_else(|| "-".into())
        ));
    }
    for (run, status) in failures {
        out.push_str(&format!(
            "\nrun {run} exited with status {status}: recorded, not counted in the figures above"
        ));
    }
    if !failures.is_empty() {
        out.push('\n');
    }
    out
}
