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

use crate::compare::{
    compare, insufficient_comparison, side_diagnostics, threshold_rel, verdict_from_interval,
    CompareOptions, Comparison, Diagnostics, Scale, Verdict,
};
use crate::descriptive::{describe, mean, sample_variance};
use crate::sequential::{KnownNoise, NoiseWanted, VarianceFrom, PRACTICAL_UNITS_PER_SIDE};
use crate::special::{sd_interval_95, t_quantile, t_sf};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;
use std::sync::Arc;

/// One measured value with its replication coordinates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub value: f64,
    /// The boot it ran in (`/proc/sys/kernel/random/boot_id`). Shared, not copied: the
    /// runs of a boot and the metrics of a run all name the same boot.
    pub boot: Arc<str>,
    /// The session it ran in. Both sides of one interleaved `kbench ab` invocation share
    /// one session here: their runs alternate, so a session effect falls on both.
    pub session: Arc<str>,
    /// Position in this side's run order (drift is assessed in this order).
    pub order: u32,
}

/// A level of replication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Run,
    Session,
    Boot,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Run => "run",
            Level::Session => "session",
            Level::Boot => "boot",
        }
    }

    pub fn parse(text: &str) -> Option<Level> {
        [Level::Run, Level::Session, Level::Boot]
            .into_iter()
            .find(|l| l.as_str() == text)
    }
}

/// How the two sides' runs relate, and so which units are the replicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "level")]
pub enum Design {
    /// Both sides alternate within the same session(s) of one boot: runs are the units.
    Interleaved,
    /// Both sides ran in the same sessions or boots (two or more): each unit gives one
    /// difference, and the differences are the replicates.
    Paired(Level),
    /// The sides ran in different sessions or boots: those are the replicates.
    Unpaired(Level),
}

impl Design {
    /// The level whose units are the replicates.
    pub fn level(self) -> Level {
        match self {
            Design::Interleaved => Level::Run,
            Design::Paired(l) | Design::Unpaired(l) => l,
        }
    }
}

/// Picks the design from where the runs of each side ran: the highest level at which
/// the two sides differ. Different boots: boots are the units. The same boots (two or
/// more): paired by boot. One shared boot, different sessions: sessions are the units.
/// The same sessions (two or more): paired by session. Otherwise the runs alternate
/// in one session, and runs are the units.
pub fn choose_design(a: &[Observation], b: &[Observation]) -> Design {
    // Runs of one unit come together: only a change of unit is looked up in the set.
    fn set(o: &[Observation], f: fn(&Observation) -> &str) -> BTreeSet<&str> {
        let mut units = BTreeSet::new();
        let mut last = None;
        for unit in o.iter().map(f) {
            if last != Some(unit) {
                units.insert(unit);
                last = Some(unit);
            }
        }
        units
    }
    let (boots_a, boots_b) = (set(a, |o| &o.boot), set(b, |o| &o.boot));
    if boots_a != boots_b {
        return Design::Unpaired(Level::Boot);
    }
    if boots_a.len() >= 2 {
        return Design::Paired(Level::Boot);
    }
    let (sessions_a, sessions_b) = (set(a, |o| &o.session), set(b, |o| &o.session));
    if sessions_a != sessions_b {
        return Design::Unpaired(Level::Session);
    }
    if sessions_a.len() >= 2 {
        return Design::Paired(Level::Session);
    }
    Design::Interleaved
}

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

/// One unit's summary: its estimate on the log scale and how well the unit knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitEstimate {
    /// The unit's id (a session or boot id): pairs units across sides.
    pub id: String,
    /// The boot the unit belongs to (its own id for a boot).
    pub boot: String,
    /// Mean log value of its runs (or the log of a pooled percentile).
    pub estimate: f64,
    /// Variance of `estimate` from within the unit alone (s²/n of its runs).
    pub within_var: Option<f64>,
    pub runs: usize,
}

/// Where the between-unit variance of a one-unit side came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// `kbench calibrate`: A/A sessions on this machine.
    Calibration,
    /// The other side's own units.
    OtherSide,
}

