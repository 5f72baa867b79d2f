//! `kbench ab 'CMD_A' 'CMD_B'`: two commands or two workload specs, interleaved in
//! ABBA blocks within one boot, each side under its own label, then the verdict. A
//! command's own figures (perf bench, perf stat, hackbench, ...) are read from its
//! output; a failing hook stops the A/B (the interleaving would be broken), keeping
//! what was stored.
use crate::args::{resolve_optional_cpus, run_timeout, FigureArgs, HookArgs};
use crate::error::usage;
use crate::session::{self, DbArgs, StoreSink};
use kbench_record::sequential::{DesignedBy, SequentialLook};
use kbench_runner::{
    ArmOutcome, Bounds, CommandExecutor, Executor, FigureReader, HookFailure, HookKind, Looker,
    MeasuredRun, Observer, Order, PrimaryStates, PrimaryUnits, Reached, RunSink, Seen,
    SequentialDriver, StopPolicy, StopRule, UnitLooker, WorkloadExecutor, WorkloadSpec,
};
use kbench_stats::sequential::Boundary;
use kbench_store::{AbSide, StoredRun};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct AbArgs {
    /// Side A: a workload spec (`messaging:-l 10`, `sched pipe -l 1000`) or a shell command.
    pub a: String,
    /// Side B, likewise.
    pub b: String,
    /// Measured runs per side.
    #[arg(long, default_value_t = 10, conflicts_with = "until_decided")]
    pub runs: u32,
    /// Run ABBA blocks until the sequential rule decides (regression, improvement, or
    /// no change larger than --delta), with a look after every block that keeps the
    /// false-claim rate, or until --max-runs or --max-time.
    #[arg(long)]
    pub until_decided: bool,
    /// With --until-decided: measured runs a side at which it stops undecided.
    #[arg(long, value_name = "N", default_value_t = 40, requires = "until_decided", value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub max_runs: u32,
    /// With --until-decided: seconds after which it stops undecided.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 3600.0,
        requires = "until_decided"
    )]
    pub max_time: f64,
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
    #[arg(long, default_value = "text", value_parser = crate::verdict::format_parser(&crate::verdict::VERDICT_FORMATS))]
    pub format: kbench_report::format::Format,
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
    pub identity: crate::args::IdentityArgs,
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

