//! Two-sample comparison with a verdict against a practical threshold δ.
//!
//! The estimate is the Hodges-Lehmann shift of log values with the exact Moses interval
//! (see `docs/statistics.md`, "Runs, sessions, boots"); the verdict is read from that interval and ±δ.

use crate::descriptive::{describe, median, sample_sd, Summary};
use crate::diagnostics::{bimodality, drift_if_significant, mad_outliers, Bimodality, Drift};
use crate::ks::ks_two_sample;
use crate::parametric::{fieller_ratio_ci, welch, welch_from_moments};
use crate::rank::{hodges_lehmann_with, mann_whitney_with, PMethod};
use crate::settle::{runs_needed, UnitsToSettle, VarianceFrom};
use crate::special::is_positive;
use crate::special::t_quantile;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Options of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CompareOptions {
    /// Practical threshold δ in percent: changes smaller than this do not matter. Default 1;
    /// pass the measured noise floor (A/A) when known.
    pub delta_pct: f64,
    /// Two-sided error rate; the interval has confidence 1 − α. Default 0.05.
    pub alpha: f64,
    /// Larger values are better (throughput): flips regression and improvement.
    pub higher_is_better: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            delta_pct: 1.0,
            alpha: 0.05,
            higher_is_better: false,
        }
    }
}

/// The verdict of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// B is worse than A by more than δ (the whole interval is beyond δ).
    Regression,
    /// B is better than A by more than δ.
    Improvement,
    /// No change larger than δ: the interval lies inside (−δ, +δ) (a TOST-style
    /// equivalence statement, conservative: 1 − α interval rather than 1 − 2α).
    Equivalent,
    /// A real change (the interval excludes 0) whose size relative to δ is unresolved.
    Changed,
    /// The interval contains 0 and reaches beyond ±δ: more runs needed.
    Inconclusive,
    /// Too few (or invalid) values for the method: no verdict.
    Insufficient,
}

impl Verdict {
    /// The verdict as one lowercase word.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Equivalent => "equivalent",
            Verdict::Changed => "changed",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Insufficient => "insufficient",
        }
    }

    /// Whether this verdict claims a real difference (what an A/A test must rarely report).
    pub fn claims_difference(self) -> bool {
        matches!(
            self,
            Verdict::Regression | Verdict::Improvement | Verdict::Changed
        )
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The scale the shift is computed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Differences of natural logs: the shift is a ratio, ±x % symmetric.
    Log,
    /// Raw differences relative to |median of A|: used when any value is ≤ 0.
    Linear,
}

/// Diagnostics of one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideDiagnostics {
    /// 0-based indices of flagged values (kept in the analysis).
    pub outliers: Vec<usize>,
    pub bimodality: Bimodality,
    /// Theil-Sen slope and Mann-Kendall test over the given order (n ≥ 3).
    pub drift: Option<Drift>,
    /// Mann-Kendall p < α and |slope| × (n − 1) > δ/2: the drift over this side's session
    /// is large enough to matter at δ.
    pub drifting: bool,
    /// Theil-Sen slope in percent per run (relative, as the shift).
    pub drift_pct_per_run: Option<f64>,
}

/// KS test of the shape, after removing the estimated shift.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShapeTest {
    pub ks_d: f64,
    pub ks_p: f64,
    /// ks_p < α: the distributions differ in more than location (spread, modes).
    pub shape_changed: bool,
    pub method: PMethod,
}

/// Diagnostics attached to every comparison of raw values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics {
    pub a: SideDiagnostics,
    pub b: SideDiagnostics,
    /// The verdict with flagged outliers removed, when it differs from the verdict.
    pub verdict_without_outliers: Option<Verdict>,
    /// The shift without outliers, when the verdict differs.
    pub shift_pct_without_outliers: Option<f64>,
    pub shape: Option<ShapeTest>,
}

