//! Descriptive statistics of one sample, and order-statistic confidence intervals for
//! percentiles.

use crate::special::{binomial_cdf, binomial_quantile};
use serde::{Deserialize, Serialize};

/// Scale factor that makes the MAD a consistent estimator of σ under normality.
pub const MAD_TO_SD: f64 = 1.482_602_218_505_602;

/// The descriptive summary of one sample. Fields are `None` when undefined for the input
/// (empty sample, SD of one value, geometric mean of non-positive values).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    /// Sample standard deviation (n − 1 denominator).
    pub sd: Option<f64>,
    /// Coefficient of variation SD / mean, in percent.
    pub cv_pct: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Quartiles (type 7, as [`quantile_sorted`]).
    pub q1: Option<f64>,
    pub q3: Option<f64>,
    /// Raw median absolute deviation (multiply by [`MAD_TO_SD`] to estimate σ).
    pub mad: Option<f64>,
    /// exp(mean(ln x)); only for all-positive samples.
    pub geometric_mean: Option<f64>,
}

/// Describes a sample: n, mean, median, sample SD, CV, min, max, quartiles, MAD and geometric
/// mean. Non-finite values make every moment `None` (only `n` is filled): the caller should
/// reject them first; this function never panics.
pub fn describe(values: &[f64]) -> Summary {
    let n = values.len();
    let empty = Summary {
        n,
        mean: None,
        median: None,
        sd: None,
        cv_pct: None,
        min: None,
        max: None,
        q1: None,
        q3: None,
        mad: None,
        geometric_mean: None,
    };
    if n == 0 || values.iter().any(|v| !v.is_finite()) {
        return empty;
    }
    let sorted = sorted_copy(values);
    let mean = mean(values);
    let sd = sample_sd(values);
    Summary {
        n,
        mean: Some(mean),
        median: Some(quantile_sorted(&sorted, 0.5)),
        sd,
        cv_pct: sd.and_then(|s| (mean != 0.0).then(|| 100.0 * s / mean.abs())),
        min: sorted.first().copied(),
        max: sorted.last().copied(),
        q1: Some(quantile_sorted(&sorted, 0.25)),
        q3: Some(quantile_sorted(&sorted, 0.75)),
        mad: Some(mad_sorted(&sorted)),
        geometric_mean: geometric_mean(values),
    }
}

/// Copy and sort ascending (total order, so NaN cannot panic the sort).
pub fn sorted_copy(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Arithmetic mean (NaN for an empty slice).
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample standard deviation with the n − 1 denominator (two-pass algorithm); `None` for
/// fewer than two values.
pub fn sample_sd(values: &[f64]) -> Option<f64> {
    sample_variance(values).map(f64::sqrt)
}

/// Sample variance with the n − 1 denominator; `None` for fewer than two values.
pub fn sample_variance(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values);
    let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    Some(ss / (values.len() - 1) as f64)
}

/// Median of an unsorted slice (NaN when empty).
pub fn median(values: &[f64]) -> f64 {
    quantile_sorted(&sorted_copy(values), 0.5)
}

/// Sample quantile of a sorted slice by linear interpolation between order statistics
/// (Hyndman & Fan 1996, definition 7; R's and numpy's default). NaN when empty.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Raw median absolute deviation from the median of a sorted slice (Hampel 1974).
pub fn mad_sorted(sorted: &[f64]) -> f64 {
    let med = quantile_sorted(sorted, 0.5);
    let deviations: Vec<f64> = sorted.iter().map(|v| (v - med).abs()).collect();
    median(&deviations)
}

/// Geometric mean exp(mean(ln x)); `None` unless every value is finite and positive.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    Some(mean(&values.iter().map(|v| v.ln()).collect::<Vec<_>>()).exp())
}

/// A percentile with its distribution-free confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PercentileCi {
    /// The quantile level in (0, 1), e.g. 0.99.
    pub q: f64,
    /// Point estimate (type-7 sample quantile).
    pub estimate: f64,
    pub lower: f64,
    pub upper: f64,
    /// 1-based ranks of the order statistics used as bounds.
    pub lower_rank: usize,
    pub upper_rank: usize,
    /// Exact coverage of [x_(l), x_(u)) for a continuous distribution (≥ the requested level).
    pub coverage: f64,
}

/// Order-statistic (binomial) confidence interval for the q-quantile of a sorted sample:
/// [x_(l), x_(u)] with l = qbinom(α/2, n, q) and u = qbinom(1 − α/2, n, q) + 1, whose
/// coverage P(l ≤ Bin(n, q) < u) is at least `confidence` for any continuous distribution
/// (Hahn & Meeker 1991, §5.2; Conover 1999, §3.2; the rule mmtests uses). Works for 10⁶
/// values (the binomial CDF comes from the incomplete beta function, no enumeration).
/// `None` when the sample is too small to reach the confidence at that q (e.g. the 99th
/// percentile of 50 values), or the input is not sorted finite values.
pub fn percentile_ci(sorted: &[f64], q: f64, confidence: f64) -> Option<PercentileCi> {
    let n = sorted.len();
    let valid_level = q > 0.0 && q < 1.0 && confidence > 0.0 && confidence < 1.0;
    if n == 0 || !valid_level || sorted.iter().any(|v| !v.is_finite()) {
        return None;
    }
    if sorted.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    let alpha = 1.0 - confidence;
    let lower_rank = binomial_quantile(alpha / 2.0, n as u64, q) as usize;
    let upper_rank = binomial_quantile(1.0 - alpha / 2.0, n as u64, q) as usize + 1;
    if lower_rank < 1 || upper_rank > n {
        return None;
    }
    let coverage = binomial_cdf(upper_rank as i64 - 1, n as u64, q)
        - binomial_cdf(lower_rank as i64 - 1, n as u64, q);
    Some(PercentileCi {
        q,
        estimate: quantile_sorted(sorted, q),
        lower: sorted[lower_rank - 1],
        upper: sorted[upper_rank - 1],
        lower_rank,
        upper_rank,
        coverage,
    })
}

/// Convenience for latency distributions: sorts once and returns [`percentile_ci`] for each
/// level in `qs` (same order; `None` where unreachable).
pub fn percentiles_with_ci(
    values: &[f64],
    qs: &[f64],
    confidence: f64,
) -> Vec<Option<PercentileCi>> {
    let sorted = sorted_copy(values);
    qs.iter()
        .map(|&q| percentile_ci(&sorted, q, confidence))
        .collect()
}

/// Half-width of the 95% CI of the median of `values`, as a percentage of the median.
pub fn precision_pct(values: &[f64]) -> Option<f64> {
    let sorted = sorted_copy(values);
    let ci = percentile_ci(&sorted, 0.5, 0.95)?;
    let median = ci.estimate;
    (median != 0.0).then(|| 100.0 * (ci.upper - ci.lower) / 2.0 / median.abs())
}
