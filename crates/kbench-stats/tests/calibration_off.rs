//! A calibration that no longer matches the machine (`docs/statistics.md`, "Every design
//! and its promise"): today's unit spread twice the calibrated one, from 10 degrees of
//! freedom. Borrowed as it was, the sequential rule's A/A claims reached 6 % at a bound
//! of 20 units a side; today's units now check what they borrow
//! (`KnownNoise::fits_today`). Seeded; `--no-capture` prints the rates.
use kbench_stats::calibration::normal;
use kbench_stats::nested::{BetweenUnit, NoiseSource};
use kbench_stats::sequential::{confidence_sequence, KnownNoise};
use kbench_stats::{compare_units, CompareOptions, Level, UnitEstimate};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const ALPHA: f64 = 0.05;
const TRIALS: usize = 4000;
const UNIT_SD: f64 = 0.01;
const CALIBRATION_DF: f64 = 10.0;

fn units(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| UNIT_SD * normal(rng)).collect()
}

fn limit() -> f64 {
    ALPHA + 2.0 * (ALPHA * (1.0 - ALPHA) / TRIALS as f64).sqrt()
}

/// A calibration of `ratio` times today's unit SD, its SD itself drawn with
/// `CALIBRATION_DF` degrees of freedom as a real calibration's is.
fn calibration(rng: &mut ChaCha8Rng, ratio: f64) -> KnownNoise {
    let chi2: f64 = (0..CALIBRATION_DF as usize)
        .map(|_| normal(rng).powi(2))
        .sum();
    KnownNoise {
        unit_sd: ratio * UNIT_SD * (chi2 / CALIBRATION_DF).sqrt(),
        df: CALIBRATION_DF,
    }
}

/// A/A: units alternate A, B, A, B up to `bound` a side; the share of trials whose
/// always-valid interval excludes 0 at any look.
fn sequential_aa_rate(ratio: f64, bound: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let claims = (0..TRIALS)
        .filter(|_| {
            let known = calibration(&mut rng, ratio);
            let (a, b) = (units(&mut rng, bound), units(&mut rng, bound));
            (1..=bound)
                .flat_map(|k| [(k, k - 1), (k, k)])
                .filter(|&(_, nb)| nb >= 1)
                .any(|(na, nb)| {
                    confidence_sequence(&a[..na], &b[..nb], Some(known), ALPHA)
                        .and_then(|iv| iv.bounds)
                        .is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0)
                })
        })
        .count();
    claims as f64 / TRIALS as f64
}

/// A/A of the fixed design: one unit against `many`, the one-unit side borrowing the
/// calibration.
fn one_unit_aa_rate(ratio: f64, many: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let estimate = |id: String, v: f64| UnitEstimate {
        boot: id.clone(),
        id,
        estimate: v,
        within_var: None,
        runs: 5,
    };
    let claims = (0..TRIALS)
        .filter(|_| {
            let known = calibration(&mut rng, ratio);
            let between = BetweenUnit {
                level: Level::Boot,
                unit_sd: known.unit_sd,
                included_within_var: 0.0,
                df: known.df,
                source: NoiseSource::Calibration,
            };
            let one = vec![estimate("a0".into(), UNIT_SD * normal(&mut rng))];
            let others: Vec<UnitEstimate> = units(&mut rng, many)
                .into_iter()
                .enumerate()
                .map(|(i, v)| estimate(format!("b{i}"), v))
                .collect();
            let opts = CompareOptions::default();
            compare_units(&one, &others, Level::Boot, false, Some(between), &opts)
                .and_then(|u| u.ci_log)
                .is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0)
        })
        .count();
    claims as f64 / TRIALS as f64
}

#[test]
fn a_calibration_half_todays_spread_does_not_break_the_sequential_promise() {
    let mut failures = Vec::new();
    for (ratio, bound) in [(0.5, 20), (0.5, 40), (1.0, 20), (2.0, 20)] {
        let rate = sequential_aa_rate(ratio, bound, 41_000 + bound as u64);
        eprintln!(
            "sequential, calibration {ratio}x today's unit SD ({CALIBRATION_DF} df), bound {bound}: {:.2} % of A/A claim a change (limit {:.2} %)",
            100.0 * rate,
            100.0 * limit()
        );
        if rate > limit() {
            failures.push((ratio, bound, rate));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn a_calibration_half_todays_spread_does_not_break_the_fixed_promise() {
    let mut failures = Vec::new();
    for (ratio, many) in [(0.5, 5), (0.5, 10), (0.5, 20), (1.0, 10)] {
        let rate = one_unit_aa_rate(ratio, many, 42_000 + many as u64);
        eprintln!(
            "fixed, 1 unit against {many}, calibration {ratio}x today's unit SD ({CALIBRATION_DF} df): {:.2} % of A/A claim a change (limit {:.2} %)",
            100.0 * rate,
            100.0 * limit()
        );
        if rate > limit() {
            failures.push((ratio, many, rate));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}
