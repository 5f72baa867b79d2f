//! Seeded Monte-Carlo of the sequential rule (`docs/statistics.md`, "Sequential
//! decisions"): false claims with a look after every unit, beside the fixed-design t test
//! looked at just as often; units to decide against the fixed design of the same power;
//! equivalence. Print the tables with
//! `cargo nextest run -p kbench-stats --test sequential --no-capture`.

use kbench_stats::sequential::{
    confidence_sequence, stops, Decision, KnownNoise, SequentialDesign,
};
use kbench_stats::special::t_quantile;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ALPHA: f64 = 0.05;
/// Runs averaged in one unit (a boot's or session's runs).
const RUNS_PER_UNIT: f64 = 5.0;

/// The distribution of a unit's own offset (between-unit effect), scaled to unit variance.
#[derive(Clone, Copy, Debug, PartialEq)]
enum UnitEffect {
    Normal,
    /// Student t with 3 df: heavy tails.
    T3,
    /// A centred lognormal(0, 1): heavy right tail on the log scale.
    Lognormal,
}

#[derive(Clone, Copy, Debug)]
struct Noise {
    within_cv_pct: f64,
    between_sd_pct: f64,
    effect: UnitEffect,
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn effect_draw(rng: &mut ChaCha8Rng, effect: UnitEffect) -> f64 {
    match effect {
        UnitEffect::Normal => normal(rng),
        UnitEffect::T3 => {
            let chi2: f64 = (0..3).map(|_| normal(rng).powi(2)).sum();
            normal(rng) / (chi2 / 3.0).sqrt() / 3f64.sqrt()
        }
        UnitEffect::Lognormal => {
            let e = std::f64::consts::E;
            (normal(rng).exp() - e.sqrt()) / ((e - 1.0) * e).sqrt()
        }
    }
}

/// One unit's mean log value: shift + unit offset + the mean of its runs' noise.
fn unit_value(rng: &mut ChaCha8Rng, noise: Noise, shift_log: f64) -> f64 {
    let within_sd = (noise.within_cv_pct / 100.0).ln_1p() / RUNS_PER_UNIT.sqrt();
    shift_log
        + noise.between_sd_pct / 100.0 * effect_draw(rng, noise.effect)
        + within_sd * normal(rng)
}

fn sides(rng: &mut ChaCha8Rng, noise: Noise, shift_pct: f64, max: usize) -> (Vec<f64>, Vec<f64>) {
    let shift_log = (shift_pct / 100.0).ln_1p();
    let a = (0..max).map(|_| unit_value(rng, noise, 0.0)).collect();
    let b = (0..max)
        .map(|_| unit_value(rng, noise, shift_log))
        .collect();
    (a, b)
}

/// Looks after every unit, the sides alternating A, B, A, B: (units of A, units of B).
fn looks(max: usize) -> impl Iterator<Item = (usize, usize)> {
    (1..=max)
        .flat_map(move |k| [(k, k - 1), (k, k)])
        .filter(|&(a, b)| a >= 1 && b >= 1)
}

/// The interval a rule gives at one look.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rule {
    Sequential,
    /// The fixed-design pooled t interval at 1 − α, as if each look were the only one.
    FixedEveryLook,
}

struct Intervals {
    /// t(1 − α/2, df) by df.
    t_fixed: Vec<f64>,
}

impl Intervals {
    fn new() -> Intervals {
        Intervals {
            t_fixed: (0..200)
                .map(|df| t_quantile(1.0 - ALPHA / 2.0, df.max(1) as f64))
                .collect(),
        }
    }

    fn of(
        &self,
        rule: Rule,
        a: &[f64],
        b: &[f64],
        known: Option<KnownNoise>,
    ) -> Option<(f64, f64)> {
        match rule {
            Rule::Sequential => confidence_sequence(a, b, known, ALPHA)?.bounds,
            Rule::FixedEveryLook => self.fixed(a, b),
        }
    }

    fn fixed(&self, a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
        let df = a.len() + b.len() - 2;
        if df < 1 {
            return None;
        }
        let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let ss = |v: &[f64]| v.iter().map(|x| (x - m(v)).powi(2)).sum::<f64>();
        let sd = ((ss(a) + ss(b)) / df as f64).sqrt();
        let se = sd * (1.0 / a.len() as f64 + 1.0 / b.len() as f64).sqrt();
        let shift = m(b) - m(a);
        let half = self.t_fixed[df] * se;
        Some((shift - half, shift + half))
    }
}

