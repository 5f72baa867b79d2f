//! Two sides compared by their units: the interval, its degrees of freedom, and how
//! many units would settle it.

use super::design::{BetweenUnit, Level, NoClaim, NoiseSource, UnitEstimate};
use super::noise::{calibrated_between, NoiseComponents};
use super::units::mean_within;
use crate::compare::{threshold_rel, verdict_from_interval, CompareOptions, Scale, Verdict};
use crate::descriptive::{mean, sample_variance};
use crate::parametric::satterthwaite;
use crate::sequential::KnownNoise;
pub use crate::settle::UnitsToSettle;
use crate::settle::{runs_needed, VarianceFrom};
use crate::special::{t_quantile, t_sf};
use serde::{Deserialize, Serialize};

/// The share of α at which a side of one unit claims a change. Its one unit is a single
/// draw from a distribution of unit effects nobody has seen the tails of, measured
/// against a spread from a few other units. Skewed or contaminated unit effects then
/// claimed a change in 6.1-6.4 % of A/A comparisons at α = 5 % (a lognormal(0, 1)
/// effect; one unit in ten three times as wide): a few units mostly miss the tail, so
/// the spread they give is mostly too small. Claiming at α/2 keeps every such cell of
/// the Monte-Carlo (`tests/unbalanced.rs`) under α, at the price of an interval about
/// a sixth wider.
pub const ONE_UNIT_ALPHA_SHARE: f64 = 0.5;

/// The outcome of a unit-level comparison on the log scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitComparison {
    pub shift_log: f64,
    pub ci_log: Option<(f64, f64)>,
    pub p_value: Option<f64>,
    pub df: Option<f64>,
    pub verdict: Verdict,
    pub between: Option<BetweenUnit>,
    pub no_claim: Option<NoClaim>,
    /// SD of one unit's estimate (or of one paired difference / √2), for units-needed.
    pub unit_sd: Option<f64>,
    /// Degrees of freedom behind `unit_sd`: how far the units-needed can be trusted.
    #[serde(default)]
    pub unit_sd_df: Option<f64>,
}

/// Compares unit estimates of B against A. Paired: the mean of the per-unit
/// differences, with a one-sample t interval (k − 1 df). Unpaired with two or more
/// units a side: t on the unit estimates with the larger of Welch's and the pooled
/// standard error ([`cautious_two_sample_se`]). A side with one unit: its variance
/// is the between-unit variance (`between`, from a calibration, else from the other
/// side's units when it has two or more) plus its own within-unit variance, with
/// Satterthwaite's degrees of freedom; without any, no claim.
pub fn compare_units(
    a: &[UnitEstimate],
    b: &[UnitEstimate],
    level: Level,
    paired: bool,
    between: Option<BetweenUnit>,
    opts: &CompareOptions,
) -> Option<UnitComparison> {
    compare_units_on(a, b, level, paired, between, opts, Scale::Log)
}

