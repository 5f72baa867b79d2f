//! The boundary of a sequential design with a declared maximum of units a side
//! (`ab --max-runs`, `vm-ab --max-boots`): O'Brien and Fleming's (1979) group-sequential
//! boundary for the pooled two-sample t statistic, with a look after every unit.
//!
//! At a look, the t of the shift under test (ν degrees of freedom) is turned into the z
//! of the same two-sided p, and the shift is rejected when z ≥ c/√f, f the information
//! fraction (the look's effective units n_A·n_B/(n_A + n_B) over the bound's, max/2).
//! The boundary is very wide at the first looks and falls to about the fixed design's at
//! the bound, so nearly all of α is left for the bound, where shifts near δ and noise
//! are decided. The constant c is the (1 − α) quantile of max over looks of z·√f under
//! A/A, found by a seeded simulation of normal units ([`CALIBRATION_SEED`],
//! [`CALIBRATION_TRIALS`]) for each (bound, α, extra degrees of freedom from a
//! calibration), and kept for the process. The simulated looks are after every unit, the
//! sides alternating A, B, A, B: a coarser schedule looks at a subset of those and claims
//! no more often. The t statistic does not depend on the units' location or scale, so
//! one simulation serves any noise level. `docs/statistics.md` ("Sequential decisions")
//! has the Monte-Carlo against the always-valid rule.
//!
//! The guarantee covers looks up to the bound only: past it the boundary would keep
//! falling and the false claims rise (22 % when a 20-unit design was looked at to 40).
//! [`crate::sequential`] therefore reads a declared-maximum design from its first
//! `max_units_per_side` units a side only.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Mutex, OnceLock};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::special::normal;
use crate::special::{normal_quantile, normal_sf, t_pdf, t_sf};

/// The seed of the simulation that finds the constant (recorded so every run of kbench
/// finds the same boundary for the same design).
pub const CALIBRATION_SEED: u64 = 40_005;

/// A/A trials of the simulation: the constant's own Monte-Carlo error moves the any-look
/// false-claim rate by about ±0.15 % (one SE at α = 5 %).
pub const CALIBRATION_TRIALS: usize = 20_000;

/// O'Brien-Fleming's boundary for one design: its bound and constant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OBrienFleming {
    pub max_units_per_side: usize,
    /// c: the boundary on the z scale is c/√f.
    pub constant: f64,
}

impl OBrienFleming {
    /// The boundary for a bound of `max_units_per_side` units a side at level `alpha`,
    /// with `extra_df` degrees of freedom from a calibration (0 without). Simulated once
    /// per process for each design (a few tens of ms at bounds of 20 to 40), then cached.
    pub fn new(max_units_per_side: usize, alpha: f64, extra_df: f64) -> OBrienFleming {
        OBrienFleming {
            max_units_per_side,
            constant: cached_constant(max_units_per_side, alpha, extra_df),
        }
    }

    /// The information fraction of a look with `n_a` and `n_b` units: its effective
    /// units over the bound's (1 at the bound on both sides).
    pub fn information_fraction(&self, n_a: usize, n_b: usize) -> f64 {
        information_fraction(n_a, n_b, self.max_units_per_side)
    }

    /// The critical |t| at a look with `n_a` and `n_b` units and `df` degrees of
    /// freedom; `None` where the boundary is beyond any t (the interval is unbounded).
    pub fn critical_t(&self, df: f64, n_a: usize, n_b: usize) -> Option<f64> {
        let f = self.information_fraction(n_a, n_b);
        if !(df > 0.0 && f > 0.0) {
            return None;
        }
        let z = self.constant / f.sqrt();
        let tail = normal_sf(z);
        (tail > 0.0).then(|| t_upper_quantile(tail, df))
    }
}

fn information_fraction(n_a: usize, n_b: usize, max_units_per_side: usize) -> f64 {
    if n_a == 0 || n_b == 0 || max_units_per_side == 0 {
        return 0.0;
    }
    let n_eff = (n_a * n_b) as f64 / (n_a + n_b) as f64;
    (n_eff / (max_units_per_side as f64 / 2.0)).min(1.0)
}

