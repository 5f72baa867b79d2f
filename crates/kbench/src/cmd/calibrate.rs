//! `kbench calibrate`: an A/A experiment on this machine. N sessions of the suite in
//! this boot (run again after a reboot, it adds a boot), then the noise of every
//! metric at each level, stored for `kbench compare` to use when a side has one
//! session or one boot.
use crate::args::{IdentityArgs, SuiteArgs};
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_analysis::calibration::{self, Calibration, Fingerprint, CALIBRATION_LABEL};
use kbench_report::compare::civil_date;
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
        let new = args.identity.apply(session::new_session(
            CALIBRATION_LABEL,
            "calibrate",
            Some(plan.seed),
        ))?;
        let id = session::begin_session(&mut store, &new)?;
        let started = Instant::now();
        let mut sink = session::StoreSink::one(&mut store, id);
        let outcomes = kbench_runner::run_suite(&plan, &mut sink)?;
        store.end_session(id, session::unix_now_ns())?;
        let runs: usize = outcomes.iter().map(|o| o.values.len()).sum();
        any_failed |= outcomes.iter().any(|o| !o.failures.is_empty());
        errln!(
            "kbench calibrate: session {}/{}: {runs} runs in {:.1} s",
            i + 1,
            args.sessions,
            started.elapsed().as_secs_f64()
        );
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
    let mut labels = Vec::new();
    for label in &args.from {
        let data = kbench_analysis::LabelData::load(&store, label)?;
        if data.sessions.is_empty() {
            return usage(format!("no label '{label}' (kbench list shows the labels)"));
        }
        labels.push(data);
    }
    let data = kbench_analysis::LabelData::joined(labels);
    // Counted and timed sessions are never pooled, here either.
    kbench_analysis::clock::label_clock(&args.from.join(", "), &data.sessions)?;
    let computed = calibration::compute(&data, args.suite.seed.unwrap_or(0))?;
    if computed.sessions < 2 {
        return usage(format!(
            "{}: {} session with measured runs; a calibration needs two or more",
            args.from.join(", "),
            computed.sessions
        ));
    }
    store.insert_calibration(&computed)?;
    let machine = calibration::fingerprint_of(&data.sessions);
    let cal = match machine {
        Some(machine) => calibration::matching(&store, &machine)?,
        None => None,
    };
    let Some(cal) = cal else {
        return usage("the calibration just made matches none of its sessions' machines");
    };
    out!("{}", resolvable_text(&cal));
    Ok(0)
}

/// The newest calibration of the machine kbench runs on.
fn this_machines(
    store: &kbench_store::Store,
    identity: &IdentityArgs,
) -> anyhow::Result<Option<Calibration>> {
    let snapshot = identity.snapshot()?;
    let machine = Fingerprint::of(&snapshot, env!("CARGO_PKG_VERSION"));
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
    if args.json {
        let lines = calibration::resolvable(&cal, kbench_analysis::ALPHA);
        let value = serde_json::json!({
            "calibration_id": cal.row.id,
            "created_unix_ns": cal.row.created_unix_ns,
            "sessions": cal.row.sessions,
            "boots": cal.row.boots,
            "fingerprint": cal.fingerprint,
            "metrics": lines,
        });
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        out!("{}", resolvable_text(&cal));
    }
    Ok(0)
}

fn pct(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v >= 1000.0 => ">999%".into(),
        Some(v) => format!("{v:.2}%"),
    }
}

/// The resolvable changes, one line per metric, in at most 80 columns.
fn resolvable_text(cal: &Calibration) -> String {
    let lines = calibration::resolvable(cal, kbench_analysis::ALPHA);
    let level = lines.first().map_or("session", |l| l.level.as_str());
    let mut out = kbench_report::compare::wrap(&format!(
        "kbench calibrate: calibration {} of this machine, {} ({} session{} in {} boot{}, kernel {})",
        cal.row.id,
        civil_date(cal.row.created_unix_ns),
        cal.row.sessions,
        if cal.row.sessions == 1 { "" } else { "s" },
        cal.row.boots,
        if cal.row.boots == 1 { "" } else { "s" },
        cal.fingerprint.kernel_text(),
    ), "  ");
    out.push_str(&format!(
        "the smallest change resolved (95% half-width) with 1, 3 and 10 {level}s a side;\nwithin = run-to-run CV, between = {level}-to-{level} CV beyond it\n\n"
    ));
    out.push_str(&format!(
        "{:<34} {:>7} {:>7} {:>8} {:>8} {:>8}\n",
        "metric", "within", "between", "1", "3", "10"
    ));
    let mut last_key = String::new();
    for l in &lines {
        let key = format!("{} {} [{}]", l.workload, l.params, l.variant);
        if key != last_key {
            out.push_str(&kbench_report::compare::wrap(&key, "  "));
            last_key = key;
        }
        let metric = match l.pooled_quantile {
            Some(q) => format!("{} {} pooled", l.metric, calibration::quantile_name(q)),
            None => l.metric.clone(),
        };
        let between = if l.level == kbench_stats::Level::Boot {
            l.between_boot_cv_pct
        } else {
            l.between_session_cv_pct
        };
        let mut name = format!("  {metric}");
        if name.chars().count() > 34 {
            name = name.chars().take(33).collect::<String>() + "~";
        }
        out.push_str(&format!(
            "{:<34} {:>7} {:>7} {:>8} {:>8} {:>8}\n",
            name,
            pct(l.within_cv_pct),
            pct(between),
            pct(l.resolvable_pct[0]),
            pct(l.resolvable_pct[1]),
            pct(l.resolvable_pct[2]),
        ));
    }
    if cal.row.boots < 2 {
        out.push_str(
            "\none boot: boot-to-boot noise is not calibrated; run kbench calibrate again\nafter a reboot to add a boot\n",
        );
    }
    out
}
