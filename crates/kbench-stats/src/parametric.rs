//! Welch's t test (from samples or from summaries) and Fieller's interval for a ratio of
//! means.

use crate::descriptive::{mean, sample_variance};
use crate::special::{t_quantile, t_sf};
use serde::{Deserialize, Serialize};

/// Result of Welch's unequal-variance t test of mean(b) − mean(a).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// mean(b) − mean(a).
    pub difference: f64,
    /// Standard error of the difference.
    pub std_error: f64,
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Confidence interval of the difference at the requested level.
    pub ci: (f64, f64),
}

/// Welch's t test from summaries (Welch 1947; Satterthwaite 1946 for df): means, sample
/// variances and sizes of each side. Needs n ≥ 2 on both sides and finite, non-negative
/// variances; `None` otherwise. With zero variance on both sides the result is degenerate
/// but defined: p = 1 if the means are equal, 0 otherwise, and the CI is the point.
pub fn welch_from_moments(
    (mean_a, var_a, n_a): (f64, f64, usize),
    (mean_b, var_b, n_b): (f64, f64, usize),
    confidence: f64,
) -> Option<Welch> {
    let finite = [mean_a, var_a, mean_b, var_b].iter().all(|v| v.is_finite());
    if n_a < 2 || n_b < 2 || !finite || var_a < 0.0 || var_b < 0.0 {
        return None;
    }
    let (se2_a, se2_b) = (var_a / n_a as f64, var_b / n_b as f64);
    let std_error = (se2_a + se2_b).sqrt();
    let difference = mean_b - mean_a;
    if std_error == 0.0 {
        let p_value = if difference == 0.0 { 1.0 } else { 0.0 };
        let t = if difference == 0.0 {
            0.0
        } else {
            difference.signum() * f64::INFINITY
        };
        return Some(Welch {
            difference,
            std_error,
            t,
            df: f64::INFINITY,
            p_value,
            ci: (difference, difference),
        });
    }
    let df = welch_df(se2_a, n_a, se2_b, n_b);
    let t = difference / std_error;
    let p_value = (2.0 * t_sf(t.abs(), df)).min(1.0);
    let half_width = t_quantile(0.5 + confidence / 2.0, df) * std_error;
    Some(Welch {
        difference,
        std_error,
        t,
        df,
        p_value,
        ci: (difference - half_width, difference + half_width),
    })
}

/// Welch-Satterthwaite degrees of freedom from squared standard errors.
fn welch_df(se2_a: f64, n_a: usize, se2_b: f64, n_b: usize) -> f64 {
    let numerator = (se2_a + se2_b).powi(2);
    let denominator = se2_a.powi(2) / (n_a - 1) as f64 + se2_b.powi(2) / (n_b - 1) as f64;
    if denominator > 0.0 {
        numerator / denominator
    } else {
        (n_a + n_b - 2) as f64
    }
}

/// Welch's t test on two samples (see [`welch_from_moments`]); `None` with fewer than two
/// values on a side.
pub fn welch(a: &[f64], b: &[f64], confidence: f64) -> Option<Welch> {
    let var_a = sample_variance(a)?;
    let var_b = sample_variance(b)?;
    welch_from_moments(
        (mean(a), var_a, a.len()),
        (mean(b), var_b, b.len()),
        confidence,
    )
}

/// Student's t interval of the mean of `values` at `confidence`; `None` with fewer than
/// two values.
pub fn mean_interval(values: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let sd = crate::descriptive::sample_sd(values)?;
    let (center, n) = (mean(values), values.len() as f64);
    let half = t_quantile(0.5 + confidence / 2.0, n - 1.0) * sd / n.sqrt();
    Some((center - half, center + half))
}

/// Fieller's confidence interval for the ratio of means mean_b / mean_a (Fieller 1954),
/// using the Welch-Satterthwaite degrees of freedom, so it excludes 1 exactly when Welch's
/// test rejects at the same level. Swapping the sides gives the reciprocal interval.
/// `None` when the interval is unbounded (mean_a not significantly different from zero).
pub fn fieller_ratio_ci(
    (mean_a, var_a, n_a): (f64, f64, usize),
    (mean_b, var_b, n_b): (f64, f64, usize),
    confidence: f64,
) -> Option<(f64, f64)> {
    if n_a < 2 || n_b < 2 || mean_a == 0.0 {
        return None;
    }
    let (se2_a, se2_b) = (var_a / n_a as f64, var_b / n_b as f64);
    if se2_a + se2_b == 0.0 {
        let ratio = mean_b / mean_a;
        return Some((ratio, ratio));
    }
    let t = t_quantile(0.5 + confidence / 2.0, welch_df(se2_a, n_a, se2_b, n_b));
    let t2 = t * t;
    // (mean_b − ρ·mean_a)² = t²(se2_b + ρ²·se2_a), a quadratic in ρ.
    let quad = mean_a * mean_a - t2 * se2_a;
    if quad <= 0.0 {
        return None;
    }
    let root = (mean_a * mean_a * se2_b + mean_b * mean_b * se2_a - t2 * se2_a * se2_b)
        .max(0.0)
        .sqrt();
    let centre = mean_a * mean_b;
    let (r1, r2) = ((centre - t * root) / quad, (centre + t * root) / quad);
    Some((r1.min(r2), r1.max(r2)))
}

/// Satterthwaite's (1946) degrees of freedom for a sum of variance estimates, each
/// given with its own degrees of freedom.
pub fn satterthwaite(terms: &[(f64, f64)]) -> f64 {
    let total: f64 = terms.iter().map(|t| t.0).sum();
    let denominator: f64 = terms
        .iter()
        .filter(|t| t.1 > 0.0)
        .map(|t| t.0 * t.0 / t.1)
        .sum();
    if denominator > 0.0 {
        total * total / denominator
    } else {
        terms.iter().map(|t| t.1).sum::<f64>().max(1.0)
    }
}
