//! `kbench ab 'CMD_A' 'CMD_B'`: two commands or two workload specs, interleaved in
//! ABBA blocks within one boot, each side under its own label, then the verdict. A
//! command's own figures (perf bench, perf stat, hackbench, ...) are read from its
//! output; a failing hook stops the A/B (the interleaving would be broken), keeping
//! what was stored.
use crate::error::usage;
use crate::runner::child::{
    run_command, run_workload, stored_command_failure, stored_command_run, stored_workload_run,
    timed_out_message,
};
use crate::runner::figures::{FigureArgs, FigureReader};
use crate::runner::hooks::{run_hook, HookArgs, HookFailure, HookKind};
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
    pub verdict: crate::verdict::VerdictArgs,
    /// Output format of the verdict.
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json", "csv"])]
    pub format: String,
    /// Every row of the verdict with every diagnostic, not one screen.
    #[arg(long)]
    pub full: bool,
    /// Stop a run (a workload's, or a command's with everything it started) and record
    /// it as failed after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    pub run_timeout: f64,
    /// Pin every run: a cpulist or `class:NAME`.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    #[command(flatten)]
    pub figures: FigureArgs,
    #[command(flatten)]
    pub hooks: HookArgs,
    /// Like --prepare, for side A only.
    #[arg(long, value_name = "CMD", conflicts_with = "prepare")]
    pub prepare_a: Option<String>,
    /// Like --prepare, for side B only.
    #[arg(long, value_name = "CMD", conflicts_with = "prepare")]
    pub prepare_b: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

impl AbArgs {
    /// The prepare hook of side 0 (A) or 1 (B).
    fn prepare_of(&self, side: usize) -> Option<&str> {
        let own = if side == 0 {
            &self.prepare_a
        } else {
            &self.prepare_b
        };
        own.as_deref().or(self.hooks.prepare.as_deref())
    }
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

    /// Runs once; a failed run is stored as failed. `reader` reads a command's figures
    /// and applies `--metric` to a workload's.
    fn run(
        &self,
        index: u32,
        warmup: bool,
        cpus: Option<&[u32]>,
        timeout: Duration,
        reader: &mut FigureReader,
    ) -> anyhow::Result<StoredRun> {
        match self {
            Side::Workload(spec) => {
                let cpulist = cpus.map(kbench_sys::format_cpulist);
                let result = run_workload(spec, cpulist.as_deref(), timeout);
                if let Err(message) = &result {
                    errln!("kbench: {message}");
                }
                let mut stored =
                    stored_workload_run(spec, &result, index, warmup, cpulist.as_deref());
                if result.is_ok() {
                    reader.primary_by_name(&mut stored.values, None)?;
                }
                Ok(stored)
            }
            Side::Shell(command) => {
                let argv = shell_argv(command);
                let run = run_command(&argv, false, cpus, timeout).or_else(usage)?;
                if let Some(after) = run.timed_out_after {
                    errln!("kbench: {}", timed_out_message(command, after));
                }
                let values = reader.values(&run)?;
                Ok(stored_command_run(&argv, &run, index, warmup, None, values))
            }
        }
    }

    /// The stored form of a run a failed hook took the place of.
    fn hook_failure_run(&self, failure: &HookFailure, index: u32) -> StoredRun {
        match self {
            Side::Workload(spec) => {
                stored_workload_run(spec, &Err(failure.message.clone()), index, false, None)
            }
            Side::Shell(command) => {
                stored_command_failure(&shell_argv(command), failure, index, None)
            }
        }
    }
}