/// The z of the same upper-tail probability as `t` at `df` degrees of freedom. Never
/// above t: Student's tails are the heavier.
fn z_of_t(t: f64, df: f64) -> f64 {
    -normal_quantile(t_sf(t, df).max(f64::MIN_POSITIVE))
}

/// The t with upper-tail probability `tail` at `df` degrees of freedom, accurate for
/// tails far below 1e-16 (where `t_quantile`'s 1 − p is lost): Newton on ln P(T > t),
/// which is nearly linear in ln t in the tail, kept inside a bracket.
fn t_upper_quantile(tail: f64, df: f64) -> f64 {
    let log_tail = tail.ln();
    let excess = |t: f64| t_sf(t, df).ln() - log_tail; // > 0: t is too small
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while excess(hi) > 0.0 && hi < 1e300 {
        lo = hi;
        hi *= 2.0;
    }
    let mut t = (-normal_quantile(tail)).clamp(lo, hi);
    for _ in 0..200 {
        let sf = t_sf(t, df);
        let e = sf.ln() - log_tail;
        if e > 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        let newton = t + e * sf / t_pdf(t, df);
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - t).abs() <= 1e-13 * next || hi - lo <= 1e-13 * hi {
            return next;
        }
        t = next;
    }
    t
}

type DesignKey = (usize, u64, u64);

fn cached_constant(max_units_per_side: usize, alpha: f64, extra_df: f64) -> f64 {
    static CONSTANTS: OnceLock<Mutex<HashMap<DesignKey, f64>>> = OnceLock::new();
    let extra_df = extra_df.max(0.0);
    let key = (max_units_per_side, alpha.to_bits(), extra_df.to_bits());
    let cache = CONSTANTS.get_or_init(Default::default);
    if let Some(&c) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return c;
    }
    // Simulated outside the lock: two threads may both simulate a new design once,
    // and get the same number.
    let c = simulate_constant(max_units_per_side, alpha, extra_df);
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, c);
    c
}

/// The (1 − α) quantile of max over looks of z·√f in A/A trials of normal units.
///
/// The exact z of a look costs an incomplete beta and a normal quantile, so it is
/// computed only where it can matter: every trial first gets a cheap upper bound of its
/// maximum, then trials are redrawn (each has its own stream of the seeded generator)
/// and evaluated exactly from the largest bound down, until the bound falls below the
/// k-th largest exact maximum found, k = α·trials. The quantile is the same as with
/// every trial evaluated, at about half the cost.
fn simulate_constant(max_units_per_side: usize, alpha: f64, extra_df: f64) -> f64 {
    let looks = alternating_looks(max_units_per_side, extra_df);
    let mut trial = Trial::new(max_units_per_side);
    let mut by_bound: Vec<(f64, u64)> = (0..CALIBRATION_TRIALS as u64)
        .map(|i| {
            trial.draw(&mut trial_generator(i), &looks, extra_df);
            (trial.maximum_bound(&looks), i)
        })
        .collect();
    by_bound.sort_by(|x, y| y.0.total_cmp(&x.0));
    let at_or_above = quantile_rank_from_top(alpha);
    // The k largest exact maxima so far, smallest on top. Non-negative f64s order as
    // their bits do.
    let mut largest: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(at_or_above + 1);
    for (bound, i) in by_bound {
        let kth = largest.peek().map(|Reverse(bits)| f64::from_bits(*bits));
        if largest.len() == at_or_above && kth.is_some_and(|kth| bound <= kth) {
            break;
        }
        trial.draw(&mut trial_generator(i), &looks, extra_df);
        largest.push(Reverse(trial.maximum(&looks).max(0.0).to_bits()));
        if largest.len() > at_or_above {
            largest.pop();
        }
    }
    largest
        .peek()
        .map_or(0.0, |Reverse(bits)| f64::from_bits(*bits))
}

/// k such that the (1 − α) quantile of the trials is the k-th largest: with a boundary
/// at it, k of the trials (α of them) reach it.
fn quantile_rank_from_top(alpha: f64) -> usize {
    let index = ((1.0 - alpha) * CALIBRATION_TRIALS as f64) as usize;
    CALIBRATION_TRIALS - index.min(CALIBRATION_TRIALS - 1)
}