/// The spread of one unit's estimate, borrowed for a side that has one unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BetweenUnit {
    pub level: Level,
    /// SD of a whole unit's estimate (log scale), within-unit noise included.
    pub unit_sd: f64,
    /// The part of `unit_sd`² that is within-unit noise: a side noisier than that
    /// adds its excess.
    pub included_within_var: f64,
    /// Degrees of freedom behind `unit_sd`.
    pub df: f64,
    pub source: NoiseSource,
}

/// Why a replicated comparison makes no claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoClaim {
    /// One unit a side (or one on one side and too few on the other), and no
    /// calibration of this level: the unit effect cannot be told from the change.
    NoBetweenUnitVariance,
}

/// How a replicated comparison was made: attached to its [`Comparison`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestedInfo {
    pub design: Design,
    /// Unit ids of each side, in analysis order (for diagnostics naming units).
    pub units_a: Vec<String>,
    pub units_b: Vec<String>,
    /// Runs per side.
    pub runs_a: usize,
    pub runs_b: usize,
    /// The between-unit variance borrowed for a one-unit side, if any.
    pub between: Option<BetweenUnit>,
    /// Degrees of freedom of the interval (t), when it came from units.
    pub df: Option<f64>,
    pub no_claim: Option<NoClaim>,
    /// Units per side that would settle an inconclusive (or unclaimed) result.
    pub units_needed: Option<usize>,
}

impl NestedInfo {
    /// A design's info before any interval is made.
    pub fn new(design: Design, runs_a: usize, runs_b: usize) -> NestedInfo {
        NestedInfo {
            design,
            units_a: Vec::new(),
            units_b: Vec::new(),
            runs_a,
            runs_b,
            between: None,
            df: None,
            no_claim: None,
            units_needed: None,
        }
    }
}

/// Options beyond [`CompareOptions`] for a replicated comparison.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NestedOptions {
    pub compare: CompareOptions,
    /// This machine's calibrated noise for the metric, if a calibration matches.
    pub calibration: Option<NoiseComponents>,
}

/// Groups observations into units of `level`, in order of first appearance by
/// `order`; for boots, a unit's estimate is the mean of its sessions' means.
pub fn unit_estimates(obs: &[Observation], level: Level) -> Vec<UnitEstimate> {
    unit_estimates_with(obs, level, &f64::ln)
}

/// [`unit_estimates`] of `transform(value)` instead of the log value.
fn unit_estimates_with(
    obs: &[Observation],
    level: Level,
    transform: &dyn Fn(f64) -> f64,
) -> Vec<UnitEstimate> {
    let mut ordered: Vec<&Observation> = obs.iter().collect();
    ordered.sort_by_key(|o| o.order);
    let sessions = group_sessions(&ordered, transform);
    if level != Level::Boot {
        return sessions;
    }
    boot_means(&sessions)
}

/// `items` grouped by `key`, the groups in order of first appearance. A side has a
/// hundred sessions and ten thousand runs: each key is found by hash, not by a walk
/// through the groups.
pub(crate) fn group_in_order<T, K: Eq + Hash + Clone>(
    items: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> K,
) -> Vec<(K, Vec<T>)> {
    let mut groups: Vec<(K, Vec<T>)> = Vec::new();
    let mut index: HashMap<K, usize> = HashMap::new();
    let mut last: Option<usize> = None;
    for item in items {
        let k = key(&item);
        // Runs come session after session: the last group is most often the one.
        let i = match last.filter(|&i| groups[i].0 == k) {
            Some(i) => i,
            None => *index.entry(k.clone()).or_insert_with(|| {
                groups.push((k, Vec::new()));
                groups.len() - 1
            }),
        };
        groups[i].1.push(item);
        last = Some(i);
    }
    groups
}