/// One side: a workload spec or a shell command.
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

    /// Its executor: `reader` reads a command's figures and applies `--metric` to a
    /// workload's. A command's runs do not say they were pinned.
    fn executor(
        &self,
        reader: FigureReader,
        cpus: Option<&[u32]>,
        timeout: Duration,
    ) -> Box<dyn Executor> {
        match self {
            Side::Workload(spec) => Box::new(WorkloadExecutor {
                spec: spec.clone(),
                cpus: cpus.map(kbench_sys::format_cpulist),
                timeout,
                metric: Some(reader),
            }),
            Side::Shell(command) => Box::new(CommandExecutor {
                cpus: cpus.map(<[u32]>::to_vec),
                ..CommandExecutor::shell(command, reader, timeout)
            }),
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
    let cpus = resolve_optional_cpus(args.cpus.as_deref())?;
    let timeout = run_timeout(args.run_timeout)?;
    let mut store = args.db.open()?;
    // The two sides alternate runs: one session effect falls on both.
    let group = format!("ab-{}-{}", session::unix_now_ns(), std::process::id());
    let session_of = |label: &str| {
        args.identity.apply(kbench_store::NewSession {
            interleave_group: Some(group.clone()),
            ..session::new_session(label, "ab", None)
        })
    };
    let sessions = [session_of(&label_a)?, session_of(&label_b)?];
    // Its verdict is of this machine's runs, whatever else the labels hold.
    let machines = kbench_store::machine_with_id(sessions[0].environment.as_ref()).map_or(
        kbench_analysis::Machines::Same,
        kbench_analysis::Machines::Only,
    );
    // The rule is checked before a session begins: a bad bound leaves nothing behind.
    let mut said_looks = match args.until_decided {
        true => Some(sequential_rule(&args)?),
        false => None,
    };
    let session_ids = vec![
        session::begin_session(&mut store, &sessions[0])?,
        session::begin_session(&mut store, &sessions[1])?,
    ];
    let labels = [label_a.as_str(), label_b.as_str()];
    // Recorded before the first run, so that a later `compare` of the labels looks
    // with it.
    let design = match &said_looks {
        Some(_) => Some(
            crate::verdict::record_design(
                &mut store,
                (labels[0], labels[1]),
                crate::verdict::sequential_options(
                    &options,
                    args.max_runs as usize,
                    Boundary::DeclaredMaximum,
                    kbench_record::Clock::Wall,
                ),
                DesignedBy::Ab,
                Some(args.max_time),
            )?
            .id,
        ),
        None => None,
    };
    let mut sink = AbSink {
        store: StoreSink::per_arm(&mut store, session_ids.clone()),
        pair: [args.a.clone(), args.b.clone()],
    };
    let result = interleave(
        &args,
        &sides,
        (cpus.as_deref(), timeout),
        labels,
        &mut sink,
        said_looks.as_mut(),
    );
    for id in session_ids {
        store.end_session(id, session::unix_now_ns())?;
    }
    let hook_failed = result?;
    // Both labels read once, for the verdict and the sequential look.
    let load = |label: &str| kbench_analysis::LabelData::load(&store, label);
    let (base, new) = (load(&label_a)?, load(&label_b)?);
    let report = kbench_analysis::compare_loaded(&store, &base, &new, options, &machines)?;
    if args.format == kbench_report::format::Format::Text {
        outln!("A ({label_a}): {}\nB ({label_b}): {}\n", args.a, args.b);
    }
    let mut looked = None;
    if args.until_decided {
        // The decision, from the stored runs: what `compare --sequential` says later.
        let mut sequential = kbench_analysis::sequential::sequential_of(
            &store,
            &base,
            &new,
            crate::verdict::sequential_options(
                &options,
                args.max_runs as usize,
                Boundary::DeclaredMaximum,
                kbench_record::Clock::Wall,
            ),
            // This run's design has no look recorded yet: the runner's looks and this
            // one are recorded together below.
            None,
        )?;
        // The runs have stopped: what is still open (the time bound) is undecided.
        sequential.close_undecided();
        if let (Some(id), Some(driver)) = (design, &said_looks) {
            record_looks(&mut store, id, driver, &sequential)?;
        }
        looked = Some(sequential);
    }
    let layout = if args.full {
        kbench_report::compare::Layout::Full
    } else {
        kbench_report::compare::Layout::Compact
    };
    crate::verdict::print_decided(looked.as_ref(), &report, args.format, layout)?;
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

/// Runs the sides in ABBA blocks after their warm-ups, each run after its side's
/// prepare hook; each side's setup first and cleanup last. Whether a hook failed.
fn interleave(
    args: &AbArgs,
    sides: &[Side; 2],
    (cpus, timeout): (Option<&[u32]>, Duration),
    labels: [&str; 2],
    sink: &mut AbSink<'_>,
    said_looks: Option<&mut AbDriver>,
) -> anyhow::Result<bool> {
    let mut executors = [(0, &args.a), (1, &args.b)].map(|(side, command)| {
        let reader = FigureReader::new(&args.figures.options(), command);
        sides[side].executor(reader, cpus, timeout)
    });
    let mut arms: Vec<&mut dyn Executor> = executors
        .iter_mut()
        .map(|e| e.as_mut() as &mut dyn Executor)
        .collect();
    let mut fixed = StopPolicy::Attempts(args.runs);
    let stop: &mut dyn StopRule = match said_looks {
        Some(said) => said,
        None => &mut fixed,
    };
    let schedule = kbench_runner::Schedule {
        order: Order::Abba,
        warmup: args.warmup,
        hooks: (0..2)
            .map(|side| args.hooks.hooks(args.prepare_of(side), false))
            .collect(),
        stop,
    };
    let mut observer = SideMessages { labels };
    let outcomes = kbench_runner::scheduler::run(schedule, &mut arms, sink, &mut observer)?;
    Ok(outcomes.iter().any(|o| !o.hook_failures.is_empty()))
}

/// The one sequential driver over runs as units: the log of each run's primary value.
fn sequential_rule(args: &AbArgs) -> anyhow::Result<AbDriver> {
    let options = args.verdict.options()?;
    if !(args.max_time > 0.0 && args.max_time.is_finite()) {
        return usage("--max-time takes a positive number of seconds");
    }
    let looker = UnitLooker::new(
        options.alpha,
        options
            .delta_pct
            .unwrap_or(kbench_analysis::DEFAULT_DELTA_PCT),
        args.max_runs as usize,
        Box::new(runs_as_units),
    );
    let bounds = Bounds {
        // The looks stop undecided at --max-runs by themselves.
        max_attempts_per_side: None,
        max_time: Duration::from_secs_f64(args.max_time),
    };
    Ok(SequentialDriver::new(SaidLooks::new(looker), bounds))
}

type AbDriver = SequentialDriver<SaidLooks>;

/// Records the driver's looks during the runs and, as the last, the decision read from
/// the stored runs (the same units, with what was open at the time bound closed).
fn record_looks(
    store: &mut kbench_store::Store,
    design: i64,
    driver: &AbDriver,
    last: &kbench_analysis::sequential::SequentialReport,
) -> anyhow::Result<()> {
    let key_of = |metric: &str| {
        let row = last.rows.iter().find(|r| r.metric == metric);
        row.map_or(("ab", "", "ab"), |r| {
            (r.workload.as_str(), r.params.as_str(), r.variant.as_str())
        })
    };
    let looks: Vec<(u64, &PrimaryStates)> = driver
        .looker()
        .looked_at_unix_ns
        .iter()
        .copied()
        .zip(driver.history())
        .collect();
    let earlier = looks.split_last().map_or(&[][..], |(_, earlier)| earlier);
    let records = earlier
        .iter()
        .enumerate()
        .map(|(i, (at_unix_ns, states))| SequentialLook {
            index: i as u64 + 1,
            at_unix_ns: *at_unix_ns,
            rows: states
                .0
                .iter()
                .map(|state| {
                    let (workload, params, variant) = key_of(&state.metric);
                    kbench_analysis::sequential::look_row(
                        (workload, params, variant, &state.metric),
                        &state.look,
                        kbench_stats::Level::Run,
                    )
                })
                .collect(),
        });
    let closing = kbench_analysis::sequential::look_record(
        last,
        earlier.len() as u64 + 1,
        session::unix_now_ns(),
    );
    for look in records.chain([closing]) {
        store.insert_sequential_look(design, &look)?;
    }
    Ok(())
}

/// Runs as units, each look said on stderr, as vm-ab says its own, and timed for the
/// record.
struct SaidLooks {
    units: UnitLooker,
    looked_at_unix_ns: Vec<u64>,
}

impl SaidLooks {
    fn new(units: UnitLooker) -> SaidLooks {
        SaidLooks {
            units,
            looked_at_unix_ns: Vec::new(),
        }
    }
}

impl Looker<MeasuredRun> for SaidLooks {
    type Look = PrimaryStates;

    fn look(&mut self, arms: &[ArmOutcome]) -> Seen<PrimaryStates> {
        let seen = self.units.look(arms);
        if let Seen::Look(_) = seen {
            self.looked_at_unix_ns.push(session::unix_now_ns());
        }
        seen
    }

    fn say(&self, states: &PrimaryStates, arms: &[ArmOutcome], _reached: Reached) {
        let runs = arms
            .iter()
            .map(|a| a.primary_values().len())
            .min()
            .unwrap_or(0);
        for state in &states.0 {
            errln!(
                "kbench: after {runs} run{} a side: {}",
                if runs == 1 { "" } else { "s" },
                kbench_report::sequential::progress_line(
                    &state.metric,
                    &state.look,
                    self.units.delta_pct
                )
            );
        }
    }
}

/// Each side's measured runs as units of the one primary metric.
fn runs_as_units(arms: &[ArmOutcome]) -> Vec<PrimaryUnits> {
    let first_primary = arms
        .iter()
        .flat_map(|arm| &arm.measured)
        .find_map(|run| run.values.iter().find(|v| v.primary));
    let Some(primary) = first_primary else {
        return Vec::new();
    };
    let logs = |arm: &ArmOutcome| -> Vec<f64> {
        arm.primary_values()
            .into_iter()
            .filter(|v| *v > 0.0 && v.is_finite())
            .map(f64::ln)
            .collect()
    };
    vec![PrimaryUnits {
        metric: primary.metric.clone(),
        higher_is_better: primary.higher_is_better,
        a_log_units: logs(&arms[0]),
        b_log_units: logs(&arms[1]),
        known: None,
    }]
}

/// A failed hook, said with its side.
struct SideMessages<'a> {
    labels: [&'a str; 2],
}

impl Observer for SideMessages<'_> {
    fn hook_failed(&mut self, side: usize, failure: &HookFailure) {
        let name = ["A", "B"][side];
        let stopped = match failure.kind {
            HookKind::Cleanup => "",
            HookKind::Setup | HookKind::Prepare => "; the A/B stopped, its stored runs are kept",
        };
        errln!(
            "kbench: side {name} ({}): {}{stopped}",
            self.labels[side],
            failure.message
        );
    }
}

/// The store, with each run marked as a run of its side.
struct AbSink<'a> {
    store: StoreSink<'a>,
    pair: [String; 2],
}

impl RunSink for AbSink<'_> {
    fn accept(&mut self, side: usize, run: StoredRun) -> anyhow::Result<()> {
        self.store.accept(side, as_ab_run(run, side, &self.pair))
    }
}
