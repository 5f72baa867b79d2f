//! Sequential A/B over units (runs in `ab`, boots in `vm-ab`, sessions in `compare`):
//! a rule that may be looked at after every unit and still holds its false-claim rate.
//!
//! The interval is an always-valid confidence sequence for the shift of mean log unit
//! values, B − A: the inversion of the scale-invariant Bayes-factor t-test with a normal
//! prior of variance `PRIOR_EFFECT_VAR` on the standardised shift (Gönen, Johnson, Lu and
//! Westfall 2005). With the right-Haar prior on σ this Bayes factor is the likelihood
//! ratio of the data's location-scale maximal invariant, so under "shift = μ0" it is a
//! test martingale (Pérez-Ortiz, Lardy, de Heide and Grünwald 2022) and, by Ville's
//! inequality, exceeds 1/α at some look with probability at most α. The shifts it does
//! not reject form an interval, valid at every look at once: stopping whenever the user
//! likes, or never declaring a maximum, keeps the error rate. `docs/statistics.md`
//! ("Sequential decisions") has the reasoning and the Monte-Carlo.
//!
//! A design that declares its maximum of units a side may instead take
//! [`Boundary::DeclaredMaximum`]: O'Brien-Fleming's boundary over that maximum
//! ([`crate::group_sequential`]), which spends all of α by the bound rather than the
//! always-valid rule's 2 % or so, and so decides right more often at the same bound.

pub use crate::settle::{NoiseWanted, VarianceFrom, PRACTICAL_UNITS_PER_SIDE};
use serde::{Deserialize, Serialize};

use crate::compare::{threshold_rel, verdict_from_interval, Scale, Verdict};
use crate::descriptive::mean;
use crate::group_sequential::OBrienFleming;
use crate::special::{f_sf, sd_interval_95};

/// Variance of the prior on the standardised shift (shift / unit SD) under the
/// alternative. At α = 5 % it keeps the interval finite from 4 units a side (t* = 11.3
/// at 6 df; 3 a side with a calibration of 4 df) and within about 1.6 times the fixed t
/// interval's width from 10 to 100 units.
pub const PRIOR_EFFECT_VAR: f64 = 1.0;

/// A sequential A/B design, fixed before the first unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SequentialDesign {
    /// The false-claim rate of the whole suite, over all its primary metrics and looks.
    pub alpha: f64,
    /// The practical threshold δ, percent.
    pub delta_pct: f64,
    /// The bound: units a side after which the rule reports its interval undecided.
    pub max_units_per_side: usize,
    /// Primary metrics decided together; α is split among them (Bonferroni).
    pub primaries: usize,
    /// Direction of the metric: whether a higher value is the better one.
    pub higher_is_better: bool,
    /// The boundary the interval is read against. Absent in older records: the
    /// always-valid one, and left out of the JSON when it is that.
    #[serde(default, skip_serializing_if = "Boundary::is_always_valid")]
    pub boundary: Boundary,
}

/// The boundary of a sequential design's interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Boundary {
    /// The always-valid confidence sequence: holds α at any look, up to the bound and
    /// past it, whoever chooses when to look. The rule where no maximum is declared
    /// (`compare --sequential`).
    #[default]
    AlwaysValid,
    /// O'Brien-Fleming's boundary over the declared `max_units_per_side`, for t
    /// statistics with a look after every unit ([`crate::group_sequential`]): holds α
    /// over the looks up to the bound and decides right more often there. A look reads
    /// only the first `max_units_per_side` units of each side: units past the declared
    /// maximum are not part of the design and would break its guarantee. Its constant
    /// is simulated at the first look of each new design, in time that grows with the
    /// bound (tens of ms at 20 to 40 units a side, about 0.15 s at 100).
    DeclaredMaximum,
}

impl Boundary {
    pub fn is_always_valid(&self) -> bool {
        *self == Boundary::AlwaysValid
    }

    /// The name the store and the JSON give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Boundary::AlwaysValid => "always_valid",
            Boundary::DeclaredMaximum => "declared_maximum",
        }
    }

    pub fn parse(text: &str) -> Option<Boundary> {
        [Boundary::AlwaysValid, Boundary::DeclaredMaximum]
            .into_iter()
            .find(|b| b.as_str() == text)
    }
}

