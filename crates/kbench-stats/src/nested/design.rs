//! What a replicated comparison is made of (observations and their units, the
//! levels of replication, the design) and what it says of how it was made ([`NestedInfo`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
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
