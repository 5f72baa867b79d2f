//! Two-sample rank methods: Mann-Whitney U (exact and normal approximation), the
//! Hodges-Lehmann shift and its Moses confidence interval by O(n log n)-per-step selection
//! of pairwise differences.

use crate::descriptive::sorted_copy;
use crate::special::{normal_quantile, normal_sf};
use serde::{Deserialize, Serialize};

/// Largest per-side size for which the exact U distribution is computed (cost about
/// n·nm additions of i128; counts up to C(100, 50) fit in i128).
pub const EXACT_MAX_PER_SIDE: usize = 50;

/// How a p-value or critical value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PMethod {
    /// Exact null distribution (no ties, small samples).
    Exact,
    /// Normal approximation with tie and continuity corrections.
    Normal,
}

/// Result of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U statistic of the second sample: #(b > a) + ½ #(b = a).
    pub u_b: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    pub method: PMethod,
    /// Whether any value occurs more than once in the pooled sample.
    pub ties: bool,
}

/// Midranks (1-based, ties get the average rank) of the pooled sample `a ++ b`, and the tie
/// term Σ(t³ − t) over groups of tied values.
fn pooled_ranks(a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    let mut pooled: Vec<(f64, usize)> = a.iter().chain(b).copied().zip(0..).collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut ranks = vec![0.0; pooled.len()];
    let mut tie_term = 0.0;
    let mut start = 0;
    while start < pooled.len() {
        let mut end = start + 1;
        while end < pooled.len() && pooled[end].0 == pooled[start].0 {
            end += 1;
        }
        let midrank = (start + end + 1) as f64 / 2.0;
        for item in &pooled[start..end] {
            ranks[item.1] = midrank;
        }
        let t = (end - start) as f64;
        tie_term += t * t * t - t;
        start = end;
    }
    (ranks, tie_term)
}

/// Standard deviation of U under H0 with the tie correction (Hollander & Wolfe 1999,
/// §4.1, eq. 4.11).
fn u_sd(n: usize, m: usize, tie_term: f64) -> f64 {
    let (nf, mf) = (n as f64, m as f64);
    let total = nf + mf;
    let var = nf * mf / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
    var.max(0.0).sqrt()
}

/// Two-sided Mann-Whitney U test of `a` vs `b` (Mann & Whitney 1947; Hollander & Wolfe
/// 1999, §4.1). Exact p from the null distribution of U when there are no ties and both
/// sides have at most [`EXACT_MAX_PER_SIDE`] values; otherwise the normal approximation
/// with tie-corrected variance and continuity correction (as scipy's `mannwhitneyu`).
/// Rank-based, so any monotone transformation of the data (log, units) leaves it unchanged.
/// Returns `None` if either side is empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    mann_whitney_with(a, b, None)
}

/// [`mann_whitney`] reusing an exact distribution already built for these sizes.
pub(crate) fn mann_whitney_with(
    a: &[f64],
    b: &[f64],
    dist: Option<&UDistribution>,
) -> Option<MannWhitney> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return None;
    }
    let (ranks, tie_term) = pooled_ranks(a, b);
    let rank_sum_b: f64 = ranks[n..].iter().sum();
    let mf = m as f64;
    let u_b = rank_sum_b - mf * (mf + 1.0) / 2.0;
    let u_a = (n * m) as f64 - u_b;
    let ties = tie_term > 0.0;
    if !ties && n <= EXACT_MAX_PER_SIDE && m <= EXACT_MAX_PER_SIDE {
        let built;
        let dist = match dist {
            Some(d) if d.sizes_match(n, m) => d,
            _ => {
                built = UDistribution::new(n, m);
                &built
            }
        };
        let u_min = u_a.min(u_b).round() as usize;
        let p = (2.0 * dist.cdf(u_min)).min(1.0);
        return Some(MannWhitney {
            u_b,
            p_value: p,
            method: PMethod::Exact,
            ties,
        });
    }
    let sd = u_sd(n, m, tie_term);
    let mean = (n * m) as f64 / 2.0;
    let p = if sd > 0.0 {
        let z = (u_a.max(u_b) - mean - 0.5) / sd;
        (2.0 * normal_sf(z)).min(1.0)
    } else {
        1.0 // every value tied: no evidence of a difference
    };
    Some(MannWhitney {
        u_b,
        p_value: p,
        method: PMethod::Normal,
        ties,
    })
}

