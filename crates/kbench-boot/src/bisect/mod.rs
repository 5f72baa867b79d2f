//! A bisection to the commit that moved a metric: git bisects in a worktree of its
//! own, each candidate is built (the user's command, kept in a cache) and booted
//! under qemu, its boots the units of a decision that holds its error rate at every
//! look. Every boot goes through the runner's scheduler, and every decision between
//! boots is its one sequential driver's (a fresh boot of each end, every few steps, is
//! one fixed pair); this module owns the state machine between them: good against
//! bad, the steps, the fresh look at the ends, and the confirmation of the first bad
//! commit against its parent.
//!
//! Every boot is a session labelled `NAME@COMMIT`, kept by the caller's
//! [`BootKeeper`], so a resumed bisection replays its decisions from the boots kept
//! already (in the order they were made) and boots nothing twice.
pub mod lookers;
pub mod plan;

use crate::machine::{read_kernel, Boot, BootSide, MachineError, QemuMachine};
use crate::tree::{self, BisectState, Build, BuildCache, Mark, TreeError, Worktree};
use kbench_analysis::bisect::{
    alpha_per_step, endpoints_noise, BisectCounts, BisectEnd, BisectReport, BootUnits,
    Confirmation, MetricName, StepLine, StepOutcome,
};
use kbench_record::stored::SessionWithRuns;
use kbench_runner::{
    scheduler::{self, NoProgress},
    ArmOutcome, Bounds, Executor, HookFailure, Order, RunSink, RunnerError, Schedule,
    SequentialDriver, StopPolicy, StopRule,
};
use kbench_stats::bisect::StepDecision;
use kbench_stats::sequential::Look;
use lookers::{ConfirmLooker, EndpointsLooker, MetricLooks, StepLooker, StepState};
pub use plan::BisectPlan;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Why a bisection could not go on.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// The user's to mend: a range that is no range, a metric no boot has.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Tree(#[from] TreeError),
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error(transparent)]
    Runner(#[from] RunnerError),
    /// Where the boots are kept failed: its error as it gave it.
    #[error(transparent)]
    Keeper(anyhow::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

impl BisectError {
    /// Whether the user can mend it (exit status 2).
    pub fn is_usage(&self) -> bool {
        match self {
            BisectError::Usage(_) => true,
            BisectError::Tree(e) => e.is_usage(),
            BisectError::Machine(e) => e.is_usage(),
            BisectError::Runner(e) => matches!(e, RunnerError::Usage(_)),
            BisectError::Keeper(_) | BisectError::Io(_) | BisectError::Json(_) => false,
        }
    }

    /// The error of the store or the executor this one carries, which says itself
    /// whose it is.
    pub fn wrapped(&self) -> Option<&anyhow::Error> {
        match self {
            BisectError::Keeper(e)
            | BisectError::Runner(RunnerError::Sink(e) | RunnerError::Executor(e)) => Some(e),
            _ => None,
        }
    }
}

/// Where a bisection's boots are kept (the store): each boot as it is made, and the
/// boots kept before, for a resume to replay.
pub trait BootKeeper: RunSink<Boot> {
    /// The sessions kept under `label`, oldest first.
    fn kept_sessions(&mut self, label: &str) -> anyhow::Result<Vec<SessionWithRuns>>;
}

/// What a bisection says as it goes (the binary prints it).
pub trait BisectEvents {
    fn started(&self, _commits: usize, _good: &str, _bad: &str, _worktree: &Path) {}
    fn built(&self, _commit: &str) {}
    fn booting(&self, _boot: usize, _label: &str) {}
    fn endpoints_look(&self, _pairs: u32, _metric: &MetricName, _look: &Look) {}
    fn step_look(&self, _number: usize, _commit: &str, _state: &StepState) {}
    fn step_skipped(&self, _number: usize, _commit: &str, _outcome: &StepOutcome) {}
    fn confirm_look(&self, _pairs: u32, _metric: &MetricName, _look: &Look) {}
}

/// How a bisection ended.
#[derive(Debug, Clone, PartialEq)]
pub enum BisectOutcome {
    /// Good and bad do not differ: each metric's look (none when no metric was
    /// measured by both).
    NoChange(Vec<(MetricName, Look)>),
    /// Good and bad differ: what the bisection found.
    Bisected(Box<BisectReport>),
}

/// Boots commits on one qemu machine, started at the first boot that is not kept
/// already; each commit's side made once.
struct Booter<'a> {
    config: crate::machine::MachineConfig,
    work: PathBuf,
    machine: OnceCell<QemuMachine>,
    sides: RefCell<BTreeMap<String, Rc<BootSide>>>,
    booted: Cell<usize>,
    reused: Cell<usize>,
    failed: Cell<usize>,
    events: &'a dyn BisectEvents,
}

impl Booter<'_> {
    fn side(&self, label: &str, commit: &str, build: &Build) -> Result<Rc<BootSide>, MachineError> {
        if let Some(side) = self.sides.borrow().get(label) {
            return Ok(side.clone());
        }
        let Build::Built {
            image,
            cmdline_words,
        } = build
        else {
            return Err(MachineError::Usage(format!(
                "{}: no build to boot",
                &commit[..12]
            )));
        };
        let kernel = read_kernel(image)?;
        let name = format!("{}-{}", self.sides.borrow().len(), &commit[..12]);
        let mut side = BootSide::new(
            kernel,
            label.to_string(),
            image,
            cmdline_words,
            &self.work,
            &name,
        )?;
        side.source.kernel_commit = Some(commit.to_string());
        let side = Rc::new(side);
        self.sides
            .borrow_mut()
            .insert(label.to_string(), side.clone());
        Ok(side)
    }

    fn machine(&self, probe: &BootSide) -> Result<&QemuMachine, MachineError> {
        if self.machine.get().is_none() {
            // A bisection's suite needs no scratch disk, so its guests load no modules.
            let started = QemuMachine::start(self.config.clone(), probe, &[], &self.work)?;
            let _ = self.machine.set(started);
        }
        Ok(self.machine.get().expect("set above"))
    }
}

