//! Per-sample diagnostics shown next to a verdict: outliers, bimodality, drift.

use crate::descriptive::{mad_sorted, mean, quantile_sorted, sample_sd, sorted_copy};
use crate::rank::PMethod;
use crate::special::is_positive;
use crate::special::normal_sf;
use serde::{Deserialize, Serialize};

/// Robust z threshold of Iglewicz & Hoaglin (1993): |0.6745·(x − median)/MAD| > 3.5.
pub const OUTLIER_MODIFIED_Z: f64 = 3.5;

/// Indices (0-based, in input order) of outliers by the modified z-score rule
/// |x − median| > 3.5 · 1.4826 · MAD (Iglewicz & Hoaglin 1993, §3.2; about 5.2 raw MADs).
/// When MAD = 0 (more than half the values equal) the mean absolute deviation from the
/// median, scaled by 1.2533, replaces it (Iglewicz & Hoaglin's suggestion), so a few distinct
/// values among many identical ones are not all flagged against a zero scale (hyperfine's
/// `f64::EPSILON` pitfall); if that is zero too, nothing is an outlier. Fewer than 3 values:
/// none.
pub fn mad_outliers(values: &[f64]) -> Vec<usize> {
    if values.len() < 3 || values.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let sorted = sorted_copy(values);
    let median = quantile_sorted(&sorted, 0.5);
    let mad = mad_sorted(&sorted);
    let scale = if mad > 0.0 {
        mad / 0.674_489_750_196_081_7
    } else {
        1.253_314_137_315_500_3
            * mean(
                &values
                    .iter()
                    .map(|v| (v - median).abs())
                    .collect::<Vec<_>>(),
            )
    };
    if !is_positive(scale) {
        return Vec::new();
    }
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| ((*v - median) / scale).abs() > OUTLIER_MODIFIED_Z)
        .map(|(i, _)| i)
        .collect()
}

/// How a bimodality flag was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BimodalityRule {
    /// Brendan Gregg's mValue on histograms (n ≥ 12): fired, or the primary rule.
    MValue,
    /// Largest-gap rule (5 ≤ n < 30): fired, or the only rule (n < 12).
    Gap,
    /// Too few values to say anything (n < 5).
    TooFew,
}

/// Bimodality diagnostic of one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bimodality {
    pub bimodal: bool,
    pub rule: BimodalityRule,
    /// The mValue (n ≥ 12): about 2 for one mode, 4 for two; > 3.2 is flagged.
    pub mvalue: Option<f64>,
    /// Largest gap divided by the median gap (gap rule only).
    pub gap_ratio: Option<f64>,
}

/// mValue above which a sample is flagged bimodal (BenchmarkDotNet's "bimodal" level).
pub const MVALUE_BIMODAL: f64 = 3.2;
/// Gap rule: the largest inner gap must exceed this multiple of the median gap.
pub const GAP_RATIO_BIMODAL: f64 = 3.0;
/// The gap rule is applied below this size (5 ≤ n < 30).
pub const GAP_RULE_MAX_N: usize = 30;
/// ... and this many pooled within-mode SDs (the SD of the values on each side of the gap).
/// The ratio alone flags about 10 % of normal samples of 8 to 11 values; with this condition
/// 2 % at n = 8 and under 1 % at n ≥ 10 (8 % at n = 5), while still flagging 25-50 % of
/// samples with a 30 % mode 6 SDs away (simulation in the calibration notes).
pub const GAP_WITHIN_SDS: f64 = 4.0;