/// α + 2 standard errors of a rate estimated from `trials`.
fn limit(trials: usize) -> f64 {
    ALPHA + 2.0 * (ALPHA * (1.0 - ALPHA) / trials as f64).sqrt()
}

/// A calibration of `df` + 1 A/A units of the same noise.
fn calibration(rng: &mut ChaCha8Rng, noise: Noise, df: usize) -> KnownNoise {
    let units: Vec<f64> = (0..=df).map(|_| unit_value(rng, noise, 0.0)).collect();
    let m = units.iter().sum::<f64>() / units.len() as f64;
    let var = units.iter().map(|x| (x - m).powi(2)).sum::<f64>() / df as f64;
    KnownNoise {
        unit_sd: var.sqrt(),
        df: df as f64,
    }
}

/// Fraction of A/A trials in which the interval excludes 0 at some look up to `max`
/// units a side (no stopping: the worst case for any stopping rule).
fn aa_claim_rate(
    rule: Rule,
    noise: Noise,
    max: usize,
    calibration_df: Option<usize>,
    trials: usize,
    seed: u64,
) -> f64 {
    let intervals = Intervals::new();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut claims = 0;
    for _ in 0..trials {
        let known = calibration_df.map(|df| calibration(&mut rng, noise, df));
        let (a, b) = sides(&mut rng, noise, 0.0, max);
        let claimed = looks(max).any(|(na, nb)| {
            intervals
                .of(rule, &a[..na], &b[..nb], known)
                .is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0)
        });
        claims += usize::from(claimed);
    }
    claims as f64 / trials as f64
}

const TRIALS_AA: usize = 4000;

