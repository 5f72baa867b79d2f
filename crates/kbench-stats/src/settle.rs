//! How much more data would settle an inconclusive comparison: the runs or units a
//! side it would take, and where the spread that says so came from. Shared by the
//! plain ([`crate::compare`]), replicated ([`crate::nested`]) and sequential
//! ([`crate::sequential`]) comparisons.

use crate::special::{normal_quantile, sd_interval_95, t_quantile};
use serde::{Deserialize, Serialize};

/// Beyond this many units a side an estimate of "how many more" is not practical advice.
pub const PRACTICAL_UNITS_PER_SIDE: usize = 1000;

/// Where a variance estimate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VarianceFrom {
    /// This comparison's own units.
    ThisComparison,
    /// A calibration of this machine, pooled with this comparison's units.
    CalibrationAndThisComparison,
}

/// What would give an estimate of the noise, when there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseWanted {
    /// Two units on each side, or a calibration of this machine (`kbench calibrate`).
    TwoUnitsASideOrCalibration,
}

/// Runs per side at which the (1 − α) interval is expected to be no wider than δ, so it can
/// no longer contain both 0 and ±δ (it then settles on equivalent, changed, regression or
/// improvement). Width ≈ 2·t(1 − α/2, 2n − 2)·s·√(2/n), with s the per-value spread.
pub(crate) fn runs_needed(spread_rel: f64, threshold: f64, alpha: f64) -> Option<usize> {
    if !(spread_rel > 0.0 && threshold > 0.0 && spread_rel.is_finite()) {
        return None;
    }
    const CAP: f64 = 1e7;
    let z = normal_quantile(1.0 - alpha / 2.0);
    let mut n = (8.0 * (z * spread_rel / threshold).powi(2)).max(2.0);
    for _ in 0..20 {
        if n > CAP {
            return Some(CAP as usize);
        }
        let t = t_quantile(1.0 - alpha / 2.0, (2.0 * n.ceil() - 2.0).max(1.0));
        let next = (8.0 * (t * spread_rel / threshold).powi(2)).max(2.0);
        if (next - n).abs() < 0.5 {
            n = next;
            break;
        }
        n = next;
    }
    Some(n.ceil() as usize)
}

/// How many units a side would settle an inconclusive fixed-design comparison, with
/// the uncertainty of the spread it is computed from. A spread from two or three units
/// is itself uncertain by a factor of several, and the units needed go with its square.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UnitsToSettle {
    /// No estimate of the noise at all: the number is unknown.
    Unknown { what_would_give_it: NoiseWanted },
    /// The point estimate (units a side in all, not more), and the range it takes over
    /// a 95 % chi-square interval of the spread with its `df`; `high` is `None` when the
    /// upper end is beyond [`PRACTICAL_UNITS_PER_SIDE`].
    About {
        per_side: usize,
        low: usize,
        high: Option<usize>,
        df: f64,
        from: VarianceFrom,
    },
    /// Even the point estimate is beyond [`PRACTICAL_UNITS_PER_SIDE`]; `at_least` is the
    /// low end of the range. More units are not the answer: a smaller noise is.
    BeyondPractical {
        at_least: usize,
        df: f64,
        from: VarianceFrom,
    },
}

impl UnitsToSettle {
    /// The answer when there is no spread to compute it from.
    pub fn unknown() -> UnitsToSettle {
        UnitsToSettle::Unknown {
            what_would_give_it: NoiseWanted::TwoUnitsASideOrCalibration,
        }
    }

    /// The answer from a spread `unit_sd` (relative, one unit) with `df` degrees of
    /// freedom, for `threshold` (relative) at level `alpha`, with `units_now` units on
    /// the larger side; `None` when the spread gives no number (zero or not finite).
    pub fn from_spread(
        unit_sd: f64,
        df: f64,
        threshold: f64,
        alpha: f64,
        units_now: usize,
        from: VarianceFrom,
    ) -> Option<UnitsToSettle> {
        let needed = |sd: f64| runs_needed(sd, threshold, alpha).map(|n| n.max(units_now + 1));
        let per_side = needed(unit_sd)?;
        let (sd_low, sd_high) = if df > 0.0 && df.is_finite() {
            sd_interval_95(unit_sd, df)
        } else {
            (f64::NAN, f64::NAN)
        };
        let low = needed(sd_low).map_or(units_now + 1, |n| n.min(per_side));
        if per_side > PRACTICAL_UNITS_PER_SIDE {
            return Some(UnitsToSettle::BeyondPractical {
                at_least: low,
                df,
                from,
            });
        }
        Some(UnitsToSettle::About {
            per_side,
            low,
            high: needed(sd_high).filter(|n| *n <= PRACTICAL_UNITS_PER_SIDE),
            df,
            from,
        })
    }
}
