//! `kbench calibrate`: an A/A experiment on this machine. N sessions of the suite in
//! this boot (run again after a reboot, it adds a boot), then the noise of every
//! metric at each level, stored for `kbench compare` to use when a side has one
//! session or one boot.
use crate::args::{IdentityArgs, SuiteArgs};
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_analysis::calibration::{self, Calibration, Fingerprint, CALIBRATION_LABEL};
use kbench_report::calibration::{json as calibration_json, resolvable_text, session_line};
use kbench_store::Store;
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// Sessions to run in this boot.
    #[arg(long, default_value_t = 5)]
    pub sessions: u32,
    /// What each session runs, as `kbench run` takes it; with a seed, the first
    /// session's (the next sessions add 1 each).
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Print this machine's calibration: the smallest change it resolves per metric.
    #[arg(long, conflicts_with_all = ["workloads", "quick", "runs"])]
    pub show: bool,
    /// With --show: JSON instead of text.
    #[arg(long, requires = "show")]
    pub json: bool,
    /// Calibrate from the stored sessions of these labels instead of running any: the
    /// boots of an A/A by `vm-ab` (both its labels), counted (`--clock instructions`)
    /// or timed; a later comparison of that guest's boots borrows their noise.
    #[arg(long, value_name = "LABEL", conflicts_with_all = ["show", "workloads", "quick", "runs", "real"])]
    pub from: Vec<String>,
    #[command(flatten)]
    pub identity: IdentityArgs,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: CalibrateArgs) -> anyhow::Result<i32> {
    if args.show {
        return show(&args);
    }
    if !args.from.is_empty() {
        return from_stored(&args);
    }
    if args.sessions == 0 {
        return usage("--sessions must be at least 1");
    }
    let mut plan = args.suite.plan(false, None)?;
    let seed = plan.seed;
    let mut store = args.db.open()?;
    let mut any_failed = false;
    for i in 0..args.sessions {
        plan.seed = seed.wrapping_add(u64::from(i));
        let new = session::new_session(CALIBRATION_LABEL, "calibrate", Some(plan.seed));
        let id = session::begin_session(&mut store, &args.identity.apply(new)?)?;
        let started = Instant::now();
        let mut sink = session::StoreSink::one(&mut store, id);
        let outcomes = kbench_runner::run_suite(&plan, &mut sink)?;
        store.end_session(id, session::unix_now_ns())?;
        any_failed |= outcomes.iter().any(|o| !o.failures.is_empty());
        let line = session_line(i + 1, args.sessions, &outcomes, started.elapsed());
        errln!("{line}");
    }
    let computed = kbench_analysis::LabelData::load(&store, CALIBRATION_LABEL)
        .and_then(|data| calibration::compute(&data, seed))?;
    store.insert_calibration(&computed)?;
    let Some(cal) = this_machines(&store, &args.identity)? else {
        return usage("the calibration just made does not match this machine");
    };
    out!("{}", resolvable_text(&cal));
    Ok(i32::from(any_failed))
}

/// `--from LABEL...`: the calibration of the machine the labels' sessions ran on (a
/// counted guest's, from the boots of an A/A), from what is stored.
fn from_stored(args: &CalibrateArgs) -> anyhow::Result<i32> {
    let mut store = args.db.open_existing()?;
    let seed = args.suite.seed.unwrap_or(0);
    let (computed, machine) = calibration::from_labels(&store, &args.from, seed)?;
    store.insert_calibration(&computed)?;
    let Some(cal) = calibration::matching(&store, &machine)? else {
        return usage("the calibration just made matches none of its sessions' machines");
    };
    out!("{}", resolvable_text(&cal));
    Ok(0)
}

/// The newest calibration of the machine kbench runs on.
fn this_machines(store: &Store, identity: &IdentityArgs) -> anyhow::Result<Option<Calibration>> {
    let machine = Fingerprint::of(&identity.snapshot()?, env!("CARGO_PKG_VERSION"));
    Ok(calibration::matching(store, &machine)?)
}

fn show(args: &CalibrateArgs) -> anyhow::Result<i32> {
    let store = args.db.open_existing()?;
    let Some(cal) = this_machines(&store, &args.identity)? else {
        return usage(format!(
            "no calibration of this machine in {}: run kbench calibrate",
            store.path().display()
        ));
    };
    match args.json {
        true => outln!("{}", serde_json::to_string_pretty(&calibration_json(&cal))?),
        false => out!("{}", resolvable_text(&cal)),
    }
    Ok(0)
}