/// The exact null distribution of U for sizes (n, m), tabulated up to ⌊nm/2⌋ and extended
/// by symmetry. The number of arrangements with U = u is the coefficient of q^u in the
/// Gaussian binomial coefficient [n+m choose n]_q (Andrews 1976, ch. 3; equivalent to Mann &
/// Whitney's 1947 recursion).
pub struct UDistribution {
    n: usize,
    m: usize,
    /// P(U ≤ u) for u = 0..=⌊nm/2⌋.
    cdf_lower_half: Vec<f64>,
}

impl UDistribution {
    pub fn new(n: usize, m: usize) -> Self {
        let (small, large) = if n <= m { (n, m) } else { (m, n) };
        let width = small * large / 2 + 1;
        // Coefficients of the Gaussian binomial [large + i choose i]_q, built one factor
        // (1 − q^(large+i)) / (1 − q^i) at a time in exact integers (≤ C(100, 50) ≈ 1e29
        // fits in i128), truncated at ⌊nm/2⌋: O(n · nm) and no rounding at all.
        let mut counts = vec![0i128; width];
        counts[0] = 1;
        for i in 1..=small {
            let power = large + i;
            for u in (power..width).rev() {
                counts[u] -= counts[u - power];
            }
            for u in i..width {
                counts[u] += counts[u - i];
            }
        }
        let total = binomial_coefficient(n + m, n);
        let mut cumulative = 0.0;
        let cdf_lower_half = counts
            .iter()
            .map(|&c| {
                cumulative += c as f64;
                (cumulative / total).min(1.0)
            })
            .collect();
        UDistribution {
            n,
            m,
            cdf_lower_half,
        }
    }

    fn sizes_match(&self, n: usize, m: usize) -> bool {
        (self.n, self.m) == (n, m) || (self.n, self.m) == (m, n)
    }

    /// P(U ≤ u) under H0.
    pub fn cdf(&self, u: usize) -> f64 {
        let nm = self.n * self.m;
        if u >= nm {
            return 1.0;
        }
        if u < self.cdf_lower_half.len() {
            self.cdf_lower_half[u]
        } else {
            // Symmetry: P(U ≤ u) = 1 − P(U ≤ nm − u − 1).
            1.0 - self.cdf_lower_half[nm - u - 1]
        }
    }
}