/// The result of a comparison of B against A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub n_a: usize,
    pub n_b: usize,
    pub summary_a: Summary,
    pub summary_b: Summary,
    /// The centres compared: medians of the runs, or for sessions and boots as units
    /// the geometric mean of the unit means (see [`crate::nested::compare_nested`]).
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    /// Shift of B relative to A in percent (+ means B larger).
    pub shift_pct: Option<f64>,
    /// The same shift in natural-log units (log scale only; swapping A and B negates it).
    pub shift_log: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// Confidence level of the interval, 1 − α.
    pub confidence: f64,
    pub p_value: Option<f64>,
    pub verdict: Verdict,
    /// Estimated runs (or boots) per side that would settle an inconclusive result.
    pub runs_needed: Option<usize>,
    /// The units a side that would settle an inconclusive result (runs, or the
    /// design's sessions or boots), with the uncertainty of the spread behind them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<UnitsToSettle>,
    pub delta_pct: f64,
    pub higher_is_better: bool,
    pub scale: Scale,
    /// Computed from (mean, SD, n) summaries, not raw values.
    pub summary_based: bool,
    /// Short description of the estimator, interval and test.
    pub method: String,
    /// Human-readable remarks (fallbacks, warnings).
    pub notes: Vec<String>,
    /// `None` for summary-based comparisons.
    pub diagnostics: Option<Diagnostics>,
    /// How sessions and boots were treated ([`crate::nested::compare_nested`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested: Option<crate::nested::design::NestedInfo>,
}

/// Summary statistics of one side, e.g. from `perf stat -r N`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SummaryStats {
    pub mean: f64,
    /// Sample standard deviation of the values (n − 1).
    pub sd: f64,
    pub n: usize,
}

impl SummaryStats {
    /// From mean, sample SD and n.
    pub fn from_sd(mean: f64, sd: f64, n: usize) -> Self {
        SummaryStats { mean, sd, n }
    }

    /// From mean, standard error of the mean and n (SD = SE·√n).
    pub fn from_std_error(mean: f64, std_error: f64, n: usize) -> Self {
        SummaryStats {
            mean,
            sd: std_error * (n as f64).sqrt(),
            n,
        }
    }

    /// From `perf stat -r n` output: "mean +- x.xx%" where x is the standard error as a
    /// percentage of the mean.
    pub fn from_perf_stat(mean: f64, std_error_pct: f64, n: usize) -> Self {
        Self::from_std_error(mean, mean.abs() * std_error_pct / 100.0, n)
    }
}

/// The inferential core: shift, interval and p on the analysed scale.
struct Estimate {
    /// Shift in relative units: log ratio (log scale) or difference / |median A| (linear).
    shift_rel: f64,
    ci_rel: Option<(f64, f64)>,
    p_value: Option<f64>,
    method: String,
    /// Per-value spread implied by the interval, used for runs-needed.
    spread_rel: Option<f64>,
}

struct Decision {
    verdict: Verdict,
    runs_needed: Option<usize>,
    settle: Option<UnitsToSettle>,
}

/// Relative threshold on the analysed scale: ln(1 + δ) on the log scale, so the improvement
/// bound is −ln(1 + δ), i.e. B/A = 1/(1 + δ), and swapping A and B swaps the verdicts.
pub(crate) fn threshold_rel(scale: Scale, delta_pct: f64) -> f64 {
    match scale {
        Scale::Log => (delta_pct / 100.0).ln_1p(),
        Scale::Linear => delta_pct / 100.0,
    }
}

fn rel_to_pct(scale: Scale, rel: f64) -> f64 {
    match scale {
        Scale::Log => 100.0 * rel.exp_m1(),
        Scale::Linear => 100.0 * rel,
    }
}