impl SequentialDesign {
    /// α for one primary metric: Bonferroni needs only the union bound, so the family's
    /// rate holds at any stopping time and under any dependence between the metrics.
    pub fn alpha_per_primary(&self) -> f64 {
        self.alpha / self.primaries.max(1) as f64
    }
}

/// A between-unit SD known from a calibration of this machine (log scale), with its
/// degrees of freedom: pooled with the comparison's own spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KnownNoise {
    pub unit_sd: f64,
    pub df: f64,
}

impl KnownNoise {
    /// Whether today's units (their spread `today_sd` with `today_df` degrees of
    /// freedom) are consistent with this calibrated spread: not wider than it by the
    /// one-sided F test at [`CALIBRATION_CHECK_P`]. A calibration that today's units
    /// find too small is not borrowed: pooled in, it would narrow the interval by a
    /// noise this machine no longer has (a calibration half today's spread took an A/A's
    /// false claims to 6 %). A spread found larger is borrowed: that only widens.
    pub fn fits_today(&self, today_sd: f64, today_df: f64) -> bool {
        if !(today_df >= 1.0 && self.df >= 1.0 && today_sd.is_finite()) {
            return true;
        }
        if self.unit_sd <= 0.0 {
            return today_sd <= 0.0;
        }
        let ratio = (today_sd / self.unit_sd).powi(2);
        f_sf(ratio, today_df, self.df) >= CALIBRATION_CHECK_P
    }
}

/// The level of the check that today's units agree with a calibration they would
/// borrow ([`KnownNoise::fits_today`]). Generous on purpose: from four units a side
/// the test has little power, and a level of 0.1 still let a calibration half today's
/// spread take one unit against five to 6.7 % false claims; at 0.25 every cell of
/// `tests/calibration_off.rs` holds α.
pub const CALIBRATION_CHECK_P: f64 = 0.25;

/// What shrinks the noise of a unit when more units are not practical.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseAdvice {
    /// Pin the workload and keep other load off its CPUs.
    Placement,
    /// More runs in each unit (session or boot).
    MoreRunsPerUnit,
    /// KVM instead of TCG for boots.
    Kvm,
}

/// How many more units a side the rule expects to need, if the shift and the spread
/// stay where they are now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MoreEstimate {
    /// No variance estimate at all: the number is unknown.
    Unknown { what_would_give_it: NoiseWanted },
    /// The point estimate and the range from a 95 % chi-square interval of the unit
    /// variance; `high` is `None` when the upper end is beyond the practical bound.
    About {
        per_side: usize,
        low: usize,
        high: Option<usize>,
        from: VarianceFrom,
    },
    /// Even the point estimate is beyond [`PRACTICAL_UNITS_PER_SIDE`]: shrink the noise.
    BeyondPractical {
        at_least: usize,
        from: VarianceFrom,
        advice: Vec<NoiseAdvice>,
    },
}

/// The rule's answer at one look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Decision {
    /// Not decided yet, and the bound is not reached.
    Continue { more_per_side: MoreEstimate },
    /// B is worse than A by more than δ.
    Regression,
    /// B is better than A by more than δ.
    Improvement,
    /// At the bound: the interval excludes 0 but reaches inside ±δ.
    Changed,
    /// No change larger than δ: the interval lies inside ±δ.
    Equivalent,
    /// At the bound: the interval holds 0 and reaches past ±δ; no decision.
    Undecided,
}

impl Decision {
    /// Whether the rule stops here.
    pub fn is_final(&self) -> bool {
        !matches!(self, Decision::Continue { .. })
    }

    /// Whether the decision says that B differs from A.
    pub fn claims_change(&self) -> bool {
        matches!(
            self,
            Decision::Regression | Decision::Improvement | Decision::Changed
        )
    }
}

/// One look at the units so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// Units of each side the look read (with [`Boundary::DeclaredMaximum`], at most
    /// `max_units_per_side`).
    pub n_a: usize,
    pub n_b: usize,
    /// Shift of B against A, percent (from the difference of mean logs).
    pub shift_pct: Option<f64>,
    /// The design's (1 − α per primary) interval, percent; `None` while it is
    /// unbounded.
    pub interval_pct: Option<(f64, f64)>,
    /// The unit SD (log scale) the interval used, and its degrees of freedom.
    pub unit_sd: Option<f64>,
    pub df: f64,
    pub decision: Decision,
}