/// Bimodality check. n ≥ 12: Brendan Gregg's mValue ("Frequency Trails: Modes and
/// Modality", 2015), the sum of absolute count changes along a histogram padded with empty
/// bins divided by the tallest bin, maximised over bin widths starting at Scott's (1979) rule
/// and doubling until one bin covers the range (as BenchmarkDotNet's `MathHelper.CalculateMValue`,
/// after removing Tukey outliers); flagged when > 3.2. The mValue almost never fires below
/// n = 30 even for a 30/70 mixture 6 SDs apart (histograms of 12-20 values are too coarse),
/// so the gap rule is also applied for 5 ≤ n < 30, not only below 12. Gap rule: flagged when
/// the largest gap with at least two values on each side exceeds 3 times the median gap
/// (`docs/statistics.md`, "Diagnostics") and 4 pooled SDs of the values on either side of it.
pub fn bimodality(values: &[f64]) -> Bimodality {
    let finite = values.iter().all(|v| v.is_finite());
    if values.len() < 5 || !finite {
        return Bimodality {
            bimodal: false,
            rule: BimodalityRule::TooFew,
            mvalue: None,
            gap_ratio: None,
        };
    }
    let sorted = sorted_copy(values);
    let mvalue = (sorted.len() >= 12).then(|| mvalue(&sorted));
    let mvalue_fired = mvalue.is_some_and(|m| m > MVALUE_BIMODAL);
    let (gap_fired, gap_ratio) = if sorted.len() < GAP_RULE_MAX_N {
        gap_rule(&sorted)
    } else {
        (false, None)
    };
    let rule = match (mvalue_fired, gap_fired, mvalue.is_some()) {
        (true, _, _) => BimodalityRule::MValue,
        (false, true, _) => BimodalityRule::Gap,
        (false, false, has_mvalue) => {
            if has_mvalue {
                BimodalityRule::MValue
            } else {
                BimodalityRule::Gap
            }
        }
    };
    Bimodality {
        bimodal: mvalue_fired || gap_fired,
        rule,
        mvalue,
        gap_ratio,
    }
}

fn without_tukey_outliers(sorted: &[f64]) -> Vec<f64> {
    let (q1, q3) = (quantile_sorted(sorted, 0.25), quantile_sorted(sorted, 0.75));
    let fence = 1.5 * (q3 - q1);
    sorted
        .iter()
        .copied()
        .filter(|v| *v >= q1 - fence && *v <= q3 + fence)
        .collect()
}

fn mvalue(sorted: &[f64]) -> f64 {
    let kept = without_tukey_outliers(sorted);
    let (min, max) = (kept[0], kept[kept.len() - 1]);
    let range = max - min;
    let sd = sample_sd(&kept).unwrap_or(0.0);
    let mut bin_width = 3.5 * sd / (kept.len() as f64).cbrt();
    if !is_positive(bin_width) || !is_positive(range) {
        return 2.0; // a single spike is one mode
    }
    let mut best: f64 = 0.0;
    loop {
        best = best.max(mvalue_for_bin_width(&kept, min, bin_width));
        if bin_width > range {
            return best;
        }
        bin_width *= 2.0;
    }
}

fn mvalue_for_bin_width(sorted: &[f64], min: f64, bin_width: f64) -> f64 {
    let bins = ((sorted[sorted.len() - 1] - min) / bin_width).floor() as usize + 1;
    let mut counts = vec![0i64; bins + 2]; // one empty bin padded at each end
    for v in sorted {
        let bin = (((v - min) / bin_width).floor() as usize).min(bins - 1);
        counts[bin + 1] += 1;
    }
    let tallest = *counts.iter().max().unwrap_or(&1) as f64;
    let changes: i64 = counts.windows(2).map(|w| (w[1] - w[0]).abs()).sum();
    changes as f64 / tallest
}

fn gap_rule(sorted: &[f64]) -> (bool, Option<f64>) {
    let gaps: Vec<f64> = sorted.windows(2).map(|w| w[1] - w[0]).collect();
    let median_gap = quantile_sorted(&sorted_copy(&gaps), 0.5);
    // Inner gaps only: at least two values on each side (gap index 1..=len−3).
    let (index, largest) =
        gaps.iter()
            .enumerate()
            .take(gaps.len() - 1)
            .skip(1)
            .fold(
                (0, 0.0f64),
                |best, (i, g)| if *g > best.1 { (i, *g) } else { best },
            );
    if index == 0 || !is_positive(largest) {
        return (false, None);
    }
    let ratio = if median_gap > 0.0 {
        largest / median_gap
    } else {
        f64::INFINITY
    };
    // The values below and above the gap form the two candidate modes.
    let (low_mode, high_mode) = sorted.split_at(index + 1);
    let within_sd = pooled_sd(low_mode, high_mode);
    let bimodal = ratio > GAP_RATIO_BIMODAL && largest > GAP_WITHIN_SDS * within_sd;
    (bimodal, ratio.is_finite().then_some(ratio))
}