/// Reads the verdict from the interval (the table of `docs/statistics.md`), in "B larger" terms,
/// then maps larger to worse unless higher is better.
pub(crate) fn verdict_from_interval(
    (low, high): (f64, f64),
    threshold: f64,
    higher_is_better: bool,
) -> Verdict {
    let (b_worse, b_better) = if higher_is_better {
        (Verdict::Improvement, Verdict::Regression)
    } else {
        (Verdict::Regression, Verdict::Improvement)
    };
    if low > threshold {
        b_worse
    } else if high < -threshold {
        b_better
    } else if low >= -threshold && high <= threshold {
        Verdict::Equivalent
    } else if low > 0.0 || high < 0.0 {
        Verdict::Changed
    } else {
        Verdict::Inconclusive
    }
}

/// [`runs_needed`] with its uncertainty, from a spread of the runs of this comparison
/// (n_a + n_b − 2 degrees of freedom); unknown without one. A zero spread gives no
/// number: it is said as unknown too.
fn runs_to_settle(
    spread_rel: Option<f64>,
    threshold: f64,
    alpha: f64,
    n_a: usize,
    n_b: usize,
) -> UnitsToSettle {
    let df = (n_a + n_b) as f64 - 2.0;
    spread_rel
        .and_then(|s| {
            UnitsToSettle::from_spread(
                s,
                df,
                threshold,
                alpha,
                n_a.max(n_b),
                VarianceFrom::ThisComparison,
            )
        })
        .unwrap_or_else(UnitsToSettle::unknown)
}

/// Per-value spread implied by an interval of width `width` from n_a and n_b values.
fn spread_from_width(width: f64, n_a: usize, n_b: usize, alpha: f64) -> Option<f64> {
    let df = (n_a + n_b) as f64 - 2.0;
    if df < 1.0 {
        return None;
    }
    let t = t_quantile(1.0 - alpha / 2.0, df);
    Some(width / (2.0 * t * (1.0 / n_a as f64 + 1.0 / n_b as f64).sqrt()))
}

fn transform(values: &[f64], scale: Scale) -> Vec<f64> {
    match scale {
        Scale::Log => values.iter().map(|v| v.ln()).collect(),
        Scale::Linear => values.to_vec(),
    }
}

/// Shift and interval on the analysed scale. Hodges-Lehmann + Moses when the rank interval
/// reaches 1 − α; Welch on the transformed values when it cannot (e.g. 3 vs 3) and both
/// sides have ≥ 3 values; otherwise `None` (insufficient).
fn estimate(
    raw_a: &[f64],
    raw_b: &[f64],
    scale: Scale,
    reference: f64,
    alpha: f64,
) -> Option<Estimate> {
    let (ta, tb) = (transform(raw_a, scale), transform(raw_b, scale));
    let confidence = 1.0 - alpha;
    let scale_name = match scale {
        Scale::Log => "log",
        Scale::Linear => "linear",
    };
    let to_rel = |v: f64| v / reference;
    let mut exact_distribution = None;
    let hl = hodges_lehmann_with(&ta, &tb, confidence, &mut exact_distribution)?;
    if let Some((low, high)) = hl.ci {
        let mw = mann_whitney_with(raw_a, raw_b, exact_distribution.as_ref())?;
        let kind = match hl.method {
            PMethod::Exact => "exact",
            PMethod::Normal => "normal-approx",
        };
        let ci_rel = (to_rel(low), to_rel(high));
        return Some(Estimate {
            shift_rel: to_rel(hl.estimate),
            ci_rel: Some(ci_rel),
            p_value: Some(mw.p_value),
            method: format!("hodges-lehmann, {kind} moses ci, mann-whitney p, {scale_name} scale"),
            spread_rel: spread_from_width(ci_rel.1 - ci_rel.0, ta.len(), tb.len(), alpha),
        });
    }
    if ta.len() < 3 || tb.len() < 3 {
        return None;
    }
    let w = welch(&ta, &tb, confidence)?;
    let ci_rel = (to_rel(w.ci.0), to_rel(w.ci.1));
    Some(Estimate {
        shift_rel: to_rel(w.difference),
        ci_rel: Some(ci_rel),
        p_value: Some(w.p_value),
        method: format!("welch t (too few values for a rank ci), {scale_name} scale"),
        spread_rel: spread_from_width(ci_rel.1 - ci_rel.0, ta.len(), tb.len(), alpha),
    })
}

