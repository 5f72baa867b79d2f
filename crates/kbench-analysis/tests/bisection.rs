//! A whole bisection's error rate, simulated (`docs/statistics.md`, "Every design and
//! its promise"): good against bad, the steps of `git bisect` over the commits between,
//! and the confirmation of the first bad commit against its parent, each decided by the
//! rules `kbench bisect` uses (`kbench_analysis::bisect`) at its share of one α. Boots
//! are drawn fresh for every decision, as `kbench bisect` boots them; a step undecided
//! at its bound ends the bisection without an answer (`kbench bisect` skips it; the
//! union bound over steps does not count skips). An error is any answer that names a
//! commit other than the first bad one: in a flat history, any answer at all.
use kbench_analysis::bisect::{
    alpha_per_step, candidate_look, endpoints_look, endpoints_noise, BootUnits,
};
use kbench_stats::bisect::StepDecision;
use kbench_stats::calibration::normal;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const ALPHA: f64 = 0.05;
const COMMITS: usize = 12;
const MAX_BOOTS: usize = 10;
const DELTA_PCT: f64 = 5.0;
const BISECTIONS: usize = 2000;

/// A history of `COMMITS` commits after good (commit 0): from `first_bad` on (if any)
/// every boot is `step_pct` slower; each boot's mean log value has SD `boot_sd`.
struct History {
    first_bad: Option<usize>,
    step_log: f64,
    boot_sd: f64,
}

impl History {
    fn boot(&self, rng: &mut ChaCha8Rng, commit: usize) -> f64 {
        let bad = self.first_bad.is_some_and(|f| commit >= f);
        (if bad { self.step_log } else { 0.0 }) + self.boot_sd * normal(rng)
    }
}

fn units(values: &[f64]) -> BootUnits {
    BootUnits {
        units: values.to_vec(),
        higher_is_better: false,
        primary: true,
    }
}

/// Boots of two commits in ABBA pairs until the rule decides; whether it claims they
/// differ, and the two sides' boots.
fn pairs_until_decided(
    rng: &mut ChaCha8Rng,
    history: &History,
    (x, y): (usize, usize),
    alpha: f64,
    known: Option<kbench_stats::sequential::KnownNoise>,
) -> (bool, Vec<f64>, Vec<f64>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for pair in 0..MAX_BOOTS {
        for side in if pair % 2 == 0 { [0, 1] } else { [1, 0] } {
            match side {
                0 => a.push(history.boot(rng, x)),
                _ => b.push(history.boot(rng, y)),
            }
        }
        let look = endpoints_look(&units(&a), &units(&b), alpha, DELTA_PCT, MAX_BOOTS, known);
        if look.decision.is_final() {
            return (look.decision.claims_change(), a, b);
        }
    }
    (false, a, b)
}

/// One bisection: the first bad commit it names, if it names one.
fn bisect(rng: &mut ChaCha8Rng, history: &History) -> Option<usize> {
    let alpha = alpha_per_step(ALPHA, COMMITS);
    let (differ, good, bad) = pairs_until_decided(rng, history, (0, COMMITS + 1), alpha, None);
    if !differ {
        return None;
    }
    // Good is commit 0, bad COMMITS + 1; the first bad one lies in (low, high].
    let (mut low, mut high) = (0, COMMITS + 1);
    while high - low > 1 {
        let candidate = (low + high) / 2;
        let mut boots = Vec::new();
        let decision = loop {
            boots.push(history.boot(rng, candidate));
            let look = candidate_look(
                &units(&good),
                &units(&bad),
                &units(&boots),
                alpha,
                MAX_BOOTS,
            );
            if look.decision.is_final() {
                break look.decision;
            }
        };
        match decision {
            StepDecision::LikeGood => low = candidate,
            StepDecision::LikeBad => high = candidate,
            _ => return None,
        }
    }
    let known = endpoints_noise(&units(&good), &units(&bad));
    let (confirmed, _, _) = pairs_until_decided(rng, history, (high - 1, high), alpha, known);
    confirmed.then_some(high)
}

/// The share of `BISECTIONS` that name a wrong commit, and the share that name the right one.
fn rates(history: &History, seed: u64) -> (f64, f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut wrong, mut right) = (0, 0);
    for _ in 0..BISECTIONS {
        match bisect(&mut rng, history) {
            Some(named) if Some(named) == history.first_bad => right += 1,
            Some(_) => wrong += 1,
            None => {}
        }
    }
    let share = |n: usize| n as f64 / BISECTIONS as f64;
    (share(wrong), share(right))
}

fn limit() -> f64 {
    ALPHA + 2.0 * (ALPHA * (1.0 - ALPHA) / BISECTIONS as f64).sqrt()
}

#[test]
fn a_whole_bisection_names_a_wrong_commit_at_most_alpha_of_the_time() {
    let mut failures = Vec::new();
    let cells = [
        (None, 0.0, 0.01),
        (None, 0.0, 0.03),
        (Some(7), 5.0, 0.01),
        (Some(7), 5.0, 0.03),
        (Some(3), 10.0, 0.03),
        (Some(12), 10.0, 0.03),
    ];
    for (i, (first_bad, step_pct, boot_sd)) in cells.into_iter().enumerate() {
        let history = History {
            first_bad,
            step_log: (step_pct / 100.0_f64).ln_1p(),
            boot_sd,
        };
        let (wrong, right) = rates(&history, 43_000 + i as u64);
        eprintln!(
            "first bad {first_bad:?}, step {step_pct}%, boot SD {}%: a wrong commit named in {:.2} % of {BISECTIONS} bisections, the right one in {:.1} % (limit {:.2} %)",
            100.0 * boot_sd,
            100.0 * wrong,
            100.0 * right,
            100.0 * limit()
        );
        if wrong > limit() {
            failures.push((first_bad, step_pct, boot_sd, wrong));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}