impl Look {
    /// Whether the interval pooled a calibration's spread in: it has more degrees of
    /// freedom than its own units give.
    pub fn borrowed_calibration(&self) -> bool {
        self.df > (self.n_a + self.n_b) as f64 - 2.0
    }
}

/// The confidence sequence at one look, on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogInterval {
    pub shift: f64,
    /// `None` while the interval is unbounded.
    pub bounds: Option<(f64, f64)>,
    pub unit_sd: Option<f64>,
    pub df: f64,
}

/// The critical |t| of the confidence sequence at `df` degrees of freedom and effective
/// sample size `n_eff` = n_a·n_b/(n_a + n_b): where the Bayes factor
/// (1 + n_eff·g)^(−1/2)·[(1 + t²/ν)/(1 + t²/(ν(1 + n_eff·g)))]^((ν+1)/2) reaches 1/α.
/// `None` when even an infinite t does not reach it (the interval is unbounded).
pub fn boundary_t(alpha: f64, df: f64, n_eff: f64) -> Option<f64> {
    if !(df > 0.0 && n_eff > 0.0 && alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let r = 1.0 + n_eff * PRIOR_EFFECT_VAR;
    let a = ((0.5 * r.ln() - alpha.ln()) * 2.0 / (df + 1.0)).exp();
    (a < r).then(|| (df * (a - 1.0) / (1.0 - a / r)).sqrt())
}

/// The critical |t| of a design's boundary at a look.
#[derive(Debug, Clone, Copy)]
enum CriticalT {
    AlwaysValid { alpha: f64 },
    DeclaredMaximum(OBrienFleming),
}

impl CriticalT {
    fn of(design: &SequentialDesign, known: Option<KnownNoise>) -> CriticalT {
        let alpha = design.alpha_per_primary();
        match design.boundary {
            Boundary::AlwaysValid => CriticalT::AlwaysValid { alpha },
            Boundary::DeclaredMaximum => CriticalT::DeclaredMaximum(OBrienFleming::new(
                design.max_units_per_side,
                alpha,
                usable(known).map_or(0.0, |k| k.df),
            )),
        }
    }

    fn at(&self, df: f64, n_a: usize, n_b: usize) -> Option<f64> {
        match self {
            CriticalT::AlwaysValid { alpha } => {
                boundary_t(*alpha, df, (n_a * n_b) as f64 / (n_a + n_b) as f64)
            }
            CriticalT::DeclaredMaximum(obf) => obf.critical_t(df, n_a, n_b),
        }
    }
}

/// A calibration that can be pooled: some degrees of freedom and a finite SD.
fn usable(known: Option<KnownNoise>) -> Option<KnownNoise> {
    known.filter(|k| k.df > 0.0 && k.unit_sd.is_finite())
}

/// The always-valid interval for mean(b) − mean(a) of log unit values at level α, with
/// the pooled spread of both sides' units and, when given, a calibrated spread.
pub fn confidence_sequence(
    a_log_units: &[f64],
    b_log_units: &[f64],
    known: Option<KnownNoise>,
    alpha: f64,
) -> Option<LogInterval> {
    interval_against(
        CriticalT::AlwaysValid { alpha },
        a_log_units,
        b_log_units,
        known,
    )
}

/// The interval of `design` for mean(b) − mean(a) of log unit values: the always-valid
/// one, or with [`Boundary::DeclaredMaximum`] O'Brien-Fleming's over the first
/// `max_units_per_side` units of each side.
pub fn design_interval(
    design: &SequentialDesign,
    a_log_units: &[f64],
    b_log_units: &[f64],
    known: Option<KnownNoise>,
) -> Option<LogInterval> {
    let (a, b) = units_read(design, a_log_units, b_log_units);
    interval_against(CriticalT::of(design, known), a, b, known)
}

/// The units a look of `design` reads: all of them, or with a declared maximum the
/// first `max_units_per_side` of each side.
fn units_read<'u>(
    design: &SequentialDesign,
    a_log_units: &'u [f64],
    b_log_units: &'u [f64],
) -> (&'u [f64], &'u [f64]) {
    match design.boundary {
        Boundary::AlwaysValid => (a_log_units, b_log_units),
        Boundary::DeclaredMaximum => {
            let first = |v: &'u [f64]| &v[..v.len().min(design.max_units_per_side)];
            (first(a_log_units), first(b_log_units))
        }
    }
}