fn pooled_sd(x: &[f64], y: &[f64]) -> f64 {
    let ss = |v: &[f64]| {
        let m = mean(v);
        v.iter().map(|a| (a - m) * (a - m)).sum::<f64>()
    };
    ((ss(x) + ss(y)) / (x.len() + y.len() - 2) as f64).sqrt()
}

/// Drift of one sample over run order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// Theil-Sen slope per run, in the analysed units (log units ≈ fraction per run);
    /// `None` where it was not computed ([`drift_if_significant`]).
    pub slope_per_run: Option<f64>,
    /// Mann-Kendall S = concordant − discordant pairs.
    pub mann_kendall_s: f64,
    /// Two-sided Mann-Kendall p-value.
    pub p_value: f64,
    pub method: PMethod,
}

/// Theil-Sen slope (Theil 1950; Sen 1968): the median of the slopes (y_j − y_i)/(j − i) over
/// all pairs of runs i < j. Exact for n ≤ 2000 (about 2·10⁶ slopes); above that the median
/// is found by bisection on the slope s, counting pairs with slope below s as inversions of
/// y_i − s·i by merge sort (O(n log n) per step), to 1e-12 relative precision.
/// NaN for fewer than two values.
pub fn theil_sen_slope(y: &[f64]) -> f64 {
    let n = y.len();
    if n < 2 {
        return f64::NAN;
    }
    if n <= 2000 {
        let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
        for i in 0..n {
            for j in i + 1..n {
                slopes.push((y[j] - y[i]) / (j - i) as f64);
            }
        }
        return quantile_sorted(&sorted_copy(&slopes), 0.5);
    }
    theil_sen_by_bisection(y)
}

fn theil_sen_by_bisection(y: &[f64]) -> f64 {
    let n = y.len();
    let pairs = (n * (n - 1) / 2) as u64;
    let (mut z, mut scratch) = (vec![0.0; n], vec![0.0; n]);
    let mut slopes_below = |s: f64| -> u64 {
        // Pairs i < j with (y_j − y_i)/(j − i) < s  ⇔  z_j < z_i with z = y − s·index.
        for (i, (zi, v)) in z.iter_mut().zip(y).enumerate() {
            *zi = v - s * i as f64;
        }
        count_inversions_with(&mut z, &mut scratch)
    };
    let (min, max) = y
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let mut lo = -(max - min);
    let mut hi = max - min;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if 2 * slopes_below(mid) < pairs {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi.abs().max(lo.abs()).max(f64::MIN_POSITIVE) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Number of pairs i < j with v_i > v_j, by merge sort (sorts `v`).
fn count_strict_inversions(v: &mut [f64]) -> u64 {
    let mut scratch = vec![0.0; v.len()];
    count_inversions_with(v, &mut scratch)
}

/// [`count_strict_inversions`] by bottom-up merge sort with a caller's scratch
/// buffer of the same length: no allocation, which the Theil-Sen bisection calls for
/// dozens of times on 10,000 values.
fn count_inversions_with(v: &mut [f64], scratch: &mut [f64]) -> u64 {
    let n = v.len();
    let mut count = 0u64;
    let mut width = 1;
    let (mut from, mut to) = (v, scratch);
    let mut in_scratch = false;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            while i < mid && j < end {
                if from[j] < from[i] {
                    count += (mid - i) as u64;
                    to[k] = from[j];
                    j += 1;
                } else {
                    to[k] = from[i];
                    i += 1;
                }
                k += 1;
            }
            to[k..k + (mid - i)].copy_from_slice(&from[i..mid]);
            k += mid - i;
            to[k..k + (end - j)].copy_from_slice(&from[j..end]);
            start = end;
        }
        std::mem::swap(&mut from, &mut to);
        in_scratch = !in_scratch;
        width *= 2;
    }
    if in_scratch {
        // The sorted values are in the caller's scratch: copy them back.
        to.copy_from_slice(from);
    }
    count
}

