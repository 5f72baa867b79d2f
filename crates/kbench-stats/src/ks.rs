//! Two-sample Kolmogorov-Smirnov test.

use crate::descriptive::sorted_copy;
use crate::rank::PMethod;
use crate::special::kolmogorov_sf;
use serde::{Deserialize, Serialize};

/// Largest n·m for which the exact lattice-path p-value is computed (O(n·m) work).
pub const KS_EXACT_MAX_CELLS: usize = 1_000_000;

/// Result of a two-sided two-sample KS test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KolmogorovSmirnov {
    /// sup |F_a − F_b|.
    pub d: f64,
    pub p_value: f64,
    pub method: PMethod,
}

/// Two-sided two-sample Kolmogorov-Smirnov test (Smirnov 1939). The exact p-value counts the
/// monotone lattice paths that stay inside the band |i/n − j/m| < D (Hodges 1958), working
/// with path fractions so nothing overflows; it is exact for continuous data and conservative
/// with ties. For n·m above [`KS_EXACT_MAX_CELLS`] the Kolmogorov limit with Stephens' (1970)
/// small-sample correction is used. `None` if a side is empty or non-finite.
pub fn ks_two_sample(a: &[f64], b: &[f64]) -> Option<KolmogorovSmirnov> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let d_scaled = max_ecdf_gap_scaled(&sorted_copy(a), &sorted_copy(b));
    let d = d_scaled as f64 / (n * m) as f64;
    if n * m <= KS_EXACT_MAX_CELLS {
        let inside = fraction_of_paths_inside(n, m, d_scaled);
        return Some(KolmogorovSmirnov {
            d,
            p_value: (1.0 - inside).clamp(0.0, 1.0),
            method: PMethod::Exact,
        });
    }
    let en = ((n * m) as f64 / (n + m) as f64).sqrt();
    let p = kolmogorov_sf((en + 0.12 + 0.11 / en) * d);
    Some(KolmogorovSmirnov {
        d,
        p_value: p,
        method: PMethod::Normal,
    })
}

/// n·m·D as an integer: max over the pooled values of |count_a·m − count_b·n|, evaluated after
/// each group of tied values so ties never create a spurious gap.
fn max_ecdf_gap_scaled(x: &[f64], y: &[f64]) -> i64 {
    let (n, m) = (x.len() as i64, y.len() as i64);
    let (mut i, mut j, mut best) = (0usize, 0usize, 0i64);
    while i < x.len() || j < y.len() {
        let next = match (x.get(i), y.get(j)) {
            (Some(&xv), Some(&yv)) => xv.min(yv),
            (Some(&xv), None) => xv,
            (None, Some(&yv)) => yv,
            (None, None) => break,
        };
        while i < x.len() && x[i] <= next {
            i += 1;
        }
        while j < y.len() && y[j] <= next {
            j += 1;
        }
        best = best.max((i as i64 * m - j as i64 * n).abs());
    }
    best
}

/// Fraction of all C(n+m, n) lattice paths from (0,0) to (n,m) with |i·m − j·n| < d_scaled at
/// every point. u(i,j) = paths(i,j)/C(i+j,i) obeys u = i/(i+j)·u(i−1,j) + j/(i+j)·u(i,j−1).
fn fraction_of_paths_inside(n: usize, m: usize, d_scaled: i64) -> f64 {
    let inside = |i: usize, j: usize| ((i * m) as i64 - (j * n) as i64).abs() < d_scaled;
    // Row i = 0: the single path along the j axis, alive until it first leaves the band.
    let mut row = vec![0.0f64; m + 1];
    let mut alive = true;
    for (j, cell) in row.iter_mut().enumerate() {
        alive = alive && inside(0, j);
        *cell = if alive { 1.0 } else { 0.0 };
    }
    for i in 1..=n {
        let mut left = if inside(i, 0) && row[0] > 0.0 {
            1.0
        } else {
            0.0
        };
        let mut next = vec![0.0f64; m + 1];
        next[0] = left;
        for j in 1..=m {
            let value = if inside(i, j) {
                let total = (i + j) as f64;
                (i as f64 / total) * row[j] + (j as f64 / total) * left
            } else {
                0.0
            };
            next[j] = value;
            left = value;
        }
        row = next;
    }
    row[m]
}
