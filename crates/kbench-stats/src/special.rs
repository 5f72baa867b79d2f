//! Special functions and distributions needed by the tests (normal, Student t, binomial,
//! Kolmogorov). Written here so the crate has no numeric dependencies; each function is
//! checked against scipy in `tests/fixtures.rs`.

use rand::Rng;
use std::f64::consts::{PI, SQRT_2};

/// x > 0, false for NaN (written as a function so "not positive" reads clearly).
pub(crate) fn is_positive(x: f64) -> bool {
    x > 0.0
}

/// Natural log of the gamma function, Lanczos approximation (g = 7, 9 terms; Press et al.,
/// "Numerical Recipes", 3rd ed., §6.1), about 1e-15 relative accuracy for x > 0.
pub fn ln_gamma(x: f64) -> f64 {
    const COEFFS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (PI / (PI * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEFFS[0];
    for (i, c) in COEFFS.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// Regularised lower incomplete gamma P(a, x) by its series, upper Q(a, x) by Lentz's
/// continued fraction (Numerical Recipes §6.2). Returns (P, Q); each side is computed
/// directly where it is small, so tails keep their relative precision.
fn reg_gamma(a: f64, x: f64) -> (f64, f64) {
    if x <= 0.0 {
        return (0.0, 1.0);
    }
    let log_prefix = -x + a * x.ln() - ln_gamma(a);
    if x < a + 1.0 {
        let mut term = 1.0 / a;
        let mut sum = term;
        let mut ap = a;
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-17 {
                break;
            }
        }
        let p = (sum.ln() + log_prefix).exp().min(1.0);
        (p, 1.0 - p)
    } else {
        let q = (continued_fraction_gamma(a, x).ln() + log_prefix)
            .exp()
            .min(1.0);
        (1.0 - q, q)
    }
}

fn continued_fraction_gamma(a: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut b = x + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..10_000 {
        let an = -(i as f64) * (i as f64 - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// Complementary error function, erfc(x) = Q(1/2, x²) for x ≥ 0, full double precision
/// in both tails.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let (p, q) = reg_gamma(0.5, x * x);
    if x >= 0.0 {
        q
    } else {
        1.0 + p
    }
}

/// Standard normal CDF Φ(z).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / SQRT_2)
}

/// Standard normal survival function 1 − Φ(z), accurate in the upper tail.
pub fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / SQRT_2)
}

/// Standard normal quantile Φ⁻¹(p): Acklam's rational approximation refined by one Halley
/// step against [`normal_cdf`] (full double precision). NaN outside (0, 1).
pub fn normal_quantile(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return match p {
            0.0 => f64::NEG_INFINITY,
            1.0 => f64::INFINITY,
            _ => f64::NAN,
        };
    }
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const P_LOW: f64 = 0.024_25;
    let x = if p < P_LOW {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - P_LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    // One Halley step; compare in the smaller tail to keep relative precision.
    let e = if p < 0.5 {
        normal_cdf(x) - p
    } else {
        (1.0 - p) - normal_sf(x)
    };
    let u = e * (2.0 * PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

/// Regularised incomplete beta I_x(a, b), continued fraction with Lentz's method
/// (Numerical Recipes §6.4).
pub fn reg_inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x.is_nan() || a <= 0.0 || b <= 0.0 {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let log_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        (log_front.exp() * beta_continued_fraction(a, b, x) / a).clamp(0.0, 1.0)
    } else {
        (1.0 - log_front.exp() * beta_continued_fraction(b, a, 1.0 - x) / b).clamp(0.0, 1.0)
    }
}

fn beta_continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    // Large a, b (binomial CDFs with n ~ 1e6) need O(sqrt(max(a, b))) iterations.
    for m in 1..200_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// Upper tail of Student's t with `df` degrees of freedom, P(T > t).
pub fn t_sf(t: f64, df: f64) -> f64 {
    if t.is_nan() || !is_positive(df) {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 0.0 } else { 1.0 };
    }
    let tail = 0.5 * reg_inc_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 {
        tail
    } else {
        1.0 - tail
    }
}

/// Upper tail of Fisher's F with `d1` and `d2` degrees of freedom, P(F > f).
pub fn f_sf(f: f64, d1: f64, d2: f64) -> f64 {
    if f.is_nan() || !is_positive(d1) || !is_positive(d2) {
        return f64::NAN;
    }
    if f <= 0.0 {
        return 1.0;
    }
    reg_inc_beta(d2 / 2.0, d1 / 2.0, d2 / (d2 + d1 * f))
}

/// Density of Student's t with `df` degrees of freedom.
pub fn t_pdf(t: f64, df: f64) -> f64 {
    let log_norm = ln_gamma((df + 1.0) / 2.0) - ln_gamma(df / 2.0) - 0.5 * (df * PI).ln();
    (log_norm - (df + 1.0) / 2.0 * (t * t / df).ln_1p()).exp()
}

/// Quantile of Student's t: the t with P(T ≤ t) = p. Safeguarded Newton iterations on
/// [`t_sf`] from the normal quantile: a step leaving the bracket is replaced by bisection,
/// so it always converges (usually in 3 to 6 steps).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0 && is_positive(df)) {
        return f64::NAN;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let upper_tail = 1.0 - p;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_sf(hi, df) > upper_tail && hi < 1e300 {
        lo = hi;
        hi *= 2.0;
    }
    let mut t = normal_quantile(p).clamp(lo, hi);
    for _ in 0..200 {
        let excess = t_sf(t, df) - upper_tail; // > 0 means t is too small
        if excess > 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        let newton = t + excess / t_pdf(t, df);
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - t).abs() <= 1e-14 * next.abs().max(1e-300) || hi - lo <= 1e-15 * hi {
            return next;
        }
        t = next;
    }
    t
}

