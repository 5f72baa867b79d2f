//! Seeded Monte-Carlo of the sequential rule (`docs/statistics.md`, "Sequential
//! decisions"): false claims with a look after every unit, beside the fixed-design t test
//! looked at just as often; units to decide against the fixed design of the same power;
//! equivalence; and over a declared maximum, the always-valid, calibrated Bayes-factor
//! and O'Brien-Fleming rules' A/A rates and right decisions. Print the tables with
//! `cargo nextest run -p kbench-stats --test sequential --no-capture`.

use kbench_stats::calibration::normal;
use kbench_stats::group_sequential::OBrienFleming;
use kbench_stats::sequential::{
    confidence_sequence, design_interval, look, stops, Boundary, Decision, KnownNoise,
    SequentialDesign,
};
use kbench_stats::special::{normal_quantile, normal_sf, t_quantile, t_sf};
use rand::SeedableRng;
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
    /// A group-sequential test over a declared maximum with a look after every unit:
    /// the repeated t interval with boundaries found by simulation.
    GroupSequential(Spending),
}

/// The shape of a group-sequential boundary on the z scale over the information
/// fraction f (units so far / declared units): Pocock's constant c, or O'Brien and
/// Fleming's c/√f.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Spending {
    Pocock,
    OBrienFleming,
}

/// Pooled two-sample t: (shift, standard error, df).
fn pooled_t(a: &[f64], b: &[f64]) -> Option<(f64, f64, usize)> {
    let df = (a.len() + b.len()).checked_sub(2).filter(|&d| d >= 1)?;
    let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ss = |v: &[f64]| v.iter().map(|x| (x - m(v)).powi(2)).sum::<f64>();
    let sd = ((ss(a) + ss(b)) / df as f64).sqrt();
    let se = sd * (1.0 / a.len() as f64 + 1.0 / b.len() as f64).sqrt();
    Some((m(b) - m(a), se, df))
}

/// The index of a look with `na` and `nb` units (also the t's degrees of freedom).
fn look_index(na: usize, nb: usize) -> usize {
    na + nb - 2
}

struct Intervals {
    /// t(1 − α/2, df) by df.
    t_fixed: Vec<f64>,
    /// Group-sequential t boundaries by look index (∞ where there is none).
    pocock: Vec<f64>,
    obrien_fleming: Vec<f64>,
}

const GS_CALIBRATION_TRIALS: usize = 10_000;

impl Intervals {
    /// Intervals for looks after every unit; the group-sequential boundaries are for a
    /// declared maximum of `declared_max` units a side (and extend past it unchanged in
    /// shape, as a user who keeps looking would).
    fn new(declared_max: usize) -> Intervals {
        let (c_pocock, c_obf) = group_sequential_constants(declared_max);
        let looks = 4 * declared_max;
        let boundary = |z_of_f: &dyn Fn(f64) -> f64| -> Vec<f64> {
            (0..looks)
                .map(|idx| {
                    let f = (idx + 2) as f64 / (2 * declared_max) as f64;
                    let t = -t_quantile(normal_sf(z_of_f(f)), idx.max(1) as f64);
                    if idx >= 1 && t.is_finite() {
                        t
                    } else {
                        f64::INFINITY
                    }
                })
                .collect()
        };
        Intervals {
            t_fixed: (0..looks)
                .map(|df| t_quantile(1.0 - ALPHA / 2.0, df.max(1) as f64))
                .collect(),
            pocock: boundary(&|_| c_pocock),
            obrien_fleming: boundary(&|f| c_obf / f.sqrt()),
        }
    }

    fn of(
        &self,
        rule: Rule,
        a: &[f64],
        b: &[f64],
        known: Option<KnownNoise>,
    ) -> Option<(f64, f64)> {
        let boundary = match rule {
            Rule::Sequential => return confidence_sequence(a, b, known, ALPHA)?.bounds,
            Rule::FixedEveryLook => &self.t_fixed,
            Rule::GroupSequential(Spending::Pocock) => &self.pocock,
            Rule::GroupSequential(Spending::OBrienFleming) => &self.obrien_fleming,
        };
        let (shift, se, df) = pooled_t(a, b)?;
        let half = boundary[df] * se;
        half.is_finite().then_some((shift - half, shift + half))
    }

    fn fixed(&self, a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
        self.of(Rule::FixedEveryLook, a, b, None)
    }
}