/// Session estimates averaged per boot (the variance of a mean of k sessions: Σ/k²).
pub(crate) fn boot_means(sessions: &[UnitEstimate]) -> Vec<UnitEstimate> {
    group_in_order(sessions, |s| s.boot.clone())
        .into_iter()
        .map(|(boot, list)| {
            let k = list.len() as f64;
            UnitEstimate {
                id: boot.clone(),
                boot,
                estimate: list.iter().map(|s| s.estimate).sum::<f64>() / k,
                within_var: list
                    .iter()
                    .map(|s| s.within_var)
                    .sum::<Option<f64>>()
                    .map(|v| v / (k * k)),
                runs: list.iter().map(|s| s.runs).sum(),
            }
        })
        .collect()
}

fn group_sessions(ordered: &[&Observation], transform: &dyn Fn(f64) -> f64) -> Vec<UnitEstimate> {
    group_in_order(ordered.iter(), |o| &*o.session)
        .into_iter()
        .map(|(id, members)| {
            let values: Vec<f64> = members.iter().map(|o| transform(o.value)).collect();
            UnitEstimate {
                id: id.to_string(),
                boot: members[0].boot.to_string(),
                estimate: mean(&values),
                within_var: sample_variance(&values).map(|v| v / values.len() as f64),
                runs: values.len(),
            }
        })
        .collect()
}

