//! Behaviour of the public API on edge cases and known situations.

use kbench_stats::*;

fn lognormal_like(n: usize, seed: u64, scale: f64) -> Vec<f64> {
    // Deterministic pseudo-noise (a simple LCG mapped to ±3 %); enough for behaviour tests.
    let mut state = seed
        .wrapping_mul(2_862_933_555_777_941_757)
        .wrapping_add(3_037_000_493);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            scale * (0.03 * (u - 0.5) * 2.0).exp()
        })
        .collect()
}

#[test]
fn single_runs_never_get_a_verdict() {
    let r = compare(&[1.0], &[2.0], &CompareOptions::default());
    assert_eq!(r.verdict, Verdict::Insufficient);
    assert_eq!(r.runs_needed, None);
}

#[test]
fn empty_nan_and_infinite_inputs_are_insufficient() {
    let opts = CompareOptions::default();
    assert_eq!(compare(&[], &[], &opts).verdict, Verdict::Insufficient);
    let r = compare(&[1.0, f64::NAN, 2.0], &[1.0, 2.0, 3.0], &opts);
    assert_eq!(r.verdict, Verdict::Insufficient);
    assert!(r.notes[0].contains("A[1]"), "{:?}", r.notes);
    assert_eq!(
        compare(&[1.0, 2.0, 3.0], &[1.0, f64::INFINITY, 3.0], &opts).verdict,
        Verdict::Insufficient
    );
}

#[test]
fn identical_constant_samples_are_equivalent() {
    let r = compare(&[5.0; 8], &[5.0; 8], &CompareOptions::default());
    assert_eq!(r.verdict, Verdict::Equivalent);
    assert_eq!(r.shift_pct, Some(0.0));
    assert_eq!(r.p_value, Some(1.0));
    let d = r.diagnostics.unwrap();
    assert!(d.a.outliers.is_empty() && !d.a.bimodality.bimodal && !d.a.drifting);
}

#[test]
fn constant_samples_that_differ_are_a_regression() {
    let r = compare(&[5.0; 8], &[6.0; 8], &CompareOptions::default());
    assert_eq!(r.verdict, Verdict::Regression);
    assert!((r.shift_pct.unwrap() - 20.0).abs() < 1e-9);
    let flipped = compare(
        &[5.0; 8],
        &[6.0; 8],
        &CompareOptions {
            higher_is_better: true,
            ..CompareOptions::default()
        },
    );
    assert_eq!(flipped.verdict, Verdict::Improvement);
}