/// Largest n for the exact Mann-Kendall distribution (permutation inversion counts).
pub const MANN_KENDALL_EXACT_MAX_N: usize = 50;

/// Mann-Kendall trend test of y against run order (Mann 1945; Kendall 1975, ch. 4): S =
/// #(y_j > y_i) − #(y_j < y_i) over i < j, in O(n log n). Two-sided p exact for n ≤ 50
/// without ties (S = C(n,2) − 2·inversions, inversions of a random permutation follow the
/// Mahonian distribution); otherwise normal with the tie-corrected variance
/// [n(n−1)(2n+5) − Σ t(t−1)(2t+5)]/18 and continuity correction. `None` for n < 3.
pub fn mann_kendall(y: &[f64]) -> Option<(f64, f64, PMethod)> {
    let n = y.len();
    if n < 3 || y.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let pairs = (n * (n - 1) / 2) as u64;
    let discordant = count_strict_inversions(&mut y.to_vec());
    let sorted = sorted_copy(y);
    let tie_groups = tie_group_sizes(&sorted);
    let tied_pairs: u64 = tie_groups.iter().map(|t| (t * (t - 1) / 2) as u64).sum();
    let concordant = pairs - discordant - tied_pairs;
    let s = concordant as f64 - discordant as f64;
    if tied_pairs == 0 && n <= MANN_KENDALL_EXACT_MAX_N {
        let tail = discordant.min(concordant) as usize;
        let cdf = mahonian_cdf(n, tail);
        return Some((s, (2.0 * cdf).min(1.0), PMethod::Exact));
    }
    let nf = n as f64;
    let tie_correction: f64 = tie_groups
        .iter()
        .map(|&t| (t * (t - 1) * (2 * t + 5)) as f64)
        .sum();
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - tie_correction) / 18.0;
    if !is_positive(var) || s == 0.0 {
        return Some((s, 1.0, PMethod::Normal));
    }
    let z = (s.abs() - 1.0) / var.sqrt();
    Some((s, (2.0 * normal_sf(z)).min(1.0), PMethod::Normal))
}

fn tie_group_sizes(sorted: &[f64]) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut start = 0;
    while start < sorted.len() {
        let mut end = start + 1;
        while end < sorted.len() && sorted[end] == sorted[start] {
            end += 1;
        }
        if end - start > 1 {
            sizes.push(end - start);
        }
        start = end;
    }
    sizes
}

/// P(inversions ≤ k) for a uniformly random permutation of n items, by the recursion
/// P_n(k) = (1/n) Σ_{j<n} P_{n−1}(k − j), computed up to k only.
fn mahonian_cdf(n: usize, k: usize) -> f64 {
    let mut pmf = vec![0.0; k + 1];
    pmf[0] = 1.0;
    for size in 2..=n {
        // Sliding window sum of the previous pmf over the last `size` entries.
        let mut next = vec![0.0; k + 1];
        let mut window = 0.0;
        for idx in 0..=k {
            window += pmf[idx];
            if idx >= size {
                window -= pmf[idx - size];
            }
            next[idx] = window / size as f64;
        }
        pmf = next;
    }
    pmf.iter().sum::<f64>().min(1.0)
}

/// Theil-Sen slope and Mann-Kendall test of one sample in run order; `None` for n < 3.
pub fn drift(y: &[f64]) -> Option<Drift> {
    let (s, p_value, method) = mann_kendall(y)?;
    Some(Drift {
        slope_per_run: Some(theil_sen_slope(y)),
        mann_kendall_s: s,
        p_value,
        method,
    })
}

/// [`drift`], with the Theil-Sen slope computed only when the Mann-Kendall test
/// rejects at `alpha`: the slope is what a report shows for a drift,
/// and on 10,000 runs it costs more than the rest of a comparison.
pub fn drift_if_significant(y: &[f64], alpha: f64) -> Option<Drift> {
    let (s, p_value, method) = mann_kendall(y)?;
    Some(Drift {
        slope_per_run: (p_value < alpha).then(|| theil_sen_slope(y)),
        mann_kendall_s: s,
        p_value,
        method,
    })
}