fn decide(
    est: &Estimate,
    threshold: f64,
    opts: &CompareOptions,
    n_a: usize,
    n_b: usize,
) -> Decision {
    let Some(ci) = est.ci_rel else {
        return Decision {
            verdict: Verdict::Insufficient,
            runs_needed: None,
            settle: None,
        };
    };
    let verdict = verdict_from_interval(ci, threshold, opts.higher_is_better);
    if verdict != Verdict::Inconclusive {
        return Decision {
            verdict,
            runs_needed: None,
            settle: None,
        };
    }
    let runs = est
        .spread_rel
        .and_then(|s| runs_needed(s, threshold, opts.alpha))
        .map(|r| r.max(n_a.max(n_b) + 1));
    Decision {
        verdict,
        runs_needed: runs,
        settle: Some(runs_to_settle(
            est.spread_rel,
            threshold,
            opts.alpha,
            n_a,
            n_b,
        )),
    }
}

fn options_problem(opts: &CompareOptions) -> Option<String> {
    if !(opts.alpha > 0.0 && opts.alpha < 0.5) {
        return Some(format!("alpha must be in (0, 0.5), got {}", opts.alpha));
    }
    if !(opts.delta_pct >= 0.0 && opts.delta_pct < 100.0) {
        return Some(format!(
            "delta must be in [0, 100) percent, got {}",
            opts.delta_pct
        ));
    }
    None
}

fn first_non_finite(values: &[f64]) -> Option<usize> {
    values.iter().position(|v| !v.is_finite())
}

/// An "insufficient" comparison carrying whatever descriptive numbers exist.
fn insufficient(
    a: &[f64],
    b: &[f64],
    opts: &CompareOptions,
    scale: Scale,
    method: &str,
    note: String,
) -> Comparison {
    let (summary_a, summary_b) = (describe(a), describe(b));
    Comparison {
        n_a: a.len(),
        n_b: b.len(),
        median_a: summary_a.median,
        median_b: summary_b.median,
        summary_a,
        summary_b,
        shift_pct: None,
        shift_log: None,
        ci_low_pct: None,
        ci_high_pct: None,
        confidence: 1.0 - opts.alpha,
        p_value: None,
        verdict: Verdict::Insufficient,
        runs_needed: None,
        settle: None,
        delta_pct: opts.delta_pct,
        higher_is_better: opts.higher_is_better,
        scale,
        summary_based: false,
        method: method.to_string(),
        notes: vec![note],
        diagnostics: None,
        nested: None,
    }
}

/// An "insufficient" comparison without a note, for callers that fill in their own
/// estimate (or say why not).
pub(crate) fn insufficient_comparison(
    a: &[f64],
    b: &[f64],
    opts: &CompareOptions,
    scale: Scale,
) -> Comparison {
    let mut c = insufficient(a, b, opts, scale, "none", String::new());
    c.notes.clear();
    c
}

/// Compares two samples of raw values (B against A), e.g. run times of two kernels.
///
/// Method (`docs/statistics.md`, runs as units): on log values, the Hodges-Lehmann shift (Hodges & Lehmann
/// 1963) with the distribution-free interval from inverting the Mann-Whitney test (Moses 1965;
/// Hollander & Wolfe 1999, §4.3; exact without ties for ≤ 50 values per side) and the two-sided
/// Mann-Whitney p (Mann & Whitney 1947). When the rank interval cannot reach 1 − α (3 vs 3),
/// Welch's t on log values (Welch 1947) is used if both sides have ≥ 3 values. The verdict is
/// read from the interval and ±δ (see [`Verdict`]); `runs_needed` is given for inconclusive
/// results. If any value is ≤ 0 the shift is computed on raw values relative to |median A|
/// (`scale = linear`, said in `method`). Empty, single-value or non-finite inputs give
/// `insufficient`; this function never panics.
///
/// Diagnostics: MAD outliers (and the verdict without them when it differs), bimodality,
/// drift over the given order, and a KS shape test after removing the shift.
pub fn compare(a: &[f64], b: &[f64], opts: &CompareOptions) -> Comparison {
    compare_in_order(a, b, opts, "")
}

