//! The fixed design's Monte-Carlo for sides of unequal size (`docs/statistics.md`,
//! "Every design and its promise"): A/A comparisons of boots through
//! `kbench_stats::compare_nested`, exactly as `kbench compare` makes them, with 1, 2 or 3
//! boots on one side against 5, 10 or 20 on the other, and normal, skewed or
//! contaminated boot effects. A false claim is an interval that excludes 0. Seeded;
//! `cargo nextest run -p kbench-stats --test unbalanced --no-capture` prints the tables.
use kbench_stats::calibration::normal;
use kbench_stats::{compare_nested, CompareOptions, NestedOptions, NoiseComponents, Observation};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

const ALPHA: f64 = 0.05;
const RUNS_PER_BOOT: usize = 5;
const TRIALS: usize = 4000;

/// The distribution of a boot's own offset, scaled to unit variance.
#[derive(Clone, Copy, Debug, PartialEq)]
enum BootEffect {
    Normal,
    /// A centred lognormal(0, 1): skewness 6.2, a long right tail on the log scale.
    Skewed,
    /// One boot in ten from a spread three times as wide.
    Contaminated,
}

const EFFECTS: [BootEffect; 3] = [
    BootEffect::Normal,
    BootEffect::Skewed,
    BootEffect::Contaminated,
];

fn effect_draw(rng: &mut ChaCha8Rng, effect: BootEffect) -> f64 {
    match effect {
        BootEffect::Normal => normal(rng),
        BootEffect::Skewed => {
            let e = std::f64::consts::E;
            (normal(rng).exp() - e.sqrt()) / ((e - 1.0) * e).sqrt()
        }
        BootEffect::Contaminated => {
            let wide = rng.random::<f64>() < 0.1;
            // Variance 0.9·1 + 0.1·9 = 1.8.
            normal(rng) * if wide { 3.0 } else { 1.0 } / 1.8f64.sqrt()
        }
    }
}

/// How one side's boots vary: the SD of a boot's offset and of a run within a boot
/// (log scale), and the shape of the boot offsets.
#[derive(Clone, Copy, Debug)]
struct Noise {
    boot_sd: f64,
    within_sd: f64,
    effect: BootEffect,
}

const NOISE: Noise = Noise {
    boot_sd: 0.01,
    within_sd: 0.01,
    effect: BootEffect::Normal,
};

/// `boots` boots of `RUNS_PER_BOOT` runs each, named `{side}{k}`, around 1000 ns.
fn side(rng: &mut ChaCha8Rng, name: &str, boots: usize, noise: Noise) -> Vec<Observation> {
    let mut out = Vec::new();
    for k in 0..boots {
        let id: Arc<str> = format!("{name}{k}").into();
        let offset = noise.boot_sd * effect_draw(rng, noise.effect);
        for _ in 0..RUNS_PER_BOOT {
            out.push(Observation {
                value: 1000.0 * (offset + noise.within_sd * normal(rng)).exp(),
                boot: id.clone(),
                session: id.clone(),
                order: out.len() as u32,
            });
        }
    }
    out
}

fn claims_change(lo_pct: Option<f64>, hi_pct: Option<f64>) -> bool {
    matches!((lo_pct, hi_pct), (Some(lo), Some(hi)) if lo > 0.0 || hi < 0.0)
}

/// The share of `TRIALS` A/A comparisons of `small` boots against `large` whose interval
/// excludes 0 (the small side first half of the time, as base or as new).
fn aa_claim_rate(
    small: usize,
    large: usize,
    noise: Noise,
    calibration: Option<&NoiseComponents>,
    seed: u64,
) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let opts = NestedOptions {
        compare: CompareOptions::default(),
        calibration: calibration.cloned(),
    };
    let claims = (0..TRIALS)
        .filter(|trial| {
            let (mut a, mut b) = (
                side(&mut rng, "a", small, noise),
                side(&mut rng, "b", large, noise),
            );
            if trial % 2 == 1 {
                std::mem::swap(&mut a, &mut b);
            }
            let c = compare_nested(&a, &b, &opts);
            claims_change(c.ci_low_pct, c.ci_high_pct)
        })
        .count();
    claims as f64 / TRIALS as f64
}

/// α + 2 standard errors of a rate estimated from `TRIALS`.
fn limit() -> f64 {
    ALPHA + 2.0 * (ALPHA * (1.0 - ALPHA) / TRIALS as f64).sqrt()
}

/// The audit's cell, end to end as `kbench compare --no-calibration` makes it: two boots
/// against ten, 5 runs a boot, 1 % between boots and 1 % within. Welch's t alone claimed
/// a change in 10 % of these A/A comparisons.
#[test]
fn two_boots_against_ten_claim_a_change_in_at_most_alpha_of_aa_comparisons() {
    let rate = aa_claim_rate(2, 10, NOISE, None, 40_210);
    eprintln!(
        "2 boots against 10, normal boot effects: {:.2} % of A/A comparisons claim a change (limit {:.2} %)",
        100.0 * rate,
        100.0 * limit()
    );
    assert!(rate <= limit(), "{rate}");
}

/// Every cell of 1, 2 and 3 boots against 5, 10 and 20, over the three shapes of boot
/// effect, holds α + 2 SE.
#[test]
fn unbalanced_sides_hold_alpha_for_every_shape_of_boot_effect() {
    let mut failures = Vec::new();
    eprintln!("| boots | normal | skewed | contaminated |\n|---|---|---|---|");
    for small in [1, 2, 3] {
        for large in [5, 10, 20] {
            let mut row = format!("| {small} against {large} |");
            for (e, effect) in EFFECTS.into_iter().enumerate() {
                let seed = 40_000 + (small * 100 + large) as u64 * 10 + e as u64;
                let rate = aa_claim_rate(small, large, Noise { effect, ..NOISE }, None, seed);
                row.push_str(&format!(" {:.2} % |", 100.0 * rate));
                if rate > limit() {
                    failures.push(format!("{small} against {large}, {effect:?}: {rate}"));
                }
            }
            eprintln!("{row}");
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}