/// The 95 % interval of a standard deviation estimated as `sd` with `df` degrees of
/// freedom: s²·df/σ² is chi-square with df degrees of freedom.
pub fn sd_interval_95(sd: f64, df: f64) -> (f64, f64) {
    (
        sd * (df / chi_square_quantile(0.975, df)).sqrt(),
        sd * (df / chi_square_quantile(0.025, df)).sqrt(),
    )
}

/// Quantile of the chi-square distribution with `df` degrees of freedom: the x with
/// P(X ≤ x) = p, by bisection on P(df/2, x/2).
pub fn chi_square_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0 && is_positive(df)) {
        return f64::NAN;
    }
    let cdf = |x: f64| reg_gamma(df / 2.0, x / 2.0).0;
    let (mut lo, mut hi) = (0.0f64, df.max(1.0));
    while cdf(hi) < p {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Binomial CDF P(X ≤ k) for X ~ Bin(n, p), via I_{1−p}(n − k, k + 1).
pub fn binomial_cdf(k: i64, n: u64, p: f64) -> f64 {
    if k < 0 {
        return 0.0;
    }
    let k = k as u64;
    if k >= n {
        return 1.0;
    }
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return 0.0;
    }
    reg_inc_beta((n - k) as f64, k as f64 + 1.0, 1.0 - p)
}

/// Binomial quantile: the smallest k with P(X ≤ k) ≥ prob (R's `qbinom`), by bisection.
pub fn binomial_quantile(prob: f64, n: u64, p: f64) -> u64 {
    let (mut lo, mut hi) = (0u64, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if binomial_cdf(mid as i64, n, p) >= prob {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Kolmogorov distribution upper tail Q(λ) = 2 Σ (−1)^(k−1) exp(−2k²λ²)
/// (Kolmogorov 1933; Smirnov 1948).
pub fn kolmogorov_sf(lambda: f64) -> f64 {
    if lambda.is_nan() {
        return f64::NAN;
    }
    if lambda < 0.2 {
        return 1.0;
    }
    let mut sum = 0.0;
    let mut sign = 1.0;
    for k in 1..=200 {
        let kf = k as f64;
        let term = (-2.0 * kf * kf * lambda * lambda).exp();
        sum += sign * term;
        if term < 1e-18 {
            break;
        }
        sign = -sign;
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

/// Standard normal deviate by Box-Muller (one of the pair; simple and exact): the
/// simulations of this crate and its Monte-Carlo tests draw their normals here.
pub fn normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // in (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_quantile_round_trips() {
        for &p in &[1e-12, 1e-6, 0.01, 0.025, 0.3, 0.5, 0.7, 0.975, 0.999_999] {
            let z = normal_quantile(p);
            assert!((normal_cdf(z) - p).abs() < 1e-14 * p.max(1e-3), "p={p}");
        }
    }

    #[test]
    fn t_quantile_inverts_t_sf() {
        for &df in &[1.0, 2.5, 10.0, 1000.0] {
            let t = t_quantile(0.975, df);
            assert!((t_sf(t, df) - 0.025).abs() < 1e-12);
        }
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut fact = 1.0f64;
        for n in 1..20 {
            fact *= n as f64;
            assert!((ln_gamma(n as f64 + 1.0) - fact.ln()).abs() < 1e-12);
        }
    }
}