/// One commit under one label: the boots kept before first, in order, then new ones.
struct CommitBoots<'b, 'a> {
    booter: &'b Booter<'a>,
    label: String,
    commit: String,
    build: Build,
    kept: VecDeque<SessionWithRuns>,
}

impl Executor<Boot> for CommitBoots<'_, '_> {
    fn run(&mut self, _index: u32, _warmup: bool) -> Result<Boot, RunnerError> {
        if let Some(whole) = self.kept.pop_front() {
            self.booter.reused.set(self.booter.reused.get() + 1);
            return Ok(Boot::stored(whole));
        }
        let side = self.booter.side(&self.label, &self.commit, &self.build)?;
        let machine = self.booter.machine(&side)?;
        let number = self.booter.booted.get() + 1;
        self.booter.events.booting(number, &self.label);
        let boot = machine.boot(&side)?;
        self.booter.booted.set(number);
        if boot.judged.failure.is_some() {
            self.booter.failed.set(self.booter.failed.get() + 1);
        }
        Ok(boot)
    }

    fn hook_failure_run(&self, failure: &HookFailure, _index: u32) -> Boot {
        unreachable!("a bisection's boots have no hooks: {}", failure.message)
    }
}

/// A bisection, opened: its plan, worktree, build cache and the boots used so far.
pub struct Bisection<'a> {
    plan: BisectPlan,
    repo: PathBuf,
    dir: PathBuf,
    worktree: Worktree,
    cache: BuildCache,
    keeper: &'a mut dyn BootKeeper,
    events: &'a dyn BisectEvents,
    /// Where the machine's files are, kept while the bisection lives.
    _work: tempfile::TempDir,
    booter: Booter<'a>,
    /// Per label: the boots kept before this run and not used yet.
    kept: BTreeMap<String, VecDeque<SessionWithRuns>>,
    /// Per label: its measured boots used so far, in order.
    boots: BTreeMap<String, Vec<SessionWithRuns>>,
    builds_used: BTreeSet<String>,
    counts: BisectCounts,
    started: Instant,
}