/// [`compare_units`] of estimates on `scale` (linear: values relative to a reference).
pub(super) fn compare_units_on(
    a: &[UnitEstimate],
    b: &[UnitEstimate],
    level: Level,
    paired: bool,
    between: Option<BetweenUnit>,
    opts: &CompareOptions,
    scale: Scale,
) -> Option<UnitComparison> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let finite = a.iter().chain(b).all(|u| u.estimate.is_finite());
    if !finite {
        return None;
    }
    let (ea, eb): (Vec<f64>, Vec<f64>) = (
        a.iter().map(|u| u.estimate).collect(),
        b.iter().map(|u| u.estimate).collect(),
    );
    let shift = mean(&eb) - mean(&ea);
    if paired {
        let diffs: Vec<f64> = b
            .iter()
            .filter_map(|ub| Some(ub.estimate - a.iter().find(|ua| ua.id == ub.id)?.estimate))
            .collect();
        if diffs.len() < 2 {
            return None;
        }
        let k = diffs.len() as f64;
        let var = sample_variance(&diffs)?;
        let (d, se) = (mean(&diffs), (var / k).sqrt());
        return Some(t_result(
            d,
            se,
            k - 1.0,
            None,
            ((var / 2.0).sqrt(), k - 1.0),
            opts,
            scale,
        ));
    }
    if a.len() >= 2 && b.len() >= 2 {
        let (va, vb) = (sample_variance(&ea)?, sample_variance(&eb)?);
        let unit_sd = ((va + vb) / 2.0).sqrt();
        let unit_df = satterthwaite(&[
            (va / 2.0, a.len() as f64 - 1.0),
            (vb / 2.0, b.len() as f64 - 1.0),
        ]);
        let (se, df) = cautious_two_sample_se((va, a.len()), (vb, b.len()));
        return Some(t_result(
            shift,
            se,
            df,
            None,
            (unit_sd, unit_df),
            opts,
            scale,
        ));
    }
    // A one-unit side: borrow the spread of a whole unit.
    let other_side = || -> Option<BetweenUnit> {
        let (many, many_e) = if a.len() >= 2 { (a, &ea) } else { (b, &eb) };
        if many.len() < 2 {
            return None;
        }
        Some(BetweenUnit {
            level,
            unit_sd: sample_variance(many_e)?.sqrt(),
            included_within_var: mean_within(many).unwrap_or(0.0),
            df: many.len() as f64 - 1.0,
            source: NoiseSource::OtherSide,
        })
    };
    let Some(between) = between
        .filter(|borrowed| fits_the_other_sides_units(borrowed, &ea, &eb))
        .or_else(other_side)
    else {
        return Some(UnitComparison {
            shift_log: shift,
            ci_log: None,
            p_value: None,
            df: None,
            verdict: Verdict::Inconclusive,
            between: None,
            no_claim: Some(NoClaim::NoBetweenUnitVariance),
            unit_sd: None,
            unit_sd_df: None,
        });
    };
    let unit_var = between.unit_sd * between.unit_sd;
    // Every use of one variance estimate goes into one term with that estimate's
    // degrees of freedom: both one-unit sides borrowing the same calibrated spread
    // (twice the variance), or a one-unit side borrowing the spread of the other
    // side's n units, whose mean then has the same estimate over n (s²·(1 + 1/n),
    // n − 1 df: Satterthwaite over two "independent" terms would give up to twice
    // the degrees of freedom, and too many claims).
    let borrowers = [a, b].iter().filter(|side| side.len() < 2).count() as f64;
    let mut borrowed = borrowers * unit_var;
    let mut terms: Vec<(f64, f64)> = Vec::new();
    for (side, e) in [(a, &ea), (b, &eb)] {
        if side.len() >= 2 {
            let term = sample_variance(e)? / side.len() as f64;
            if between.source == NoiseSource::OtherSide {
                borrowed += term;
            } else {
                terms.push((term, side.len() as f64 - 1.0));
            }
        } else {
            let unit = &side[0];
            // A side noisier within its unit than the borrowed spread allows for.
            let excess = unit.within_var.unwrap_or(0.0) - between.included_within_var;
            if excess > 0.0 {
                terms.push((excess, (unit.runs as f64 - 1.0).max(1.0)));
            }
        }
    }
    terms.push((borrowed, between.df));
    let var: f64 = terms.iter().map(|t| t.0).sum();
    let df = satterthwaite(&terms);
    let unit_spread = (between.unit_sd, between.df);
    let one_unit = CompareOptions {
        alpha: opts.alpha * ONE_UNIT_ALPHA_SHARE,
        ..*opts
    };
    Some(t_result(
        shift,
        var.sqrt(),
        df,
        Some(between),
        unit_spread,
        &one_unit,
        scale,
    ))
}

/// Whether a calibrated spread a one-unit side would borrow agrees with the units of
/// the other side, when that side has two or more ([`KnownNoise::fits_today`]); a
/// calibration that today's units find too small gives way to their own spread.
fn fits_the_other_sides_units(borrowed: &BetweenUnit, ea: &[f64], eb: &[f64]) -> bool {
    let many = if ea.len() >= 2 { ea } else { eb };
    let Some(today_var) = sample_variance(many).filter(|_| many.len() >= 2) else {
        return true;
    };
    let calibrated = KnownNoise {
        unit_sd: borrowed.unit_sd,
        df: borrowed.df,
    };
    calibrated.fits_today(today_var.sqrt(), many.len() as f64 - 1.0)
}