fn interval_against(
    critical: CriticalT,
    a_log_units: &[f64],
    b_log_units: &[f64],
    known: Option<KnownNoise>,
) -> Option<LogInterval> {
    let (n_a, n_b) = (a_log_units.len(), b_log_units.len());
    if n_a == 0 || n_b == 0 {
        return None;
    }
    let finite = a_log_units.iter().chain(b_log_units).all(|v| v.is_finite());
    if !finite {
        return None;
    }
    let shift = mean(b_log_units) - mean(a_log_units);
    let squares = |v: &[f64]| {
        let m = mean(v);
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
    };
    let mut ss = squares(a_log_units) + squares(b_log_units);
    let mut df = (n_a + n_b - 2) as f64;
    let today_sd = (ss / df).sqrt();
    if let Some(k) = usable(known).filter(|k| k.fits_today(today_sd, df)) {
        ss += k.df * k.unit_sd * k.unit_sd;
        df += k.df;
    }
    if df <= 0.0 {
        return Some(LogInterval {
            shift,
            bounds: None,
            unit_sd: None,
            df,
        });
    }
    let sd = (ss / df).sqrt();
    let se = sd * (1.0 / n_a as f64 + 1.0 / n_b as f64).sqrt();
    let half = critical.at(df, n_a, n_b).map(|t| t * se);
    Some(LogInterval {
        shift,
        bounds: half.map(|h| (shift - h, shift + h)),
        unit_sd: Some(sd),
        df,
    })
}

/// Half-width (log) of the design's interval with `per_side` units a side of SD
/// `unit_sd`, `extra_df` degrees of freedom from a calibration.
fn half_width(unit_sd: f64, per_side: usize, extra_df: f64, critical: CriticalT) -> f64 {
    let n = per_side as f64;
    let df = extra_df + 2.0 * n - 2.0;
    critical
        .at(df, per_side, per_side)
        .map_or(f64::INFINITY, |t| t * unit_sd * (2.0 / n).sqrt())
}