/// Units of `level` a side has: its runs, or its distinct sessions or boots.
pub fn unit_count(obs: &[Observation], level: Level) -> usize {
    match level {
        Level::Run => obs.len(),
        Level::Session => group_in_order(obs, |o| &*o.session).len(),
        Level::Boot => group_in_order(obs, |o| &*o.boot).len(),
    }
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
fn compare_units_on(
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

fn mean_within(units: &[UnitEstimate]) -> Option<f64> {
    let known: Vec<f64> = units.iter().filter_map(|u| u.within_var).collect();
    (!known.is_empty()).then(|| mean(&known))
}

/// Satterthwaite's (1946) degrees of freedom for a sum of variance estimates, each
/// given with its own degrees of freedom.
pub fn satterthwaite(terms: &[(f64, f64)]) -> f64 {
    let total: f64 = terms.iter().map(|t| t.0).sum();
    let denominator: f64 = terms
        .iter()
        .filter(|t| t.1 > 0.0)
        .map(|t| t.0 * t.0 / t.1)
        .sum();
    if denominator > 0.0 {
        total * total / denominator
    } else {
        terms.iter().map(|t| t.1).sum::<f64>().max(1.0)
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
    crate::compare::runs_needed(unit_sd, threshold_rel(Scale::Log, delta_pct), alpha)
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
        let needed = |sd: f64| {
            crate::compare::runs_needed(sd, threshold, alpha).map(|n| n.max(units_now + 1))
        };
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

/// Units per side that would settle an inconclusive unit comparison, from the unit
/// spread, more than there are; `None` without a spread (nothing to compute it from).
fn units_to_settle(u: &UnitComparison, units_now: usize, opts: &CompareOptions) -> Option<usize> {
    units_needed(u.unit_sd?, opts.delta_pct, opts.alpha).map(|k| k.max(units_now + 1))
}

/// [`units_to_settle`] with its uncertainty, and where the spread came from.
fn settle_from_units(
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
mod tests {
    use super::*;

    fn obs(values: &[f64], boot: &str, session: &str, start: u32) -> Vec<Observation> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| Observation {
                value,
                boot: boot.into(),
                session: session.into(),
                order: start + i as u32,
            })
            .collect()
    }

    const RUNS: [f64; 6] = [1.00, 1.01, 0.99, 1.02, 0.98, 1.00];

    #[test]
    fn the_design_is_the_highest_level_at_which_the_sides_differ() {
        let a = obs(&RUNS, "b1", "s1", 0);
        let other_boot = obs(&RUNS, "b2", "s2", 0);
        let other_session = obs(&RUNS, "b1", "s2", 0);
        let same_session = obs(&RUNS, "b1", "s1", 10);
        assert_eq!(
            choose_design(&a, &other_boot),
            Design::Unpaired(Level::Boot)
        );
        assert_eq!(
            choose_design(&a, &other_session),
            Design::Unpaired(Level::Session)
        );
        assert_eq!(choose_design(&a, &same_session), Design::Interleaved);
        let mut a2 = a.clone();
        a2.extend(obs(&RUNS, "b2", "s3", 6));
        let mut b2 = same_session.clone();
        b2.extend(obs(&RUNS, "b2", "s4", 16));
        assert_eq!(choose_design(&a2, &b2), Design::Paired(Level::Boot));
    }

    /// Boots that read a figure alike in every run and boot (a counted IPI round trip)
    /// have no spread at all: the shift alone decides, as with a spread it would.
    #[test]
    fn boots_without_any_spread_are_decided_on_the_shift() {
        let boots = |value: f64| -> Vec<Observation> {
            (0..3)
                .flat_map(|i| {
                    obs(
                        &[value; 3],
                        &format!("b{value}{i}"),
                        &format!("s{value}{i}"),
                        0,
                    )
                })
                .collect()
        };
        let opts = NestedOptions::default();
        let same = compare_nested(&boots(1531.0), &boots(1531.0), &opts);
        assert_eq!(same.verdict, Verdict::Equivalent, "{same:?}");
        let slower = compare_nested(&boots(1531.0), &boots(1559.0), &opts);
        assert_eq!(slower.verdict, Verdict::Regression, "{slower:?}");
        assert!((slower.shift_pct.unwrap() - 1.829).abs() < 0.01);
    }

    #[test]
    fn one_session_a_side_without_calibration_makes_no_claim() {
        let a = obs(&RUNS, "b1", "s1", 0);
        let b: Vec<Observation> = obs(&RUNS.map(|v| v * 1.2), "b1", "s2", 0);
        let c = compare_nested(&a, &b, &NestedOptions::default());
        assert_eq!(c.verdict, Verdict::Inconclusive);
        let info = c.nested.unwrap();
        assert_eq!(info.no_claim, Some(NoClaim::NoBetweenUnitVariance));
        assert_eq!(info.units_needed, None);
        assert_eq!(c.settle, Some(UnitsToSettle::unknown()));
        assert!((c.shift_pct.unwrap() - 20.0).abs() < 0.5);
    }

    /// The bounds of an `About`, or a panic naming what came instead.
    fn about(settle: Option<UnitsToSettle>) -> (usize, usize, Option<usize>) {
        match settle {
            Some(UnitsToSettle::About {
                per_side,
                low,
                high,
                ..
            }) => (per_side, low, high),
            other => panic!("expected about, got {other:?}"),
        }
    }

    #[test]
    fn units_to_settle_carry_the_uncertainty_of_the_spread() {
        let threshold = threshold_rel(Scale::Log, 1.0);
        let from = VarianceFrom::ThisComparison;
        // A spread of 0.5 % from 2 units a side (2 df): the range spans two orders of
        // magnitude around the point.
        let (point, low, high) = about(UnitsToSettle::from_spread(
            0.005, 2.0, threshold, 0.05, 2, from,
        ));
        let high = high.expect("within the practical bound");
        assert!(low < point && point < high, "{low} {point} {high}");
        assert!(high >= 20 * low, "{low} {high}");
        // The same spread from 30 units a side (58 df): within a factor of about 2.
        let (point, low, high) = about(UnitsToSettle::from_spread(
            0.005, 58.0, threshold, 0.05, 30, from,
        ));
        let high = high.unwrap();
        assert!(low <= point && point <= high, "{low} {point} {high}");
        assert!(high <= 3 * low, "{low} {high}");
        // A wider spread from 2 units: the upper end is past any practical number.
        let (point, low, high) = about(UnitsToSettle::from_spread(
            0.02, 2.0, threshold, 0.05, 2, from,
        ));
        assert!(low < point && high.is_none(), "{low} {point} {high:?}");
        // A spread that needs more than the bound even at its point estimate.
        match UnitsToSettle::from_spread(0.1, 2.0, threshold, 0.05, 2, from) {
            Some(UnitsToSettle::BeyondPractical { at_least, df, .. }) => {
                assert!(at_least > 100, "{at_least}");
                assert_eq!(df, 2.0);
            }
            other => panic!("expected beyond practical, got {other:?}"),
        }
    }

    #[test]
    fn two_sessions_a_side_settle_from_their_own_spread() {
        let mut a = obs(&RUNS, "b1", "s1", 0);
        a.extend(obs(&RUNS.map(|v| v * 1.004), "b1", "s2", 6));
        let mut b = obs(&RUNS.map(|v| v * 1.005), "b1", "s3", 0);
        b.extend(obs(&RUNS.map(|v| v * 1.001), "b1", "s4", 6));
        let c = compare_nested(&a, &b, &NestedOptions::default());
        assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
        let (point, low, _) = about(c.settle.clone());
        assert_eq!(Some(point), c.nested.unwrap().units_needed);
        assert!(low >= 3 && low <= point, "{low} {point}");
    }

    #[test]
    fn a_calibration_lets_one_session_a_side_find_a_large_change() {
        let a = obs(&RUNS, "b1", "s1", 0);
        let b: Vec<Observation> = obs(&RUNS.map(|v| v * 1.2), "b1", "s2", 0);
        let cal = NoiseComponents {
            runs: 50,
            sessions: 5,
            boots: 1,
            within_sd: Some(0.01),
            session_sd: Some(0.01),
            session_df: 4,
            runs_per_session: 10.0,
            session_within_var: 0.00001,
            ..NoiseComponents::default()
        };
        let opts = NestedOptions {
            calibration: Some(cal.clone()),
            ..NestedOptions::default()
        };
        let c = compare_nested(&a, &b, &opts);
        assert_eq!(c.verdict, Verdict::Regression, "{c:?}");
        let between = c.nested.unwrap().between.unwrap();
        assert_eq!(between.source, NoiseSource::Calibration);
        // A 1 % change is inside that noise: not claimed.
        let small: Vec<Observation> = obs(&RUNS.map(|v| v * 1.01), "b1", "s2", 0);
        assert!(!compare_nested(&a, &small, &opts)
            .verdict
            .claims_difference());
    }

    #[test]
    fn components_recover_a_session_effect() {
        // Sessions offset by ±5 %, runs exactly equal within: the session SD is ~5 %.
        let mut all = Vec::new();
        for (i, offset) in [1.05, 0.95, 1.05, 0.95].iter().enumerate() {
            let values: Vec<f64> = RUNS.iter().map(|_| *offset).collect();
            all.extend(obs(&values, "b1", &format!("s{i}"), 10 * i as u32));
        }
        let c = noise_components(&all);
        assert_eq!((c.sessions, c.boots, c.session_df), (4, 1, 3));
        assert!((c.session_sd.unwrap() - 0.0577).abs() < 0.003);
        let sd = c.between_session_sd.unwrap();
        assert!((sd - 0.0577).abs() < 0.003, "{sd}");
        assert!(c.within_sd.unwrap() < 1e-9);
        assert_eq!(c.between_boot_sd, None);
    }

    #[test]
    fn paired_boots_cancel_a_boot_offset() {
        // Each boot shifts both sides alike by a large offset; B is 3 % slower in each.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (i, offset) in [1.0, 1.3, 0.8, 1.1].iter().enumerate() {
            let boot = format!("b{i}");
            let runs_a: Vec<f64> = RUNS.iter().map(|v| v * offset).collect();
            let runs_b: Vec<f64> = runs_a.iter().map(|v| v * 1.03).collect();
            a.extend(obs(&runs_a, &boot, &format!("sa{i}"), 10 * i as u32));
            b.extend(obs(&runs_b, &boot, &format!("sb{i}"), 10 * i as u32));
        }
        let c = compare_nested(&a, &b, &NestedOptions::default());
        assert_eq!(
            c.nested.as_ref().unwrap().design,
            Design::Paired(Level::Boot)
        );
        assert_eq!(c.verdict, Verdict::Regression, "{c:?}");
    }

    #[test]
    fn satterthwaite_of_one_term_is_its_df() {
        assert!((satterthwaite(&[(2.0, 7.0)]) - 7.0).abs() < 1e-12);
        let two = satterthwaite(&[(1.0, 4.0), (1.0, 4.0)]);
        assert!((two - 8.0).abs() < 1e-12);
    }
}
