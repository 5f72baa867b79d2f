//! How a bisection looks at its boots, one [`Looker`] per kind of decision, each driven
//! by the runner's one sequential driver: good against bad, a step's candidate against
//! both, and the first bad commit against its parent.
use super::BisectEvents;
use kbench_analysis::bisect::{boot_units, candidate_look, endpoints_look, BootUnits, MetricName};
use kbench_analysis::LabelData;
use kbench_record::stored::SessionWithRuns;
use kbench_runner::arm::blocks_done;
use kbench_runner::{ArmOutcome, Decidable, Looker, Reached, Seen};
use kbench_stats::bisect::{StepDecision, StepLook};
use kbench_stats::sequential::{KnownNoise, Look};
use std::collections::BTreeMap;

/// Each metric's boots as units: the mean log value of each boot.
pub fn units_of(label: &str, boots: &[SessionWithRuns]) -> BTreeMap<MetricName, BootUnits> {
    let mut data = LabelData {
        label: label.to_string(),
        ..LabelData::default()
    };
    for (i, whole) in boots.iter().enumerate() {
        data.push_session(whole, i as i64 + 1);
    }
    boot_units(&data, boots.len())
}

/// Every candidate metric's look at good against bad.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricLooks(pub Vec<(MetricName, Look)>);

impl Decidable for MetricLooks {
    /// A metric that claims a change is the bisection's; with none, every metric
    /// decided is no change to bisect.
    fn decided(&self) -> bool {
        let claimed = self.0.iter().any(|(_, l)| l.decision.claims_change());
        let all_final = !self.0.is_empty() && self.0.iter().all(|(_, l)| l.decision.is_final());
        claimed || all_final
    }

    fn close_undecided(&mut self) {
        for (_, look) in self.0.iter_mut() {
            look.close_undecided();
        }
    }
}

/// Good (arm 0) against bad (arm 1): every primary metric, or the one asked for, at α
/// split among them.
pub struct EndpointsLooker<'e> {
    pub labels: [String; 2],
    pub metric: Option<String>,
    pub alpha: f64,
    pub delta_pct: f64,
    pub max_boots: usize,
    pub events: &'e dyn BisectEvents,
    /// Why the bisection cannot go on, the user's to mend (no such metric).
    pub refusal: Option<String>,
}

impl Looker<SessionWithRuns> for EndpointsLooker<'_> {
    type Look = MetricLooks;

    fn look(&mut self, arms: &[ArmOutcome<SessionWithRuns>]) -> Seen<MetricLooks> {
        let pairs = blocks_done(arms);
        if pairs == 0 {
            return Seen::Nothing;
        }
        let good = units_of(&self.labels[0], &arms[0].measured);
        let bad = units_of(&self.labels[1], &arms[1].measured);
        let candidates: Vec<(&MetricName, &BootUnits, &BootUnits)> = good
            .iter()
            .filter(|(name, units)| match self.metric.as_deref() {
                Some(m) => name.matches(m),
                None => units.primary,
            })
            .filter_map(|(name, units)| Some((name, units, bad.get(name)?)))
            .collect();
        if candidates.is_empty() && pairs > 1 {
            let known: Vec<String> = good.keys().map(|k| k.to_string()).collect();
            let refusal = match &self.metric {
                Some(m) => format!(
                    "--metric {m}: no such metric in both good's and bad's boots ({})",
                    known.join(", ")
                ),
                None => "good's and bad's boots share no primary metric: did they boot?".into(),
            };
            self.refusal = Some(refusal.clone());
            return Seen::GiveUp(refusal);
        }
        if candidates.is_empty() {
            return Seen::Nothing;
        }
        let alpha = self.alpha / candidates.len() as f64;
        let looks = candidates
            .into_iter()
            .map(|(name, g, b)| {
                let look = endpoints_look(g, b, alpha, self.delta_pct, self.max_boots, None);
                (name.clone(), look)
            })
            .collect();
        Seen::Look(MetricLooks(looks))
    }

    fn say(&self, looks: &MetricLooks, arms: &[ArmOutcome<SessionWithRuns>], _: Reached) {
        let pairs = blocks_done(arms);
        for (name, look) in &looks.0 {
            self.events.endpoints_look(pairs, name, look);
        }
    }
}

/// Where a step stands.
#[derive(Debug, Clone, PartialEq)]
pub enum StepState {
    Looked(StepLook),
    /// This many boots failed: the commit is one git must step around.
    BootsFailed(usize),
}

impl Decidable for StepState {
    fn decided(&self) -> bool {
        match self {
            StepState::Looked(look) => look.decision != StepDecision::Continue,
            StepState::BootsFailed(_) => true,
        }
    }

    fn close_undecided(&mut self) {
        if let StepState::Looked(look) = self {
            if look.decision == StepDecision::Continue {
                look.decision = StepDecision::Undecided;
            }
        }
    }
}

/// One step's candidate (the only arm) against the endpoints' boots so far.
pub struct StepLooker<'e> {
    pub label: String,
    pub metric: MetricName,
    pub good: BootUnits,
    pub bad: BootUnits,
    pub alpha: f64,
    pub max_boots: usize,
    pub number: usize,
    pub commit: String,
    pub events: &'e dyn BisectEvents,
}

impl Looker<SessionWithRuns> for StepLooker<'_> {
    type Look = StepState;

    fn look(&mut self, arms: &[ArmOutcome<SessionWithRuns>]) -> Seen<StepState> {
        let arm = &arms[0];
        let failures = arm.failures.len();
        let candidate = units_of(&self.label, &arm.measured).remove(&self.metric);
        let booted = candidate.as_ref().map_or(0, |c| c.units.len());
        // One boot in thirty dies of an emulator fault under TCG; a commit whose boots
        // keep failing is one git must step around.
        if failures >= 3 || (booted == 0 && failures >= 2) {
            return Seen::Look(StepState::BootsFailed(failures));
        }
        match candidate {
            Some(candidate) => Seen::Look(StepState::Looked(candidate_look(
                &self.good,
                &self.bad,
                &candidate,
                self.alpha,
                self.max_boots,
            ))),
            None => Seen::Nothing,
        }
    }

    fn say(&self, state: &StepState, _: &[ArmOutcome<SessionWithRuns>], _: Reached) {
        self.events.step_look(self.number, &self.commit, state);
    }
}

/// The first bad commit (arm 1) against its parent (arm 0), in fresh boots, with the
/// endpoints' spread of boots known.
pub struct ConfirmLooker<'e> {
    pub labels: [String; 2],
    pub metric: MetricName,
    pub known: Option<KnownNoise>,
    pub alpha: f64,
    pub delta_pct: f64,
    pub max_boots: usize,
    pub events: &'e dyn BisectEvents,
}

impl Looker<SessionWithRuns> for ConfirmLooker<'_> {
    type Look = Look;

    fn look(&mut self, arms: &[ArmOutcome<SessionWithRuns>]) -> Seen<Look> {
        let parent = units_of(&self.labels[0], &arms[0].measured).remove(&self.metric);
        let first_bad = units_of(&self.labels[1], &arms[1].measured).remove(&self.metric);
        let (Some(p), Some(b)) = (parent, first_bad) else {
            return Seen::Nothing;
        };
        let look = endpoints_look(
            &p,
            &b,
            self.alpha,
            self.delta_pct,
            self.max_boots,
            self.known,
        );
        Seen::Look(look)
    }

    fn say(&self, look: &Look, arms: &[ArmOutcome<SessionWithRuns>], _: Reached) {
        let pairs = blocks_done(arms);
        self.events.confirm_look(pairs, &self.metric, look);
    }
}