fn compare_in_order(
    a: &[f64],
    b: &[f64],
    opts: &CompareOptions,
    method_prefix: &str,
) -> Comparison {
    let scale = if a.iter().chain(b).all(|v| *v > 0.0) {
        Scale::Log
    } else {
        Scale::Linear
    };
    let method_of = |m: &str| format!("{method_prefix}{m}");
    if let Some(problem) = options_problem(opts) {
        return insufficient(
            a,
            b,
            opts,
            scale,
            &method_of("none"),
            format!("invalid options: {problem}"),
        );
    }
    for (side, values) in [("A", a), ("B", b)] {
        if let Some(i) = first_non_finite(values) {
            let note = format!("{side}[{i}] is not a finite number ({})", values[i]);
            return insufficient(a, b, opts, scale, &method_of("none"), note);
        }
    }
    let Some(core) = core_comparison(a, b, opts, scale) else {
        let mut result = insufficient(
            a,
            b,
            opts,
            scale,
            &method_of("none"),
            "too few values for any interval (need 2 per side and a reachable confidence; a verdict is never drawn from single runs)".to_string(),
        );
        let threshold = threshold_rel(scale, opts.delta_pct);
        let spread = pooled_spread(a, b, scale);
        result.runs_needed = spread.and_then(|s| runs_needed(s, threshold, opts.alpha));
        result.settle =
            spread.map(|s| runs_to_settle(Some(s), threshold, opts.alpha, a.len(), b.len()));
        return result;
    };
    let diagnostics = diagnose(a, b, opts, scale, &core);
    let (summary_a, summary_b) = (describe(a), describe(b));
    let mut notes = Vec::new();
    if scale == Scale::Linear {
        notes.push("some values are <= 0: shift computed on raw values relative to |median A|, not as a ratio".to_string());
    }
    if core.verdict == Verdict::Equivalent {
        if let Some((low, high)) = core.estimate.ci_rel {
            if low > 0.0 || high < 0.0 {
                notes.push("the change is real but smaller than delta".to_string());
            }
        }
    }
    let (ci_low_pct, ci_high_pct) = match core.estimate.ci_rel {
        Some((l, h)) => (Some(rel_to_pct(scale, l)), Some(rel_to_pct(scale, h))),
        None => (None, None),
    };
    Comparison {
        n_a: a.len(),
        n_b: b.len(),
        median_a: summary_a.median,
        median_b: summary_b.median,
        summary_a,
        summary_b,
        shift_pct: Some(rel_to_pct(scale, core.estimate.shift_rel)),
        shift_log: (scale == Scale::Log).then_some(core.estimate.shift_rel),
        ci_low_pct,
        ci_high_pct,
        confidence: 1.0 - opts.alpha,
        p_value: core.estimate.p_value,
        verdict: core.verdict,
        runs_needed: core.runs_needed,
        settle: core.settle,
        delta_pct: opts.delta_pct,
        higher_is_better: opts.higher_is_better,
        scale,
        summary_based: false,
        method: method_of(&core.estimate.method),
        notes,
        diagnostics: Some(diagnostics),
        nested: None,
    }
}

struct Core {
    estimate: Estimate,
    verdict: Verdict,
    runs_needed: Option<usize>,
    settle: Option<UnitsToSettle>,
}

/// Estimate and verdict without diagnostics (also used for the outlier-free re-run).
fn core_comparison(a: &[f64], b: &[f64], opts: &CompareOptions, scale: Scale) -> Option<Core> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let reference = match scale {
        Scale::Log => 1.0,
        Scale::Linear => median(a).abs(),
    };
    if !is_positive(reference) {
        return None; // a relative shift needs a non-zero A median
    }
    let est = estimate(a, b, scale, reference, opts.alpha)?;
    let decision = decide(
        &est,
        threshold_rel(scale, opts.delta_pct),
        opts,
        a.len(),
        b.len(),
    );
    Some(Core {
        estimate: est,
        verdict: decision.verdict,
        runs_needed: decision.runs_needed,
        settle: decision.settle,
    })
}

