//! `kbench bisect --tree DIR --good REV --bad REV --build CMD`: the commit that moved a
//! metric, each candidate built and booted under qemu, its boots the units of a decision
//! that holds its error rate at every look.
//!
//! State lives in the repository's git directory (`kbench-bisect/NAME`): the worktree
//! git bisects in, each commit's build, the words of the command that started it (for
//! `--resume`) and `git bisect log`. Every boot is a session labelled `NAME@COMMIT`, so
//! a resumed bisection replays its decisions from the boots already stored and boots
//! nothing twice, and `compare` reads any two commits' boots.
use crate::error::usage;
use crate::guest::SuiteArgs;
use crate::session::{self, DbArgs};
use crate::vm::{read_kernel, BootSide, Machine, MachineArgs};
use clap::Parser;
use kbench_analysis::bisect::{
    alpha_per_step, boot_units, candidate_look, endpoints_look, endpoints_noise, BootUnits,
    MetricName,
};
use kbench_analysis::LabelData;
use kbench_boot::qemu::QemuSetup;
use kbench_boot::tree::{self, BisectState, Build, BuildCache, Mark, Worktree};
use kbench_stats::bisect::{StepDecision, StepLook};
use kbench_stats::sequential::{Decision, Look};
use kbench_store::Store;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

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
    pub guest: SuiteArgs,
    #[command(flatten)]
    pub machine: MachineArgs,
    #[command(flatten)]
    pub db: DbArgs,
}