/// The constants of the Pocock and O'Brien-Fleming boundaries for t statistics with a
/// look after every unit up to `declared_max` a side: each look's t is turned into the
/// z of the same two-sided p, and c is the (1 − α) quantile, under normal A/A units, of
/// max z (Pocock) or max z·√f (O'Brien-Fleming).
fn group_sequential_constants(declared_max: usize) -> (f64, f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(25_300 + declared_max as u64);
    let noise = Noise {
        within_cv_pct: 1.0,
        between_sd_pct: 3.0,
        effect: UnitEffect::Normal,
    };
    let (mut pocock, mut obf) = (Vec::new(), Vec::new());
    for _ in 0..GS_CALIBRATION_TRIALS {
        let (a, b) = sides(&mut rng, noise, 0.0, declared_max);
        let (mut zmax, mut zfmax) = (0.0f64, 0.0f64);
        for (na, nb) in looks(declared_max) {
            let Some((shift, se, df)) = pooled_t(&a[..na], &b[..nb]) else {
                continue;
            };
            let p = 2.0 * t_sf((shift / se).abs(), df as f64);
            let z = -normal_quantile((p / 2.0).max(1e-300));
            let f = (look_index(na, nb) + 2) as f64 / (2 * declared_max) as f64;
            zmax = zmax.max(z);
            zfmax = zfmax.max(z * f.sqrt());
        }
        pocock.push(zmax);
        obf.push(zfmax);
    }
    let quantile = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[((1.0 - ALPHA) * v.len() as f64) as usize]
    };
    (quantile(pocock), quantile(obf))
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

/// For each rule, the fraction of A/A trials in which its interval excludes 0 at some
/// look up to `look_to` units a side (no stopping: the worst case for any stopping
/// rule). The rules see the same trials.
fn aa_claim_rates(
    intervals: &Intervals,
    rules: &[Rule],
    noise: Noise,
    look_to: usize,
    calibration_df: Option<usize>,
    trials: usize,
    seed: u64,
) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut claims = vec![0usize; rules.len()];
    for _ in 0..trials {
        let known = calibration_df.map(|df| calibration(&mut rng, noise, df));
        let (a, b) = sides(&mut rng, noise, 0.0, look_to);
        for (rule, count) in rules.iter().zip(claims.iter_mut()) {
            let claimed = looks(look_to).any(|(na, nb)| {
                intervals
                    .of(*rule, &a[..na], &b[..nb], known)
                    .is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0)
            });
            *count += usize::from(claimed);
        }
    }
    claims.iter().map(|&c| c as f64 / trials as f64).collect()
}

const TRIALS_AA: usize = 4000;
const RULES: [Rule; 4] = [
    Rule::Sequential,
    Rule::FixedEveryLook,
    Rule::GroupSequential(Spending::Pocock),
    Rule::GroupSequential(Spending::OBrienFleming),
];

