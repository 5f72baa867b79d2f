//! Comparisons that respect how runs were replicated: runs sit inside sessions,
//! sessions inside boots, boots inside a label.
//!
//! A session effect (page cache, memory layout, frequency state, what else runs) is
//! shared by every run of the session, so two sessions run one after the other are an
//! AABB design at the session level: the run-to-run spread cannot see it. The interval
//! is therefore taken at the highest level at which the two sides differ (see
//! [`choose_design`]), with the unit summaries (mean log value of a unit's runs) as
//! the replicates. A side with one unit only has no spread at that level: its
//! between-unit variance then comes from a calibration of this machine
//! ([`NoiseComponents`], `kbench calibrate`), or from the other side's units, or there
//! is no claim. Methods, and why these rather than a mixed model, are in the
//! repository's `docs/statistics.md`.

pub(crate) mod design;
mod noise;
mod unit_compare;
mod units;

pub use crate::parametric::satterthwaite;
pub use design::{
    choose_design, BetweenUnit, Design, Level, NestedInfo, NoClaim, NoiseSource, Observation,
    UnitEstimate,
};
pub use noise::{calibrated_between, components_from_units, noise_components, NoiseComponents};
pub use unit_compare::{
    cautious_two_sample_se, compare_units, resolvable_change_pct, units_needed, UnitComparison,
    ONE_UNIT_ALPHA_SHARE,
};
pub(crate) use units::{boot_means, group_in_order};
pub use units::{unit_count, unit_estimates};

use crate::compare::{
    compare, insufficient_comparison, side_diagnostics, CompareOptions, Comparison, Diagnostics,
    Scale, Verdict,
};
use crate::descriptive::{describe, mean};
pub use crate::settle::UnitsToSettle;
use std::collections::HashMap;
use unit_compare::{compare_units_on, settle_from_units, units_to_settle};
use units::{group_sessions, unit_estimates_with};

/// Options beyond [`CompareOptions`] for a replicated comparison.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NestedOptions {
    pub compare: CompareOptions,
    /// This machine's calibrated noise for the metric, if a calibration matches.
    pub calibration: Option<NoiseComponents>,
}

/// A side's values in run order with each session's offset removed (its mean log,
/// or mean, moved to the side's): what is left is the run-to-run behaviour.
fn within_sessions(obs: &[Observation], scale: Scale) -> Vec<f64> {
    let forward = |v: f64| match scale {
        Scale::Log => v.ln(),
        Scale::Linear => v,
    };
    let back = |v: f64| match scale {
        Scale::Log => v.exp(),
        Scale::Linear => v,
    };
    let mut ordered: Vec<&Observation> = obs.iter().collect();
    ordered.sort_by_key(|o| o.order);
    let sessions = group_sessions(&ordered, &forward);
    let grand = mean(&ordered.iter().map(|o| forward(o.value)).collect::<Vec<_>>());
    let estimates: HashMap<&str, f64> = sessions
        .iter()
        .rev()
        .map(|s| (s.id.as_str(), s.estimate))
        .collect();
    ordered
        .iter()
        .map(|o| {
            let offset = estimates
                .get(&*o.session)
                .map_or(0.0, |estimate| estimate - grand);
            back(forward(o.value) - offset)
        })
        .collect()
}

/// Sessions per unit of a side (1 for session units).
fn sessions_per_unit(obs: &[Observation], units: &[UnitEstimate]) -> usize {
    (unit_count(obs, Level::Session) / units.len().max(1)).max(1)
}

