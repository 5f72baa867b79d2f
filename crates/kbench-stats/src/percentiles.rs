//! Percentiles of latency distributions summarised as histograms (HDR buckets), with
//! order-statistic confidence intervals, and the comparison of one percentile of two
//! such distributions.
use crate::compare::{verdict_from_interval, CompareOptions, Verdict};
use crate::descriptive::PercentileCi;
use crate::special::{binomial_cdf, binomial_quantile};
use serde::{Deserialize, Serialize};

/// One histogram bucket: the highest value it holds and how many samples it holds.
pub type Bucket = (f64, u64);

/// The value of the 1-based order statistic `rank` of a histogram: the highest value of
/// the bucket that holds it (the HDR convention, exact to the bucket's precision).
fn value_at_rank(buckets: &[Bucket], rank: u64) -> Option<f64> {
    let mut seen = 0u64;
    for &(value, count) in buckets {
        seen += count;
        if seen >= rank {
            return Some(value);
        }
    }
    None
}

/// Order-statistic (binomial) confidence interval for the q-quantile of a sample given
/// as histogram buckets sorted by value: the ranks are those of [`crate::percentile_ci`]
/// (Hahn & Meeker 1991, §5.2; Conover 1999, §3.2), read off the cumulative counts.
/// The coverage holds for the underlying samples; the bounds are bucket values, so
/// they carry the histogram's precision (3 significant digits for kbench's HDR
/// histograms). `None` for an empty or unsorted histogram, or when n is too small to
/// reach `confidence` at q (e.g. p99.9 of 1,000 samples).
pub fn histogram_percentile_ci(
    buckets: &[Bucket],
    q: f64,
    confidence: f64,
) -> Option<PercentileCi> {
    let valid = q > 0.0 && q < 1.0 && confidence > 0.0 && confidence < 1.0;
    let sorted = buckets.windows(2).all(|w| w[0].0 <= w[1].0);
    let finite = buckets.iter().all(|b| b.0.is_finite());
    let n: u64 = buckets.iter().map(|b| b.1).sum();
    if !valid || !sorted || !finite || n == 0 {
        return None;
    }
    let alpha = 1.0 - confidence;
    let lower_rank = binomial_quantile(alpha / 2.0, n, q);
    let upper_rank = binomial_quantile(1.0 - alpha / 2.0, n, q) + 1;
    if lower_rank < 1 || upper_rank > n {
        return None;
    }
    let coverage =
        binomial_cdf(upper_rank as i64 - 1, n, q) - binomial_cdf(lower_rank as i64 - 1, n, q);
    let estimate_rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    Some(PercentileCi {
        q,
        estimate: value_at_rank(buckets, estimate_rank)?,
        lower: value_at_rank(buckets, lower_rank)?,
        upper: value_at_rank(buckets, upper_rank)?,
        lower_rank: lower_rank as usize,
        upper_rank: upper_rank as usize,
        coverage,
    })
}

/// One percentile of B against the same percentile of A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PercentileShift {
    pub q: f64,
    pub a: PercentileCi,
    pub b: PercentileCi,
    /// B's percentile relative to A's, in percent (+ means B larger).
    pub shift_pct: f64,
    /// Simultaneous interval for the shift: B's bounds over A's.
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
    pub verdict: Verdict,
    pub method: String,
}

/// Compares the q-quantile of two histogram-summarised samples. Each side gets an
/// order-statistic interval at confidence 1 − α/2, so by Bonferroni both hold together
/// with probability ≥ 1 − α, and the ratio of the percentiles lies in
/// [B.lower / A.upper, B.upper / A.lower]. The verdict reads that interval against ±δ
/// as [`crate::compare`] does (on the log scale, so ±δ is symmetric). It treats every
/// sample as independent: pooled over runs, it ignores run-to-run variation, which
/// per-run percentile rows compared across runs do not.
pub fn compare_percentile(
    a: &[Bucket],
    b: &[Bucket],
    q: f64,
    opts: &CompareOptions,
) -> Option<PercentileShift> {
    let confidence = 1.0 - opts.alpha / 2.0;
    let ca = histogram_percentile_ci(a, q, confidence)?;
    let cb = histogram_percentile_ci(b, q, confidence)?;
    if !(ca.lower > 0.0 && cb.lower > 0.0) {
        return None;
    }
    let low = (cb.lower / ca.upper).ln();
    let high = (cb.upper / ca.lower).ln();
    let threshold = (1.0 + opts.delta_pct / 100.0).ln();
    let verdict = verdict_from_interval((low, high), threshold, opts.higher_is_better);
    Some(PercentileShift {
        q,
        shift_pct: 100.0 * (cb.estimate / ca.estimate - 1.0),
        ci_low_pct: 100.0 * low.exp_m1(),
        ci_high_pct: 100.0 * high.exp_m1(),
        a: ca,
        b: cb,
        verdict,
        method: "order-statistic CIs of pooled samples, Bonferroni-combined".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptive::{percentile_ci, sorted_copy};

    fn histogram(values: &[f64]) -> Vec<Bucket> {
        let sorted = sorted_copy(values);
        let mut out: Vec<Bucket> = Vec::new();
        for v in sorted {
            match out.last_mut() {
                Some(last) if last.0 == v => last.1 += 1,
                _ => out.push((v, 1)),
            }
        }
        out
    }

    #[test]
    fn histogram_ranks_equal_the_order_statistics_of_the_raw_sample() {
        let values: Vec<f64> = (0..5000)
            .map(|i| ((i * 7919) % 1000) as f64 + 1.0)
            .collect();
        let sorted = sorted_copy(&values);
        for q in [0.5, 0.9, 0.99] {
            let raw = percentile_ci(&sorted, q, 0.95).unwrap();
            let hist = histogram_percentile_ci(&histogram(&values), q, 0.95).unwrap();
            assert_eq!((raw.lower, raw.upper), (hist.lower, hist.upper), "q={q}");
            assert_eq!(
                (raw.lower_rank, raw.upper_rank),
                (hist.lower_rank, hist.upper_rank)
            );
        }
    }

    #[test]
    fn too_few_samples_for_a_high_percentile_is_none() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert!(histogram_percentile_ci(&histogram(&values), 0.999, 0.95).is_none());
        assert!(histogram_percentile_ci(&[], 0.5, 0.95).is_none());
        assert!(histogram_percentile_ci(&[(2.0, 1), (1.0, 1)], 0.5, 0.95).is_none());
    }

    #[test]
    fn a_shifted_distribution_is_a_regression_and_an_equal_one_equivalent() {
        let a: Vec<f64> = (0..20_000)
            .map(|i| 1000.0 + ((i * 7919) % 200) as f64)
            .collect();
        let b: Vec<f64> = a.iter().map(|v| v * 1.10).collect();
        let opts = CompareOptions::default();
        let worse = compare_percentile(&histogram(&a), &histogram(&b), 0.5, &opts).unwrap();
        assert_eq!(worse.verdict, Verdict::Regression);
        assert!((worse.shift_pct - 10.0).abs() < 1.0, "{}", worse.shift_pct);
        assert!(worse.ci_low_pct <= worse.shift_pct && worse.shift_pct <= worse.ci_high_pct);
        let same = compare_percentile(
            &histogram(&a),
            &histogram(&a),
            0.5,
            &CompareOptions {
                delta_pct: 5.0,
                ..opts
            },
        )
        .unwrap();
        assert_eq!(same.verdict, Verdict::Equivalent);
        let better = compare_percentile(&histogram(&b), &histogram(&a), 0.9, &opts).unwrap();
        assert_eq!(better.verdict, Verdict::Improvement);
    }
}
