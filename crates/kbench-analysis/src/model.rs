//! The comparison as data: what renderers format. Every finding is a typed value
//! (a [`Diagnostic`], a [`NotCompared`], a [`ReportNote`]); the renderers choose the
//! words.
use crate::event::Event;
use kbench_record::{PlacementKind, Role};
use kbench_stats::{Design, Level, NoiseSource, UnitsToSettle, Verdict};
use serde::{Deserialize, Serialize};

/// Everything a comparison of two labels found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    pub base: SideSummary,
    pub new: SideSummary,
    pub delta: DeltaChoice,
    /// The calibration of this machine used for one-unit sides, if one matched.
    pub calibration: Option<CalibrationUsed>,
    pub rows: Vec<CompareRow>,
    /// The verdicts of the primary rows (one per workload spec), pooled rows only.
    pub tally: Tally,
    /// Records that exist on one side only, or with other parameters or variants:
    /// never pooled, never compared, always said.
    pub not_compared: Vec<NotCompared>,
    pub environment_differences: Vec<EnvDifference>,
    /// The kernel config options the sides' kernels set differently.
    #[serde(default)]
    pub config_differences: ConfigDifferences,
    pub notes: Vec<ReportNote>,
    /// The kbench commands that reproduce this comparison.
    pub reproduce: Vec<String>,
    /// Seed of the bootstraps behind pooled-percentile rows.
    pub seed: u64,
    /// Which machines' runs were compared, when the labels hold runs of more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machines: Option<MachinesCompared>,
    /// Each real workload both labels ran, with what the micro results' changes
    /// predict for it from its events per op.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carried: Vec<CarriedChange>,
    /// What both labels' figures were measured with: instructions for counted boots.
    #[serde(default, skip_serializing_if = "kbench_record::Clock::is_wall")]
    pub clock: kbench_record::Clock,
}

/// Which machines a comparison of labels spanning several used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MachinesCompared {
    /// Only this machine's runs (`--machine`, or the one machine holding both labels);
    /// the others' sessions were left out, and are named.
    One {
        machine: String,
        base_left_out: Vec<String>,
        new_left_out: Vec<String>,
    },
    /// `--across-machines`: every machine's runs, each machine one unit of
    /// replication (its boots and sessions nested in it: rows counting boots count
    /// machines).
    Across { base: Vec<String>, new: Vec<String> },
}

impl MachinesCompared {
    /// The compare option that makes the same choice again (shell-quoted).
    pub fn compare_option(&self) -> String {
        match self {
            MachinesCompared::One { machine, .. } => machine_option(machine),
            MachinesCompared::Across { .. } => " --across-machines".into(),
        }
    }
}

/// ` --machine 'M'`: the option of `compare` and `history` that picks one machine,
/// shell-quoted.
pub fn machine_option(machine: &str) -> String {
    format!(" --machine '{}'", machine.replace('\'', r"'\''"))
}

/// One side's label and how much replication it has.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideSummary {
    pub label: String,
    /// Measured runs ([`kbench_store::StoredRun::is_measured`]).
    pub runs: usize,
    pub sessions: usize,
    pub boots: usize,
}

/// The delta the verdicts are read against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeltaChoice {
    /// The delta of `--delta`, or the default floor (1 %).
    pub pct: f64,
    /// `--delta` was given: every row uses `pct`. Otherwise each row uses the larger
    /// of `pct` and what this machine can resolve with the row's units (calibrated).
    pub explicit: bool,
}

/// The calibration a report used, and why it may not fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationUsed {
    pub id: i64,
    pub created_unix_ns: u64,
    pub sessions: usize,
    pub boots: usize,
    pub kernel_release: Option<String>,
    /// The between-session CV of the first primary row's metric, percent, when known.
    pub headline_between_session_cv_pct: Option<f64>,
    pub warnings: Vec<CalibrationWarning>,
}

/// Why a matching calibration may not describe the compared runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CalibrationWarning {
    /// Made on another kernel (or command line) than the compared runs.
    OtherKernel {
        calibrated: String,
        compared: String,
    },
    /// Older than the limit.
    Old { age_days: f64, limit_days: f64 },
    /// Made by another kbench version.
    OtherVersion { calibrated: String },
}

/// What a row compares.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum RowKind {
    /// One value per run, runs (or their sessions and boots) as replicates.
    #[default]
    PerRun,
    /// A percentile of a latency series pooled over each side's runs.
    PooledPercentile { series: String, quantile: f64 },
    /// From (mean, standard error, n) summaries (`perf stat -r`).
    Summary,
}