#[test]
fn non_positive_values_fall_back_to_a_linear_shift() {
    let a = [-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b: Vec<f64> = a.iter().map(|v| v + 10.0).collect();
    let r = compare(&a, &b, &CompareOptions::default());
    assert_eq!(r.scale, Scale::Linear);
    assert!(r.method.contains("linear"));
    // Shift of 10 relative to |median A| = 2.5.
    assert!((r.shift_pct.unwrap() - 400.0).abs() < 1e-9);
    assert_eq!(r.verdict, Verdict::Regression);
    // A median of zero leaves no relative scale.
    let zero = compare(
        &[-1.0, 0.0, 1.0],
        &[1.0, 2.0, 3.0],
        &CompareOptions::default(),
    );
    assert_eq!(zero.verdict, Verdict::Insufficient);
}

#[test]
fn three_per_side_uses_welch_because_no_rank_interval_exists() {
    let r = compare(
        &[1.00, 1.01, 0.99],
        &[1.10, 1.11, 1.09],
        &CompareOptions::default(),
    );
    assert!(r.method.starts_with("welch"), "{}", r.method);
    assert_eq!(r.verdict, Verdict::Regression);
}

#[test]
fn wide_intervals_are_inconclusive_with_runs_needed() {
    let a = lognormal_like(6, 1, 1.0);
    let b = lognormal_like(6, 2, 1.0);
    let r = compare(&a, &b, &CompareOptions::default());
    assert_eq!(r.verdict, Verdict::Inconclusive);
    let needed = r.runs_needed.expect("runs needed for inconclusive");
    assert!(needed > 6, "{needed}");
    // The same number, with the range the spread of 12 runs allows.
    match r.settle {
        Some(kbench_stats::UnitsToSettle::About {
            per_side, low, df, ..
        }) => {
            assert_eq!(per_side, needed);
            assert!(low > 6 && low <= needed, "{low}");
            assert_eq!(df, 10.0);
        }
        ref other => panic!("expected about, got {other:?}"),
    }
    // With that many runs of the same noise, the interval is narrow enough to settle.
    let big = compare(
        &lognormal_like(needed * 2, 3, 1.0),
        &lognormal_like(needed * 2, 4, 1.0),
        &CompareOptions::default(),
    );
    assert_ne!(big.verdict, Verdict::Inconclusive);
}

#[test]
fn small_real_changes_are_reported_as_changed_or_equivalent() {
    let a = lognormal_like(40, 5, 1.0);
    let b = lognormal_like(40, 6, 1.02);
    let r = compare(
        &a,
        &b,
        &CompareOptions {
            delta_pct: 5.0,
            ..CompareOptions::default()
        },
    );
    assert_eq!(r.verdict, Verdict::Equivalent);
    let r = compare(
        &a,
        &b,
        &CompareOptions {
            delta_pct: 1.0,
            ..CompareOptions::default()
        },
    );
    assert!(
        matches!(r.verdict, Verdict::Changed | Verdict::Regression),
        "{:?}",
        r.verdict
    );
}

#[test]
fn outliers_are_flagged_kept_and_their_effect_reported() {
    let mut a = lognormal_like(12, 7, 1.0);
    let b = lognormal_like(12, 8, 1.0);
    a[3] = 5.0;
    let r = compare(&a, &b, &CompareOptions::default());
    let d = r.diagnostics.unwrap();
    assert_eq!(d.a.outliers, vec![3]);
    assert_eq!(r.n_a, 12, "outliers are kept");
}

#[test]
fn mad_zero_does_not_flag_everything() {
    let values = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.01, 0.99];
    assert!(mad_outliers(&values).is_empty());
    let with_spike = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 3.0];
    assert_eq!(mad_outliers(&with_spike), vec![9]);
}

#[test]
fn two_modes_are_flagged() {
    let mut values = lognormal_like(20, 9, 1.0);
    for v in values.iter_mut().skip(12) {
        *v *= 1.3;
    }
    let log: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    assert!(bimodality(&log).bimodal);
    let small: Vec<f64> = [1.0, 1.01, 1.02, 1.005, 1.3, 1.31, 1.305]
        .iter()
        .map(|v: &f64| v.ln())
        .collect();
    assert!(bimodality(&small).bimodal);
    assert!(
        !bimodality(
            &lognormal_like(20, 10, 1.0)
                .iter()
                .map(|v| v.ln())
                .collect::<Vec<_>>()
        )
        .bimodal
    );
}

#[test]
fn drift_over_run_order_is_flagged() {
    let a: Vec<f64> = lognormal_like(20, 11, 1.0)
        .iter()
        .enumerate()
        .map(|(i, v)| v * (1.0 + 0.005 * i as f64))
        .collect();
    let b = lognormal_like(20, 12, 1.0);
    let d = compare(&a, &b, &CompareOptions::default())
        .diagnostics
        .unwrap();
    assert!(d.a.drifting);
    assert!(!d.b.drifting);
    assert!(d.a.drift_pct_per_run.unwrap() > 0.2);
}

