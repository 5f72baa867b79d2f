//! A sequential comparison as the store keeps it: its design, fixed before the first
//! unit, and each look at the units so far. A later `compare` of the same two labels
//! reads the design back and looks with it, so it gives the verdict the run gave.
use serde::{Deserialize, Serialize};

/// The levels of replication, as the statistics name them; the boundary a design's
/// looks are read against.
pub use kbench_stats::sequential::Boundary;
pub use kbench_stats::Level;

/// What ran the design and looked after each unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DesignedBy {
    /// `kbench ab --until-decided`: the runs of one interleaved session are the units.
    Ab,
    /// `kbench vm-ab --until-decided`: boots are the units, a look after each pair.
    VmAb,
    /// `kbench compare --sequential`: sessions or boots added between looks.
    Compare,
}

impl DesignedBy {
    pub const ALL: [DesignedBy; 3] = [DesignedBy::Ab, DesignedBy::VmAb, DesignedBy::Compare];

    /// The command, as the store and the report name it.
    pub fn as_str(self) -> &'static str {
        match self {
            DesignedBy::Ab => "ab",
            DesignedBy::VmAb => "vm-ab",
            DesignedBy::Compare => "compare",
        }
    }

    pub fn parse(text: &str) -> Option<DesignedBy> {
        DesignedBy::ALL.into_iter().find(|d| d.as_str() == text)
    }
}

/// The design of a sequential comparison, fixed before its first unit: what every
/// sequential decision (`compare --sequential`, `ab`, `vm-ab`, a bisection's) looks
/// with, and what a recorded design keeps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SequentialOptions {
    /// The false-claim rate of all primary metrics together, over every look.
    pub alpha: f64,
    /// The practical threshold, percent.
    pub delta_pct: f64,
    /// Units a side at which it stops undecided.
    pub max_units_per_side: usize,
    /// Whether a calibration of the machine is borrowed for session units.
    pub use_calibration: bool,
    /// What the looks are read against: the always-valid interval where nobody
    /// declared a maximum (`compare --sequential`), O'Brien-Fleming's boundary over a
    /// declared one (`ab --max-runs`, `vm-ab --max-boots`). Designs recorded before
    /// kbench kept it were always valid.
    #[serde(default)]
    pub boundary: Boundary,
}

/// A sequential design of BASE against NEW, as recorded before its first look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignRecord {
    pub base_label: String,
    pub new_label: String,
    pub by: DesignedBy,
    pub created_unix_ns: u64,
    pub kbench_version: String,
    pub command_line: String,
    #[serde(flatten)]
    pub options: SequentialOptions,
    /// The wall-clock bound, if one was given.
    pub max_time_s: Option<f64>,
}

/// The rule's answer for one metric at one look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LookOutcome {
    Continue,
    Regression,
    Improvement,
    Changed,
    Equivalent,
    Undecided,
}

impl LookOutcome {
    pub const ALL: [LookOutcome; 6] = [
        LookOutcome::Continue,
        LookOutcome::Regression,
        LookOutcome::Improvement,
        LookOutcome::Changed,
        LookOutcome::Equivalent,
        LookOutcome::Undecided,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LookOutcome::Continue => "continue",
            LookOutcome::Regression => "regression",
            LookOutcome::Improvement => "improvement",
            LookOutcome::Changed => "changed",
            LookOutcome::Equivalent => "equivalent",
            LookOutcome::Undecided => "undecided",
        }
    }

    pub fn parse(text: &str) -> Option<LookOutcome> {
        LookOutcome::ALL.into_iter().find(|o| o.as_str() == text)
    }
}

/// One primary metric at one look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookRow {
    pub workload: String,
    pub params: String,
    pub variant: String,
    pub metric: String,
    pub n_a: u64,
    pub n_b: u64,
    pub shift_pct: Option<f64>,
    /// The always-valid interval, percent; `None` while it is unbounded.
    pub interval_pct: Option<(f64, f64)>,
    pub outcome: LookOutcome,
    /// What the units were (runs, sessions, boots). The first look fixes it for the
    /// whole design; `None` in looks recorded before kbench kept it.
    #[serde(default)]
    pub unit_level: Option<Level>,
}

/// One look: every primary metric's interval and answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialLook {
    /// 1 for the first look.
    pub index: u64,
    pub at_unix_ns: u64,
    pub rows: Vec<LookRow>,
}

impl SequentialLook {
    /// Whether every metric was decided (or closed at the bound) at this look.
    pub fn is_final(&self) -> bool {
        !self.rows.is_empty() && self.rows.iter().all(|r| r.outcome != LookOutcome::Continue)
    }
}

/// A design with the looks recorded under it, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedDesign {
    pub id: i64,
    pub design: DesignRecord,
    pub looks: Vec<SequentialLook>,
}

impl RecordedDesign {
    /// Whether its last look decided every metric: no more looks belong to it.
    pub fn is_closed(&self) -> bool {
        self.looks.last().is_some_and(SequentialLook::is_final)
    }
}
