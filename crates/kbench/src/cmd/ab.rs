//! `kbench ab 'CMD_A' 'CMD_B'`: two commands or two workload specs, interleaved in
//! ABBA blocks within one boot, each side under its own label, then the verdict. A
//! command's own figures (perf bench, perf stat, hackbench, ...) are read from its
//! output; a failing hook stops the A/B (the interleaving would be broken), keeping
//! what was stored.
use crate::args::{resolve_optional_cpus, run_timeout, FigureArgs, HookArgs};
use crate::error::usage;
use crate::session::{self, DbArgs, StoreSink};
use kbench_analysis::sequential::options_of_report;
use kbench_record::sequential::DesignedBy;
use kbench_record::Clock::Wall;
use kbench_report::compare::Layout;
use kbench_runner::ab::{self, AbCommand, AbPlan};
use kbench_stats::sequential::Boundary::DeclaredMaximum;

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

pub fn run(args: AbArgs) -> anyhow::Result<i32> {
    if args.runs == 0 {
        return usage("--runs must be at least 1");
    }
    let options = args.verdict.options()?;
    let [label_a, label_b] = ab::side_labels([args.label_a.as_deref(), args.label_b.as_deref()])?;
    let sides = [AbCommand::parse(&args.a)?, AbCommand::parse(&args.b)?];
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
    let machines = ab::verdict_machines(&sessions[0]);
    let seq = options_of_report(&options, args.max_runs as usize, DeclaredMaximum, Wall);
    // The rule is checked before a session begins: a bad bound leaves nothing behind.
    let mut driver = match args.until_decided {
        true => Some(ab::ab_driver(
            &seq,
            args.max_time,
            Box::new(|s, delta| {
                kbench_report::sequential::progress_line(&s.metric, &s.look, delta)
            }),
        )?),
        false => None,
    };
    let session_ids = vec![
        session::begin_session(&mut store, &sessions[0])?,
        session::begin_session(&mut store, &sessions[1])?,
    ];
    let labels = [label_a.as_str(), label_b.as_str()];
    // Recorded before the first run, so that a later `compare` of the labels looks
    // with it.
    let design = (driver.as_ref())
        .map(|_| {
            crate::verdict::record_design(
                &mut store,
                (labels[0], labels[1]),
                seq,
                DesignedBy::Ab,
                Some(args.max_time),
            )
        })
        .transpose()?
        .map(|design| design.id);
    let plan = AbPlan {
        texts: [&args.a, &args.b],
        sides: &sides,
        labels,
        figures: args.figures.options(),
        cpus: cpus.as_deref(),
        timeout,
        warmup: args.warmup,
        runs: args.runs,
        hooks: [&args.prepare_a, &args.prepare_b]
            .map(|own| args.hooks.hooks(own.as_deref(), false)),
    };
    let mut sink = StoreSink::per_arm(&mut store, session_ids.clone());
    let result = ab::interleave(plan, driver.as_mut(), &mut sink);
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
    // The decision, from the stored runs: what `compare --sequential` says later.
    let looked = match (&driver, design) {
        (Some(driver), Some(id)) => Some(ab::decide(&mut store, [&base, &new], seq, driver, id)?),
        _ => None,
    };
    let layout = Layout::full_if(args.full);
    crate::verdict::print_decided(looked.as_ref(), &report, args.format, layout)?;
    // A side that produced nothing is a failed A/B, whatever was printed.
    let failed_side = report.base.runs == 0 || report.new.runs == 0;
    Ok(i32::from(failed_side || hook_failed))
}
