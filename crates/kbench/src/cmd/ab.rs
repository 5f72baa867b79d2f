//! `kbench ab 'CMD_A' 'CMD_B'`: two commands or two workload specs, interleaved in
//! ABBA blocks within one boot, each side under its own label, then the verdict.
use crate::error::usage;
use crate::runner::child::{run_command, run_workload, stored_command_run, stored_workload_run};
use crate::runner::spec::WorkloadSpec;
use crate::session::{self, DbArgs};
use kbench_store::{AbSide, Store, StoredRun};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct AbArgs {
    /// Side A: a workload spec (`messaging:-l 10`, `sched pipe -l 1000`) or a shell command.
    pub a: String,
    /// Side B, likewise.
    pub b: String,
    /// Measured runs per side.
    #[arg(long, default_value_t = 10)]
    pub runs: u32,
    /// Warm-up runs per side, recorded and excluded.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Label of side A [default: ab-<time>-a].
    #[arg(long)]
    pub label_a: Option<String>,
    /// Label of side B [default: ab-<time>-b].
    #[arg(long)]
    pub label_b: Option<String>,
    #[command(flatten)]
    pub verdict: crate::cmd::compare::VerdictArgs,
    /// Output format of the verdict.
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json", "csv"])]
    pub format: String,
    /// Every row of the verdict with every diagnostic, not one screen.
    #[arg(long)]
    pub full: bool,
    /// Stop a workload run (and record it as failed) after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    pub run_timeout: f64,
    /// Pin every run: a cpulist or `class:NAME`.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// One side: what it runs and where it is stored.
enum Side {
    Workload(WorkloadSpec),
    Shell(String),
}

impl Side {
    fn parse(text: &str) -> anyhow::Result<Side> {
        if text.trim().is_empty() {
            return usage("an empty command");
        }
        if WorkloadSpec::looks_like_spec(text) {
            return WorkloadSpec::parse(text).map(Side::Workload).or_else(usage);
        }
        Ok(Side::Shell(text.to_string()))
    }

    /// Runs once; a failed run is stored as failed.
    fn run(
        &self,
        index: u32,
        warmup: bool,
        cpus: Option<&[u32]>,
        timeout: Duration,
    ) -> anyhow::Result<StoredRun> {
        match self {
            Side::Workload(spec) => {
                let cpulist = cpus.map(kbench_sys::format_cpulist);
                let result = run_workload(spec, cpulist.as_deref(), timeout);
                if let Err(message) = &result {
                    eprintln!("kbench: {message}");
                }
                Ok(stored_workload_run(
                    spec,
                    &result,
                    index,
                    warmup,
                    cpulist.as_deref(),
                ))
            }
            Side::Shell(command) => {
                let argv = vec!["sh".to_string(), "-c".to_string(), command.clone()];
                let run = run_command(&argv, false, cpus).or_else(usage)?;
                Ok(stored_command_run(&argv, &run, index, warmup, None))
            }
        }
    }
}

pub fn run(args: AbArgs) -> anyhow::Result<i32> {
    if args.runs == 0 {
        return usage("--runs must be at least 1");
    }
    let options = args.verdict.options()?;
    let stamp = session::unix_now_ns() / 1_000_000_000;
    let label_a = args
        .label_a
        .clone()
        .unwrap_or_else(|| format!("ab-{stamp}-a"));
    let label_b = args
        .label_b
        .clone()
        .unwrap_or_else(|| format!("ab-{stamp}-b"));
    session::check_label(&label_a)?;
    session::check_label(&label_b)?;
    if label_a == label_b {
        return usage("the two sides need different labels");
    }
    let sides = [Side::parse(&args.a)?, Side::parse(&args.b)?];
    let cpus = match &args.cpus {
        Some(spec) => Some(crate::cmd::run::resolve_cpus(spec)?),
        None => None,
    };
    let mut store = args.db.open()?;
    // The two sides alternate runs: one session effect falls on both.
    let group = format!("ab-{}-{}", session::unix_now_ns(), std::process::id());
    let session_of = |label: &str| kbench_store::NewSession {
        interleave_group: Some(group.clone()),
        ..session::new_session(label, "ab", None)
    };
    let session_ids = [
        store
            .begin_session(&session_of(&label_a))
            .map_err(session::store_error)?,
        store
            .begin_session(&session_of(&label_b))
            .map_err(session::store_error)?,
    ];
    run_blocks(&mut store, &sides, session_ids, &args, cpus.as_deref())?;
    for id in session_ids {
        store
            .end_session(id, session::unix_now_ns())
            .map_err(session::store_error)?;
    }
    let report = kbench_analysis::compare_labels(&store, &label_a, &label_b, options)
        .map_err(crate::analysis_error)?;
    if args.format == "text" {
        println!("A ({label_a}): {}\nB ({label_b}): {}\n", args.a, args.b);
    }
    let layout = if args.full {
        kbench_report::compare::Layout::Full
    } else {
        kbench_report::compare::Layout::Compact
    };
    crate::cmd::compare::print_reports(std::slice::from_ref(&report), &args.format, layout)?;
    // A side that produced nothing is a failed A/B, whatever was printed.
    let failed_side = report.base.runs == 0 || report.new.runs == 0;
    Ok(i32::from(failed_side))
}

/// The two sides differ on purpose (other parameters, another command), so their
/// runs share one comparison key; what each side really ran is kept in `ab_side`, and
/// the record stays the workload's own.
fn as_ab_run(mut run: StoredRun, side: usize, pair: &[String; 2]) -> StoredRun {
    run.ab_side = Some(AbSide {
        side: if side == 0 { "a" } else { "b" }.into(),
        workload: std::mem::take(&mut run.workload),
        params: std::mem::take(&mut run.params),
        variant: std::mem::take(&mut run.variant),
    });
    run.variant = "ab".into();
    run.workload = "ab".into();
    // Both sides carry the pair of specs, so an earlier `ab` under the same labels
    // with other commands is never pooled with this one.
    run.params = [
        ("a".to_string(), serde_json::Value::from(pair[0].as_str())),
        ("b".to_string(), serde_json::Value::from(pair[1].as_str())),
    ]
    .into();
    run
}

/// Warm-ups (A then B), then ABBA blocks: A B, B A, A B, ... so that drift and
/// order effects fall on both sides alike.
fn run_blocks(
    store: &mut Store,
    sides: &[Side; 2],
    ids: [i64; 2],
    args: &AbArgs,
    cpus: Option<&[u32]>,
) -> anyhow::Result<()> {
    let timeout = crate::cmd::run::run_timeout(args.run_timeout)?;
    let pair = [args.a.clone(), args.b.clone()];
    let mut index = [0u32; 2];
    let mut order = Vec::new();
    for _ in 0..args.warmup {
        order.extend([(0, true), (1, true)]);
    }
    for block in 0..args.runs {
        let pair = if block % 2 == 0 { [0, 1] } else { [1, 0] };
        order.extend(pair.map(|s| (s, false)));
    }
    for (side, warmup) in order {
        let stored = as_ab_run(
            sides[side].run(index[side], warmup, cpus, timeout)?,
            side,
            &pair,
        );
        store
            .insert_run(ids[side], &stored)
            .map_err(session::store_error)?;
        index[side] += 1;
    }
    Ok(())
}