impl<'a> Bisection<'a> {
    /// Opens the bisection of `plan` in `dir` (its state directory) over the
    /// repository `repo`: its worktree (made at bad) and build cache.
    pub fn open(
        plan: BisectPlan,
        dir: PathBuf,
        repo: PathBuf,
        keeper: &'a mut dyn BootKeeper,
        events: &'a dyn BisectEvents,
    ) -> Result<Bisection<'a>, BisectError> {
        let worktree = Worktree::open_or_add(&repo, &dir.join("worktree"), &plan.bad)?;
        let cache = BuildCache {
            dir: dir.join("builds"),
        };
        std::fs::create_dir_all(&cache.dir)?;
        let work = tempfile::tempdir()?;
        let booter = Booter {
            config: plan.machine.clone(),
            work: work.path().to_path_buf(),
            machine: OnceCell::new(),
            sides: RefCell::new(BTreeMap::new()),
            booted: Cell::new(0),
            reused: Cell::new(0),
            failed: Cell::new(0),
            events,
        };
        Ok(Bisection {
            plan,
            repo,
            dir,
            worktree,
            cache,
            keeper,
            events,
            _work: work,
            booter,
            kept: BTreeMap::new(),
            boots: BTreeMap::new(),
            builds_used: BTreeSet::new(),
            counts: BisectCounts::default(),
            started: Instant::now(),
        })
    }

    /// Good and bad, as commits.
    pub fn range(&self) -> (&str, &str) {
        (&self.plan.good, &self.plan.bad)
    }

    /// Good against bad, then the steps git asks for, then the confirmation.
    pub fn run(&mut self) -> Result<BisectOutcome, BisectError> {
        let (good, bad) = (self.plan.good.clone(), self.plan.bad.clone());
        let commits = tree::commits_between(&self.repo, &good, &bad)?;
        self.events
            .started(commits, &good, &bad, &self.worktree.path);
        for (commit, which) in [(&good, "good"), (&bad, "bad")] {
            if let Build::Failed { reason } = self.build_of(commit)? {
                return Err(BisectError::Usage(format!(
                    "{which} ({}) does not build: {reason}; see {}",
                    &commit[..12],
                    self.cache.dir.join(commit).join("build.log").display()
                )));
            }
        }
        let alpha = alpha_per_step(self.plan.alpha, commits);
        let looks = self.establish(alpha)?;
        let claimed = looks.iter().find(|(_, l)| l.decision.claims_change());
        let Some((metric, endpoints)) = claimed.cloned() else {
            return Ok(BisectOutcome::NoChange(looks));
        };
        let mut steps: Vec<StepLine> = Vec::new();
        let mut state = self.worktree.bisect_start(&good, &bad)?;
        let end = loop {
            let commit = match state {
                BisectState::Test(commit) => commit,
                BisectState::Found(commit) => {
                    let confirmation = self.confirm(&commit, &metric, alpha)?;
                    let subject = tree::subject(&self.repo, &commit).unwrap_or_default();
                    break BisectEnd::Found {
                        commit,
                        subject,
                        confirmation,
                    };
                }
                BisectState::OnlySkipped(commits) => break BisectEnd::OnlySkipped(commits),
            };
            let refresh = self.plan.refresh_every as usize;
            if !steps.is_empty() && steps.len().is_multiple_of(refresh) {
                if let Some(drift) = self.refresh_endpoints(&metric)? {
                    break BisectEnd::Drifted(drift);
                }
            }
            let subject = tree::subject(&self.repo, &commit).unwrap_or_default();
            let outcome = self.step(&commit, &metric, alpha, steps.len() + 1)?;
            let (mark, neither) = (mark_of(&outcome), outcome.is_neither());
            steps.push(StepLine {
                commit: commit.clone(),
                subject,
                outcome,
            });
            if neither {
                break BisectEnd::Neither(commit);
            }
            state = self.worktree.mark(mark)?;
            self.save_log();
        };
        self.save_log();
        self.counts.booted = self.booter.booted.get();
        self.counts.reused_boots = self.booter.reused.get();
        self.counts.failed_boots = self.booter.failed.get();
        Ok(BisectOutcome::Bisected(Box::new(BisectReport {
            name: self.plan.name.clone(),
            good,
            bad,
            metric,
            endpoints,
            delta_pct: self.plan.delta_pct,
            steps,
            end,
            counts: self.counts.clone(),
            elapsed_s: self.started.elapsed().as_secs_f64(),
            log_path: self.dir.join("bisect.log").display().to_string(),
        })))
    }

    /// Good against bad, pairs of boots in ABBA order, until the sequential rule
    /// decides at `alpha` (split among the metrics): the last look of every metric.
    fn establish(&mut self, alpha: f64) -> Result<Vec<(MetricName, Look)>, BisectError> {
        let (good, bad) = (self.plan.good.clone(), self.plan.bad.clone());
        let labels = [self.plan.label(&good), self.plan.label(&bad)];
        let max = self.plan.max_boots_per_step;
        let events = self.events;
        let mut driver = SequentialDriver::new(
            EndpointsLooker {
                labels: labels.clone(),
                metric: self.plan.metric.clone(),
                alpha,
                delta_pct: self.plan.delta_pct,
                max_boots: max as usize,
                events,
                refusal: None,
            },
            pairs_bound(max),
        );
        let result = self.boot_schedule(&[(&good, &labels[0]), (&bad, &labels[1])], &mut driver);
        let (looker, history) = driver.into_parts();
        if let Some(refusal) = looker.refusal {
            return Err(BisectError::Usage(refusal));
        }
        result?;
        Ok(history
            .last()
            .map_or_else(Vec::new, |l: &MetricLooks| l.0.clone()))
    }

    /// One step: boots of `commit` until the step's rule places it.
    fn step(
        &mut self,
        commit: &str,
        metric: &MetricName,
        alpha: f64,
        number: usize,
    ) -> Result<StepOutcome, BisectError> {
        if let Build::Failed { reason } = self.build_of(commit)? {
            let outcome = StepOutcome::BuildFailed(reason);
            self.events.step_skipped(number, commit, &outcome);
            return Ok(outcome);
        }
        let label = self.plan.label(commit);
        let (good, bad) = self.endpoint_units(metric);
        let mut driver = SequentialDriver::new(
            StepLooker {
                label: label.clone(),
                metric: metric.clone(),
                good,
                bad,
                alpha,
                max_boots: self.plan.max_boots_per_step as usize,
                number,
                commit: commit.to_string(),
                events: self.events,
            },
            Bounds {
                // The step's rule stops at its bound of boots by itself.
                max_attempts_per_side: None,
                max_time: Duration::MAX,
            },
        );
        self.boot_schedule(&[(commit, &label)], &mut driver)?;
        Ok(match driver.latest() {
            Some(StepState::Looked(look)) => StepOutcome::Looked(*look),
            Some(StepState::BootsFailed(n)) => StepOutcome::BootsFailed(*n),
            None => StepOutcome::BootsFailed(0),
        })
    }

    /// A fresh boot of good and of bad. When either lands nearer the other's mean
    /// than its own, the machine moved more than half the change: why the bisection
    /// stops.
    fn refresh_endpoints(&mut self, metric: &MetricName) -> Result<Option<String>, BisectError> {
        let (before_good, before_bad) = self.endpoint_units(metric);
        let (good, bad) = (self.plan.good.clone(), self.plan.bad.clone());
        let labels = [self.plan.label(&good), self.plan.label(&bad)];
        let mut once = StopPolicy::Attempts(1);
        self.boot_schedule(&[(&good, &labels[0]), (&bad, &labels[1])], &mut once)?;
        let (after_good, after_bad) = self.endpoint_units(metric);
        Ok(drift(
            (&before_good, &after_good),
            (&before_bad, &after_bad),
        ))
    }

    /// The first bad commit against its parent, in fresh boots (ABBA pairs), by the
    /// sequential rule at the step's α.
    fn confirm(
        &mut self,
        first_bad: &str,
        metric: &MetricName,
        alpha: f64,
    ) -> Result<Confirmation, BisectError> {
        let Some(parent) = tree::parent(&self.repo, first_bad) else {
            return Ok(Confirmation::NoParent);
        };
        if let Build::Failed { reason } = self.build_of(&parent)? {
            return Ok(Confirmation::ParentDoesNotBuild(reason));
        }
        let labels = [
            self.plan.confirm_label(&parent),
            self.plan.confirm_label(first_bad),
        ];
        // The endpoints' spread of boots: the machine's, measured independently of
        // these fresh boots, so the interval is bounded after fewer of them.
        let (good, bad) = self.endpoint_units(metric);
        let max = self.plan.max_boots_per_step;
        let mut driver = SequentialDriver::new(
            ConfirmLooker {
                labels: labels.clone(),
                metric: metric.clone(),
                known: endpoints_noise(&good, &bad),
                alpha,
                delta_pct: self.plan.delta_pct,
                max_boots: max as usize,
                events: self.events,
            },
            pairs_bound(max),
        );
        self.boot_schedule(
            &[(&parent, &labels[0]), (first_bad, &labels[1])],
            &mut driver,
        )?;
        Ok(match driver.latest() {
            Some(look) => Confirmation::Look {
                parent,
                look: look.clone(),
            },
            None => Confirmation::NoBoots,
        })
    }

    /// Boots `sides` (commit, label) in ABBA blocks until `stop`, the boots kept
    /// before replayed first; each side's measured boots added to its label's.
    fn boot_schedule(
        &mut self,
        sides: &[(&str, &String)],
        stop: &mut dyn StopRule<SessionWithRuns>,
    ) -> Result<(), BisectError> {
        let mut executors_parts = Vec::new();
        for (commit, label) in sides {
            let kept = self.kept_of(label)?;
            let build = self.build_of(commit)?;
            executors_parts.push((label.to_string(), commit.to_string(), build, kept));
        }
        let mut executors: Vec<CommitBoots> = executors_parts
            .into_iter()
            .map(|(label, commit, build, kept)| CommitBoots {
                booter: &self.booter,
                label,
                commit,
                build,
                kept,
            })
            .collect();
        let mut arms: Vec<&mut dyn Executor<Boot>> = executors
            .iter_mut()
            .map(|e| e as &mut dyn Executor<Boot>)
            .collect();
        let schedule = Schedule {
            order: Order::Abba,
            warmup: 0,
            hooks: Vec::new(),
            stop,
        };
        let outcomes = scheduler::run(schedule, &mut arms, self.keeper, &mut NoProgress);
        drop(arms);
        let leftovers: Vec<(String, VecDeque<SessionWithRuns>)> =
            executors.into_iter().map(|e| (e.label, e.kept)).collect();
        self.kept.extend(leftovers);
        let outcomes: Vec<ArmOutcome<SessionWithRuns>> = outcomes?;
        for ((_, label), outcome) in sides.iter().zip(outcomes) {
            let boots = self.boots.entry(label.to_string()).or_default();
            boots.extend(outcome.measured);
        }
        Ok(())
    }

    /// The boots kept under `label` before this run and not used yet, read once.
    fn kept_of(&mut self, label: &str) -> Result<VecDeque<SessionWithRuns>, BisectError> {
        if let Some(kept) = self.kept.remove(label) {
            return Ok(kept);
        }
        let kept = self
            .keeper
            .kept_sessions(label)
            .map_err(BisectError::Keeper)?;
        Ok(kept.into())
    }

    /// Good's and bad's boots of `metric` so far.
    fn endpoint_units(&self, metric: &MetricName) -> (BootUnits, BootUnits) {
        let pick = |commit: &str| {
            let label = self.plan.label(commit);
            let boots = self.boots.get(&label).map_or(&[][..], Vec::as_slice);
            lookers::units_of(&label, boots)
                .remove(metric)
                .unwrap_or_default()
        };
        (pick(&self.plan.good), pick(&self.plan.bad))
    }

    /// The build of `commit`, made unless kept.
    fn build_of(&mut self, commit: &str) -> Result<Build, BisectError> {
        let (build, built) = self.cache.build(commit, &self.plan.build, &self.worktree)?;
        let first_use = self.builds_used.insert(commit.to_string());
        match (&build, built) {
            (_, false) if first_use => self.counts.kept_builds += 1,
            (_, false) => {}
            (Build::Failed { .. }, true) => self.counts.failed_builds += 1,
            (Build::Built { .. }, true) => {
                self.counts.built += 1;
                self.events.built(commit);
            }
        }
        Ok(build)
    }

    /// `git bisect log`, kept beside the bisection's state.
    fn save_log(&self) {
        if let Ok(log) = self.worktree.log() {
            let _ = std::fs::write(self.dir.join("bisect.log"), log + "\n");
        }
    }
}