/// The generator of trial `i`: its own stream of the seeded ChaCha, so a trial can be
/// drawn again alone.
fn trial_generator(i: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(CALIBRATION_SEED);
    rng.set_stream(i);
    rng
}

/// What a look of the simulated schedule knows before the units are drawn.
struct LookShape {
    /// Units of A and B so far.
    n_a: usize,
    n_b: usize,
    df: f64,
    information_fraction: f64,
}

/// The simulated schedule: units alternate A, B, A, B, a look after each one that
/// has at least one unit a side and a degree of freedom.
fn alternating_looks(max_units_per_side: usize, extra_df: f64) -> Vec<LookShape> {
    (1..=2 * max_units_per_side)
        .map(|units| (units.div_ceil(2), units / 2))
        .map(|(n_a, n_b)| LookShape {
            n_a,
            n_b,
            df: (n_a + n_b) as f64 - 2.0 + extra_df,
            information_fraction: information_fraction(n_a, n_b, max_units_per_side),
        })
        .filter(|l| l.n_b >= 1 && l.df > 0.0)
        .collect()
}

/// Buffers of one A/A trial, kept from trial to trial.
struct Trial {
    /// A's units at even places, B's at odd ones.
    units: Vec<f64>,
    /// Each look's t².
    t_squared: Vec<f64>,
}

impl Trial {
    fn new(max_units_per_side: usize) -> Trial {
        Trial {
            units: vec![0.0; 2 * max_units_per_side],
            t_squared: Vec::with_capacity(2 * max_units_per_side),
        }
    }

    /// An upper bound of max over the looks of z·√f, cheap: z ≤ t, and
    /// z ≤ √(ν·ln(1 + t²/ν)) (Wallace 1959), the second taken only where the first
    /// could beat the best so far.
    fn maximum_bound(&self, looks: &[LookShape]) -> f64 {
        let mut best_squared = 0.0f64;
        for (l, &t2) in looks.iter().zip(&self.t_squared) {
            if t2 * l.information_fraction > best_squared {
                let wallace = l.df * (t2 / l.df).ln_1p();
                best_squared = best_squared.max(t2.min(wallace) * l.information_fraction);
            }
        }
        best_squared.sqrt()
    }

    /// max over the looks of the trial drawn of z·√f. The exact z is computed only for
    /// looks whose bounds (as in [`Trial::maximum_bound`]) could beat the best so far.
    fn maximum(&self, looks: &[LookShape]) -> f64 {
        let statistic =
            |l: &LookShape, t2: f64| z_of_t(t2.sqrt(), l.df) * l.information_fraction.sqrt();
        let (Some(last), Some(&last_t2)) = (looks.last(), self.t_squared.last()) else {
            return 0.0;
        };
        let mut best = statistic(last, last_t2);
        for (l, &t2) in looks.iter().zip(&self.t_squared) {
            let beats =
                |z_squared_bound: f64| z_squared_bound * l.information_fraction > best * best;
            if beats(t2) && beats(l.df * (t2 / l.df).ln_1p()) {
                best = best.max(statistic(l, t2));
            }
        }
        best
    }

    /// Draws the units of one trial and each look's t² (the calibration, if any, a
    /// chi-square sum of squares of the same unit variance).
    fn draw(&mut self, rng: &mut ChaCha8Rng, looks: &[LookShape], extra_df: f64) {
        for pair in self.units.chunks_exact_mut(2) {
            (pair[0], pair[1]) = normal_pair(rng);
        }
        let calibration_squares = if extra_df > 0.0 {
            chi_square(rng, extra_df)
        } else {
            0.0
        };
        let (mut a, mut b) = (Running::default(), Running::default());
        self.t_squared.clear();
        for l in looks {
            while a.n < l.n_a {
                a.push(self.units[2 * a.n]);
            }
            while b.n < l.n_b {
                b.push(self.units[2 * b.n + 1]);
            }
            let variance = (a.squares + b.squares + calibration_squares) / l.df;
            let shift = b.mean - a.mean;
            let se_squared = variance * (1.0 / l.n_a as f64 + 1.0 / l.n_b as f64);
            self.t_squared.push(shift * shift / se_squared);
        }
    }
}