#[test]
fn boots_are_the_units_when_the_sides_ran_in_different_boots() {
    let side = |tag: &str, boots: usize, factor: f64| -> Vec<Observation> {
        (0..boots)
            .flat_map(|boot| {
                let offset = 1.0 + 0.01 * ((boot * 7 % 5) as f64 - 2.0);
                lognormal_like(5, (boot + 100 * tag.len()) as u64, offset * factor)
                    .into_iter()
                    .enumerate()
                    .map(move |(run, value)| Observation {
                        value,
                        boot: format!("{tag}{boot}").into(),
                        session: format!("{tag}{boot}").into(),
                        order: (boot * 5 + run) as u32,
                    })
            })
            .collect()
    };
    let options = NestedOptions::default();
    let r = compare_nested(&side("a", 6, 1.0), &side("bb", 6, 1.10), &options);
    let info = r.nested.as_ref().unwrap();
    assert_eq!(info.design, Design::Unpaired(Level::Boot));
    assert_eq!((info.units_a.len(), info.runs_a), (6, 30));
    assert_eq!(r.verdict, Verdict::Regression);
    assert!(r.method.starts_with("boots as units"), "{}", r.method);

    // One boot on a side and nothing to borrow from a calibration: the other side's
    // boots lend their spread.
    let one_boot_b = compare_nested(&side("a", 4, 1.0), &side("bb", 1, 1.0), &options);
    let between = one_boot_b.nested.unwrap().between.unwrap();
    assert_eq!(between.source, NoiseSource::OtherSide);
    assert!(!one_boot_b.verdict.claims_difference());

    // One boot a side: no claim.
    let single = compare_nested(&side("a", 1, 1.0), &side("bb", 1, 1.3), &options);
    assert_eq!(single.verdict, Verdict::Inconclusive);
    assert!(single.nested.unwrap().no_claim.is_some());
}

#[test]
fn summaries_from_perf_stat() {
    // perf stat: "5.483 +- 0.198 seconds ( +- 3.62% )" with -r 5.
    let a = SummaryStats::from_perf_stat(5.483, 3.62, 5);
    assert!((a.sd - 0.198 * 5f64.sqrt()).abs() < 2e-3); // 3.62 % is rounded
    let r = compare_summaries(
        &a,
        &SummaryStats::from_perf_stat(5.483, 3.62, 5),
        &CompareOptions::default(),
    );
    assert!(r.summary_based);
    assert_eq!(r.p_value, Some(1.0));
    assert_eq!(r.verdict, Verdict::Inconclusive);
    let bad = compare_summaries(
        &SummaryStats::from_sd(1.0, 0.1, 1),
        &a,
        &CompareOptions::default(),
    );
    assert_eq!(bad.verdict, Verdict::Insufficient);
}

#[test]
fn ten_thousand_per_side_is_fast() {
    let a = lognormal_like(10_000, 13, 1.0);
    let b = lognormal_like(10_000, 14, 1.01);
    let start = std::time::Instant::now();
    let r = compare(&a, &b, &CompareOptions::default());
    let elapsed = start.elapsed();
    assert!(elapsed.as_secs_f64() < 1.0, "took {elapsed:?}");
    assert!((r.shift_pct.unwrap() - 1.0).abs() < 0.2);
}

#[test]
fn latency_percentiles_of_a_million_values() {
    let values: Vec<f64> = (0..1_000_000u64)
        .map(|i| ((i * 7919) % 1_000_000) as f64)
        .collect();
    let cis = percentiles_with_ci(&values, &[0.5, 0.99, 0.9999], 0.95);
    let p99 = cis[1].as_ref().unwrap();
    assert!(p99.lower <= p99.estimate && p99.estimate <= p99.upper);
    assert!(p99.coverage >= 0.95);
}

#[test]
fn verdict_words() {
    let words: Vec<&str> = [
        Verdict::Regression,
        Verdict::Improvement,
        Verdict::Equivalent,
        Verdict::Changed,
        Verdict::Inconclusive,
        Verdict::Insufficient,
    ]
    .iter()
    .map(|v| v.as_str())
    .collect();
    assert_eq!(
        words,
        [
            "regression",
            "improvement",
            "equivalent",
            "changed",
            "inconclusive",
            "insufficient"
        ]
    );
    assert_eq!(
        serde_json::to_string(&Verdict::Changed).unwrap(),
        "\"changed\""
    );
}