/// The words of a saved bisection's command line, parsed again for `--resume`.
#[derive(Debug, clap::Parser)]
#[command(name = "kbench bisect")]
struct Saved {
    #[command(flatten)]
    args: BisectArgs,
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

/// The file, in a bisection's state directory, that keeps its command's words.
const COMMAND_FILE: &str = "command.json";

pub fn run(args: BisectArgs) -> anyhow::Result<i32> {
    let delta = args.delta_pct();
    if !(args.alpha > 0.0 && args.alpha < 1.0 && delta >= 0.0 && delta.is_finite()) {
        return usage("--alpha must be in (0, 1) and --delta a percentage of at least 0");
    }
    let repo = args.tree.clone();
    let states = tree::common_dir(&repo)?.join("kbench-bisect");
    if args.status {
        let (saved, dir) = saved_bisection(&args, &states)?;
        return status(&saved, &dir, &repo);
    }
    let (args, dir) = if args.resume {
        saved_bisection(&args, &states)?
    } else {
        new_bisection(args, &states)?
    };
    let mut bisection = Bisection::open(args, dir, repo)?;
    bisection.run()
}

/// A new bisection's state directory, with the words that started it saved.
fn new_bisection(mut args: BisectArgs, states: &Path) -> anyhow::Result<(BisectArgs, PathBuf)> {
    // A bisection that could not start is not saved.
    args.machine.setup(&args.guest, &[])?;
    let (good, bad) = range(&args)?;
    let name = bisection_name(args.name.as_deref(), &good, &bad)?;
    let dir = states.join(&name);
    if dir.join(COMMAND_FILE).exists() {
        return usage(format!(
            "a bisection named {name} is in {}: --resume continues it, --status shows it, --name starts another",
            dir.display()
        ));
    }
    std::fs::create_dir_all(&dir)?;
    let words: Vec<String> = std::env::args()
        .skip_while(|w| w != "bisect")
        .skip(1)
        .collect();
    std::fs::write(dir.join(COMMAND_FILE), serde_json::to_vec(&words)?)?;
    args.name = Some(name);
    Ok((args, dir))
}

/// Good and bad as commits, good an ancestor of bad.
fn range(args: &BisectArgs) -> anyhow::Result<(String, String)> {
    let (Some(good), Some(bad)) = (&args.good, &args.bad) else {
        return usage("--good and --bad are needed to start a bisection");
    };
    let good = tree::commit_of(&args.tree, good)?;
    let bad = tree::commit_of(&args.tree, bad)?;
    if good == bad || !tree::is_ancestor(&args.tree, &good, &bad) {
        return usage(format!(
            "--good {} must be an ancestor of --bad {}",
            &good[..12],
            &bad[..12]
        ));
    }
    Ok((good, bad))
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

/// The bisection --resume or --status means: --name's, or the tree's only one; its
/// arguments as it was started with them.
fn saved_bisection(args: &BisectArgs, states: &Path) -> anyhow::Result<(BisectArgs, PathBuf)> {
    let names: Vec<String> = std::fs::read_dir(states)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().join(COMMAND_FILE).is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let name = match (&args.name, names.as_slice()) {
        (Some(name), _) => name.clone(),
        (None, [only]) => only.clone(),
        (None, []) => {
            return usage(format!(
                "{}: no bisection to resume or show",
                args.tree.display()
            ))
        }
        (None, many) => {
            return usage(format!(
                "{} bisections in {}: name one with --name ({})",
                many.len(),
                args.tree.display(),
                many.join(", ")
            ))
        }
    };
    let dir = states.join(&name);
    let text = std::fs::read(dir.join(COMMAND_FILE)).or_else(|_| {
        usage(format!(
            "no bisection named {name} in {}",
            args.tree.display()
        ))
    })?;
    let words: Vec<String> = serde_json::from_slice(&text).or_else(|e| {
        usage(format!(
            "{}: not a bisection's saved command ({e})",
            dir.join(COMMAND_FILE).display()
        ))
    })?;
    let mut saved =
        Saved::try_parse_from(std::iter::once("kbench bisect".to_string()).chain(words))
            .or_else(|e| {
                usage(format!(
                    "{}: the saved command does not parse: {}",
                    dir.join(COMMAND_FILE).display(),
                    e.kind()
                ))
            })?
            .args;
    // The tree as given now (it may have moved), and the saved name.
    saved.tree = args.tree.clone();
    saved.name = Some(name);
    if args.db.db.is_some() {
        saved.db = DbArgs {
            db: args.db.db.clone(),
        };
    }
    Ok((saved, dir))
}

/// What a bisection did, for its closing lines.
#[derive(Debug, Default)]
struct Counts {
    built: usize,
    kept_builds: usize,
    failed_builds: usize,
    booted: usize,
    reused_boots: usize,
    failed_boots: usize,
}

/// One step, as the closing lines list it.
struct StepLine {
    commit: String,
    subject: String,
    outcome: StepOutcome,
}

/// What a step came to.
enum StepOutcome {
    /// The build failed, for this reason: skipped.
    BuildFailed(String),
    /// This many boots failed: skipped.
    BootsFailed(usize),
    /// The step rule's last look: placed, like neither, or undecided (skipped).
    Looked(StepLook),
}

impl StepOutcome {
    /// What git is told of the commit.
    fn mark(&self) -> Mark {
        match self {
            StepOutcome::Looked(look) => match look.decision {
                StepDecision::LikeGood => Mark::Good,
                StepDecision::LikeBad => Mark::Bad,
                _ => Mark::Skip,
            },
            StepOutcome::BuildFailed(_) | StepOutcome::BootsFailed(_) => Mark::Skip,
        }
    }

    fn is_neither(&self) -> bool {
        matches!(self, StepOutcome::Looked(l) if l.decision == StepDecision::Neither)
    }

    fn describe(&self) -> String {
        match self {
            StepOutcome::BuildFailed(reason) => format!("skipped: the build failed ({reason})"),
            StepOutcome::BootsFailed(n) => format!("skipped: {n} boots failed"),
            StepOutcome::Looked(look) if look.decision == StepDecision::Undecided => {
                format!("skipped: {}", describe_step(look))
            }
            StepOutcome::Looked(look) => describe_step(look),
        }
    }
}

struct Bisection {
    args: BisectArgs,
    name: String,
    repo: PathBuf,
    dir: PathBuf,
    good: String,
    bad: String,
    build: String,
    worktree: Worktree,
    cache: BuildCache,
    store: Store,
    setup: QemuSetup,
    /// Started at the first boot that is not stored already.
    machine: Option<Machine>,
    work: tempfile::TempDir,
    sides: BTreeMap<String, BootSide>,
    /// Per label: the stored sessions this run has used, in order.
    used: BTreeMap<String, usize>,
    /// The commits whose builds this run has used, each counted once.
    builds_used: BTreeSet<String>,
    counts: Counts,
    started: Instant,
}

impl Bisection {
    fn open(args: BisectArgs, dir: PathBuf, repo: PathBuf) -> anyhow::Result<Bisection> {
        // The suite's and the machine's words are checked before anything is built.
        let setup = args.machine.setup(&args.guest, &[])?;
        args.machine.deadlines()?;
        args.machine.pins()?;
        let (good, bad) = range(&args)?;
        let Some(build) = &args.build else {
            return usage("--build is needed to start a bisection");
        };
        let worktree = Worktree::open_or_add(&repo, &dir.join("worktree"), &bad)?;
        let cache = BuildCache {
            dir: dir.join("builds"),
        };
        std::fs::create_dir_all(&cache.dir)?;
        let store = args.db.open()?;
        let name = bisection_name(args.name.as_deref(), &good, &bad)?;
        Ok(Bisection {
            build: build.clone(),
            name,
            repo,
            dir,
            good,
            bad,
            worktree,
            cache,
            store,
            setup,
            machine: None,
            work: tempfile::tempdir()?,
            sides: BTreeMap::new(),
            used: BTreeMap::new(),
            builds_used: BTreeSet::new(),
            counts: Counts::default(),
            started: Instant::now(),
            args,
        })
    }

    fn label(&self, commit: &str) -> String {
        format!("{}@{}", self.name, &commit[..12])
    }

    fn confirm_label(&self, commit: &str) -> String {
        format!("{}:confirm@{}", self.name, &commit[..12])
    }

    fn run(&mut self) -> anyhow::Result<i32> {
        let commits = tree::commits_between(&self.repo, &self.good, &self.bad)?;
        errln!(
            "kbench: bisecting {} commits, {}..{}, in {}",
            commits,
            &self.good[..12],
            &self.bad[..12],
            self.worktree.path.display()
        );
        for (commit, which) in [(self.good.clone(), "good"), (self.bad.clone(), "bad")] {
            if let Build::Failed { reason } = self.build_of(&commit)? {
                return usage(format!(
                    "{which} ({}) does not build: {reason}; see {}",
                    &commit[..12],
                    self.cache.dir.join(&commit).join("build.log").display()
                ));
            }
        }
        let alpha = alpha_per_step(self.args.alpha, commits);
        let Some((metric, endpoints)) = self.establish(alpha)? else {
            return Ok(0);
        };
        let mut steps: Vec<StepLine> = Vec::new();
        let mut state = self.worktree.bisect_start(&self.good, &self.bad)?;
        let first_bad = loop {
            let commit = match state {
                BisectState::Test(commit) => commit,
                BisectState::Found(commit) => break commit,
                BisectState::OnlySkipped(commits) => {
                    self.save_log();
                    self.print_summary(&metric, &endpoints, &steps, None)?;
                    outln!(
                        "no single commit: only skipped commits are left, and the first bad one is one of {}",
                        commits.iter().map(|c| &c[..12]).collect::<Vec<_>>().join(", ")
                    );
                    return Ok(1);
                }
            };
            if !steps.is_empty() && steps.len().is_multiple_of(self.args.refresh_every as usize) {
                if let Some(drift) = self.refresh_endpoints(&metric)? {
                    self.save_log();
                    self.print_summary(&metric, &endpoints, &steps, None)?;
                    outln!("stopped: {drift}");
                    return Ok(1);
                }
            }
            let subject = tree::subject(&self.repo, &commit).unwrap_or_default();
            let outcome = self.step(&commit, &metric, alpha, steps.len() + 1)?;
            let (mark, neither) = (outcome.mark(), outcome.is_neither());
            steps.push(StepLine {
                commit: commit.clone(),
                subject,
                outcome,
            });
            if neither {
                self.save_log();
                self.print_summary(&metric, &endpoints, &steps, None)?;
                outln!(
                    "the change is not one step: {} is like neither good nor bad",
                    &commit[..12]
                );
                return Ok(1);
            }
            state = self.worktree.mark(mark)?;
            self.save_log();
        };
        let confirmation = self.confirm(&first_bad, &metric, alpha)?;
        self.print_summary(
            &metric,
            &endpoints,
            &steps,
            Some((&first_bad, &confirmation)),
        )?;
        Ok(0)
    }

    /// Good against bad, pairs of boots in ABBA order, until the sequential rule decides
    /// at `alpha` (the bisection's share for this decision, split among the metrics): the
    /// metric they differ on and the look that says so, or `None` (said) when they do not
    /// differ.
    fn establish(&mut self, alpha: f64) -> anyhow::Result<Option<(MetricName, Look)>> {
        let (good, bad) = (self.good.clone(), self.bad.clone());
        let max = self.args.max_boots_per_step as usize;
        for (pair, order) in abba_pairs(max).into_iter().enumerate() {
            for side in order {
                let commit = [&good, &bad][side];
                let label = self.label(commit);
                self.boot(commit, &label)?;
            }
            let (g, b) = (
                self.units_of(&self.label(&good))?,
                self.units_of(&self.label(&bad))?,
            );
            let candidates: Vec<(&MetricName, &BootUnits, &BootUnits)> = g
                .iter()
                .filter(|(name, units)| match self.args.metric.as_deref() {
                    Some(m) => name.matches(m),
                    None => units.primary,
                })
                .filter_map(|(name, units)| Some((name, units, b.get(name)?)))
                .collect();
            if candidates.is_empty() && pair > 0 {
                let known: Vec<String> = g.keys().map(|k| k.to_string()).collect();
                return usage(match &self.args.metric {
                    Some(m) => format!(
                        "--metric {m}: no such metric in both good's and bad's boots ({})",
                        known.join(", ")
                    ),
                    None => {
                        "good's and bad's boots share no primary metric: did they boot?".to_string()
                    }
                });
            }
            let alpha = alpha / candidates.len().max(1) as f64;
            let looks: Vec<(MetricName, Look)> = candidates
                .into_iter()
                .map(|(name, gu, bu)| {
                    let mut look = endpoints_look(gu, bu, alpha, self.args.delta_pct(), max, None);
                    close_at_last_pair(&mut look, pair, max);
                    (name.clone(), look)
                })
                .collect();
            for (name, look) in &looks {
                errln!(
                    "kbench: good against bad after {} boot pairs: {}",
                    pair + 1,
                    kbench_report::sequential::progress_line(
                        &name.to_string(),
                        look,
                        self.args.delta_pct()
                    )
                );
            }
            if let Some((name, look)) = looks.iter().find(|(_, l)| l.decision.claims_change()) {
                return Ok(Some((name.clone(), look.clone())));
            }
            if !looks.is_empty() && looks.iter().all(|(_, l)| l.decision.is_final()) {
                for (name, look) in &looks {
                    outln!(
                        "no change to bisect: {name}: good {} against bad {}: {}",
                        &good[..12],
                        &bad[..12],
                        describe_look(look, self.args.delta_pct())
                    );
                }
                return Ok(None);
            }
        }
        outln!("no change to bisect: good and bad boot no metric both times");
        Ok(None)
    }

    /// One step: boots of `commit` until the step's rule places it. The mark for git,
    /// and what the step came to.
    fn step(
        &mut self,
        commit: &str,
        metric: &MetricName,
        alpha: f64,
        number: usize,
    ) -> anyhow::Result<StepOutcome> {
        let short = &commit[..12];
        let Build::Built { .. } = self.build_of(commit)? else {
            let reason = match self.cache.get(commit) {
                Some(Build::Failed { reason }) => reason,
                _ => "no build".into(),
            };
            let outcome = StepOutcome::BuildFailed(reason);
            errln!("kbench: step {number}: {short}: {}", outcome.describe());
            return Ok(outcome);
        };
        let label = self.label(commit);
        let max = self.args.max_boots_per_step as usize;
        let mut failures = 0;
        loop {
            if !self.boot(commit, &label)? {
                failures += 1;
            }
            let candidate = self.units_of(&label)?.remove(metric);
            let booted = candidate.as_ref().map_or(0, |c| c.units.len());
            // One boot in thirty dies of an emulator fault under TCG; a commit whose
            // boots keep failing is one git must step around.
            if failures >= 3 || (booted == 0 && failures >= 2) {
                let outcome = StepOutcome::BootsFailed(failures);
                errln!("kbench: step {number}: {short}: {}", outcome.describe());
                return Ok(outcome);
            }
            let Some(candidate) = candidate else {
                continue;
            };
            let (good, bad) = self.endpoint_units(metric)?;
            let look = candidate_look(&good, &bad, &candidate, alpha, max);
            errln!("kbench: step {number}: {short}: {}", describe_step(&look));
            if look.decision.is_final() {
                return Ok(StepOutcome::Looked(look));
            }
        }
    }

    /// A fresh boot of good and of bad. When either lands nearer the other's mean than
    /// its own, the machine moved more than half the change: why the bisection stops.
    fn refresh_endpoints(&mut self, metric: &MetricName) -> anyhow::Result<Option<String>> {
        let (before_good, before_bad) = self.endpoint_units(metric)?;
        for commit in [self.good.clone(), self.bad.clone()] {
            let label = self.label(&commit);
            self.boot(&commit, &label)?;
        }
        let (after_good, after_bad) = self.endpoint_units(metric)?;
        let mean = |u: &[f64]| u.iter().sum::<f64>() / u.len().max(1) as f64;
        let (mg, mb) = (mean(&before_good.units), mean(&before_bad.units));
        for (which, before, after, own, other) in [
            ("good", &before_good, &after_good, mg, mb),
            ("bad", &before_bad, &after_bad, mb, mg),
        ] {
            let fresh = &after.units[before.units.len().min(after.units.len())..];
            if let Some(&x) = fresh.last() {
                if (x - own).abs() > (x - other).abs() {
                    return Ok(Some(format!(
                        "the machine drifted: a fresh boot of {which} measured {:+.1}% from its earlier boots, nearer the other end than its own; bisect again on a quieter machine",
                        ((x - own).exp() - 1.0) * 100.0
                    )));
                }
            }
        }
        Ok(None)
    }

    /// The first bad commit against its parent, in fresh boots (ABBA pairs), by the
    /// sequential rule at the step's α.
    fn confirm(
        &mut self,
        first_bad: &str,
        metric: &MetricName,
        alpha: f64,
    ) -> anyhow::Result<Confirmation> {
        let Some(parent) = tree::parent(&self.repo, first_bad) else {
            return Ok(Confirmation::NoParent);
        };
        if let Build::Failed { reason } = self.build_of(&parent)? {
            return Ok(Confirmation::ParentDoesNotBuild(reason));
        }
        let max = self.args.max_boots_per_step as usize;
        let (parent_label, bad_label) =
            (self.confirm_label(&parent), self.confirm_label(first_bad));
        // The endpoints' spread of boots: the machine's, measured independently of
        // these fresh boots, so the interval is bounded after fewer of them.
        let (good, bad) = self.endpoint_units(metric)?;
        let known = endpoints_noise(&good, &bad);
        let first_bad = first_bad.to_string();
        for (pair, order) in abba_pairs(max).into_iter().enumerate() {
            for side in order {
                let (commit, label) = [(&parent, &parent_label), (&first_bad, &bad_label)][side];
                self.boot(commit, label)?;
            }
            let (p, b) = (self.units_of(&parent_label)?, self.units_of(&bad_label)?);
            let (Some(p), Some(b)) = (p.get(metric), b.get(metric)) else {
                continue;
            };
            let mut look = endpoints_look(p, b, alpha, self.args.delta_pct(), max, known);
            close_at_last_pair(&mut look, pair, max);
            errln!(
                "kbench: confirming against its parent after {} boot pairs: {}",
                pair + 1,
                kbench_report::sequential::progress_line(
                    &metric.to_string(),
                    &look,
                    self.args.delta_pct()
                )
            );
            if look.decision.is_final() {
                return Ok(Confirmation::Look { parent, look });
            }
        }
        Ok(Confirmation::NoBoots)
    }

    /// The build of `commit`, made unless kept.
    fn build_of(&mut self, commit: &str) -> anyhow::Result<Build> {
        let (build, built) = self.cache.build(commit, &self.build, &self.worktree)?;
        let first_use = self.builds_used.insert(commit.to_string());
        match (&build, built) {
            (_, false) if first_use => self.counts.kept_builds += 1,
            (_, false) => {}
            (Build::Failed { .. }, true) => self.counts.failed_builds += 1,
            (Build::Built { .. }, true) => {
                self.counts.built += 1;
                errln!("kbench: built {}", &commit[..12]);
            }
        }
        Ok(build)
    }

    /// The next boot of `commit` under `label`: the stored one when this bisection
    /// stored it before (a resume), else a new boot. True when it succeeded.
    fn boot(&mut self, commit: &str, label: &str) -> anyhow::Result<bool> {
        let stored = self.store.sessions(label)?;
        let used = self.used.entry(label.to_string()).or_default();
        let mut ids: Vec<(i64, u64)> = stored.iter().map(|s| (s.id, s.runs)).collect();
        ids.sort_unstable();
        if let Some(&(_, runs)) = ids.get(*used) {
            *used += 1;
            self.counts.reused_boots += 1;
            return Ok(runs > 0);
        }
        *used += 1;
        let Build::Built {
            image,
            cmdline_words,
        } = self.build_of(commit)?
        else {
            return usage(format!("{}: no build to boot", &commit[..12]));
        };
        if !self.sides.contains_key(label) {
            let kernel = read_kernel(&image)?;
            let mut side = BootSide::new(
                kernel,
                label.to_string(),
                &image,
                &cmdline_words,
                self.work.path(),
                &format!("{}-{}", self.sides.len(), &commit[..12]),
            )?;
            side.source.kernel_commit = Some(commit.to_string());
            self.sides.insert(label.to_string(), side);
        }
        let side = &self.sides[label];
        if self.machine.is_none() {
            // A bisection's suite needs no scratch disk, so its guests load no modules.
            self.machine = Some(Machine::start(
                &self.args.machine,
                self.setup.clone(),
                side,
                &[],
                self.work.path(),
                "bisect",
            )?);
        }
        let boot = (self.counts.booted) as u32;
        errln!("kbench: boot {} ({label})", boot + 1);
        let machine = self.machine.as_ref().expect("started above");
        let ok = machine.boot(side, boot, &mut self.store)?;
        self.counts.booted += 1;
        if !ok {
            self.counts.failed_boots += 1;
        }
        Ok(ok)
    }

    /// Each metric's units over the sessions of `label` used so far.
    fn units_of(&self, label: &str) -> anyhow::Result<BTreeMap<MetricName, BootUnits>> {
        let data = LabelData::load(&self.store, label)?;
        Ok(boot_units(
            &data,
            self.used.get(label).copied().unwrap_or(0),
        ))
    }

    fn endpoint_units(&self, metric: &MetricName) -> anyhow::Result<(BootUnits, BootUnits)> {
        let pick = |label: String| -> anyhow::Result<BootUnits> {
            Ok(self.units_of(&label)?.remove(metric).unwrap_or_default())
        };
        Ok((pick(self.label(&self.good))?, pick(self.label(&self.bad))?))
    }

    /// `git bisect log`, kept beside the bisection's state.
    fn save_log(&self) {
        if let Ok(log) = self.worktree.log() {
            let _ = std::fs::write(self.dir.join("bisect.log"), log + "\n");
        }
    }

    fn print_summary(
        &self,
        metric: &MetricName,
        endpoints: &Look,
        steps: &[StepLine],
        found: Option<(&str, &Confirmation)>,
    ) -> anyhow::Result<()> {
        if let Some((commit, confirmation)) = found {
            let subject = tree::subject(&self.repo, commit).unwrap_or_default();
            outln!("first bad commit: {} {subject}", &commit[..12]);
            match confirmation {
                Confirmation::Look { parent, look } => {
                    outln!(
                        "  {metric}: {} against its parent {} in fresh boots",
                        describe_look(look, self.args.delta_pct()),
                        &parent[..12]
                    );
                    if let Some(share) = share_of_change(look, endpoints) {
                        outln!(
                            "  that is {share:.0}% of good against bad's change{}",
                            if share < 50.0 {
                                ": part of it only; the rest is elsewhere in the range"
                            } else {
                                ""
                            }
                        );
                    }
                }
                Confirmation::NoParent => outln!("  (a root commit: no parent to confirm against)"),
                Confirmation::ParentDoesNotBuild(reason) => {
                    outln!("  not confirmed: its parent does not build ({reason})")
                }
                Confirmation::NoBoots => {
                    outln!("  not confirmed: no boot of the pair measured the metric")
                }
            }
        }
        outln!(
            "  good {} against bad {}: {metric}: {}",
            &self.good[..12],
            &self.bad[..12],
            describe_look(endpoints, self.args.delta_pct())
        );
        for (i, step) in steps.iter().enumerate() {
            outln!(
                "  step {}: {} {}: {}",
                i + 1,
                &step.commit[..12],
                step.subject,
                step.outcome.describe()
            );
        }
        let c = &self.counts;
        outln!(
            "  {} steps; builds: {} made, {} kept from before, {} failed; boots: {} made ({} failed), {} stored before; {:.0} s",
            steps.len(),
            c.built,
            c.kept_builds,
            c.failed_builds,
            c.booted,
            c.failed_boots,
            c.reused_boots,
            self.started.elapsed().as_secs_f64()
        );
        outln!(
            "  git bisect log: {}; any two commits: kbench compare {}@COMMIT {}@COMMIT",
            self.dir.join("bisect.log").display(),
            self.name,
            self.name
        );
        Ok(())
    }
}

/// `pairs` pairs of boots of two sides (0 and 1) in ABBA order, as vm-ab boots them.
fn abba_pairs(pairs: usize) -> Vec<[usize; 2]> {
    kbench_boot::qemu::order(u32::try_from(pairs).unwrap_or(u32::MAX))
        .chunks(2)
        .map(|pair| [pair[0].1, pair[1].1])
        .collect()
}

/// No more pairs after the last: a look still open is undecided (failed boots can
/// leave a side short of the bound the rule stops at by itself).
fn close_at_last_pair(look: &mut Look, pair: usize, pairs: usize) {
    if pair + 1 == pairs && !look.decision.is_final() {
        look.decision = Decision::Undecided;
    }
}

/// How the first bad commit compared with its parent.
enum Confirmation {
    Look { parent: String, look: Look },
    NoParent,
    ParentDoesNotBuild(String),
    NoBoots,
}

/// How much of good against bad's change the first bad commit makes, percent (of the
/// log shifts).
fn share_of_change(first_bad: &Look, endpoints: &Look) -> Option<f64> {
    let log = |pct: f64| (1.0 + pct / 100.0).ln();
    let (part, whole) = (log(first_bad.shift_pct?), log(endpoints.shift_pct?));
    (whole != 0.0).then(|| 100.0 * part / whole)
}

/// `+12.3% [+8.1%, +16.0%], regression (5 boots a side)`.
fn describe_look(look: &Look, delta_pct: f64) -> String {
    let shift = look.shift_pct.map_or("?".into(), |s| format!("{s:+.1}%"));
    let interval = look
        .interval_pct
        .map_or("interval not bounded".into(), |(lo, hi)| {
            format!("[{lo:+.1}%, {hi:+.1}%]")
        });
    let decision = match &look.decision {
        Decision::Regression => "regression".to_string(),
        Decision::Improvement => "improvement".to_string(),
        Decision::Changed => format!("changed, by less than δ = {delta_pct}% perhaps"),
        Decision::Equivalent => format!("no change larger than δ = {delta_pct}%"),
        Decision::Undecided => "undecided at the bound".to_string(),
        Decision::Continue { .. } => "open".to_string(),
    };
    format!(
        "{shift} {interval}, {decision} ({} and {} boots)",
        look.n_a, look.n_b
    )
}

/// `like bad after 4 boots: +201.0% from good [+150.2%, +260.0%], -2.1% from bad [...]`.
fn describe_step(look: &StepLook) -> String {
    let decision = match look.decision {
        StepDecision::LikeGood => "like good",
        StepDecision::LikeBad => "like bad",
        StepDecision::Neither => "like neither good nor bad",
        StepDecision::Continue => "open",
        StepDecision::Undecided => "undecided at the bound",
    };
    let part = |shift: Option<f64>, iv: Option<(f64, f64)>, from: &str| {
        let shift = shift.map_or("?".into(), |s| format!("{s:+.1}%"));
        let iv = iv.map_or("not bounded".into(), |(lo, hi)| {
            format!("[{lo:+.1}%, {hi:+.1}%]")
        });
        format!("{shift} from {from} {iv}")
    };
    format!(
        "{decision} after {} boots: {}, {}",
        look.boots,
        part(look.from_good_pct, look.from_good_interval_pct, "good"),
        part(look.from_bad_pct, look.from_bad_interval_pct, "bad")
    )
}

/// `--status`: the range, each commit's boots so far, and git's log.
fn status(args: &BisectArgs, dir: &Path, repo: &Path) -> anyhow::Result<i32> {
    let name = args.name.clone().unwrap_or_default();
    outln!("bisection {name} in {}", dir.display());
    for (which, rev) in [("good", &args.good), ("bad", &args.bad)] {
        let rev = rev.as_deref().unwrap_or("?");
        let subject = tree::commit_of(repo, rev)
            .and_then(|c| tree::subject(repo, &c))
            .unwrap_or_default();
        outln!("  {which}: {rev} {subject}");
    }
    outln!("  build: {}", args.build.as_deref().unwrap_or("?"));
    let store = args.db.open_existing()?;
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