fn binomial_coefficient(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Rank k of the Moses confidence interval: the interval is [D_(k), D_(nm−k+1)] of the
/// sorted pairwise differences, with k the largest integer such that P(U ≤ k − 1) ≤ α/2, so
/// coverage ≥ 1 − α (Moses 1965; Hollander & Wolfe 1999, §4.3). Exact distribution when
/// `exact`, otherwise the normal approximation with tie and continuity corrections
/// (`tie_term` = Σ(t³ − t)). Returns 0 when no interval reaches the confidence (e.g. 3 vs 3
/// at 95 %).
pub fn moses_rank(n: usize, m: usize, alpha: f64, exact: bool, tie_term: f64) -> usize {
    moses_rank_with(
        n,
        m,
        alpha,
        exact.then(|| UDistribution::new(n, m)).as_ref(),
        tie_term,
    )
}

/// [`moses_rank`] with the exact distribution given (`None`: normal approximation).
fn moses_rank_with(
    n: usize,
    m: usize,
    alpha: f64,
    exact: Option<&UDistribution>,
    tie_term: f64,
) -> usize {
    if n == 0 || m == 0 || !(alpha > 0.0 && alpha < 1.0) {
        return 0;
    }
    if let Some(dist) = exact {
        let mut k = 0;
        while k < n * m && dist.cdf(k) <= alpha / 2.0 {
            k += 1;
        }
        return k;
    }
    let z = normal_quantile(1.0 - alpha / 2.0);
    let k = (n * m) as f64 / 2.0 + 0.5 - z * u_sd(n, m, tie_term);
    if k < 1.0 {
        0
    } else {
        (k.floor() as usize).min(n * m / 2)
    }
}

/// The k-th smallest (1-based) of the n·m pairwise differences y_j − x_i of two sorted
/// samples, without forming them: each step takes the weighted median of the row middles of
/// the implicit sorted matrix as pivot, counts elements below it in O(n + m) with two
/// pointers, and discards at least a quarter of the remaining candidates (Johnson &
/// Mizoguchi 1978; Monahan 1984). Total O((n log n + m) log(nm)).
/// Returns NaN for empty inputs or k outside 1..=n·m.
pub fn kth_pairwise_difference(x_sorted: &[f64], y_sorted: &[f64], k: usize) -> f64 {
    let (n, m) = (x_sorted.len(), y_sorted.len());
    if n == 0 || m == 0 || k == 0 || k > n * m {
        return f64::NAN;
    }
    let diff = |i: usize, j: usize| y_sorted[j] - x_sorted[i];
    // Row i holds y_j − x_i, increasing in j; active columns are lo[i]..hi[i].
    let mut lo = vec![0usize; n];
    let mut hi = vec![m; n];
    let small_enough = (n + m).max(64);
    loop {
        let active: usize = lo.iter().zip(&hi).map(|(l, h)| h - l).sum();
        let below: usize = lo.iter().sum();
        let rank_in_active = k - below; // 1-based, invariant: 1 ≤ rank ≤ active
        if active <= small_enough {
            let mut rest: Vec<f64> = (0..n)
                .flat_map(|i| (lo[i]..hi[i]).map(move |j| (i, j)))
                .map(|(i, j)| diff(i, j))
                .collect();
            let (_, kth, _) = rest.select_nth_unstable_by(rank_in_active - 1, f64::total_cmp);
            return *kth;
        }
        let pivot = weighted_median_of_row_middles(&lo, &hi, &diff, active);
        let (less, less_or_equal) = count_rows_below(x_sorted, y_sorted, pivot);
        let total_less: usize = less.iter().sum();
        let total_less_or_equal: usize = less_or_equal.iter().sum();
        if k <= total_less {
            for (h, l) in hi.iter_mut().zip(&less) {
                *h = (*h).min(*l);
            }
        } else if k > total_less_or_equal {
            for (l, le) in lo.iter_mut().zip(&less_or_equal) {
                *l = (*l).max(*le);
            }
        } else {
            return pivot;
        }
        // Keep lo ≤ hi after both updates (a row can become empty).
        for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
            if *l > *h {
                *l = *h;
            }
        }
    }
}

fn weighted_median_of_row_middles(
    lo: &[usize],
    hi: &[usize],
    diff: &impl Fn(usize, usize) -> f64,
    active: usize,
) -> f64 {
    let mut middles: Vec<(f64, usize)> = lo
        .iter()
        .zip(hi)
        .enumerate()
        .filter(|(_, (l, h))| h > l)
        .map(|(i, (l, h))| (diff(i, l + (h - l) / 2), h - l))
        .collect();
    middles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut cumulative = 0;
    for (value, weight) in &middles {
        cumulative += weight;
        if 2 * cumulative >= active {
            return *value;
        }
    }
    middles.last().map_or(f64::NAN, |m| m.0)
}

/// Per row i, the number of columns j with y_j − x_i < pivot and ≤ pivot. Both counts are
/// non-decreasing in i (x sorted), so one forward pointer per count suffices. Differences are
/// computed exactly as in the selection, so rounding cannot break monotonicity.
fn count_rows_below(x: &[f64], y: &[f64], pivot: f64) -> (Vec<usize>, Vec<usize>) {
    let mut less = Vec::with_capacity(x.len());
    let mut less_or_equal = Vec::with_capacity(x.len());
    let (mut j_less, mut j_le) = (0, 0);
    for &xi in x {
        while j_less < y.len() && y[j_less] - xi < pivot {
            j_less += 1;
        }
        while j_le < y.len() && y[j_le] - xi <= pivot {
            j_le += 1;
        }
        less.push(j_less);
        less_or_equal.push(j_le);
    }
    (less, less_or_equal)
}