/// Two independent standard normal deviates (Box-Muller, both of the pair).
fn normal_pair(rng: &mut ChaCha8Rng) -> (f64, f64) {
    let u1: f64 = 1.0 - rng.random::<f64>(); // in (0, 1]
    let u2: f64 = rng.random::<f64>();
    let r = (-2.0 * u1.ln()).sqrt();
    let (sin, cos) = (std::f64::consts::TAU * u2).sin_cos();
    (r * cos, r * sin)
}

/// Count, mean and sum of squared deviations of one side's units (Welford).
#[derive(Default)]
struct Running {
    n: usize,
    mean: f64,
    squares: f64,
}

impl Running {
    fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.squares += d * (x - self.mean);
    }
}

/// A chi-square deviate with `df` degrees of freedom (any df > 0): twice a gamma of
/// shape df/2 by Marsaglia and Tsang (2000), with Stuart's boost below shape 1.
fn chi_square(rng: &mut ChaCha8Rng, df: f64) -> f64 {
    2.0 * gamma(rng, df / 2.0)
}

fn gamma(rng: &mut ChaCha8Rng, shape: f64) -> f64 {
    if shape < 1.0 {
        let u: f64 = 1.0 - rng.random::<f64>();
        return gamma(rng, shape + 1.0) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u: f64 = 1.0 - rng.random::<f64>();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::t_quantile;

    #[test]
    fn the_constant_is_the_known_one_and_deterministic() {
        // Continuous monitoring of a Brownian motion gives 2.24 at α = 5 %; looks
        // after every unit and t statistics give a little less.
        let c = OBrienFleming::new(20, 0.05, 0.0).constant;
        assert!(c > 1.95 && c < 2.24, "{c}");
        assert_eq!(simulate_constant(20, 0.05, 0.0), c);
        let calibrated = OBrienFleming::new(20, 0.05, 9.0).constant;
        assert!((calibrated - c).abs() < 0.1, "{calibrated} {c}");
        assert!(OBrienFleming::new(20, 0.025, 0.0).constant > c);
    }

    #[test]
    fn a_new_design_is_found_quickly() {
        let start = std::time::Instant::now();
        let c = simulate_constant(40, 0.0123, 0.0);
        let took = start.elapsed();
        eprintln!("simulated in {took:?}");
        assert!(c > 2.0, "{c}");
        // About 35 ms on an idle core (this crate is optimised in the workspace's debug
        // profile too); the margin is for a loaded test machine.
        assert!(took.as_millis() < 1000, "{took:?}");
    }

    #[test]
    fn at_the_bound_the_boundary_is_near_the_fixed_designs() {
        let obf = OBrienFleming::new(20, 0.05, 0.0);
        let at_bound = obf.critical_t(38.0, 20, 20).unwrap();
        let fixed = t_quantile(0.975, 38.0);
        assert!(
            at_bound > fixed && at_bound < fixed + 0.3,
            "{at_bound} {fixed}"
        );
        let early = obf.critical_t(2.0, 2, 2).unwrap();
        assert!(early > 50.0, "{early}");
        assert!(obf.critical_t(0.0, 1, 1).is_none());
    }

    /// The simulation skips the exact z of a look when this bound cannot beat the best.
    #[test]
    fn wallaces_bound_is_above_the_exact_z() {
        for df in [0.5, 1.0, 1.5, 2.0, 3.0, 4.5, 10.0, 40.0, 120.0] {
            for i in 1..=600 {
                let t = 0.01 * 1.02f64.powi(i);
                let bound = (df * (t * t / df).ln_1p()).sqrt();
                assert!(z_of_t(t, df) <= bound * (1.0 + 1e-12), "{df} {t}");
            }
        }
    }

    #[test]
    fn upper_quantiles_invert_the_tail_far_out() {
        for df in [1.0, 2.5, 10.0, 78.0] {
            for tail in [0.2, 0.025, 1e-6, 1e-20, 1e-80] {
                let t = t_upper_quantile(tail, df);
                let back = t_sf(t, df);
                assert!((back / tail - 1.0).abs() < 1e-9, "{df} {tail} {t} {back}");
            }
        }
    }
}