fn shell_argv(command: &str) -> Vec<String> {
    vec!["sh".to_string(), "-c".to_string(), command.to_string()]
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
    let sessions = [session_of(&label_a), session_of(&label_b)];
    // Its verdict is of this machine's runs, whatever else the labels hold.
    let machines = kbench_store::machine_of(sessions[0].environment.as_ref()).map_or(
        kbench_analysis::Machines::Same,
        kbench_analysis::Machines::Only,
    );
    let session_ids = [
        session::begin_session(&mut store, &sessions[0])?,
        session::begin_session(&mut store, &sessions[1])?,
    ];
    let labels = [label_a.as_str(), label_b.as_str()];
    let mut ab = Interleaving {
        store: &mut store,
        sides: &sides,
        ids: session_ids,
        labels,
        pair: [args.a.clone(), args.b.clone()],
        index: [0; 2],
        hook_failed: false,
    };
    let result = ab.run_with_hooks(&args, cpus.as_deref());
    let hook_failed = ab.hook_failed;
    for id in session_ids {
        store
            .end_session(id, session::unix_now_ns())
            .map_err(session::store_error)?;
    }
    result?;
    let report = kbench_analysis::compare_labels_on(&store, &label_a, &label_b, options, &machines)
        .map_err(crate::analysis_error)?;
    if args.format == "text" {
        outln!("A ({label_a}): {}\nB ({label_b}): {}\n", args.a, args.b);
    }
    let layout = if args.full {
        kbench_report::compare::Layout::Full
    } else {
        kbench_report::compare::Layout::Compact
    };
    crate::verdict::print_reports(std::slice::from_ref(&report), &args.format, layout)?;
    // A side that produced nothing is a failed A/B, whatever was printed.
    let failed_side = report.base.runs == 0 || report.new.runs == 0;
    Ok(i32::from(failed_side || hook_failed))
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

/// The two sides' runs being stored.
struct Interleaving<'a> {
    store: &'a mut Store,
    sides: &'a [Side; 2],
    ids: [i64; 2],
    labels: [&'a str; 2],
    pair: [String; 2],
    /// The run index the next stored run of each side gets.
    index: [u32; 2],
    hook_failed: bool,
}

impl Interleaving<'_> {
    /// Each side's setup, the runs, then the cleanup of each side whose setup succeeded,
    /// even when a run or hook failed. A failed setup or prepare hook stops the A/B.
    fn run_with_hooks(&mut self, args: &AbArgs, cpus: Option<&[u32]>) -> anyhow::Result<()> {
        let mut set_up = [false; 2];
        for (side, done) in set_up.iter_mut().enumerate() {
            *done = self.hook(HookKind::Setup, args.hooks.setup.as_deref(), side)?;
            if !*done {
                break;
            }
        }
        let runs = if set_up == [true; 2] {
            self.run_blocks(args, cpus)
        } else {
            Ok(())
        };
        for side in (0..2).filter(|&s| set_up[s]) {
            self.hook(HookKind::Cleanup, args.hooks.cleanup.as_deref(), side)?;
        }
        runs
    }

    /// Warm-ups (A then B), then ABBA blocks: A B, B A, A B, ... so that drift and
    /// order effects fall on both sides alike. Every run follows its side's prepare hook.
    fn run_blocks(&mut self, args: &AbArgs, cpus: Option<&[u32]>) -> anyhow::Result<()> {
        let timeout = crate::cmd::run::run_timeout(args.run_timeout)?;
        let mut readers = [&args.a, &args.b].map(|c| FigureReader::new(&args.figures, c));
        let mut order = Vec::new();
        for _ in 0..args.warmup {
            order.extend([(0, true), (1, true)]);
        }
        for block in 0..args.runs {
            let pair = if block % 2 == 0 { [0, 1] } else { [1, 0] };
            order.extend(pair.map(|s| (s, false)));
        }
        for (side, warmup) in order {
            if !self.hook(HookKind::Prepare, args.prepare_of(side), side)? {
                return Ok(());
            }
            let run = self.sides[side].run(
                self.index[side],
                warmup,
                cpus,
                timeout,
                &mut readers[side],
            )?;
            self.store_run(side, run)?;
        }
        Ok(())
    }

    /// Runs a hook of `side`; a failure is stored as a failed run of that side, said in
    /// one line, and gives false.
    fn hook(&mut self, kind: HookKind, command: Option<&str>, side: usize) -> anyhow::Result<bool> {
        let Err(failure) = run_hook(kind, command, false) else {
            return Ok(true);
        };
        let name = ["A", "B"][side];
        let stopped = match kind {
            HookKind::Cleanup => "",
            HookKind::Setup | HookKind::Prepare => "; the A/B stopped, its stored runs are kept",
        };
        errln!(
            "kbench: side {name} ({}): {}{stopped}",
            self.labels[side],
            failure.message
        );
        let run = self.sides[side].hook_failure_run(&failure, self.index[side]);
        self.store_run(side, run)?;
        self.hook_failed = true;
        Ok(false)
    }

    fn store_run(&mut self, side: usize, run: StoredRun) -> anyhow::Result<()> {
        let stored = as_ab_run(run, side, &self.pair);
        self.store
            .insert_run(self.ids[side], &stored)
            .map_err(session::store_error)?;
        self.index[side] += 1;
        Ok(())
    }
}
