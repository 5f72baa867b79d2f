//! `kbench bisect --tree DIR --good REV --bad REV --build CMD`: the commit that moved a
//! metric, each candidate built and booted under qemu, its boots the units of a decision
//! that holds its error rate at every look. kbench-boot's bisection decides; this
//! parses its options, keeps its boots in the store and prints what it says.
//!
//! State lives in the repository's git directory (`kbench-bisect/NAME`): the worktree
//! git bisects in, each commit's build, the bisection's plan (for `--resume`) and `git
//! bisect log`. Every boot is a session labelled `NAME@COMMIT`, so a resumed bisection
//! replays its decisions from the boots already stored and boots nothing twice, and
//! `compare` reads any two commits' boots.
use crate::boots::BootStore;
use crate::error::usage;
use crate::guest::GuestSuiteArgs;
use crate::session::{self, DbArgs};
use crate::vm::QemuArgs;
use kbench_analysis::bisect::{MetricName, StepOutcome};
use kbench_boot::bisect::lookers::StepState;
use kbench_boot::bisect::plan::{self, BisectPlan};
use kbench_boot::bisect::{BisectEvents, BisectOutcome, Bisection};
use kbench_boot::tree;
use kbench_report::bisect::{describe_look, describe_outcome, describe_step, short};
use kbench_stats::sequential::Look;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct BisectArgs {
    /// The kernel tree: a git repository. Its checkout is never touched: the bisection
    /// works in a worktree of its own.
    #[arg(long, value_name = "DIR")]
    pub tree: PathBuf,
    /// A commit without the change.
    #[arg(long, value_name = "REV", required_unless_present_any = ["resume", "status"])]
    pub good: Option<String>,
    /// A later commit with it.
    #[arg(long, value_name = "REV", required_unless_present_any = ["resume", "status"])]
    pub bad: Option<String>,
    /// How a commit is built: `sh -c CMD` in the bisection's worktree with KBENCH_REV
    /// (the commit) and KBENCH_OUT (an empty directory) set. It leaves
    /// $KBENCH_OUT/image (a bzImage, an arm64 Image or a linux-image .deb) and may leave
    /// $KBENCH_OUT/cmdline (words for the kernel's command line). A commit that does
    /// not build is skipped.
    #[arg(long, value_name = "CMD", required_unless_present_any = ["resume", "status"])]
    pub build: Option<String>,
    /// The bisection's name; its boots are labelled NAME@COMMIT (12 hex digits)
    /// [default: bisect-GOOD-BAD, 8 hex digits each].
    #[arg(long)]
    pub name: Option<String>,
    /// The metric to follow: METRIC or WORKLOAD:METRIC, any the suite records, primary
    /// or not; pick one whose boots agree (docs/bisect.md) [default: the primary metric
    /// of the suite that good and bad differ on].
    #[arg(long, value_name = "SPEC")]
    pub metric: Option<String>,
    /// The practical threshold δ, percent: good and bad must differ by more [default:
    /// 5, or 0.5 with --clock instructions, whose boots resolve far less].
    #[arg(long, value_name = "PCT")]
    pub delta: Option<f64>,
    /// The false-claim rate of the whole bisection, split among its steps.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Boots of a candidate after which its step stops undecided (and the commit is
    /// skipped); also the bound of boots a side for good against bad and for the
    /// confirmation.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub max_boots_per_step: u32,
    /// A fresh boot of good and of bad before every Nth step, to see whether the
    /// machine drifted.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub refresh_every: u32,
    /// Continue the bisection of --name (or the tree's only one) after a kill, with
    /// the options it was started with: every boot already stored is used, none
    /// repeated.
    #[arg(long)]
    pub resume: bool,
    /// Where the bisection of --name (or the tree's only one) stands.
    #[arg(long, conflicts_with = "resume")]
    pub status: bool,
    #[command(flatten)]
    pub guest: GuestSuiteArgs,
    #[command(flatten)]
    pub machine: QemuArgs,
    #[command(flatten)]
    pub db: DbArgs,
}

