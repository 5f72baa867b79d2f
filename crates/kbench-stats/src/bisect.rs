//! One step of a bisection: is the candidate commit like good, like bad, or like
//! neither? Units are boots (their mean log value of the metric), and the rule may be
//! looked at after every boot of the candidate.
//!
//! Two always-valid intervals ([`confidence_sequence`], each at α/2): candidate − good
//! and candidate − bad, each with the other end's boots as a known spread of boots
//! ([`noise_of`]: independent of the two compared, so the interval keeps its level, and
//! bounded from two boots of the candidate). The candidate is *like good* when its interval against bad
//! excludes 0 and the one against good does not; *like bad* the other way round; *like
//! neither* when both exclude 0 (it lies away from both ends: the change is not one
//! commit). A wrong "like good" needs the interval against bad to exclude 0 while the
//! candidate is like bad, which happens with probability at most α/2 however many looks
//! are taken; so each answer's error rate is held at every look. A bisection of k steps
//! that gives each step α/k holds α for the whole (the union bound).
//!
//! A candidate half-way between the ends is found out only when both intervals exclude
//! 0 at one look; one side's may come first. The bisection's confirmation (the first bad
//! commit against its parent, in fresh boots) measures the change that commit makes,
//! against good → bad's: that it is a part of the whole is said there.
use serde::{Deserialize, Serialize};

use crate::sequential::{confidence_sequence, KnownNoise, LogInterval};

/// What one look at a step says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepDecision {
    /// The candidate differs from bad, and not from good.
    LikeGood,
    /// The candidate differs from good, and not from bad.
    LikeBad,
    /// The candidate differs from both: the change is not one step.
    Neither,
    /// Not decided, and the candidate has boots to go.
    Continue,
    /// Not decided at the bound of boots for the step.
    Undecided,
}

impl StepDecision {
    pub fn is_final(self) -> bool {
        self != StepDecision::Continue
    }
}

/// One look at a step, with the intervals it came from (percent, from mean logs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepLook {
    /// The candidate's boots so far.
    pub boots: usize,
    /// The good → bad step the endpoints' boots say, percent.
    pub step_pct: f64,
    /// Candidate against good and against bad, percent.
    pub from_good_pct: Option<f64>,
    pub from_bad_pct: Option<f64>,
    /// The always-valid intervals of the two (`None` while unbounded).
    pub from_good_interval_pct: Option<(f64, f64)>,
    pub from_bad_interval_pct: Option<(f64, f64)>,
    pub decision: StepDecision,
}

/// Looks at a step: the endpoints' boots and the candidate's (mean log values), the
/// step's α, and the candidate's bound of boots.
pub fn step_look(
    good: &[f64],
    bad: &[f64],
    candidate: &[f64],
    alpha: f64,
    max_boots: usize,
) -> StepLook {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let step = mean(bad) - mean(good);
    let from_good = confidence_sequence(good, candidate, noise_of(&[bad]), alpha / 2.0);
    let from_bad = confidence_sequence(bad, candidate, noise_of(&[good]), alpha / 2.0);
    let bounds = |iv: Option<LogInterval>| iv.and_then(|iv| iv.bounds);
    let (g, b) = (bounds(from_good), bounds(from_bad));
    let excludes_zero = |b: Option<(f64, f64)>| b.is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0);
    let decision = match (excludes_zero(g), excludes_zero(b)) {
        (false, true) => StepDecision::LikeGood,
        (true, false) => StepDecision::LikeBad,
        (true, true) => StepDecision::Neither,
        (false, false) if candidate.len() >= max_boots => StepDecision::Undecided,
        (false, false) => StepDecision::Continue,
    };
    let pct = |log: f64| (log.exp() - 1.0) * 100.0;
    let pct_bounds = |b: Option<(f64, f64)>| b.map(|(lo, hi)| (pct(lo), pct(hi)));
    StepLook {
        boots: candidate.len(),
        step_pct: pct(step),
        from_good_pct: from_good.map(|iv| pct(iv.shift)),
        from_bad_pct: from_bad.map(|iv| pct(iv.shift)),
        from_good_interval_pct: pct_bounds(g),
        from_bad_interval_pct: pct_bounds(b),
        decision,
    }
}