/// One workload and metric, compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    pub workload: String,
    /// The metric; for a pooled percentile, the latency series (see `kind`).
    pub metric: String,
    pub unit: String,
    /// The parameters shared by both sides, `name=value` separated by spaces.
    pub params: String,
    pub variant: String,
    /// The CPU classes this row is restricted to, when rows were split by class.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cpu_classes: String,
    /// The placement this row is restricted to, when rows were split by placement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementKind>,
    pub kind: RowKind,
    pub role: Role,
    pub higher_is_better: bool,
    /// Runs a side (samples a side for a summary).
    pub n_a: usize,
    pub n_b: usize,
    /// How the sides' runs relate, and so which units are the replicates.
    pub design: Option<Design>,
    /// Replicates a side at the design's level (runs, sessions or boots).
    pub units_a: usize,
    pub units_b: usize,
    /// Medians of the runs for interleaved runs; for sessions or boots as units, the
    /// geometric mean of the unit means (the shift is their ratio); pooled
    /// percentiles for pooled rows; means for summaries.
    pub median_a: Option<f64>,
    pub median_b: Option<f64>,
    pub shift_pct: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub p_value: Option<f64>,
    /// Benjamini-Hochberg adjusted p across the rows of this report.
    pub q_value: Option<f64>,
    /// The delta this row's verdict is read against.
    pub delta_pct: f64,
    pub verdict: Verdict,
    /// Runs a side that would settle an inconclusive row (interleaved runs).
    pub runs_needed: Option<usize>,
    /// Sessions or boots a side that would settle it (the design's level).
    pub units_needed: Option<usize>,
    /// Units a side (of the row's level) that would settle an inconclusive row, with
    /// the range its noise estimate allows, or why there is no number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<UnitsToSettle>,
    pub method: String,
    pub diagnostics: Vec<Diagnostic>,
}

impl CompareRow {
    /// The level whose units are the replicates of this row.
    pub fn level(&self) -> Level {
        self.design.map_or(Level::Run, Design::level)
    }

    pub fn is_primary(&self) -> bool {
        self.role == Role::Primary
    }

    /// A row restricted to one CPU class set or one placement, after its pooled row.
    pub fn is_split(&self) -> bool {
        !self.cpu_classes.is_empty() || self.placement.is_some()
    }
}

/// Which side a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SideName {
    Base,
    New,
}

/// The runs of one side that ran on one set of CPU classes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRuns {
    pub class: String,
    /// 1-based run numbers within the side.
    pub runs: Vec<u32>,
    pub cpus: Vec<u32>,
}

/// The runs of one side that mostly ran with one placement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementRuns {
    pub placement: PlacementKind,
    /// 1-based run numbers within the side.
    pub runs: Vec<u32>,
    /// The median of the row's metric over these runs.
    pub median: f64,
}

/// A finding next to a row's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Diagnostic {
    /// Outlying runs, flagged and kept (1-based, in the side's run order).
    Outliers { side: SideName, runs: Vec<usize> },
    /// The verdict with the flagged outliers removed, when it differs.
    WithoutOutliers {
        verdict: Verdict,
        shift_pct: Option<f64>,
    },
    /// Two populations of runs.
    Bimodal { side: SideName },
    /// The side drifts over its run order.
    Drift { side: SideName, pct_per_run: f64 },
    /// The distribution's shape changed, not only its location (KS).
    ShapeChanged,
    /// The series' timestamps come in ticks of `resolution_ns` (a trace's), and the
    /// pooled percentiles lie at most one tick apart: with ties at the ticks the
    /// interval is no guide, so no change is claimed.
    WithinResolution { resolution_ns: u64 },
    /// Runs that failed, excluded and not averaged in.
    FailedRuns { side: SideName, count: usize },
    /// The runs used different CPU classes: this row mixes them; rows per class follow.
    ClassMix {
        base: Vec<ClassRuns>,
        new: Vec<ClassRuns>,
    },
    /// A bimodal side whose modes are its CPU classes: not noise.
    ModesAreClasses {
        side: SideName,
        medians: Vec<(String, f64)>,
    },
    /// The runs ran with different placements (one CPU, two CPUs, moving): this row
    /// mixes them. `rows_follow` when a placement has runs on both sides, so rows per
    /// placement follow; otherwise the sides ran apart and the row compares two
    /// populations.
    PlacementMix {
        base: Vec<PlacementRuns>,
        new: Vec<PlacementRuns>,
        rows_follow: bool,
    },
    /// A side whose runs fall into placement groups that do not overlap: two
    /// populations, not noise.
    ModesArePlacements {
        side: SideName,
        groups: Vec<PlacementRuns>,
    },
    /// The row alone claimed `row_verdict`, but the claim does not survive
    /// Benjamini-Hochberg across the report's rows: the verdict says so.
    NotSignificantAfterBh {
        rows: usize,
        q: f64,
        row_verdict: Verdict,
    },
    /// How many samples a pooled row pooled, and from how many runs.
    Pooled {
        samples_a: u64,
        samples_b: u64,
        runs_a: usize,
        runs_b: usize,
    },
    /// One unit a side at `level` and no calibration: no claim.
    NoReplication { level: Level },
    /// A one-unit side borrowed the spread of a unit.
    BorrowedNoise {
        level: Level,
        source: NoiseSource,
        unit_cv_pct: f64,
        df: f64,
    },
    /// The row's delta was raised to what this machine resolves with these units.
    DeltaRaised {
        delta_pct: f64,
        level: Level,
        units: usize,
    },
    /// Summary-based: no outlier, drift or shape diagnostics possible.
    SummaryOnly,
    /// A remark of the statistics engine.
    Engine { text: String },
}