/// Compares B against A respecting the replication ([`choose_design`]). Interleaved
/// runs are compared as [`compare`] does (Hodges-Lehmann, Moses interval); otherwise
/// the unit estimates are ([`compare_units`]), with the calibration's between-unit
/// variance for a one-unit side. Per-side diagnostics (outliers, bimodality, drift)
/// are always those of the runs. Needs positive values for the unit designs.
pub fn compare_nested(a: &[Observation], b: &[Observation], opts: &NestedOptions) -> Comparison {
    let design = choose_design(a, b);
    let ordered = |o: &[Observation]| -> Vec<f64> {
        let mut v: Vec<&Observation> = o.iter().collect();
        v.sort_by_key(|x| x.order);
        v.iter().map(|x| x.value).collect()
    };
    let (va, vb) = (ordered(a), ordered(b));
    if design == Design::Interleaved {
        let mut c = compare(&va, &vb, &opts.compare);
        c.nested = Some(NestedInfo::new(design, a.len(), b.len()));
        return c;
    }
    let level = design.level();
    // Values <= 0 (a count that is often 0) have no log: unit means of the values
    // relative to |mean of A| instead, and no calibration (it is of log values).
    let scale = if va.iter().chain(&vb).all(|v| *v > 0.0) {
        Scale::Log
    } else {
        Scale::Linear
    };
    let reference = mean(&va).abs();
    let transform = move |v: f64| match scale {
        Scale::Log => v.ln(),
        Scale::Linear => v / reference,
    };
    let (ua, ub) = (
        unit_estimates_with(a, level, &transform),
        unit_estimates_with(b, level, &transform),
    );
    let ids = |units: &[UnitEstimate]| units.iter().map(|u| u.id.clone()).collect();
    let mut c = insufficient_comparison(&va, &vb, &opts.compare, scale);
    c.nested = Some(NestedInfo {
        units_a: ids(&ua),
        units_b: ids(&ub),
        ..NestedInfo::new(design, a.len(), b.len())
    });
    if scale == Scale::Linear && !(reference > 0.0 && reference.is_finite()) {
        c.notes
            .push("values <= 0 with a mean of 0 on the base side: no relative change".into());
        return c;
    }
    let paired = matches!(design, Design::Paired(_));
    let between = match scale {
        Scale::Log => opts.calibration.as_ref().and_then(|cal| {
            calibrated_between(
                cal,
                level,
                sessions_per_unit(a, &ua).min(sessions_per_unit(b, &ub)),
            )
        }),
        Scale::Linear => None,
    };
    let Some(u) = compare_units_on(&ua, &ub, level, paired, between, &opts.compare, scale) else {
        c.notes
            .push(format!("too few {}s for an interval", level.as_str()));
        return c;
    };
    let scale_name = match scale {
        Scale::Log => "log scale",
        Scale::Linear => "linear scale",
    };
    let kind = if paired { "paired " } else { "" };
    c.method = match (&u.between, u.no_claim) {
        (_, Some(_)) => format!("{kind}{}s as units: no interval", level.as_str()),
        (Some(b), _) => format!(
            "{}s as units, t with {} between-{} variance, {scale_name}",
            level.as_str(),
            match b.source {
                NoiseSource::Calibration => "calibrated",
                NoiseSource::OtherSide => "the other side's",
            },
            level.as_str()
        ),
        (None, None) => format!(
            "{kind}{}s as units (mean of runs), {} t, {scale_name}",
            level.as_str(),
            if paired {
                "one-sample"
            } else {
                "the wider of welch's and the pooled"
            }
        ),
    };
    fill_from_units(&mut c, u, scale, ua.len().max(ub.len()), &opts.compare);
    // Within-session diagnostics: a session's offset is a step in run order, not a
    // drift, and its runs are not outliers of the other sessions (the units carry it).
    let (ra, rb) = (within_sessions(a, scale), within_sessions(b, scale));
    c.diagnostics = Some(Diagnostics {
        a: side_diagnostics(&ra, &opts.compare, scale),
        b: side_diagnostics(&rb, &opts.compare, scale),
        verdict_without_outliers: None,
        shift_pct_without_outliers: None,
        shape: None,
    });
    c.summary_a = describe(&va);
    c.summary_b = describe(&vb);
    // The centres the shift is the ratio of: the geometric mean of the unit means
    // (or their mean, on the linear scale), not the median of all runs.
    let centre = |units: &[UnitEstimate]| -> f64 {
        let m = mean(&units.iter().map(|u| u.estimate).collect::<Vec<_>>());
        match scale {
            Scale::Log => m.exp(),
            Scale::Linear => m * reference,
        }
    };
    c.median_a = Some(centre(&ua));
    c.median_b = Some(centre(&ub));
    c
}

/// Fills `c` (whose `nested` is set) from a unit comparison on `scale`: the shift,
/// interval, p and verdict, and the borrowed spread, degrees of freedom, no-claim and
/// units that would settle it.
pub(crate) fn fill_from_units(
    c: &mut Comparison,
    u: UnitComparison,
    scale: Scale,
    units_now: usize,
    opts: &CompareOptions,
) {
    let to_pct = |x: f64| match scale {
        Scale::Log => 100.0 * x.exp_m1(),
        Scale::Linear => 100.0 * x,
    };
    c.shift_log = (scale == Scale::Log).then_some(u.shift_log);
    c.shift_pct = Some(to_pct(u.shift_log));
    if let Some((lo, hi)) = u.ci_log {
        c.ci_low_pct = Some(to_pct(lo));
        c.ci_high_pct = Some(to_pct(hi));
    }
    c.p_value = u.p_value;
    c.verdict = u.verdict;
    c.runs_needed = None;
    c.settle = None;
    if u.verdict == Verdict::Inconclusive {
        c.settle = settle_from_units(&u, units_now, opts);
    }
    if let Some(info) = c.nested.as_mut() {
        if u.verdict == Verdict::Inconclusive {
            info.units_needed = units_to_settle(&u, units_now, opts);
        }
        info.between = u.between;
        info.df = u.df;
        info.no_claim = u.no_claim;
    }
}

#[cfg(test)]
mod tests;