/// Pairs of boots up to `max` a side, a look after each.
fn pairs_bound(max: u32) -> Bounds {
    Bounds {
        max_attempts_per_side: Some(max),
        max_time: Duration::MAX,
    }
}

/// What git is told of a step's commit.
fn mark_of(outcome: &StepOutcome) -> Mark {
    match outcome {
        StepOutcome::Looked(look) => match look.decision {
            StepDecision::LikeGood => Mark::Good,
            StepDecision::LikeBad => Mark::Bad,
            _ => Mark::Skip,
        },
        StepOutcome::BuildFailed(_) | StepOutcome::BootsFailed(_) => Mark::Skip,
    }
}

/// Whether a fresh boot of good or of bad (the last of `after`, beyond `before`) landed
/// nearer the other end's mean than its own: why, as one line.
fn drift(good: (&BootUnits, &BootUnits), bad: (&BootUnits, &BootUnits)) -> Option<String> {
    let mean = |u: &[f64]| u.iter().sum::<f64>() / u.len().max(1) as f64;
    let (mg, mb) = (mean(&good.0.units), mean(&bad.0.units));
    for (which, (before, after), own, other) in [("good", good, mg, mb), ("bad", bad, mb, mg)] {
        let fresh = &after.units[before.units.len().min(after.units.len())..];
        if let Some(&x) = fresh.last() {
            if (x - own).abs() > (x - other).abs() {
                return Some(format!(
                    "the machine drifted: a fresh boot of {which} measured {:+.1}% from its earlier boots, nearer the other end than its own; bisect again on a quieter machine",
                    ((x - own).exp() - 1.0) * 100.0
                ));
            }
        }
    }
    None
}