#[test]
fn aa_false_claims_hold_alpha_with_a_look_after_every_unit() {
    let lim = limit(TRIALS_AA);
    eprintln!(
        "A/A, a look after every unit, {TRIALS_AA} trials a cell, limit α + 2 SE = {:.4}",
        lim
    );
    eprintln!("| units a side | unit effect | within CV | between SD | calibration df | sequential | fixed t, every look |");
    eprintln!("|---|---|---|---|---|---|---|");
    let mut seed = 25_001;
    let mut cells = Vec::new();
    for max in [40, 20] {
        for effect in [UnitEffect::Normal, UnitEffect::T3, UnitEffect::Lognormal] {
            for within_cv_pct in [1.0, 5.0, 20.0] {
                for between_sd_pct in [3.0, 10.0] {
                    cells.push((
                        max,
                        Noise {
                            within_cv_pct,
                            between_sd_pct,
                            effect,
                        },
                        None,
                    ));
                }
            }
        }
    }
    for effect in [UnitEffect::Normal, UnitEffect::T3] {
        for df in [4, 9] {
            let noise = Noise {
                within_cv_pct: 5.0,
                between_sd_pct: 3.0,
                effect,
            };
            cells.push((20, noise, Some(df)));
        }
    }
    let mut failures = Vec::new();
    for (max, noise, cal) in cells {
        seed += 1;
        let seq = aa_claim_rate(Rule::Sequential, noise, max, cal, TRIALS_AA, seed);
        let fixed = aa_claim_rate(Rule::FixedEveryLook, noise, max, cal, TRIALS_AA, seed);
        eprintln!(
            "| {max} | {:?} | {}% | {}% | {} | {:.4} | {:.4} |",
            noise.effect,
            noise.within_cv_pct,
            noise.between_sd_pct,
            cal.map_or("-".to_string(), |d| d.to_string()),
            seq,
            fixed
        );
        if seq > lim {
            failures.push(format!("sequential {max} {noise:?} {cal:?}: {seq} > {lim}"));
        }
        // The comparison is wired right only if the fixed test, looked at as often,
        // claims far more than α.
        if fixed < 0.12 {
            failures.push(format!(
                "fixed every look {max} {noise:?}: {fixed} not above α"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

fn design(delta_pct: f64, max: usize) -> SequentialDesign {
    SequentialDesign {
        alpha: ALPHA,
        delta_pct,
        max_units_per_side: max,
        primaries: 1,
        higher_is_better: false,
    }
}

/// The rule run until it stops: units a side at the stop and the decision.
fn run_sequential(design: &SequentialDesign, a: &[f64], b: &[f64]) -> (usize, Decision, f64) {
    for (na, nb) in looks(design.max_units_per_side) {
        if let (iv, Some(decision)) = stops(design, &a[..na], &b[..nb], None) {
            return (na.max(nb), decision, iv.map_or(0.0, |i| i.shift));
        }
    }
    unreachable!("the bound always decides")
}

/// Whether a decision is the right one for a true shift (right direction for a change).
fn correct(shift_pct: f64, decision: &Decision, estimate: f64) -> bool {
    if shift_pct == 0.0 {
        return *decision == Decision::Equivalent;
    }
    *decision == Decision::Regression || (*decision == Decision::Changed && estimate > 0.0)
}

/// The fixed test's decision from one look at n units a side.
fn fixed_decision(intervals: &Intervals, a: &[f64], b: &[f64], delta_pct: f64) -> (Decision, f64) {
    let t = (delta_pct / 100.0).ln_1p();
    let (lo, hi) = intervals.fixed(a, b).expect("two units a side");
    let d = if lo > t {
        Decision::Regression
    } else if hi < -t {
        Decision::Improvement
    } else if lo >= -t && hi <= t {
        Decision::Equivalent
    } else if lo > 0.0 || hi < 0.0 {
        Decision::Changed
    } else {
        Decision::Undecided
    };
    (d, 0.5 * (lo + hi))
}

struct UnitsRow {
    between_sd_pct: f64,
    within_cv_pct: f64,
    shift_pct: f64,
    mean_units: f64,
    stopped_early: f64,
    correct: f64,
    wrong_direction: f64,
    /// Units a side at which one fixed look is right as often (`None`: not within max).
    fixed_same_power: Option<usize>,
}

fn units_to_decide(
    noise: Noise,
    shift_pct: f64,
    delta_pct: f64,
    max: usize,
    trials: usize,
    seed: u64,
) -> UnitsRow {
    let intervals = Intervals::new();
    let d = design(delta_pct, max);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut units, mut early, mut right, mut wrong) = (0usize, 0usize, 0usize, 0usize);
    let mut fixed_right = vec![0usize; max + 1];
    for _ in 0..trials {
        let (a, b) = sides(&mut rng, noise, shift_pct, max);
        let (n, decision, est) = run_sequential(&d, &a, &b);
        units += n;
        early += usize::from(n < max);
        right += usize::from(correct(shift_pct, &decision, est));
        let wrong_way = if shift_pct == 0.0 {
            decision.claims_change() && decision != Decision::Changed
        } else {
            decision == Decision::Improvement || decision == Decision::Equivalent
        };
        wrong += usize::from(wrong_way);
        for (n, hits) in fixed_right.iter_mut().enumerate().skip(2) {
            let (fd, fest) = fixed_decision(&intervals, &a[..n], &b[..n], delta_pct);
            *hits += usize::from(correct(shift_pct, &fd, fest));
        }
    }
    let t = trials as f64;
    let power = right as f64 / t;
    UnitsRow {
        between_sd_pct: noise.between_sd_pct,
        within_cv_pct: noise.within_cv_pct,
        shift_pct,
        mean_units: units as f64 / t,
        stopped_early: early as f64 / t,
        correct: power,
        wrong_direction: wrong as f64 / t,
        fixed_same_power: (power >= 0.05)
            .then(|| (2..=max).find(|&n| fixed_right[n] as f64 / t >= power))
            .flatten(),
    }
}

#[test]
fn units_to_decide_against_the_fixed_design_of_the_same_power() {
    const TRIALS: usize = 1000;
    const MAX: usize = 40;
    const DELTA_PCT: f64 = 1.0;
    eprintln!("Units a side to decide, δ = {DELTA_PCT}%, bound {MAX}, {TRIALS} trials a cell, {RUNS_PER_UNIT} runs a unit");
    eprintln!("| between SD | within CV | true shift | mean units (sequential) | stopped before bound | right decision | wrong | fixed n of the same power |");
    eprintln!("|---|---|---|---|---|---|---|---|");
    let mut seed = 25_100;
    let mut rows = Vec::new();
    for between_sd_pct in [0.5, 3.0] {
        for within_cv_pct in [1.0, 5.0, 20.0] {
            for shift_pct in [0.0, 1.0, 2.0, 5.0] {
                seed += 1;
                let noise = Noise {
                    within_cv_pct,
                    between_sd_pct,
                    effect: UnitEffect::Normal,
                };
                let r = units_to_decide(noise, shift_pct, DELTA_PCT, MAX, TRIALS, seed);
                eprintln!(
                    "| {}% | {}% | +{}% | {:.1} | {:.0}% | {:.0}% | {:.1}% | {} |",
                    r.between_sd_pct,
                    r.within_cv_pct,
                    r.shift_pct,
                    r.mean_units,
                    100.0 * r.stopped_early,
                    100.0 * r.correct,
                    100.0 * r.wrong_direction,
                    r.fixed_same_power
                        .map_or("-".to_string(), |n| n.to_string())
                );
                rows.push(r);
            }
        }
    }
    let lim = limit(TRIALS);
    for r in &rows {
        assert!(
            r.wrong_direction <= lim,
            "wrong decisions {} > {lim} at {}%/{}% shift {}",
            r.wrong_direction,
            r.between_sd_pct,
            r.within_cv_pct,
            r.shift_pct
        );
    }
    // Low noise, +5 %: a regression well before the bound.
    let easy = rows
        .iter()
        .find(|r| r.between_sd_pct == 0.5 && r.within_cv_pct == 1.0 && r.shift_pct == 5.0)
        .unwrap();
    assert!(
        easy.correct >= 0.95 && easy.mean_units <= 10.0,
        "{:.3} {:.1}",
        easy.correct,
        easy.mean_units
    );
}

#[test]
fn equivalence_stops_early_at_zero_and_is_never_said_at_two_delta() {
    const TRIALS: usize = 2000;
    const MAX: usize = 40;
    const DELTA_PCT: f64 = 1.0;
    let d = design(DELTA_PCT, MAX);
    let small = Noise {
        within_cv_pct: 1.0,
        between_sd_pct: 0.3,
        effect: UnitEffect::Normal,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(25_200);
    let (mut equivalent, mut units) = (0, 0);
    for _ in 0..TRIALS {
        let (a, b) = sides(&mut rng, small, 0.0, MAX);
        let (n, decision, _) = run_sequential(&d, &a, &b);
        equivalent += usize::from(decision == Decision::Equivalent);
        units += n;
    }
    let (eq_rate, mean_units) = (
        equivalent as f64 / TRIALS as f64,
        units as f64 / TRIALS as f64,
    );
    eprintln!("shift 0, unit SD ≈ 0.55%: equivalent {eq_rate:.3}, mean units a side {mean_units:.1} of {MAX}");
    assert!(
        eq_rate >= 0.95 && mean_units <= MAX as f64 / 2.0,
        "{eq_rate} {mean_units}"
    );

    // At 2δ, no look up to the bound may find the interval inside ±δ.
    let intervals = Intervals::new();
    let t = (DELTA_PCT / 100.0).ln_1p();
    let lim = limit(TRIALS);
    for (seed, effect) in [(25_201, UnitEffect::Normal), (25_202, UnitEffect::T3)] {
        for rule in [Rule::Sequential, Rule::FixedEveryLook] {
            let noise = Noise {
                within_cv_pct: 5.0,
                between_sd_pct: 1.0,
                effect,
            };
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut said = 0;
            for _ in 0..TRIALS {
                let (a, b) = sides(&mut rng, noise, 2.0 * DELTA_PCT, MAX);
                said += usize::from(looks(MAX).any(|(na, nb)| {
                    intervals
                        .of(rule, &a[..na], &b[..nb], None)
                        .is_some_and(|(lo, hi)| lo >= -t && hi <= t)
                }));
            }
            let rate = said as f64 / TRIALS as f64;
            eprintln!("shift 2δ, {effect:?}, {rule:?}: equivalent at some look {rate:.4} (limit {lim:.4})");
            if rule == Rule::Sequential {
                assert!(rate <= lim, "{effect:?}: {rate} > {lim}");
            }
        }
    }
}