/// δ's default for a bisection of timed boots, percent: a commit's change under TCG's
/// 10-30% boot-to-boot noise must be large to be placed in a few boots.
const TIMED_DEFAULT_DELTA_PCT: f64 = 5.0;

impl BisectArgs {
    /// `--delta`, or the default of the boots' clock: counted boots resolve a tenth
    /// of a timed boot's δ (kbench_analysis::clock).
    fn delta_pct(&self) -> f64 {
        self.delta.unwrap_or(match self.machine.clock {
            kbench_record::Clock::Wall => TIMED_DEFAULT_DELTA_PCT,
            kbench_record::Clock::Instructions => kbench_analysis::clock::COUNTED_DEFAULT_DELTA_PCT,
        })
    }
}

pub fn run(args: BisectArgs) -> anyhow::Result<i32> {
    let delta = args.delta_pct();
    if !(args.alpha > 0.0 && args.alpha < 1.0 && delta >= 0.0 && delta.is_finite()) {
        return usage("--alpha must be in (0, 1) and --delta a percentage of at least 0");
    }
    let states = tree::common_dir(&args.tree)?.join("kbench-bisect");
    if args.status || args.resume {
        let (_, dir) = plan::state_dir(&states, args.name.as_deref(), &args.tree)?;
        let mut saved = BisectPlan::load(&dir)?;
        // The database as given now, if given (a saved one has no password).
        if let Some(db) = &args.db.db {
            saved.db = Some(db.display().to_string());
        }
        saved.machine.command_line = session::command_line();
        return match args.status {
            true => status(&saved, &dir, &args.tree),
            false => bisect(saved, dir, args.tree),
        };
    }
    let plan = new_plan(&args, delta)?;
    let dir = states.join(&plan.name);
    plan.save(&dir)?;
    bisect(plan, dir, args.tree)
}

/// The plan of a new bisection: every option checked before anything is saved.
fn new_plan(args: &BisectArgs, delta_pct: f64) -> anyhow::Result<BisectPlan> {
    let setup = args.machine.setup(&args.guest, &[])?;
    let machine = args.machine.config(setup, "bisect")?;
    let (Some(good_rev), Some(bad_rev), Some(build)) = (&args.good, &args.bad, &args.build) else {
        return usage("--good, --bad and --build are needed to start a bisection");
    };
    let good = tree::commit_of(&args.tree, good_rev)?;
    let bad = tree::commit_of(&args.tree, bad_rev)?;
    if good == bad || !tree::is_ancestor(&args.tree, &good, &bad) {
        return usage(format!(
            "--good {} must be an ancestor of --bad {}",
            short(&good),
            short(&bad)
        ));
    }
    let name = bisection_name(args.name.as_deref(), &good, &bad)?;
    Ok(BisectPlan {
        name,
        good_rev: good_rev.clone(),
        bad_rev: bad_rev.clone(),
        good,
        bad,
        build: build.clone(),
        metric: args.metric.clone(),
        delta_pct,
        alpha: args.alpha,
        max_boots_per_step: args.max_boots_per_step,
        refresh_every: args.refresh_every,
        machine,
        db: args
            .db
            .db
            .as_ref()
            .map(|db| session::masked(&db.display().to_string())),
    })
}

/// The name given, or one made of the good and bad commits.
fn bisection_name(given: Option<&str>, good: &str, bad: &str) -> anyhow::Result<String> {
    let name = match given {
        Some(name) => name.to_string(),
        None => format!("bisect-{}-{}", &good[..8], &bad[..8]),
    };
    // Its labels must be labels.
    session::check_label(&format!("{name}@000000000000"))?;
    if name.contains('@') || name.contains('/') {
        return usage(format!("--name {name}: no @ or / in a bisection's name"));
    }
    Ok(name)
}