/// Pooled SD of the transformed values in relative units, for runs-needed when no interval
/// exists (e.g. 2 vs 2).
fn pooled_spread(a: &[f64], b: &[f64], scale: Scale) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let reference = match scale {
        Scale::Log => 1.0,
        Scale::Linear => median(a).abs(),
    };
    let (sa, sb) = (
        sample_sd(&transform(a, scale))?,
        sample_sd(&transform(b, scale))?,
    );
    let pooled = (((a.len() - 1) as f64 * sa * sa + (b.len() - 1) as f64 * sb * sb)
        / (a.len() + b.len() - 2) as f64)
        .sqrt();
    (reference > 0.0).then_some(pooled / reference)
}

/// Outliers, bimodality and drift of one side's values, in the given order.
pub(crate) fn side_diagnostics(
    values: &[f64],
    opts: &CompareOptions,
    scale: Scale,
) -> SideDiagnostics {
    let threshold = threshold_rel(scale, opts.delta_pct);
    let reference = match scale {
        Scale::Log => 1.0,
        Scale::Linear => median(values).abs(),
    };
    let t = transform(values, scale);
    let drift = drift_if_significant(&t, opts.alpha);
    let slope_rel = drift
        .as_ref()
        .and_then(|d| d.slope_per_run)
        .map(|s| s / reference)
        .filter(|s| s.is_finite());
    let drifting = match (&drift, slope_rel) {
        (Some(d), Some(s)) => {
            d.p_value < opts.alpha && (s * (values.len() - 1) as f64).abs() > threshold / 2.0
        }
        _ => false,
    };
    SideDiagnostics {
        outliers: mad_outliers(&t),
        bimodality: bimodality(&t),
        drift,
        drifting,
        drift_pct_per_run: slope_rel.map(|s| rel_to_pct(scale, s)),
    }
}

fn diagnose(a: &[f64], b: &[f64], opts: &CompareOptions, scale: Scale, core: &Core) -> Diagnostics {
    let reference = match scale {
        Scale::Log => 1.0,
        Scale::Linear => median(a).abs(),
    };
    let (diag_a, diag_b) = (
        side_diagnostics(a, opts, scale),
        side_diagnostics(b, opts, scale),
    );
    let (mut verdict_without_outliers, mut shift_pct_without_outliers) = (None, None);
    if !diag_a.outliers.is_empty() || !diag_b.outliers.is_empty() {
        let keep = |values: &[f64], flagged: &[usize]| -> Vec<f64> {
            values
                .iter()
                .enumerate()
                .filter(|(i, _)| !flagged.contains(i))
                .map(|(_, v)| *v)
                .collect()
        };
        let (ka, kb) = (keep(a, &diag_a.outliers), keep(b, &diag_b.outliers));
        let cleaned = core_comparison(&ka, &kb, opts, scale);
        let cleaned_verdict = cleaned
            .as_ref()
            .map_or(Verdict::Insufficient, |c| c.verdict);
        if cleaned_verdict != core.verdict {
            verdict_without_outliers = Some(cleaned_verdict);
            shift_pct_without_outliers = cleaned.map(|c| rel_to_pct(scale, c.estimate.shift_rel));
        }
    }
    let shape = shape_test(a, b, scale, reference, core.estimate.shift_rel, opts.alpha);
    Diagnostics {
        a: diag_a,
        b: diag_b,
        verdict_without_outliers,
        shift_pct_without_outliers,
        shape,
    }
}