/// The standard error and degrees of freedom of a difference of two sides' unit means
/// (each side's unit variance and unit count): the larger of Welch's and the pooled
/// (Student's) standard error, with the degrees of freedom of the one taken.
///
/// Welch alone breaks its promise when one side has few units: two boots against ten
/// claimed a change in 10 % of A/A comparisons at α = 5 %, because a small side whose
/// two units happen to lie close gives Welch a small standard error *and* many degrees
/// of freedom. The pooled t is exact when both sides have one spread (an A/A has), and
/// this never rejects where it would not: with the pooled error taken its test is the
/// pooled t's, and with Welch's (larger) error its degrees of freedom are Welch's (at
/// most the pooled n_A + n_B − 2). A small side that really is noisier keeps Welch's
/// wider interval. With equal unit counts the two errors are one.
pub fn cautious_two_sample_se(
    (var_a, n_a): (f64, usize),
    (var_b, n_b): (f64, usize),
) -> (f64, f64) {
    let (na, nb) = (n_a as f64, n_b as f64);
    let (sa, sb) = (var_a / na, var_b / nb);
    let welch_se = (sa + sb).sqrt();
    let pooled_df = na + nb - 2.0;
    let pooled_var = ((na - 1.0) * var_a + (nb - 1.0) * var_b) / pooled_df;
    let pooled_se = (pooled_var * (1.0 / na + 1.0 / nb)).sqrt();
    if pooled_se >= welch_se {
        (pooled_se, pooled_df)
    } else {
        (welch_se, satterthwaite(&[(sa, na - 1.0), (sb, nb - 1.0)]))
    }
}

fn t_result(
    shift: f64,
    se: f64,
    df: f64,
    between: Option<BetweenUnit>,
    (unit_sd, unit_sd_df): (f64, f64),
    opts: &CompareOptions,
    scale: Scale,
) -> UnitComparison {
    let threshold = threshold_rel(scale, opts.delta_pct);
    let (ci, p) = if se > 0.0 && df >= 1.0 {
        let half = t_quantile(1.0 - opts.alpha / 2.0, df) * se;
        let p = (2.0 * t_sf((shift / se).abs(), df)).min(1.0);
        (Some((shift - half, shift + half)), Some(p))
    } else if se == 0.0 {
        (
            Some((shift, shift)),
            Some(if shift == 0.0 { 1.0 } else { 0.0 }),
        )
    } else {
        (None, None)
    };
    let verdict = ci.map_or(Verdict::Insufficient, |ci| {
        verdict_from_interval(ci, threshold, opts.higher_is_better)
    });
    UnitComparison {
        shift_log: shift,
        ci_log: ci,
        p_value: p,
        df: Some(df),
        verdict,
        between,
        no_claim: None,
        unit_sd: Some(unit_sd),
        unit_sd_df: Some(unit_sd_df),
    }
}

/// Units per side at which a t interval from units of SD `unit_sd` is expected to be
/// no wider than the threshold (so it can no longer hold both 0 and ±δ).
pub fn units_needed(unit_sd: f64, delta_pct: f64, alpha: f64) -> Option<usize> {
    runs_needed(unit_sd, threshold_rel(Scale::Log, delta_pct), alpha)
}

/// Units per side that would settle an inconclusive unit comparison, from the unit
/// spread, more than there are; `None` without a spread (nothing to compute it from).
pub(super) fn units_to_settle(
    u: &UnitComparison,
    units_now: usize,
    opts: &CompareOptions,
) -> Option<usize> {
    units_needed(u.unit_sd?, opts.delta_pct, opts.alpha).map(|k| k.max(units_now + 1))
}

/// [`units_to_settle`] with its uncertainty, and where the spread came from.
pub(super) fn settle_from_units(
    u: &UnitComparison,
    units_now: usize,
    opts: &CompareOptions,
) -> Option<UnitsToSettle> {
    let Some(sd) = u.unit_sd else {
        return Some(UnitsToSettle::unknown());
    };
    let from = match u.between.as_ref().map(|b| b.source) {
        Some(NoiseSource::Calibration) => VarianceFrom::CalibrationAndThisComparison,
        Some(NoiseSource::OtherSide) | None => VarianceFrom::ThisComparison,
    };
    UnitsToSettle::from_spread(
        sd,
        u.unit_sd_df.unwrap_or(f64::NAN),
        threshold_rel(Scale::Log, opts.delta_pct),
        opts.alpha,
        units_now,
        from,
    )
}

/// The smallest change (percent) this machine can resolve with `units` sessions (or
/// boots of one session each) a side: the half-width of the (1 − α) interval of the
/// difference, from the calibrated spread of one unit.
pub fn resolvable_change_pct(
    cal: &NoiseComponents,
    level: Level,
    units: usize,
    alpha: f64,
) -> Option<f64> {
    let between = calibrated_between(cal, level, 1)?;
    let unit_var = between.unit_sd * between.unit_sd;
    let k = units.max(1) as f64;
    // One unit a side borrows its spread, and claims at a share of α.
    let (df, alpha) = if units >= 2 {
        (2.0 * k - 2.0, alpha)
    } else {
        (between.df, alpha * ONE_UNIT_ALPHA_SHARE)
    };
    let half = t_quantile(1.0 - alpha / 2.0, df) * (2.0 * unit_var / k).sqrt();
    Some(100.0 * half.exp_m1())
}
