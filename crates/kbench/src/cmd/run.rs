//! `kbench run`: the main job. Repeated, interleaved, recorded runs under a label.
use crate::args::{IdentityArgs, Precision, SuiteArgs};
use crate::session::{self, DbArgs};
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The label these runs are stored under (a kernel, a patch).
    #[arg(long)]
    pub label: String,
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Repeat until the 95% CI of each median is within ±PCT percent.
    #[arg(long, value_name = "PCT", conflicts_with = "runs")]
    pub precision: Option<f64>,
    /// Time limit for --precision, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    pub max_time: f64,
    /// Count perf_event_open counters (task clock, context switches, migrations, page
    /// faults; instructions and cycles where the PMU has them) in every run of pipe,
    /// seccomp-notify and messaging. Counting slows context switches, so these runs
    /// compare only with runs made with --counters.
    #[arg(long)]
    pub counters: bool,
    #[command(flatten)]
    pub identity: IdentityArgs,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    session::check_label(&args.label)?;
    let precision = args.precision.map(|pct| Precision {
        pct,
        max_time_s: args.max_time,
    });
    let plan = args.suite.plan(args.counters, precision)?;
    let kernel_build = args.suite.kernel_build()?;
    if args.suite.real && kernel_build.is_none() && args.suite.builds != Some(0) {
        errln!(
            "kbench: --real: no {} here, so no kernel build (apt-get install linux-source-6.1 build-essential flex bison bc libelf-dev)",
            kbench_runner::kernel_build::DEBIAN_SOURCE
        );
    }
    let mut store = args.db.open()?;
    let new = args
        .identity
        .apply(session::new_session(&args.label, "run", Some(plan.seed)))?;
    let session_id = session::begin_session(&mut store, &new)?;
    let started = Instant::now();
    let mut sink = session::StoreSink::one(&mut store, session_id);
    let mut outcomes = kbench_runner::run_suite(&plan, &mut sink)?;
    if let Some(build) = &kernel_build {
        errln!(
            "kbench: building {} {} times (tinyconfig, make -j$(nproc) vmlinux)",
            build.tarball.display(),
            build.runs
        );
        let arm = build.run(&mut sink)?;
        outcomes.push(build.outcome(&arm));
    }
    store.end_session(session_id, session::unix_now_ns())?;
    let head = kbench_report::run::RunHead {
        label: &args.label,
        session_id,
        seed: plan.seed,
        cpus: plan.cpus.as_deref(),
        elapsed: started.elapsed(),
        db: &args.db.path(),
    };
    out!("{}", kbench_report::run::summary(&head, &outcomes));
    let any_failed = outcomes.iter().any(|o| !o.failures.is_empty());
    Ok(i32::from(any_failed))
}