fn aa_cells() -> Vec<(usize, Noise, Option<usize>)> {
    let mut cells = Vec::new();
    for max in [40, 20] {
        for effect in [UnitEffect::Normal, UnitEffect::T3, UnitEffect::Lognormal] {
            for within_cv_pct in [1.0, 5.0, 20.0] {
                for between_sd_pct in [3.0, 10.0] {
                    let noise = Noise {
                        within_cv_pct,
                        between_sd_pct,
                        effect,
                    };
                    cells.push((max, noise, None));
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
    cells
}

#[test]
fn aa_false_claims_hold_alpha_with_a_look_after_every_unit() {
    let lim = limit(TRIALS_AA);
    eprintln!("A/A, a look after every unit, {TRIALS_AA} trials a cell, limit α + 2 SE = {lim:.4}");
    eprintln!("| units a side | unit effect | within CV | between SD | calibration df | sequential | fixed t, every look | group-seq. Pocock | group-seq. O'Brien-Fleming |");
    eprintln!("|---|---|---|---|---|---|---|---|---|");
    let by_max = [(40, Intervals::new(40)), (20, Intervals::new(20))];
    let mut failures = Vec::new();
    for (seed, (max, noise, cal)) in (25_001..).zip(aa_cells()) {
        let intervals = &by_max.iter().find(|(m, _)| *m == max).unwrap().1;
        let rates = aa_claim_rates(intervals, &RULES, noise, max, cal, TRIALS_AA, seed);
        eprintln!(
            "| {max} | {:?} | {}% | {}% | {} | {:.4} | {:.4} | {:.4} | {:.4} |",
            noise.effect,
            noise.within_cv_pct,
            noise.between_sd_pct,
            cal.map_or("-".to_string(), |d| d.to_string()),
            rates[0],
            rates[1],
            rates[2],
            rates[3],
        );
        if rates[0] > lim {
            failures.push(format!(
                "sequential {max} {noise:?} {cal:?}: {} > {lim}",
                rates[0]
            ));
        }
        // The comparison is wired right only if the fixed test, looked at as often,
        // claims far more than α.
        if rates[1] < 0.12 {
            failures.push(format!(
                "fixed every look {max} {noise:?}: {} not above α",
                rates[1]
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A user who declared 20 boots a side and keeps looking to 40: the always-valid
/// interval still holds; a group-sequential design does not promise to. The library's
/// declared-maximum boundary reads only the first 20 units a side, so it holds too.
#[test]
fn looking_past_the_declared_maximum() {
    let lim = limit(TRIALS_AA);
    let intervals = Intervals::new(20);
    let declared = DeclaredDesign::new(20, 1, None);
    eprintln!("A/A, declared 20 a side, looked at after every unit to 40, {TRIALS_AA} trials, limit {lim:.4}");
    eprintln!("| unit effect | sequential | fixed t, every look | group-seq. Pocock | group-seq. O'Brien-Fleming | library's declared maximum (first 20 a side) |");
    eprintln!("|---|---|---|---|---|---|");
    for (seed, effect) in (25_400..).zip([UnitEffect::Normal, UnitEffect::T3]) {
        let noise = Noise {
            within_cv_pct: 5.0,
            between_sd_pct: 3.0,
            effect,
        };
        let rates = aa_claim_rates(&intervals, &RULES, noise, 40, None, TRIALS_AA, seed);
        let library = past_the_maximum_claim_rate(&declared, noise, 40, TRIALS_AA, seed);
        eprintln!(
            "| {effect:?} | {:.4} | {:.4} | {:.4} | {:.4} | {library:.4} |",
            rates[0], rates[1], rates[2], rates[3]
        );
        assert!(
            rates[0] <= lim,
            "sequential {effect:?}: {} > {lim}",
            rates[0]
        );
        assert!(
            library <= lim,
            "declared maximum {effect:?}: {library} > {lim}"
        );
    }
}

/// A/A claims of the library's declared-maximum rule looked at after every unit up to
/// `look_to` a side, past its maximum: each look reads the first `max` units a side.
fn past_the_maximum_claim_rate(
    d: &DeclaredDesign,
    noise: Noise,
    look_to: usize,
    trials: usize,
    seed: u64,
) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let max = d.max();
    let mut claims = 0;
    for trial in 0..trials {
        let (a, b) = sides(&mut rng, noise, 0.0, look_to);
        let read = |n: usize| n.min(max);
        let claimed = looks(look_to).any(|(na, nb)| {
            let (a_read, b_read) = (&a[..read(na)], &b[..read(nb)]);
            if trial < 5 {
                let library = design_interval(&d.design, &a[..na], &b[..nb], None);
                let ours = d.interval(Declared::OBrienFleming, a_read, b_read, None);
                let library = library.and_then(|i| i.bounds);
                assert!(agree(ours, library), "{na} {nb}: {ours:?} {library:?}");
            }
            d.interval(Declared::OBrienFleming, a_read, b_read, None)
                .is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0)
        });
        claims += usize::from(claimed);
    }
    claims as f64 / trials as f64
}

fn design(delta_pct: f64, max: usize) -> SequentialDesign {
    SequentialDesign {
        alpha: ALPHA,
        delta_pct,
        max_units_per_side: max,
        primaries: 1,
        higher_is_better: false,
        boundary: Boundary::AlwaysValid,
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

/// The decision from an interval against ±δ; before the bound only answers against δ
/// stop (as in the library's rule), at the bound every interval gives one.
fn interval_decision((lo, hi): (f64, f64), delta_pct: f64, at_bound: bool) -> Option<Decision> {
    let t = (delta_pct / 100.0).ln_1p();
    if lo > t {
        Some(Decision::Regression)
    } else if hi < -t {
        Some(Decision::Improvement)
    } else if lo >= -t && hi <= t {
        Some(Decision::Equivalent)
    } else if !at_bound {
        None
    } else if lo > 0.0 || hi < 0.0 {
        Some(Decision::Changed)
    } else {
        Some(Decision::Undecided)
    }
}

/// The fixed test's decision from one look at n units a side.
fn fixed_decision(intervals: &Intervals, a: &[f64], b: &[f64], delta_pct: f64) -> (Decision, f64) {
    let iv = intervals.fixed(a, b).expect("two units a side");
    let d = interval_decision(iv, delta_pct, true).expect("a decision at the bound");
    (d, 0.5 * (iv.0 + iv.1))
}

/// A group-sequential rule run until it stops, as [`run_sequential`].
fn run_group_sequential(
    intervals: &Intervals,
    spending: Spending,
    max: usize,
    delta_pct: f64,
    a: &[f64],
    b: &[f64],
) -> (usize, Decision, f64) {
    let rule = Rule::GroupSequential(spending);
    for (na, nb) in looks(max) {
        let at_bound = na.min(nb) >= max;
        let iv = intervals.of(rule, &a[..na], &b[..nb], None);
        let decision = match iv {
            Some(iv) => interval_decision(iv, delta_pct, at_bound),
            None => at_bound.then_some(Decision::Undecided),
        };
        if let Some(d) = decision {
            return (na.max(nb), d, iv.map_or(0.0, |(lo, hi)| 0.5 * (lo + hi)));
        }
    }
    unreachable!("the bound always decides")
}

/// Mean units a side at the stop and the rate of right decisions of one rule.
#[derive(Default)]
struct Tally {
    units: usize,
    early: usize,
    right: usize,
    wrong: usize,
}

impl Tally {
    fn add(&mut self, shift_pct: f64, max: usize, (n, decision, est): (usize, Decision, f64)) {
        self.units += n;
        self.early += usize::from(n < max);
        self.right += usize::from(correct(shift_pct, &decision, est));
        let wrong_way = if shift_pct == 0.0 {
            decision.claims_change() && decision != Decision::Changed
        } else {
            decision == Decision::Improvement || decision == Decision::Equivalent
        };
        self.wrong += usize::from(wrong_way);
    }
}

struct UnitsRow {
    between_sd_pct: f64,
    within_cv_pct: f64,
    shift_pct: f64,
    mean_units: f64,
    stopped_early: f64,
    correct: f64,
    wrong_direction: f64,
    /// Mean units and right decisions of the Pocock and O'Brien-Fleming designs.
    pocock: (f64, f64),
    obrien_fleming: (f64, f64),
    /// Units a side at which one fixed look is right as often as the sequential rule
    /// (`None`: not within max, or the rule is rarely right at all).
    fixed_same_power: Option<usize>,
}

fn units_to_decide(
    intervals: &Intervals,
    noise: Noise,
    shift_pct: f64,
    delta_pct: f64,
    max: usize,
    trials: usize,
    seed: u64,
) -> UnitsRow {
    let d = design(delta_pct, max);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut seq, mut pocock, mut obf) = (Tally::default(), Tally::default(), Tally::default());
    let mut fixed_right = vec![0usize; max + 1];
    for _ in 0..trials {
        let (a, b) = sides(&mut rng, noise, shift_pct, max);
        seq.add(shift_pct, max, run_sequential(&d, &a, &b));
        let gs = |s| run_group_sequential(intervals, s, max, delta_pct, &a, &b);
        pocock.add(shift_pct, max, gs(Spending::Pocock));
        obf.add(shift_pct, max, gs(Spending::OBrienFleming));
        for (n, hits) in fixed_right.iter_mut().enumerate().skip(2) {
            let (fd, fest) = fixed_decision(intervals, &a[..n], &b[..n], delta_pct);
            *hits += usize::from(correct(shift_pct, &fd, fest));
        }
    }
    let t = trials as f64;
    let power = seq.right as f64 / t;
    let summary = |x: &Tally| (x.units as f64 / t, x.right as f64 / t);
    UnitsRow {
        between_sd_pct: noise.between_sd_pct,
        within_cv_pct: noise.within_cv_pct,
        shift_pct,
        mean_units: seq.units as f64 / t,
        stopped_early: seq.early as f64 / t,
        correct: power,
        wrong_direction: seq.wrong as f64 / t,
        pocock: summary(&pocock),
        obrien_fleming: summary(&obf),
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
    eprintln!("| between SD | within CV | true shift | sequential: mean units | stopped before bound | right | wrong | fixed n of the same power | Pocock: mean units, right | O'Brien-Fleming: mean units, right |");
    eprintln!("|---|---|---|---|---|---|---|---|---|---|");
    let intervals = Intervals::new(MAX);
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
                let r = units_to_decide(&intervals, noise, shift_pct, DELTA_PCT, MAX, TRIALS, seed);
                eprintln!(
                    "| {}% | {}% | +{}% | {:.1} | {:.0}% | {:.0}% | {:.1}% | {} | {:.1}, {:.0}% | {:.1}, {:.0}% |",
                    r.between_sd_pct,
                    r.within_cv_pct,
                    r.shift_pct,
                    r.mean_units,
                    100.0 * r.stopped_early,
                    100.0 * r.correct,
                    100.0 * r.wrong_direction,
                    r.fixed_same_power
                        .map_or("-".to_string(), |n| n.to_string()),
                    r.pocock.0,
                    100.0 * r.pocock.1,
                    r.obrien_fleming.0,
                    100.0 * r.obrien_fleming.1,
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
    let intervals = Intervals::new(MAX);
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

/// Counted boots can read a figure alike in every boot (the IPI round trip: 1,531
/// instructions in each): a unit spread of exactly zero. The rule still decides once
/// its interval is bounded (four units a side), on the shift alone: a shift past δ a
/// change in its direction, a shift of zero no change larger than δ; before that, it
/// goes on.
#[test]
fn a_spread_of_exactly_zero_decides_on_the_shift_once_bounded() {
    let log = |v: f64| v.ln();
    let design = design(0.5, 6);
    let alike = |value: f64, n: usize| vec![log(value); n];
    for n in 1..4 {
        let early = look(&design, &alike(1531.0, n), &alike(1559.0, n), None);
        assert!(!early.decision.is_final(), "{n} a side: {early:?}");
    }
    let slower = look(&design, &alike(1531.0, 4), &alike(1559.0, 4), None);
    assert_eq!(slower.decision, Decision::Regression, "{slower:?}");
    let (lo, hi) = slower.interval_pct.expect("bounded at four a side");
    assert!(
        (lo - 1.829).abs() < 0.01 && (hi - lo).abs() < 1e-9,
        "{slower:?}"
    );
    let faster = look(&design, &alike(1559.0, 4), &alike(1531.0, 4), None);
    assert_eq!(faster.decision, Decision::Improvement, "{faster:?}");
    let same = look(&design, &alike(1531.0, 4), &alike(1531.0, 4), None);
    assert_eq!(same.decision, Decision::Equivalent, "{same:?}");
    // A shift inside δ but not zero (two instructions in 1,531): no change larger
    // than δ, not a regression.
    let small = look(&design, &alike(1531.0, 6), &alike(1533.0, 6), None);
    assert_eq!(small.decision, Decision::Equivalent, "{small:?}");
}

// ---------------------------------------------------------------------------------
// A declared maximum (issue 40): the boundaries that spend α over the bound.
//
// Three rules over the same declared maximum, each reading the first `max` units a
// side only: the always-valid interval (threshold 1/α: it spends 1.6-2.4 % of its 5 %);
// the same Bayes-factor interval with its threshold calibrated so that the A/A any-look
// rate over the maximum is α; and O'Brien-Fleming for t statistics (the library's
// `Boundary::DeclaredMaximum`).

/// A rule over a declared maximum.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Declared {
    AlwaysValid,
    CalibratedBayesFactor,
    OBrienFleming,
}

const DECLARED_RULES: [Declared; 3] = [
    Declared::AlwaysValid,
    Declared::CalibratedBayesFactor,
    Declared::OBrienFleming,
];

/// A design over a declared maximum, with everything each rule needs at a look.
struct DeclaredDesign {
    design: SequentialDesign,
    /// The level at which the Bayes-factor interval's threshold 1/level makes its A/A
    /// any-look rate over the maximum α per primary.
    bayes_factor_level: f64,
    /// O'Brien-Fleming's critical |t| by [units of A][units of B]: the library's
    /// (`OBrienFleming::critical_t`), computed once rather than at every look.
    obf_critical_t: Vec<Vec<Option<f64>>>,
    obf: OBrienFleming,
    calibration_df: usize,
}

impl DeclaredDesign {
    fn new(max: usize, primaries: usize, calibration_df: Option<usize>) -> DeclaredDesign {
        let design = SequentialDesign {
            alpha: ALPHA,
            delta_pct: 1.0,
            max_units_per_side: max,
            primaries,
            higher_is_better: false,
            boundary: Boundary::DeclaredMaximum,
        };
        let alpha = design.alpha_per_primary();
        let extra_df = calibration_df.unwrap_or(0);
        let obf = OBrienFleming::new(max, alpha, extra_df as f64);
        let obf_critical_t = (0..=max)
            .map(|na| {
                (0..=max)
                    .map(|nb| {
                        let df = (na + nb + extra_df) as f64 - 2.0;
                        (na >= 1 && nb >= 1 && df > 0.0)
                            .then(|| obf.critical_t(df, na, nb))
                            .flatten()
                    })
                    .collect()
            })
            .collect();
        DeclaredDesign {
            design,
            bayes_factor_level: calibrated_bayes_factor_level(max, alpha, extra_df),
            obf_critical_t,
            obf,
            calibration_df: extra_df,
        }
    }

    fn max(&self) -> usize {
        self.design.max_units_per_side
    }

    /// The rule's interval at a look with the first `na` and `nb` units.
    fn interval(
        &self,
        rule: Declared,
        a: &[f64],
        b: &[f64],
        known: Option<KnownNoise>,
    ) -> Option<(f64, f64)> {
        let alpha = self.design.alpha_per_primary();
        match rule {
            Declared::AlwaysValid => confidence_sequence(a, b, known, alpha)?.bounds,
            Declared::CalibratedBayesFactor => {
                confidence_sequence(a, b, known, self.bayes_factor_level)?.bounds
            }
            Declared::OBrienFleming => {
                let (shift, se, df) = pooled_t_with(a, b, known)?;
                let (na, nb) = (a.len(), b.len());
                // The table has the calibration's degrees of freedom in; a look whose
                // units refused the calibration has only its own.
                let tabled = df == (na + nb + self.calibration_df) as f64 - 2.0;
                let critical = match tabled {
                    true => self.obf_critical_t[na][nb],
                    false => self.obf.critical_t(df, na, nb),
                };
                let half = critical? * se;
                Some((shift - half, shift + half))
            }
        }
    }
}

/// Pooled two-sample t with a calibration's sum of squares and df added: (shift,
/// standard error, df), as the library pools them.
fn pooled_t_with(a: &[f64], b: &[f64], known: Option<KnownNoise>) -> Option<(f64, f64, f64)> {
    let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ss = |v: &[f64]| v.iter().map(|x| (x - m(v)).powi(2)).sum::<f64>();
    let own_df = (a.len() + b.len()) as f64 - 2.0;
    // As the library borrows a calibration: only when today's units do not find it
    // too small (`KnownNoise::fits_today`).
    let today_sd = ((ss(a) + ss(b)) / own_df).sqrt();
    let borrowed = known.filter(|k| k.fits_today(today_sd, own_df));
    let (extra_ss, extra_df) = borrowed.map_or((0.0, 0.0), |k| (k.df * k.unit_sd.powi(2), k.df));
    let df = own_df + extra_df;
    if a.is_empty() || b.is_empty() || df <= 0.0 {
        return None;
    }
    let sd = ((ss(a) + ss(b) + extra_ss) / df).sqrt();
    let se = sd * (1.0 / a.len() as f64 + 1.0 / b.len() as f64).sqrt();
    Some((m(b) - m(a), se, df))
}

/// ln of the scale-invariant Bayes factor (prior variance 1 on the standardised shift)
/// of a pooled t with `df` degrees of freedom and effective size `n_eff`.
fn log_bayes_factor(t: f64, df: f64, n_eff: f64) -> f64 {
    let r = 1.0 + n_eff;
    -0.5 * r.ln() + 0.5 * (df + 1.0) * ((t * t / df).ln_1p() - (t * t / (df * r)).ln_1p())
}

const BF_CALIBRATION_TRIALS: usize = 20_000;

/// The level whose threshold (1/level) the Bayes factor of normal A/A units crosses at
/// some look up to `max` a side (A, B alternating) in α of the trials.
fn calibrated_bayes_factor_level(max: usize, alpha: f64, extra_df: usize) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(40_100 + max as u64 + 1000 * extra_df as u64);
    let mut maxima: Vec<f64> = (0..BF_CALIBRATION_TRIALS)
        .map(|_| {
            let extra_ss: f64 = (0..extra_df).map(|_| normal(&mut rng).powi(2)).sum();
            let a: Vec<f64> = (0..max).map(|_| normal(&mut rng)).collect();
            let b: Vec<f64> = (0..max).map(|_| normal(&mut rng)).collect();
            let known = (extra_df > 0).then(|| KnownNoise {
                unit_sd: (extra_ss / extra_df as f64).sqrt(),
                df: extra_df as f64,
            });
            looks(max)
                .filter_map(|(na, nb)| {
                    let (shift, se, df) = pooled_t_with(&a[..na], &b[..nb], known)?;
                    let n_eff = (na * nb) as f64 / (na + nb) as f64;
                    Some(log_bayes_factor(shift / se, df, n_eff))
                })
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect();
    maxima.sort_by(f64::total_cmp);
    let threshold = maxima[((1.0 - alpha) * maxima.len() as f64) as usize];
    (-threshold).exp()
}

/// A/A: for each rule, the fraction of trials whose interval excludes 0 at some look up
/// to the declared maximum (no stopping: the worst case for any stopping rule).
fn declared_aa_rates(
    d: &DeclaredDesign,
    noise: Noise,
    calibration_df: Option<usize>,
    trials: usize,
    seed: u64,
) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let max = d.max();
    let mut claims = [0usize; DECLARED_RULES.len()];
    for trial in 0..trials {
        let known = calibration_df.map(|df| calibration(&mut rng, noise, df));
        let (a, b) = sides(&mut rng, noise, 0.0, max);
        if trial < 20 {
            same_as_the_library(d, &a, &b, known);
        }
        for (rule, count) in DECLARED_RULES.iter().zip(claims.iter_mut()) {
            let claimed = looks(max).any(|(na, nb)| {
                d.interval(*rule, &a[..na], &b[..nb], known)
                    .is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0)
            });
            *count += usize::from(claimed);
        }
    }
    claims.iter().map(|&c| c as f64 / trials as f64).collect()
}

/// The table of O'Brien-Fleming's critical t gives the library's own interval.
fn same_as_the_library(d: &DeclaredDesign, a: &[f64], b: &[f64], known: Option<KnownNoise>) {
    for (na, nb) in looks(d.max()) {
        let ours = d.interval(Declared::OBrienFleming, &a[..na], &b[..nb], known);
        let library = design_interval(&d.design, &a[..na], &b[..nb], known).and_then(|i| i.bounds);
        assert!(agree(ours, library), "{na} {nb}: {ours:?} {library:?}");
    }
}

/// Two intervals equal to rounding, or both unbounded.
fn agree(x: Option<(f64, f64)>, y: Option<(f64, f64)>) -> bool {
    match (x, y) {
        (Some(x), Some(y)) => (x.0 - y.0).abs() < 1e-12 && (x.1 - y.1).abs() < 1e-12,
        (x, y) => x == y,
    }
}

/// α (per primary) + 2 SE of a rate from `trials`.
fn limit_at(alpha: f64, trials: usize) -> f64 {
    alpha + 2.0 * (alpha * (1.0 - alpha) / trials as f64).sqrt()
}

struct DeclaredAaCell {
    max: usize,
    effect: UnitEffect,
    primaries: usize,
    calibration_df: Option<usize>,
}

fn declared_aa_cells() -> Vec<DeclaredAaCell> {
    let cell = |max, effect, primaries, calibration_df| DeclaredAaCell {
        max,
        effect,
        primaries,
        calibration_df,
    };
    let mut cells = Vec::new();
    for max in [10, 20, 40] {
        for effect in [UnitEffect::Normal, UnitEffect::T3, UnitEffect::Lognormal] {
            cells.push(cell(max, effect, 1, None));
        }
    }
    for effect in [UnitEffect::Normal, UnitEffect::T3] {
        cells.push(cell(20, effect, 2, None));
        cells.push(cell(20, effect, 1, Some(4)));
        cells.push(cell(20, effect, 1, Some(9)));
    }
    cells
}

/// The chosen boundary (O'Brien-Fleming) holds α per primary over its declared maximum,
/// under every noise model, with α split over two primaries and with a calibration's
/// extra degrees of freedom; the other two are printed beside it.
#[test]
fn declared_maximum_holds_alpha_with_a_look_after_every_unit() {
    const TRIALS: usize = 4000;
    eprintln!("A/A over a declared maximum, a look after every unit up to it, {TRIALS} trials a cell; within CV 5 %, between SD 3 %");
    eprintln!("| units a side | unit effect | primaries | calibration df | limit | always-valid | calibrated BF | O'Brien-Fleming (chosen) |");
    eprintln!("|---|---|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for (seed, c) in (40_201..).zip(declared_aa_cells()) {
        let d = DeclaredDesign::new(c.max, c.primaries, c.calibration_df);
        let noise = Noise {
            within_cv_pct: 5.0,
            between_sd_pct: 3.0,
            effect: c.effect,
        };
        let rates = declared_aa_rates(&d, noise, c.calibration_df, TRIALS, seed);
        let lim = limit_at(d.design.alpha_per_primary(), TRIALS);
        eprintln!(
            "| {} | {:?} | {} | {} | {lim:.4} | {:.4} | {:.4} | {:.4} |",
            c.max,
            c.effect,
            c.primaries,
            c.calibration_df.map_or("-".to_string(), |d| d.to_string()),
            rates[0],
            rates[1],
            rates[2],
        );
        if rates[2] > lim {
            failures.push(format!(
                "O'Brien-Fleming {} {:?} {} {:?}: {} > {lim}",
                c.max, c.effect, c.primaries, c.calibration_df, rates[2]
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A rule over a declared maximum run until it stops, as the library's `stops` does:
/// (units a side at the stop, decision, shift estimate).
fn run_declared(
    d: &DeclaredDesign,
    rule: Declared,
    a: &[f64],
    b: &[f64],
) -> (usize, Decision, f64) {
    let max = d.max();
    for (na, nb) in looks(max) {
        let at_bound = na.min(nb) >= max;
        let (a, b) = (&a[..na], &b[..nb]);
        let decision = match d.interval(rule, a, b, None) {
            Some(iv) => interval_decision(iv, d.design.delta_pct, at_bound),
            None => at_bound.then_some(Decision::Undecided),
        };
        if let Some(decision) = decision {
            let shift = a.iter().sum::<f64>() / na as f64 - b.iter().sum::<f64>() / nb as f64;
            return (na.max(nb), decision, -shift);
        }
    }
    unreachable!("the bound always decides")
}

/// Right and wrong decisions for a true shift (B slower by `shift_pct`) against δ.
/// Right: at 0 only `equivalent`; inside δ (δ/2) `equivalent` or an upward `changed`
/// (both true: no change larger than δ; a change, upwards); from δ on (δ itself
/// included) a regression or an upward `changed`. Wrong: at 0 any claim of a change;
/// inside δ a regression, an improvement or a downward `changed`; from δ on
/// `equivalent`, an improvement or a downward `changed`. `undecided` is neither.
fn score(shift_pct: f64, delta_pct: f64, decision: &Decision, estimate: f64) -> (bool, bool) {
    let changed_up = *decision == Decision::Changed && estimate > 0.0;
    let changed_down = *decision == Decision::Changed && estimate <= 0.0;
    let equivalent = *decision == Decision::Equivalent;
    let regression = *decision == Decision::Regression;
    let improvement = *decision == Decision::Improvement;
    if shift_pct == 0.0 {
        (equivalent, decision.claims_change())
    } else if shift_pct < delta_pct {
        (
            equivalent || changed_up,
            regression || improvement || changed_down,
        )
    } else {
        (
            regression || changed_up,
            equivalent || improvement || changed_down,
        )
    }
}

/// Right, wrong and mean units a side of one rule in one cell.
#[derive(Default, Clone, Copy)]
struct DeclaredTally {
    right: usize,
    wrong: usize,
    units: usize,
}

/// The unit noise with a unit SD (log scale) of about `unit_sd_pct`: runs of CV 1 %
/// (5 a unit) and a between-unit offset of the given shape making up the rest.
fn noise_of_unit_sd(unit_sd_pct: f64, effect: UnitEffect) -> Noise {
    let within_pct = 100.0 * 0.01f64.ln_1p() / RUNS_PER_UNIT.sqrt();
    Noise {
        within_cv_pct: 1.0,
        between_sd_pct: (unit_sd_pct.powi(2) - within_pct.powi(2)).sqrt(),
        effect,
    }
}

fn declared_right_decisions(
    d: &DeclaredDesign,
    noise: Noise,
    shift_pct: f64,
    trials: usize,
    seed: u64,
) -> [DeclaredTally; 3] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut tallies = [DeclaredTally::default(); 3];
    for _ in 0..trials {
        let (a, b) = sides(&mut rng, noise, shift_pct, d.max());
        for (rule, tally) in DECLARED_RULES.iter().zip(tallies.iter_mut()) {
            let (units, decision, estimate) = run_declared(d, *rule, &a, &b);
            let (right, wrong) = score(shift_pct, d.design.delta_pct, &decision, estimate);
            tally.right += usize::from(right);
            tally.wrong += usize::from(wrong);
            tally.units += units;
        }
    }
    tallies
}

/// Right decisions and mean units a side of the three rules over the same declared
/// maximum, at true changes of 0, δ/2, δ, 2δ and 5δ (δ = 1 %): O'Brien-Fleming, the
/// chosen boundary, is right at least as often as the other two in every cell.
#[test]
fn declared_maximum_right_decisions_of_the_three_rules() {
    const TRIALS: usize = 2000;
    const DELTA_PCT: f64 = 1.0;
    eprintln!("Right decisions over a declared maximum, δ = {DELTA_PCT} %, {TRIALS} trials a cell: right % (wrong %), mean units a side");
    eprintln!("| bound | unit effect | unit SD | true change | always-valid | calibrated BF | O'Brien-Fleming (chosen) |");
    eprintln!("|---|---|---|---|---|---|---|");
    let (mut seed, mut failures) = (40_300, Vec::new());
    let (rate, se) = (
        |n: usize| n as f64 / TRIALS as f64,
        (0.25 / TRIALS as f64).sqrt(),
    );
    for max in [20, 40] {
        let d = DeclaredDesign::new(max, 1, None);
        for effect in [UnitEffect::Normal, UnitEffect::T3, UnitEffect::Lognormal] {
            for unit_sd_pct in [1.0, 3.0] {
                for multiple in [0.0, 0.5, 1.0, 2.0, 5.0] {
                    seed += 1;
                    let noise = noise_of_unit_sd(unit_sd_pct, effect);
                    let shift_pct = multiple * DELTA_PCT;
                    let tallies = declared_right_decisions(&d, noise, shift_pct, TRIALS, seed);
                    let cell = |t: &DeclaredTally| {
                        let units = t.units as f64 / TRIALS as f64;
                        let (right, wrong) = (100.0 * rate(t.right), 100.0 * rate(t.wrong));
                        format!("{right:.1} % ({wrong:.1} %), {units:.1}")
                    };
                    eprintln!(
                        "| {max} | {effect:?} | {unit_sd_pct} % | {multiple}δ | {} | {} | {} |",
                        cell(&tallies[0]),
                        cell(&tallies[1]),
                        cell(&tallies[2]),
                    );
                    let chosen = rate(tallies[2].right);
                    for (rule, t) in DECLARED_RULES.iter().zip(&tallies) {
                        let wrong = rate(t.wrong);
                        if wrong > limit(TRIALS) {
                            failures.push(format!("{rule:?} {max} {effect:?} {unit_sd_pct} {multiple}δ: wrong {wrong}"));
                        }
                        if rate(t.right) > chosen + 2.0 * se {
                            failures.push(format!("{rule:?} {max} {effect:?} {unit_sd_pct} {multiple}δ: right more often than O'Brien-Fleming"));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