/// KS on A vs B with the estimated shift removed from B, so a pure location change does not
/// count as a shape change (a fitted shift makes the p-value conservative).
fn shape_test(
    a: &[f64],
    b: &[f64],
    scale: Scale,
    reference: f64,
    shift_rel: f64,
    alpha: f64,
) -> Option<ShapeTest> {
    let ta = transform(a, scale);
    let shift = shift_rel * reference;
    let tb: Vec<f64> = transform(b, scale).iter().map(|v| v - shift).collect();
    let ks = ks_two_sample(&ta, &tb)?;
    Some(ShapeTest {
        ks_d: ks.d,
        ks_p: ks.p_value,
        shape_changed: ks.p_value < alpha,
        method: ks.method,
    })
}

/// Compares summary statistics (mean, SD, n), e.g. two `perf stat -r` outputs, by Welch's
/// t test (Welch 1947) for the p-value and Fieller's (1954) interval for the ratio of means,
/// which agree on significance. The verdict uses the same δ rule as [`compare`] on the log of
/// the ratio interval. Marked `summary_based`; no diagnostics (no raw values). Needs n ≥ 2
/// per side, positive means and finite non-negative SDs; otherwise `insufficient`.
pub fn compare_summaries(a: &SummaryStats, b: &SummaryStats, opts: &CompareOptions) -> Comparison {
    let summary = |s: &SummaryStats| Summary {
        n: s.n,
        mean: Some(s.mean),
        median: None,
        sd: Some(s.sd),
        cv_pct: (s.mean != 0.0).then(|| 100.0 * s.sd / s.mean.abs()),
        min: None,
        max: None,
        q1: None,
        q3: None,
        mad: None,
        geometric_mean: None,
    };
    let method = "welch t on summaries, fieller ci of the ratio of means";
    let mut result = insufficient(&[], &[], opts, Scale::Log, method, String::new());
    result.notes.clear();
    result.n_a = a.n;
    result.n_b = b.n;
    result.summary_a = summary(a);
    result.summary_b = summary(b);
    result.summary_based = true;
    if let Some(problem) = options_problem(opts) {
        result.notes.push(format!("invalid options: {problem}"));
        return result;
    }
    let valid = |s: &SummaryStats| {
        s.n >= 2 && s.mean.is_finite() && s.mean > 0.0 && s.sd.is_finite() && s.sd >= 0.0
    };
    if !valid(a) || !valid(b) {
        result
            .notes
            .push("summaries need n >= 2, a positive finite mean and a finite SD >= 0".to_string());
        return result;
    }
    let moments = |s: &SummaryStats| (s.mean, s.sd * s.sd, s.n);
    let confidence = 1.0 - opts.alpha;
    let Some(w) = welch_from_moments(moments(a), moments(b), confidence) else {
        return result;
    };
    result.p_value = Some(w.p_value);
    let ratio = b.mean / a.mean;
    result.shift_pct = Some(100.0 * (ratio - 1.0));
    result.shift_log = Some(ratio.ln());
    let threshold = threshold_rel(Scale::Log, opts.delta_pct);
    match fieller_ratio_ci(moments(a), moments(b), confidence) {
        Some((low, high)) if low > 0.0 => {
            result.ci_low_pct = Some(100.0 * (low - 1.0));
            result.ci_high_pct = Some(100.0 * (high - 1.0));
            let ci_log = (low.ln(), high.ln());
            let est = Estimate {
                shift_rel: ratio.ln(),
                ci_rel: Some(ci_log),
                p_value: Some(w.p_value),
                method: method.to_string(),
                spread_rel: spread_from_width(ci_log.1 - ci_log.0, a.n, b.n, opts.alpha),
            };
            let decision = decide(&est, threshold, opts, a.n, b.n);
            result.verdict = decision.verdict;
            result.runs_needed = decision.runs_needed;
            result.settle = decision.settle;
        }
        _ => {
            result.verdict = Verdict::Inconclusive;
            result.notes.push(
                "the ratio interval is unbounded: A's mean is not distinguishable from 0"
                    .to_string(),
            );
        }
    }
    result
}