/// Hodges-Lehmann two-sample shift with its Moses interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShiftEstimate {
    /// Median of all pairwise differences b_j − a_i.
    pub estimate: f64,
    /// Bounds of the distribution-free interval; `None` when unreachable at this confidence.
    pub ci: Option<(f64, f64)>,
    /// Rank k used for the bounds (0 when unreachable).
    pub rank: usize,
    pub method: PMethod,
}

/// Hodges-Lehmann estimate of the shift of `b` relative to `a` (the median of the n·m
/// differences b_j − a_i; Hodges & Lehmann 1963) and the distribution-free confidence interval
/// obtained by inverting the Mann-Whitney test (Moses 1965; Hollander & Wolfe 1999, §4.3),
/// exact when there are no ties and both sides are small, normal-approximate otherwise.
/// O((n + m) log² (n + m)); `None` if either side is empty or holds a non-finite value.
pub fn hodges_lehmann(a: &[f64], b: &[f64], confidence: f64) -> Option<ShiftEstimate> {
    hodges_lehmann_with(a, b, confidence, &mut None)
}

/// [`hodges_lehmann`] that builds the exact U distribution into `cache` (or reuses it), so a
/// following [`mann_whitney_with`] does not build it again.
pub(crate) fn hodges_lehmann_with(
    a: &[f64],
    b: &[f64],
    confidence: f64,
    cache: &mut Option<UDistribution>,
) -> Option<ShiftEstimate> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let (x, y) = (sorted_copy(a), sorted_copy(b));
    let (n, m) = (x.len(), y.len());
    let total = n * m;
    let estimate = if total % 2 == 1 {
        kth_pairwise_difference(&x, &y, total.div_ceil(2))
    } else {
        let lower_middle = kth_pairwise_difference(&x, &y, total / 2);
        let upper_middle = kth_pairwise_difference(&x, &y, total / 2 + 1);
        0.5 * (lower_middle + upper_middle)
    };
    let (_, tie_term) = pooled_ranks(&x, &y);
    let exact = tie_term == 0.0 && n <= EXACT_MAX_PER_SIDE && m <= EXACT_MAX_PER_SIDE;
    if exact && !cache.as_ref().is_some_and(|d| d.sizes_match(n, m)) {
        *cache = Some(UDistribution::new(n, m));
    }
    let dist = if exact { cache.as_ref() } else { None };
    let rank = moses_rank_with(n, m, 1.0 - confidence, dist, tie_term);
    let ci = (rank >= 1).then(|| {
        (
            kth_pairwise_difference(&x, &y, rank),
            kth_pairwise_difference(&x, &y, total - rank + 1),
        )
    });
    let method = if exact {
        PMethod::Exact
    } else {
        PMethod::Normal
    };
    Some(ShiftEstimate {
        estimate,
        ci,
        rank,
        method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force_kth(x: &[f64], y: &[f64], k: usize) -> f64 {
        let mut d: Vec<f64> = x
            .iter()
            .flat_map(|a| y.iter().map(move |b| b - a))
            .collect();
        d.sort_by(f64::total_cmp);
        d[k - 1]
    }

    #[test]
    fn selection_matches_brute_force_with_ties() {
        let x = sorted_copy(&[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0]);
        let y: Vec<f64> = (0..90).map(|i| ((i * 37) % 23) as f64 * 0.5).collect();
        let y = sorted_copy(&y);
        for k in 1..=x.len() * y.len() {
            assert_eq!(
                kth_pairwise_difference(&x, &y, k),
                brute_force_kth(&x, &y, k),
                "k={k}"
            );
        }
    }

    #[test]
    fn exact_u_distribution_sums_to_one() {
        let d = UDistribution::new(4, 6);
        assert!((d.cdf(24) - 1.0).abs() < 1e-15);
        assert!((d.cdf(0) - 1.0 / 210.0).abs() < 1e-15);
        // Symmetric: P(U ≤ 11) + P(U ≤ 12) = 1 for nm = 24.
        assert!((d.cdf(11) + d.cdf(12) - 1.0).abs() < 1e-15);
    }
}