/// The pooled spread of boots (log) of some samples, with its degrees of freedom: each
/// sample about its own mean. `None` without a degree of freedom.
pub fn noise_of(samples: &[&[f64]]) -> Option<KnownNoise> {
    let (mut squares, mut df) = (0.0, 0usize);
    for sample in samples.iter().filter(|s| s.len() >= 2) {
        let mean = sample.iter().sum::<f64>() / sample.len() as f64;
        squares += sample.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>();
        df += sample.len() - 1;
    }
    (df > 0).then(|| KnownNoise {
        unit_sd: (squares / df as f64).sqrt(),
        df: df as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// `n` boots' mean logs around `center` (log), with SD `sd`, from `rng`.
    fn boots(rng: &mut ChaCha8Rng, n: usize, center: f64, sd: f64) -> Vec<f64> {
        (0..n)
            .map(|_| center + sd * crate::special::normal(rng))
            .collect()
    }

    /// Boots the candidate one at a time until the rule stops; the decision and the
    /// candidate's boots are added to `boots_used`.
    fn decide(
        rng: &mut ChaCha8Rng,
        center: f64,
        good: &[f64],
        bad: &[f64],
        boots_used: &mut usize,
    ) -> StepDecision {
        let mut candidate = Vec::new();
        loop {
            candidate.extend(boots(rng, 1, center, 0.1));
            let look = step_look(good, bad, &candidate, 0.05, 10);
            if look.decision.is_final() {
                *boots_used += candidate.len();
                return look.decision;
            }
        }
    }

    #[test]
    fn a_candidate_at_either_end_is_placed_there_in_a_few_boots() {
        let mut rng = ChaCha8Rng::seed_from_u64(26);
        let (mut at_good, mut at_bad, mut midway, mut wrong) = (0, 0, 0, 0);
        let (mut ends_boots, mut midway_boots) = (0, 0);
        for _ in 0..200 {
            // A doubling (log 0.69) with 10 % boot noise, 8 boots an endpoint.
            let good = boots(&mut rng, 8, 0.0, 0.1);
            let bad = boots(&mut rng, 8, 0.69, 0.1);
            match decide(&mut rng, 0.0, &good, &bad, &mut ends_boots) {
                StepDecision::LikeGood => at_good += 1,
                StepDecision::LikeBad => wrong += 1,
                _ => {}
            }
            match decide(&mut rng, 0.69, &good, &bad, &mut ends_boots) {
                StepDecision::LikeBad => at_bad += 1,
                StepDecision::LikeGood => wrong += 1,
                _ => {}
            }
            if matches!(
                decide(&mut rng, 0.345, &good, &bad, &mut midway_boots),
                StepDecision::Neither | StepDecision::Undecided
            ) {
                midway += 1;
            }
        }
        // α = 5 % a step, 2.5 % each way: at most ~10 of 400 answers wrong expected;
        // none came out so (seed 26), at 2.0 boots a step. A commit half-way is called
        // like neither 63 times in 200 (2.6 boots): one side's interval often excludes
        // 0 first, and the confirmation's share of the change is what says it then.
        assert!(wrong <= 12, "wrong sides: {wrong}");
        assert!(at_good >= 190 && at_bad >= 190, "{at_good} {at_bad}");
        assert!(ends_boots <= 400 * 3, "{ends_boots} boots for 400 steps");
        assert!(midway >= 20, "midway: {midway} in {midway_boots} boots");
    }

    #[test]
    fn no_interval_no_decision_before_the_bound() {
        let look = step_look(&[0.0, 0.1], &[0.4, 0.5], &[0.05], 0.05, 4);
        assert_eq!(look.decision, StepDecision::Continue);
        let look = step_look(&[0.0, 0.1], &[0.4, 0.5], &[0.05; 4], 0.05, 4);
        assert!(look.decision.is_final(), "{look:?}");
    }
}