/// Runs (or resumes) the bisection of `plan`, and prints how it ended.
fn bisect(plan: BisectPlan, dir: PathBuf, repo: PathBuf) -> anyhow::Result<i32> {
    let db = DbArgs {
        db: plan.db.as_ref().map(PathBuf::from),
    };
    let mut store = db.open()?;
    let mut keeper = BootStore {
        store: &mut store,
        design: None,
    };
    let events = Said {
        delta_pct: plan.delta_pct,
    };
    let mut bisection = Bisection::open(plan, dir, repo, &mut keeper, &events)?;
    match bisection.run()? {
        BisectOutcome::NoChange(looks) if looks.is_empty() => {
            outln!("no change to bisect: good and bad boot no metric both times");
            Ok(0)
        }
        BisectOutcome::NoChange(looks) => {
            let (good, bad) = bisection.range();
            for (name, look) in &looks {
                outln!(
                    "no change to bisect: {name}: good {} against bad {}: {}",
                    short(good),
                    short(bad),
                    describe_look(look, events.delta_pct)
                );
            }
            Ok(0)
        }
        BisectOutcome::Bisected(report) => {
            crate::output::write_stdout(kbench_report::bisect::summary(&report).as_bytes())?;
            let found = matches!(report.end, kbench_analysis::bisect::BisectEnd::Found { .. });
            Ok(i32::from(!found))
        }
    }
}

/// A bisection's progress, a line on stderr each.
struct Said {
    delta_pct: f64,
}

impl BisectEvents for Said {
    fn started(&self, commits: usize, good: &str, bad: &str, worktree: &Path) {
        errln!(
            "kbench: bisecting {commits} commits, {}..{}, in {}",
            short(good),
            short(bad),
            worktree.display()
        );
    }

    fn built(&self, commit: &str) {
        errln!("kbench: built {}", short(commit));
    }

    fn booting(&self, boot: usize, label: &str) {
        errln!("kbench: boot {boot} ({label})");
    }

    fn endpoints_look(&self, pairs: u32, metric: &MetricName, look: &Look) {
        errln!(
            "kbench: good against bad after {pairs} boot pairs: {}",
            kbench_report::sequential::progress_line(&metric.to_string(), look, self.delta_pct)
        );
    }

    fn step_look(&self, number: usize, commit: &str, state: &StepState) {
        let line = match state {
            StepState::Looked(look) => describe_step(look),
            StepState::BootsFailed(n) => describe_outcome(&StepOutcome::BootsFailed(*n)),
        };
        errln!("kbench: step {number}: {}: {line}", short(commit));
    }

    fn step_skipped(&self, number: usize, commit: &str, outcome: &StepOutcome) {
        errln!(
            "kbench: step {number}: {}: {}",
            short(commit),
            describe_outcome(outcome)
        );
    }

    fn confirm_look(&self, pairs: u32, metric: &MetricName, look: &Look) {
        errln!(
            "kbench: confirming against its parent after {pairs} boot pairs: {}",
            kbench_report::sequential::progress_line(&metric.to_string(), look, self.delta_pct)
        );
    }
}

/// `--status`: the range, each commit's boots so far, and git's log.
fn status(plan: &BisectPlan, dir: &Path, repo: &Path) -> anyhow::Result<i32> {
    let name = &plan.name;
    outln!("bisection {name} in {}", dir.display());
    for (which, rev) in [("good", &plan.good_rev), ("bad", &plan.bad_rev)] {
        let subject = tree::commit_of(repo, rev)
            .and_then(|c| tree::subject(repo, &c))
            .unwrap_or_default();
        outln!("  {which}: {rev} {subject}");
    }
    outln!("  build: {}", plan.build);
    let db = DbArgs {
        db: plan.db.as_ref().map(PathBuf::from),
    };
    let store = db.open_existing()?;
    let labels = store.labels()?;
    let prefix = format!("{name}@");
    let confirm = format!("{name}:confirm@");
    for label in labels
        .iter()
        .filter(|l| l.label.starts_with(&prefix) || l.label.starts_with(&confirm))
    {
        let sessions = store.sessions(&label.label)?;
        let ok = sessions.iter().filter(|s| s.runs > 0).count();
        outln!(
            "  {}: {} boots ({} failed)",
            label.label,
            sessions.len(),
            sessions.len() - ok
        );
    }
    match std::fs::read_to_string(dir.join("bisect.log")) {
        Ok(log) => {
            outln!("  git bisect log:");
            for line in log.lines() {
                outln!("    {line}");
            }
        }
        Err(_) => outln!("  no step marked yet"),
    }
    Ok(0)
}
