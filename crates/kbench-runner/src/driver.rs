//! The one sequential driver: a stop rule that looks after every block (a pair of runs
//! in `ab`, a pair of boots in `vm-ab` and a bisection's decisions between two
//! commits, one boot in a bisection's step), stops when the look is
//! decided, closes what is still open at the bound (units a side, or time), and hands
//! each look to the sink to be kept with its design. What a look is (runs as units, a
//! label's boots, a bisection's step) is a [`Looker`]; the loop is this one.
use crate::scheduler::{ArmOutcome, MeasuredRun};
use crate::stop::{NextBlock, StopRule};
use kbench_record::sequential::SequentialLook;
use kbench_stats::sequential::{self, Boundary, KnownNoise, Look, SequentialDesign};
use std::time::Duration;

/// A look that may be final.
pub trait Decidable {
    fn decided(&self) -> bool;
    /// No more units will come: what is open becomes undecided, with its interval.
    fn close_undecided(&mut self);
}

/// What a looker saw after a block.
pub enum Seen<L> {
    /// Nothing to look at yet.
    Nothing,
    Look(L),
    /// Nothing will come of going on: why, as one line.
    GiveUp(String),
    /// The units cannot be compared, and the user can mend it: why, as one line.
    Refuse(String),
}

/// The bound that closed what a look left open, if one did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    /// Neither bound closed anything: more units may come, or the look was decided.
    Neither,
    /// Every side has had its units (attempts, failed ones included).
    Units,
    /// The time bound.
    Time,
}

/// How a decision looks at its units.
pub trait Looker<M> {
    type Look: Decidable + Clone;
    /// A look at every side's units so far.
    fn look(&mut self, arms: &[ArmOutcome<M>]) -> Seen<Self::Look>;
    /// Says a look as it is made (a line on stderr per metric); `reached` is the bound
    /// that closed what it left open, if one did.
    fn say(&self, _look: &Self::Look, _arms: &[ArmOutcome<M>], _reached: Reached) {}
    /// The look as its design's `index`-th record, when the design is recorded.
    fn record(&self, _look: &Self::Look, _index: u64) -> Option<SequentialLook> {
        None
    }
}

/// The bounds of a sequential decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Units started a side (failed ones count) after which what is open is undecided;
    /// `None` where the looks themselves stop at their bound (runs as units).
    pub max_attempts_per_side: Option<u32>,
    pub max_time: Duration,
}

/// The one sequential driver (see the module's text).
pub struct SequentialDriver<L: Looker<M>, M = MeasuredRun> {
    looker: L,
    bounds: Bounds,
    /// Every look made, in order; the last is the decision.
    history: Vec<L::Look>,
    unkept: Vec<SequentialLook>,
}

impl<M, L: Looker<M>> SequentialDriver<L, M> {
    pub fn new(looker: L, bounds: Bounds) -> Self {
        SequentialDriver {
            looker,
            bounds,
            history: Vec::new(),
            unkept: Vec::new(),
        }
    }

    /// The last look: the decision, once the schedule stopped.
    pub fn latest(&self) -> Option<&L::Look> {
        self.history.last()
    }

    /// Every look, in the order made.
    pub fn history(&self) -> &[L::Look] {
        &self.history
    }

    pub fn looker(&self) -> &L {
        &self.looker
    }

    pub fn into_parts(self) -> (L, Vec<L::Look>) {
        (self.looker, self.history)
    }

    fn reached(&self, arms: &[ArmOutcome<M>], elapsed: Duration) -> Reached {
        let units_done = self
            .bounds
            .max_attempts_per_side
            .is_some_and(|n| !arms.is_empty() && arms.iter().all(|a| a.attempts >= n));
        if units_done {
            Reached::Units
        } else if elapsed >= self.bounds.max_time {
            Reached::Time
        } else {
            Reached::Neither
        }
    }
}

impl<M, L: Looker<M>> StopRule<M> for SequentialDriver<L, M> {
    fn decide(&mut self, arms: &[ArmOutcome<M>], elapsed: Duration) -> NextBlock {
        let reached = self.reached(arms, elapsed);
        let all_arms = || NextBlock::Continue((0..arms.len()).collect());
        let mut look = match self.looker.look(arms) {
            Seen::GiveUp(why) => return NextBlock::GiveUp(why),
            Seen::Refuse(why) => return NextBlock::Refuse(why),
            Seen::Nothing if reached == Reached::Neither => return all_arms(),
            Seen::Nothing => return NextBlock::Stop,
            Seen::Look(look) => look,
        };
        // What the bound closed is said as closed by it; a look decided before the
        // bound was reached is not.
        let closed_by = match look.decided() {
            true => Reached::Neither,
            false => reached,
        };
        if reached != Reached::Neither {
            look.close_undecided();
        }
        self.looker.say(&look, arms, closed_by);
        let index = self.history.len() as u64 + 1;
        self.unkept.extend(self.looker.record(&look, index));
        let stop = look.decided() || reached != Reached::Neither;
        self.history.push(look);
        if stop {
            NextBlock::Stop
        } else {
            all_arms()
        }
    }

