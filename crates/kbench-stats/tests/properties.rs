//! Invariance properties of `compare` (`docs/statistics.md`, "Validation").

use kbench_stats::{compare, CompareOptions, Verdict};
use proptest::prelude::*;

/// Positive values on a coarse grid (no accidental near-ties created by rounding of logs).
fn sample(min_len: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec((1000u32..2000).prop_map(|v| v as f64 / 1000.0), min_len..30)
}

fn mirrored(v: Verdict) -> Verdict {
    match v {
        Verdict::Regression => Verdict::Improvement,
        Verdict::Improvement => Verdict::Regression,
        other => other,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn swapping_sides_negates_the_log_shift_and_keeps_p(a in sample(2), b in sample(2)) {
        let opts = CompareOptions::default();
        let ab = compare(&a, &b, &opts);
        let ba = compare(&b, &a, &opts);
        prop_assert_eq!(ab.verdict, mirrored(ba.verdict));
        if let (Some(x), Some(y)) = (ab.shift_log, ba.shift_log) {
            prop_assert!((x + y).abs() <= 1e-12, "shift {} vs {}", x, y);
            // In percent: (1 + s_ab)(1 + s_ba) = 1.
            let product = (1.0 + ab.shift_pct.unwrap() / 100.0) * (1.0 + ba.shift_pct.unwrap() / 100.0);
            prop_assert!((product - 1.0).abs() < 1e-12);
        }
        match (ab.p_value, ba.p_value) {
            (Some(p), Some(q)) => prop_assert!((p - q).abs() <= 1e-12 * p.max(1e-300), "p {} vs {}", p, q),
            (p, q) => prop_assert_eq!(p.is_some(), q.is_some()),
        }
    }

    #[test]
    fn a_common_scale_factor_changes_nothing(a in sample(2), b in sample(2), exponent in -6i32..7) {
        let factor = 10f64.powi(exponent) * 1.7;
        let opts = CompareOptions::default();
        let plain = compare(&a, &b, &opts);
        let scaled_a: Vec<f64> = a.iter().map(|v| v * factor).collect();
        let scaled_b: Vec<f64> = b.iter().map(|v| v * factor).collect();
        let scaled = compare(&scaled_a, &scaled_b, &opts);
        prop_assert_eq!(plain.verdict, scaled.verdict);
        // A rank test on raw values: the same ranks, so the same p up to rounding in
        // the normal approximation's sums.
        match (plain.p_value, scaled.p_value) {
            (Some(p), Some(q)) => prop_assert!((p - q).abs() <= 1e-12 * p.max(q).max(1e-300), "{} vs {}", p, q),
            (p, q) => prop_assert_eq!(p.is_some(), q.is_some()),
        }
        for (x, y) in [(plain.shift_pct, scaled.shift_pct), (plain.ci_low_pct, scaled.ci_low_pct), (plain.ci_high_pct, scaled.ci_high_pct)] {
            match (x, y) {
                (Some(x), Some(y)) => prop_assert!((x - y).abs() < 1e-9, "{} vs {}", x, y),
                (x, y) => prop_assert_eq!(x.is_some(), y.is_some()),
            }
        }
    }

    #[test]
    fn the_shift_grows_with_an_injected_shift(a in sample(3), b in sample(3), step_pct in 0.5f64..20.0) {
        let opts = CompareOptions::default();
        let base = compare(&a, &b, &opts);
        let factor = 1.0 + step_pct / 100.0;
        let shifted_b: Vec<f64> = b.iter().map(|v| v * factor).collect();
        let shifted = compare(&a, &shifted_b, &opts);
        let (s0, s1) = (base.shift_log.unwrap(), shifted.shift_log.unwrap());
        // Multiplying B by f adds exactly ln f to every pairwise log difference.
        prop_assert!((s1 - s0 - factor.ln()).abs() < 1e-9, "{} -> {}", s0, s1);
        prop_assert!(shifted.shift_pct.unwrap() > base.shift_pct.unwrap());
    }

    #[test]
    fn never_panics_on_arbitrary_input(
        a in prop::collection::vec(prop_oneof![any::<f64>(), Just(0.0), Just(-1.0), Just(f64::NAN)], 0..12),
        b in prop::collection::vec(prop_oneof![any::<f64>(), Just(0.0), Just(1.0), Just(f64::INFINITY)], 0..12),
        delta in prop_oneof![Just(1.0), any::<f64>()],
    ) {
        let opts = CompareOptions { delta_pct: delta, ..CompareOptions::default() };
        let result = compare(&a, &b, &opts);
        prop_assert!(!result.verdict.as_str().is_empty());
        // Whatever happens, the result serialises.
        prop_assert!(serde_json::to_string(&result).is_ok());
    }
}