/// The fewest units a side (from `from`, at most the practical bound) at which the
/// half-width falls to `target`; `None` beyond the practical bound. With a declared
/// maximum, counts past it use the boundary at the bound.
fn units_for_half_width(
    unit_sd: f64,
    target: f64,
    extra_df: f64,
    critical: CriticalT,
    from: usize,
) -> Option<usize> {
    let fits = |n: usize| half_width(unit_sd, n, extra_df, critical) <= target;
    let (mut lo, mut hi) = (from.max(1), PRACTICAL_UNITS_PER_SIDE);
    if !fits(hi) {
        return None;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// The half-width that would decide, if the shift stays where it is: the distance from
/// the shift to the nearer edge of ±δ, but no less than δ/4 (a shift that sits on δ
/// is not decided by any number of units; the estimate then is the units to resolve
/// δ/4).
fn target_half_width(shift: f64, threshold: f64) -> f64 {
    (shift.abs() - threshold).abs().max(threshold / 4.0)
}

/// How many more units a side, from the variance estimate of `interval`.
fn more_estimate(
    interval: Option<&LogInterval>,
    n_a: usize,
    n_b: usize,
    known: Option<KnownNoise>,
    threshold: f64,
    critical: CriticalT,
) -> MoreEstimate {
    let (Some(iv), Some(sd)) = (interval, interval.and_then(|i| i.unit_sd)) else {
        return MoreEstimate::Unknown {
            what_would_give_it: NoiseWanted::TwoUnitsASideOrCalibration,
        };
    };
    // The calibration's degrees of freedom, when the interval borrowed it.
    let extra_df = match known {
        Some(_) => (iv.df - (n_a + n_b) as f64 + 2.0).max(0.0),
        None => 0.0,
    };
    let from = if extra_df > 0.0 {
        VarianceFrom::CalibrationAndThisComparison
    } else {
        VarianceFrom::ThisComparison
    };
    let now = n_a.max(n_b);
    let target = target_half_width(iv.shift, threshold);
    let more = |sd: f64| {
        units_for_half_width(sd, target, extra_df, critical, now + 1).map(|n| n.saturating_sub(now))
    };
    // A 95 % interval for the unit variance with the estimate's own degrees of freedom.
    let (sd_low, sd_high) = sd_interval_95(sd, iv.df);
    match more(sd) {
        Some(per_side) => MoreEstimate::About {
            per_side,
            low: more(sd_low).unwrap_or(per_side).min(per_side),
            high: more(sd_high),
            from,
        },
        None => MoreEstimate::BeyondPractical {
            at_least: PRACTICAL_UNITS_PER_SIDE.saturating_sub(now),
            from,
            advice: vec![
                NoiseAdvice::Placement,
                NoiseAdvice::MoreRunsPerUnit,
                NoiseAdvice::Kvm,
            ],
        },
    }
}

/// The decision at this look if the rule stops here, with the interval it came from
/// ([`design_interval`]); `None` for the decision while the rule continues. Before the
/// bound it stops only for an answer against δ (regression, improvement, equivalent);
/// at the bound (`max_units_per_side` on both sides) it reports what the interval says.
pub fn stops(
    design: &SequentialDesign,
    a_log_units: &[f64],
    b_log_units: &[f64],
    known: Option<KnownNoise>,
) -> (Option<LogInterval>, Option<Decision>) {
    let (a, b) = units_read(design, a_log_units, b_log_units);
    let critical = CriticalT::of(design, known);
    decide(design, critical, a, b, known)
}

fn decide(
    design: &SequentialDesign,
    critical: CriticalT,
    a_log_units: &[f64],
    b_log_units: &[f64],
    known: Option<KnownNoise>,
) -> (Option<LogInterval>, Option<Decision>) {
    let interval = interval_against(critical, a_log_units, b_log_units, known);
    let threshold = threshold_rel(Scale::Log, design.delta_pct);
    let at_bound = a_log_units.len().min(b_log_units.len()) >= design.max_units_per_side;
    let verdict = interval
        .and_then(|iv| iv.bounds)
        .map(|b| verdict_from_interval(b, threshold, design.higher_is_better));
    let decision = match (verdict, at_bound) {
        (Some(Verdict::Regression), _) => Some(Decision::Regression),
        (Some(Verdict::Improvement), _) => Some(Decision::Improvement),
        (Some(Verdict::Equivalent), _) => Some(Decision::Equivalent),
        (Some(Verdict::Changed), true) => Some(Decision::Changed),
        (_, true) => Some(Decision::Undecided),
        (_, false) => None,
    };
    (interval, decision)
}

/// Looks at the units so far (mean log value of each unit, in any order): the decision
/// of [`stops`], or how many more units a side the rule expects to need.
pub fn look(
    design: &SequentialDesign,
    a_log_units: &[f64],
    b_log_units: &[f64],
    known: Option<KnownNoise>,
) -> Look {
    let (a, b) = units_read(design, a_log_units, b_log_units);
    let (n_a, n_b) = (a.len(), b.len());
    let critical = CriticalT::of(design, known);
    let (interval, decision) = decide(design, critical, a, b, known);
    let decision = decision.unwrap_or_else(|| Decision::Continue {
        more_per_side: more_estimate(
            interval.as_ref(),
            n_a,
            n_b,
            known,
            threshold_rel(Scale::Log, design.delta_pct),
            critical,
        ),
    });
    let pct = |v: f64| 100.0 * v.exp_m1();
    Look {
        n_a,
        n_b,
        shift_pct: interval.map(|iv| pct(iv.shift)),
        interval_pct: interval
            .and_then(|iv| iv.bounds)
            .map(|(l, h)| (pct(l), pct(h))),
        unit_sd: interval.and_then(|iv| iv.unit_sd),
        df: interval.map_or(0.0, |iv| iv.df),
        decision,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::chi_square_quantile;

    fn design() -> SequentialDesign {
        SequentialDesign {
            alpha: 0.05,
            delta_pct: 1.0,
            max_units_per_side: 40,
            primaries: 1,
            higher_is_better: false,
            boundary: Boundary::AlwaysValid,
        }
    }

    fn declared(max_units_per_side: usize) -> SequentialDesign {
        SequentialDesign {
            max_units_per_side,
            boundary: Boundary::DeclaredMaximum,
            ..design()
        }
    }

    /// Units with a mean-log spread of about 1 %, drifting nowhere: a fixed pattern.
    fn units(n: usize, shift: f64) -> Vec<f64> {
        (0..n)
            .map(|i| shift + 0.01 * ((i * 7 % 11) as f64 - 5.0) / 3.2)
            .collect()
    }

    #[test]
    fn the_interval_is_first_finite_at_four_units_a_side() {
        assert!(boundary_t(0.05, 4.0, 1.5).is_none());
        let t4 = boundary_t(0.05, 6.0, 2.0).unwrap();
        assert!((t4 - 11.3).abs() < 0.05, "{t4}");
        // With a calibration of 4 df, from 3 a side; of 9 df, from 2.
        assert!(boundary_t(0.05, 8.0, 1.5).is_some());
        assert!(boundary_t(0.05, 6.0, 1.0).is_none());
        assert!(boundary_t(0.05, 11.0, 1.0).is_some());
    }

    #[test]
    fn the_boundary_is_always_valid_unless_said_and_old_records_read() {
        let json = serde_json::to_string(&design()).unwrap();
        assert!(!json.contains("boundary"), "{json}");
        let back: SequentialDesign = serde_json::from_str(&json).unwrap();
        assert_eq!(back.boundary, Boundary::AlwaysValid);
        let json = serde_json::to_string(&declared(20)).unwrap();
        assert!(json.contains(r#""boundary":"declared_maximum""#), "{json}");
        assert_eq!(
            serde_json::from_str::<SequentialDesign>(&json).unwrap(),
            declared(20)
        );
    }

    #[test]
    fn a_declared_maximum_reads_only_its_units() {
        let (a, b) = (units(30, 0.0), units(30, 0.004));
        let past = look(&declared(20), &a, &b, None);
        let at = look(&declared(20), &a[..20], &b[..20], None);
        assert_eq!(past, at);
        assert_eq!((past.n_a, past.n_b), (20, 20));
        assert!(past.decision.is_final(), "{past:?}");
        // The always-valid rule reads them all.
        assert_eq!(look(&design(), &a, &b, None).n_a, 30);
    }

    #[test]
    fn a_declared_maximum_is_wide_early_and_narrow_at_the_bound() {
        let width = |d: &SequentialDesign, n: usize| {
            let iv = design_interval(d, &units(n, 0.0), &units(n, 0.0), None);
            iv.and_then(|iv| iv.bounds).map(|(lo, hi)| hi - lo)
        };
        let always = design();
        let early = (width(&always, 5).unwrap(), width(&declared(20), 5).unwrap());
        assert!(early.1 > early.0, "{early:?}");
        let at_bound = (
            width(&always, 20).unwrap(),
            width(&declared(20), 20).unwrap(),
        );
        assert!(at_bound.1 < 0.8 * at_bound.0, "{at_bound:?}");
        // Its interval at the bound is close to the fixed design's t interval.
        let fixed_t = crate::special::t_quantile(0.975, 38.0);
        let sd = design_interval(&always, &units(20, 0.0), &units(20, 0.0), None)
            .and_then(|iv| iv.unit_sd)
            .unwrap();
        let fixed = 2.0 * fixed_t * sd * (2.0f64 / 20.0).sqrt();
        assert!(at_bound.1 < 1.15 * fixed, "{} {fixed}", at_bound.1);
    }

    #[test]
    fn a_declared_maximum_decides_and_estimates_as_the_always_valid_rule() {
        let d = declared(20);
        let far = look(&d, &units(12, 0.0), &units(12, 0.1), None);
        assert_eq!(far.decision, Decision::Regression);
        let open = look(&d, &units(3, 0.0), &units(3, 0.005), None);
        assert!(
            matches!(
                open.decision,
                Decision::Continue {
                    more_per_side: MoreEstimate::About { .. }
                }
            ),
            "{open:?}"
        );
        let noisy = |n: usize, s: f64| units(n, s).iter().map(|v| 3.0 * v).collect::<Vec<_>>();
        let end = look(&d, &noisy(20, 0.0), &noisy(20, 0.0), None);
        assert_eq!(end.decision, Decision::Undecided, "{end:?}");
        let known = KnownNoise {
            unit_sd: 0.01,
            df: 9.0,
        };
        let calibrated = look(&d, &units(2, 0.0), &units(2, 0.0), Some(known));
        assert!(calibrated.interval_pct.is_some(), "{calibrated:?}");
    }

    #[test]
    fn boundary_shrinks_towards_a_constant_and_is_wider_than_fixed() {
        let t10 = boundary_t(0.05, 18.0, 5.0).unwrap();
        let t40 = boundary_t(0.05, 78.0, 20.0).unwrap();
        assert!(t10 > 2.1 && t10 < 5.0, "{t10}");
        assert!(t40 > 1.99 && t40 < 4.0, "{t40}");
        assert!(boundary_t(0.05, 2.0, 1.0).is_none());
    }

    #[test]
    fn no_units_or_no_spread_gives_unknown() {
        let l = look(&design(), &[0.0], &[0.01], None);
        assert_eq!(
            l.decision,
            Decision::Continue {
                more_per_side: MoreEstimate::Unknown {
                    what_would_give_it: NoiseWanted::TwoUnitsASideOrCalibration
                }
            }
        );
        assert!(l.interval_pct.is_none());
    }

    #[test]
    fn calibration_gives_an_estimate_from_one_unit_a_side() {
        let known = KnownNoise {
            unit_sd: 0.01,
            df: 10.0,
        };
        let l = look(&design(), &[0.0], &[0.001], Some(known));
        match l.decision {
            Decision::Continue {
                more_per_side:
                    MoreEstimate::About {
                        from,
                        low,
                        per_side,
                        ..
                    },
            } => {
                assert_eq!(from, VarianceFrom::CalibrationAndThisComparison);
                assert!(low <= per_side);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn huge_noise_is_beyond_practical() {
        let l = look(&design(), &[0.0, 0.9, -0.7], &[0.3, -0.8, 0.6], None);
        assert!(matches!(
            l.decision,
            Decision::Continue {
                more_per_side: MoreEstimate::BeyondPractical { .. }
            }
        ));
    }

    #[test]
    fn two_units_a_side_give_a_wide_range() {
        let l = look(&design(), &[0.0, 0.004], &[0.02, 0.025], None);
        match l.decision {
            Decision::Continue {
                more_per_side:
                    MoreEstimate::About {
                        low,
                        per_side,
                        high,
                        ..
                    },
            } => assert!(low < per_side && high.is_none_or(|h| h > per_side)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn direction_follows_higher_is_better() {
        let a: Vec<f64> = (0..10).map(|i| 0.001 * (i % 3) as f64).collect();
        let b: Vec<f64> = a.iter().map(|v| v + 0.2).collect();
        assert_eq!(look(&design(), &a, &b, None).decision, Decision::Regression);
        let better = SequentialDesign {
            higher_is_better: true,
            ..design()
        };
        assert_eq!(look(&better, &a, &b, None).decision, Decision::Improvement);
    }

    #[test]
    fn a_look_is_data_for_the_next_crate() {
        let l = look(&design(), &[0.0, 0.004], &[0.02, 0.025], None);
        let json = serde_json::to_string(&l).unwrap();
        assert!(json.contains(r#""kind":"continue""#), "{json}");
        assert!(json.contains(r#""from":"this_comparison""#), "{json}");
        let back: Look = serde_json::from_str(&json).unwrap();
        assert_eq!(back, l);
    }

    #[test]
    fn chi_square_quantiles_match_the_tables() {
        // qchisq(c(0.025, 0.975), 1); qchisq(0.5, 10); qchisq(0.975, 78), checked
        // against an independent series evaluation of P(a, x).
        let close = |x: f64, want: f64| (x - want).abs() <= 1e-6 * want.max(1e-3);
        assert!(close(chi_square_quantile(0.025, 1.0), 0.000_982_069));
        assert!(close(chi_square_quantile(0.975, 1.0), 5.023_886));
        assert!(close(chi_square_quantile(0.5, 10.0), 9.341_818));
        assert!(close(chi_square_quantile(0.975, 78.0), 104.315_938));
    }

    #[test]
    fn the_bound_reports_undecided_or_changed() {
        let d = SequentialDesign {
            max_units_per_side: 3,
            ..design()
        };
        let l = look(&d, &[0.0, 0.1, -0.1], &[0.05, -0.05, 0.0], None);
        assert_eq!(l.decision, Decision::Undecided);
    }
}