    fn expected_runs_per_arm(&self) -> u64 {
        self.bounds.max_attempts_per_side.map_or(0, u64::from)
    }

    fn take_looks(&mut self) -> Vec<SequentialLook> {
        std::mem::take(&mut self.unkept)
    }
}

/// One metric's look: final once decided.
impl Decidable for Look {
    fn decided(&self) -> bool {
        self.decision.is_final()
    }

    fn close_undecided(&mut self) {
        if !self.decision.is_final() {
            self.decision = sequential::Decision::Undecided;
        }
    }
}

/// One primary metric's units so far: the mean log value of each unit of each side.
#[derive(Debug, Clone, PartialEq)]
pub struct PrimaryUnits {
    pub metric: String,
    pub higher_is_better: bool,
    pub a_log_units: Vec<f64>,
    pub b_log_units: Vec<f64>,
    /// A calibrated between-unit spread of this metric, if one matches.
    pub known: Option<KnownNoise>,
}

/// Where one primary metric stands: its latest look, final once decided.
#[derive(Debug, Clone, PartialEq)]
pub struct PrimaryState {
    pub metric: String,
    pub look: Look,
}

impl PrimaryState {
    pub fn decided(&self) -> bool {
        self.look.decision.is_final()
    }
}

/// Every primary metric's latest look.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PrimaryStates(pub Vec<PrimaryState>);

impl Decidable for PrimaryStates {
    fn decided(&self) -> bool {
        !self.0.is_empty() && self.0.iter().all(PrimaryState::decided)
    }

    fn close_undecided(&mut self) {
        for state in &mut self.0 {
            state.look.close_undecided();
        }
    }
}

/// From the arms' outcomes to each primary metric's units (runs as units in `ab`).
pub type UnitsOf = Box<dyn Fn(&[ArmOutcome]) -> Vec<PrimaryUnits>>;

/// Failures without a single measured run after which the comparison is given up.
const HOPELESS_FAILURES: usize = 3;

/// Looks at two arms' units with `kbench_stats::sequential`, α split among the
/// primary metrics of the first look that saw any (the design's, fixed for the whole
/// decision, so the Bonferroni count does not move with what a look happens to have). A
/// metric once decided stays decided: its later units do not reopen it. The bound of
/// units a side is the looks' own (they stop undecided there).
pub struct UnitLooker {
    pub alpha: f64,
    pub delta_pct: f64,
    pub max_units_per_side: usize,
    units_of: UnitsOf,
    states: PrimaryStates,
    metrics: Option<Vec<String>>,
}

impl UnitLooker {
    pub fn new(alpha: f64, delta_pct: f64, max_units_per_side: usize, units_of: UnitsOf) -> Self {
        UnitLooker {
            alpha,
            delta_pct,
            max_units_per_side,
            units_of,
            states: PrimaryStates::default(),
            metrics: None,
        }
    }

    fn design(&self, primaries: usize, higher_is_better: bool) -> SequentialDesign {
        SequentialDesign {
            alpha: self.alpha,
            delta_pct: self.delta_pct,
            max_units_per_side: self.max_units_per_side,
            primaries,
            higher_is_better,
            // The bound is declared before the first run (`ab --max-runs`).
            boundary: Boundary::DeclaredMaximum,
        }
    }

    /// Looks again at every primary metric of the design not decided yet.
    fn look_at(&mut self, primaries: Vec<PrimaryUnits>) {
        if self.metrics.is_none() && !primaries.is_empty() {
            self.metrics = Some(primaries.iter().map(|p| p.metric.clone()).collect());
        }
        let Some(metrics) = &self.metrics else {
            return;
        };
        let count = metrics.len();
        let of_the_design: Vec<PrimaryUnits> = primaries
            .into_iter()
            .filter(|p| metrics.contains(&p.metric))
            .collect();
        for units in of_the_design {
            let design = self.design(count, units.higher_is_better);
            let look =
                sequential::look(&design, &units.a_log_units, &units.b_log_units, units.known);
            match self.states.0.iter_mut().find(|s| s.metric == units.metric) {
                Some(state) if state.decided() => {}
                Some(state) => state.look = look,
                None => self.states.0.push(PrimaryState {
                    metric: units.metric,
                    look,
                }),
            }
        }
    }
}

impl Looker<MeasuredRun> for UnitLooker {
    type Look = PrimaryStates;

    fn look(&mut self, arms: &[ArmOutcome]) -> Seen<PrimaryStates> {
        if arms.len() != 2 {
            return Seen::GiveUp(format!(
                "a sequential comparison needs two sides, not {}",
                arms.len()
            ));
        }
        let hopeless = arms
            .iter()
            .find(|a| a.primary_values().is_empty() && a.failures.len() >= HOPELESS_FAILURES);
        if let Some(arm) = hopeless {
            let why = arm.failures.first().map_or("", |f| f.message.as_str());
            return Seen::GiveUp(format!("a side failed three times; stopping: {why}"));
        }
        self.look_at((self.units_of)(arms));
        match self.states.0.is_empty() {
            true => Seen::Nothing,
            false => Seen::Look(self.states.clone()),
        }
    }
}
