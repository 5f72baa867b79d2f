//! This machine's noise at each level of replication, from A/A sessions, and what
//! a one-unit side borrows of it.

use super::design::{BetweenUnit, Level, NoiseSource, Observation, UnitEstimate};
use super::units::{boot_means, group_in_order, group_sessions, mean_within};
use crate::descriptive::{mean, sample_variance};
use crate::parametric::satterthwaite;
use serde::{Deserialize, Serialize};

/// The noise of one metric on this machine, on the log scale (so an SD of 0.01 is
/// about 1 %), from A/A sessions (`kbench calibrate`). `session_sd` and `boot_sd` are
/// the spreads of whole units' estimates, each a plain sample SD with its degrees of
/// freedom, which is what a one-unit side borrows; the `between_*` components (method
/// of moments for runs ⊂ sessions ⊂ boots, floored at 0) are for people.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoiseComponents {
    pub runs: usize,
    pub sessions: usize,
    pub boots: usize,
    /// Run-to-run SD within a session.
    pub within_sd: Option<f64>,
    /// SD of a session's estimate (mean log of its runs) around its boot's mean,
    /// pooled over boots.
    pub session_sd: Option<f64>,
    /// Σ over boots of (sessions − 1).
    pub session_df: usize,
    /// Mean runs per session, and the within-session variance of a session's estimate
    /// that `session_sd` therefore includes.
    pub runs_per_session: f64,
    pub session_within_var: f64,
    /// SD of a boot's estimate (mean of its sessions) across boots; boots − 1 df.
    pub boot_sd: Option<f64>,
    pub boot_df: usize,
    pub sessions_per_boot: f64,
    /// Session-to-session SD beyond what the run spread explains.
    pub between_session_sd: Option<f64>,
    /// Boot-to-boot SD beyond what sessions and runs explain.
    pub between_boot_sd: Option<f64>,
}

/// Variance components from A/A observations (all of one metric, all positive).
pub fn noise_components(obs: &[Observation]) -> NoiseComponents {
    let mut ordered: Vec<&Observation> = obs.iter().filter(|o| o.value > 0.0).collect();
    ordered.sort_by_key(|o| o.order);
    let sessions = group_sessions(&ordered, &f64::ln);
    let runs = ordered.len();
    let mut out = components_from_units(&sessions);
    out.runs = runs;
    // Pooled within-session variance: Σ (n_s − 1)·s²_s / (N − S).
    let (mut ss, mut df) = (0.0, 0usize);
    for s in &sessions {
        if let Some(v) = s.within_var {
            ss += v * s.runs as f64 * (s.runs - 1) as f64;
            df += s.runs - 1;
        }
    }
    out.within_sd = (df > 0).then(|| (ss / df as f64).sqrt());
    out
}

/// Session and boot spreads from per-session estimates (each with its within-session
/// variance): the SD of session estimates around their boot's mean, pooled over boots;
/// the SD of boot means; and the method-of-moments components below them.
pub fn components_from_units(sessions: &[UnitEstimate]) -> NoiseComponents {
    let boots = group_in_order(sessions, |s| &*s.boot);
    let mean_within = mean_within(sessions).unwrap_or(0.0);
    let (mut ss, mut df) = (0.0, 0usize);
    for (_, list) in &boots {
        if list.len() >= 2 {
            let e: Vec<f64> = list.iter().map(|s| s.estimate).collect();
            let m = mean(&e);
            ss += e.iter().map(|x| (x - m).powi(2)).sum::<f64>();
            df += list.len() - 1;
        }
    }
    let session_var = (df > 0).then(|| ss / df as f64);
    let between_session_var = session_var.map(|v| (v - mean_within).max(0.0));
    let count = sessions.len().max(1) as f64;
    let mut out = NoiseComponents {
        runs: sessions.iter().map(|s| s.runs).sum(),
        sessions: sessions.len(),
        boots: boots.len(),
        within_sd: None,
        session_sd: session_var.map(f64::sqrt),
        session_df: df,
        runs_per_session: sessions.iter().map(|s| s.runs as f64).sum::<f64>() / count,
        session_within_var: mean_within,
        boot_sd: None,
        boot_df: boots.len().saturating_sub(1),
        sessions_per_boot: count / boots.len().max(1) as f64,
        between_session_sd: between_session_var.map(f64::sqrt),
        between_boot_sd: None,
    };
    if boots.len() >= 2 {
        let boot_means: Vec<f64> = boot_means(sessions).iter().map(|b| b.estimate).collect();
        let from_below: f64 = boots
            .iter()
            .map(|(_, l)| (between_session_var.unwrap_or(0.0) + mean_within) / l.len() as f64)
            .sum::<f64>()
            / boots.len() as f64;
        let var_means = sample_variance(&boot_means).unwrap_or(0.0);
        out.boot_sd = Some(var_means.sqrt());
        out.between_boot_sd = Some((var_means - from_below).max(0.0).sqrt());
    }
    out
}

/// What a calibration lends a one-unit side at `level` whose unit holds
/// `sessions_in_unit` sessions: the spread of a whole session's estimate; for a boot,
/// the spread of boot means measured with the calibration's m sessions a boot, plus
/// σ²_session·(1/k − 1/m) for a boot of k < m sessions (Satterthwaite over both
/// estimates' degrees of freedom). `None` when it has no such spread (one session;
/// one boot).
pub fn calibrated_between(
    cal: &NoiseComponents,
    level: Level,
    sessions_in_unit: usize,
) -> Option<BetweenUnit> {
    let (var, df, within) = match level {
        Level::Run => return None,
        Level::Session => (
            cal.session_sd?.powi(2),
            cal.session_df as f64,
            cal.session_within_var,
        ),
        Level::Boot => {
            let m = cal.sessions_per_boot.max(1.0);
            let k = (sessions_in_unit.max(1) as f64).min(m);
            let boot_var = cal.boot_sd?.powi(2);
            let extra = cal.session_sd.unwrap_or(0.0).powi(2) * (1.0 / k - 1.0 / m);
            let terms = [
                (boot_var, cal.boot_df as f64),
                (extra, cal.session_df as f64),
            ];
            let df = if extra > 0.0 && cal.session_df > 0 {
                satterthwaite(&terms)
            } else {
                cal.boot_df as f64
            };
            (boot_var + extra.max(0.0), df, cal.session_within_var / k)
        }
    };
    (df >= 1.0 && cal.boots > 0).then_some(BetweenUnit {
        level,
        unit_sd: var.sqrt(),
        included_within_var: within,
        df,
        source: NoiseSource::Calibration,
    })
}