/// Why some records were not compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum NotCompared {
    /// Records of a workload whose variants differ between the sides.
    VariantsDiffer {
        workload: String,
        base: String,
        new: String,
    },
    /// Records of a workload whose parameters differ: (name, base, new) per parameter.
    ParamsDiffer {
        workload: String,
        differences: Vec<(String, String, String)>,
    },
    /// Records on one side only.
    OnlyIn {
        side: SideName,
        workload: String,
        variant: String,
        params: String,
    },
}

/// An environment key whose value differs between the sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvDifference {
    pub key: String,
    pub base: String,
    pub new: String,
}

/// The kernel configs of the two sides, compared: the newest session of each side
/// that has one. Kernels that differ in more than the patch under test differ here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum ConfigDifferences {
    /// Both configs are known.
    Compared(ConfigComparison),
    /// These sides have no session whose kernel config is known (run before kbench
    /// kept configs, imported from another tool's output, or a kernel with neither
    /// /proc/config.gz nor /boot/config-RELEASE): nothing compared.
    Unknown { sides: Vec<SideName> },
}

impl Default for ConfigDifferences {
    /// A report of a kbench before configs were kept: neither side's is known.
    fn default() -> Self {
        ConfigDifferences::Unknown {
            sides: vec![SideName::Base, SideName::New],
        }
    }
}

/// Two kernel configs compared option by option; an option that is `# ... is not
/// set`, `=n` or absent is `n` in both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigComparison {
    /// Both sides ran one config, byte for byte (after normalizing line ends); two
    /// texts can also set the same options and differ in comments or order.
    #[serde(default)]
    pub same_text: bool,
    /// The sha256 of each config as stored (equal hashes: the same config).
    pub base_hash: String,
    pub new_hash: String,
    /// Options each config sets (to anything but `n`).
    pub base_options_set: usize,
    pub new_options_set: usize,
    /// Options both set, to different values (`y` and `m`, `250` and `1000`).
    pub changed: usize,
    /// Options set in base only (`n` in new), and in new only.
    pub only_base: usize,
    pub only_new: usize,
    /// Every option that differs: the changed ones first, then those set on one side
    /// only, each in name order.
    pub differences: Vec<kbench_sys::kconfig::ConfigDifference>,
}

/// A finding about a whole side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ReportNote {
    /// Every run of the side failed.
    AllRunsFailed {
        side: SideName,
        attempted: usize,
        first_error: Option<String>,
    },
    /// The side's own sessions differ in these environment keys.
    SessionsDiffer { side: SideName, keys: Vec<String> },
    /// The side ran in one boot only.
    OneBoot { side: SideName },
    /// The labels share no workload with the same parameters.
    NothingToCompare,
    /// Both labels are counted boots (`--clock instructions`): their time figures are
    /// instructions executed.
    Counted,
}

/// Primary verdicts counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    pub regression: usize,
    pub improvement: usize,
    pub equivalent: usize,
    pub changed: usize,
    pub inconclusive: usize,
    pub insufficient: usize,
}

impl Tally {
    pub fn add(&mut self, verdict: Verdict) {
        let slot = match verdict {
            Verdict::Regression => &mut self.regression,
            Verdict::Improvement => &mut self.improvement,
            Verdict::Equivalent => &mut self.equivalent,
            Verdict::Changed => &mut self.changed,
            Verdict::Inconclusive => &mut self.inconclusive,
            Verdict::Insufficient => &mut self.insufficient,
        };
        *slot += 1;
    }
}

/// What one micro result predicts for one real workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// The micro row: workload, parameters and variant, as `compare` shows them.
    pub micro_workload: String,
    pub micro_params: String,
    pub micro_shift_pct: f64,
    pub event: Event,
    /// The change per event the micro result implies, with its interval, in ns.
    pub ns_per_event: f64,
    pub ns_per_event_low: Option<f64>,
    pub ns_per_event_high: Option<f64>,
    /// The real workload's events per op (base side's median).
    pub real_events_per_op: f64,
    /// The predicted change of the real workload's primary metric, with its interval.
    pub predicted_pct: f64,
    pub predicted_low_pct: Option<f64>,
    pub predicted_high_pct: Option<f64>,
}

/// One real workload: its observed change and the largest prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CarriedChange {
    pub workload: String,
    pub params: String,
    pub variant: String,
    pub metric: String,
    pub time_per_op_ns: f64,
    pub observed_pct: Option<f64>,
    pub observed_low_pct: Option<f64>,
    pub observed_high_pct: Option<f64>,
    /// The micro result whose prediction is the largest in size; `None` when no micro
    /// row of the comparison has an event the real workload takes.
    pub prediction: Option<Prediction>,
}

impl CompareReport {
    /// The label of a side.
    pub fn label(&self, side: SideName) -> &str {
        match side {
            SideName::Base => &self.base.label,
            SideName::New => &self.new.label,
        }
    }
}
