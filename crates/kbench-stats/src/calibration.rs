//! Seeded Monte-Carlo calibration of the verdicts (`docs/statistics.md`, "Validation"): A/A
//! false-claim rates under several noise models and power for an injected shift. Pure and
//! deterministic given the seed; used by `tests/calibration.rs` and
//! `examples/calibration.rs`.

use crate::compare::{compare, CompareOptions, Verdict};
use crate::nested::Observation;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Noise models of the simulation (the cells listed in `docs/statistics.md`, "Validation").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseModel {
    /// Multiplicative lognormal noise, 2 % SD of log.
    Lognormal,
    /// Lognormal 2 % plus 5 % of runs 30 % slower.
    HeavyTail,
    /// 30 % of runs in a mode 6 % slower, 1 % spread each.
    Bimodal,
    /// n boots per side × 5 runs, 1 % boot offset + 1 % within-boot noise, compared with
    /// `compare_nested` (boots as units).
    PerBootOffset,
    /// Same data as `PerBootOffset` but all runs pooled with `compare` (the design error the
    /// per-boot analysis avoids; reference row, not asserted).
    PerBootOffsetPooled,
    /// +4 % linear drift over the session, 1.5 % noise, A and B interleaved ABAB.
    InterleavedDrift,
    /// The same drift with A then B run sequentially (reference row, not asserted).
    SequentialDrift,
}

impl NoiseModel {
    pub fn name(self) -> &'static str {
        match self {
            NoiseModel::Lognormal => "lognormal 2%",
            NoiseModel::HeavyTail => "heavy-tail",
            NoiseModel::Bimodal => "bimodal",
            NoiseModel::PerBootOffset => "per-boot offset",
            NoiseModel::PerBootOffsetPooled => "per-boot, pooled*",
            NoiseModel::InterleavedDrift => "drift, ABAB",
            NoiseModel::SequentialDrift => "drift, AABB*",
        }
    }
}

/// Runs per boot in the per-boot models.
pub const RUNS_PER_BOOT: usize = 5;

/// One cell of the calibration table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRow {
    pub model: NoiseModel,
    /// Values (or boots, for per-boot models) per side.
    pub n: usize,
    /// Injected true shift of B, percent.
    pub shift_pct: f64,
    pub trials: usize,
    /// Fraction of verdicts regression / improvement / changed.
    pub claims_rate: f64,
    /// Fraction of claims in the injected direction (B larger): the power for shift > 0.
    pub claims_up_rate: f64,
    pub equivalent_rate: f64,
    pub inconclusive_rate: f64,
    pub insufficient_rate: f64,
    /// Fraction of trials where either side was flagged bimodal / drifting / shape change.
    pub bimodal_flag_rate: f64,
    pub drift_flag_rate: f64,
    pub shape_flag_rate: f64,
    /// Fraction where removing outliers would change the verdict.
    pub outlier_verdict_change_rate: f64,
    /// α + 2·SE(binomial at α): the acceptance limit for A/A claims.
    pub limit: f64,
}

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationConfig {
    pub trials: usize,
    pub seed: u64,
    pub sizes: Vec<usize>,
    pub options: CompareOptions,
    /// Include the reference rows that show design errors (pooled boots, sequential order).
    pub include_reference_rows: bool,
}

impl Default for CalibrationConfig {
    fn default() -> Self {
        CalibrationConfig {
            trials: 2000,
            seed: 20_260_801,
            sizes: vec![5, 10, 20],
            options: CompareOptions::default(),
            include_reference_rows: false,
        }
    }
}

pub use crate::special::normal;

fn lognormal(rng: &mut ChaCha8Rng, sd_log: f64) -> f64 {
    (sd_log * normal(rng)).exp()
}

fn simple_side(rng: &mut ChaCha8Rng, model: NoiseModel, n: usize, factor: f64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let base = match model {
                NoiseModel::HeavyTail => {
                    let v = lognormal(rng, 0.02);
                    if rng.random::<f64>() < 0.05 {
                        v * 1.30
                    } else {
                        v
                    }
                }
                NoiseModel::Bimodal => {
                    let v = lognormal(rng, 0.01);
                    if rng.random::<f64>() < 0.30 {
                        v * 1.06
                    } else {
                        v
                    }
                }
                _ => lognormal(rng, 0.02),
            };
            base * factor
        })
        .collect()
}

fn drift_sides(
    rng: &mut ChaCha8Rng,
    n: usize,
    factor: f64,
    interleaved: bool,
) -> (Vec<f64>, Vec<f64>) {
    let total = 2 * n;
    let at = |position: usize| 1.0 + 0.04 * position as f64 / (total - 1) as f64;
    let (pos_a, pos_b): (Vec<usize>, Vec<usize>) = if interleaved {
        (
            (0..n).map(|i| 2 * i).collect(),
            (0..n).map(|i| 2 * i + 1).collect(),
        )
    } else {
        ((0..n).collect(), (n..total).collect())
    };
    let a = pos_a
        .iter()
        .map(|&p| lognormal(rng, 0.015) * at(p))
        .collect();
    let b = pos_b
        .iter()
        .map(|&p| lognormal(rng, 0.015) * at(p) * factor)
        .collect();
    (a, b)
}

fn boot_side(rng: &mut ChaCha8Rng, boots: usize, factor: f64, tag: &str) -> Vec<Observation> {
    let mut samples = Vec::with_capacity(boots * RUNS_PER_BOOT);
    for boot in 0..boots {
        let offset = lognormal(rng, 0.01);
        for run in 0..RUNS_PER_BOOT {
            samples.push(Observation {
                value: offset * lognormal(rng, 0.01) * factor,
                boot: format!("{tag}{boot}").into(),
                session: format!("{tag}{boot}").into(),
                order: (boot * RUNS_PER_BOOT + run) as u32,
            });
        }
    }
    samples
}

/// Counts of verdicts and flags over the trials of one cell.
#[derive(Default)]
struct Tally {
    claims: usize,
    claims_up: usize,
    equivalent: usize,
    inconclusive: usize,
    insufficient: usize,
    bimodal: usize,
    drifting: usize,
    shape: usize,
    outlier_changes: usize,
}

impl Tally {
    fn add(&mut self, result: &crate::compare::Comparison) {
        let v = result.verdict;
        self.claims += v.claims_difference() as usize;
        self.claims_up += (v.claims_difference() && result.shift_pct.unwrap_or(0.0) > 0.0) as usize;
        self.equivalent += (v == Verdict::Equivalent) as usize;
        self.inconclusive += (v == Verdict::Inconclusive) as usize;
        self.insufficient += (v == Verdict::Insufficient) as usize;
        if let Some(d) = &result.diagnostics {
            self.bimodal += (d.a.bimodality.bimodal || d.b.bimodality.bimodal) as usize;
            self.drifting += (d.a.drifting || d.b.drifting) as usize;
            self.shape += d.shape.as_ref().is_some_and(|s| s.shape_changed) as usize;
            self.outlier_changes += d.verdict_without_outliers.is_some() as usize;
        }
    }
}

fn simulate_one(
    rng: &mut ChaCha8Rng,
    model: NoiseModel,
    n: usize,
    factor: f64,
    options: &CompareOptions,
) -> crate::compare::Comparison {
    match model {
        NoiseModel::PerBootOffset | NoiseModel::PerBootOffsetPooled => {
            let (a, b) = (boot_side(rng, n, 1.0, "a"), boot_side(rng, n, factor, "b"));
            if model == NoiseModel::PerBootOffset {
                let opts = crate::nested::NestedOptions {
                    compare: *options,
                    calibration: None,
                };
                crate::nested::compare_nested(&a, &b, &opts)
            } else {
                let values = |s: &[Observation]| s.iter().map(|x| x.value).collect::<Vec<_>>();
                compare(&values(&a), &values(&b), options)
            }
        }
        NoiseModel::InterleavedDrift | NoiseModel::SequentialDrift => {
            let (a, b) = drift_sides(rng, n, factor, model == NoiseModel::InterleavedDrift);
            compare(&a, &b, options)
        }
        _ => {
            let a = simple_side(rng, model, n, 1.0);
            let b = simple_side(rng, model, n, factor);
            compare(&a, &b, options)
        }
    }
}

/// Runs one cell: `trials` seeded comparisons of model noise with B multiplied by
/// (1 + shift_pct/100).
pub fn run_cell(
    model: NoiseModel,
    n: usize,
    shift_pct: f64,
    trials: usize,
    seed: u64,
    options: &CompareOptions,
) -> CalibrationRow {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let factor = 1.0 + shift_pct / 100.0;
    let mut tally = Tally::default();
    for _ in 0..trials {
        tally.add(&simulate_one(&mut rng, model, n, factor, options));
    }
    let rate = |c: usize| c as f64 / trials.max(1) as f64;
    let alpha = options.alpha;
    CalibrationRow {
        model,
        n,
        shift_pct,
        trials,
        claims_rate: rate(tally.claims),
        claims_up_rate: rate(tally.claims_up),
        equivalent_rate: rate(tally.equivalent),
        inconclusive_rate: rate(tally.inconclusive),
        insufficient_rate: rate(tally.insufficient),
        bimodal_flag_rate: rate(tally.bimodal),
        drift_flag_rate: rate(tally.drifting),
        shape_flag_rate: rate(tally.shape),
        outlier_verdict_change_rate: rate(tally.outlier_changes),
        limit: alpha + 2.0 * (alpha * (1.0 - alpha) / trials.max(1) as f64).sqrt(),
    }
}

/// The A/A models whose false-claim rate must stay within α + 2·SE.
pub const ASSERTED_MODELS: [NoiseModel; 5] = [
    NoiseModel::Lognormal,
    NoiseModel::HeavyTail,
    NoiseModel::Bimodal,
    NoiseModel::PerBootOffset,
    NoiseModel::InterleavedDrift,
];

/// The power cell required by issue 3: +2 % shift, n = 20, lognormal 2 % noise.
pub const POWER_CELL: (NoiseModel, usize, f64) = (NoiseModel::Lognormal, 20, 2.0);

/// Runs the whole table: every A/A model at every size, the power cell, and optionally the
/// reference rows. Each cell has its own seed derived from the config seed, so cells are
/// independent of which others run.
pub fn run_calibration(config: &CalibrationConfig) -> Vec<CalibrationRow> {
    let mut models: Vec<NoiseModel> = ASSERTED_MODELS.to_vec();
    if config.include_reference_rows {
        models.extend([NoiseModel::PerBootOffsetPooled, NoiseModel::SequentialDrift]);
    }
    let mut rows = Vec::new();
    let mut cell_seed = config.seed;
    for model in models {
        for &n in &config.sizes {
            cell_seed = cell_seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            rows.push(run_cell(
                model,
                n,
                0.0,
                config.trials,
                cell_seed,
                &config.options,
            ));
        }
    }
    let (model, n, shift) = POWER_CELL;
    rows.push(run_cell(
        model,
        n,
        shift,
        config.trials,
        config.seed ^ 0x5eed,
        &config.options,
    ));
    rows
}

/// The table as text (≤ 80 columns).
pub fn format_table(rows: &[CalibrationRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<18} {:>3} {:>5} {:>6} {:>6} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5}",
        "noise",
        "n",
        "shift",
        "claims",
        "limit",
        "equiv",
        "incon",
        "bimod",
        "drift",
        "shape",
        "outl"
    );
    for r in rows {
        let _ =
            writeln!(
            out,
            "{:<18} {:>3} {:>4}% {:>6.3} {:>6.3} {:>5.2} {:>5.2} {:>5.2} {:>5.2} {:>5.2} {:>5.2}",
            r.model.name(),
            r.n,
            r.shift_pct,
            if r.shift_pct > 0.0 { r.claims_up_rate } else { r.claims_rate },
            r.limit,
            r.equivalent_rate,
            r.inconclusive_rate,
            r.bimodal_flag_rate,
            r.drift_flag_rate,
            r.shape_flag_rate,
            r.outlier_verdict_change_rate,
        );
    }
    out
}

/// A cell of the replication calibration: sessions with their own offsets, compared
/// with [`crate::nested::compare_nested`] as `kbench compare` compares two labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestedCell {
    /// SD of a session's offset, percent of the median.
    pub session_sd_pct: f64,
    /// Run-to-run CV within a session, percent.
    pub within_cv_pct: f64,
    pub sessions_per_side: usize,
    /// Sessions of the new side when it has other than `sessions_per_side` (the
    /// one-against-many design, where a one-session side borrows the other's spread).
    pub new_sessions: Option<usize>,
    pub runs_per_session: usize,
    /// With a calibration from five A/A sessions of the same machine.
    pub calibrated: bool,
    /// The per-run offset of the pooled-percentile cells (0 for run metrics).
    pub pooled: bool,
}

/// Counts of one nested cell at one injected shift.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestedRow {
    pub cell: NestedCell,
    pub shift_pct: f64,
    pub trials: usize,
    /// Regression / improvement / changed.
    pub claims_rate: f64,
    /// Claims in the injected direction.
    pub claims_up_rate: f64,
    pub equivalent_rate: f64,
    pub no_claim_rate: f64,
    pub limit: f64,
}

/// A/A calibration sessions per calibrated cell.
pub const CALIBRATION_SESSIONS: usize = 5;

fn nested_side(
    rng: &mut ChaCha8Rng,
    cell: &NestedCell,
    sessions: usize,
    factor: f64,
    tag: &str,
    first_order: u32,
) -> Vec<crate::nested::Observation> {
    let mut out = Vec::new();
    for s in 0..sessions {
        let offset = lognormal(rng, cell.session_sd_pct / 100.0);
        for r in 0..cell.runs_per_session {
            out.push(crate::nested::Observation {
                value: offset * lognormal(rng, cell.within_cv_pct / 100.0) * factor,
                boot: "boot".into(),
                session: format!("{tag}{s}").into(),
                order: first_order + (s * cell.runs_per_session + r) as u32,
            });
        }
    }
    out
}

/// Latency histograms of a side: every run has its own offset (`within_cv_pct`) on top
/// of its session's, and 300 lognormal samples rounded to three significant digits,
/// as kbench's HDR histograms keep them.
fn pooled_side(
    rng: &mut ChaCha8Rng,
    cell: &NestedCell,
    factor: f64,
    tag: &str,
    interleave: u32,
) -> Vec<crate::pooled::RunHistogram> {
    let mut out = Vec::new();
    for s in 0..cell.sessions_per_side {
        let offset = lognormal(rng, cell.session_sd_pct / 100.0);
        for r in 0..cell.runs_per_session {
            let run_offset = offset * lognormal(rng, cell.within_cv_pct / 100.0) * factor;
            let mut values: Vec<f64> = (0..300)
                .map(|_| {
                    let v = 20_000.0 * run_offset * lognormal(rng, 0.3);
                    let digits = 10f64.powi(v.log10().floor() as i32 - 2);
                    (v / digits).ceil() * digits
                })
                .collect();
            values.sort_by(f64::total_cmp);
            let mut buckets: Vec<(f64, u64)> = Vec::new();
            for v in values {
                match buckets.last_mut() {
                    Some(last) if last.0 == v => last.1 += 1,
                    _ => buckets.push((v, 1)),
                }
            }
            out.push(crate::pooled::RunHistogram {
                boot: "boot".into(),
                session: format!("{tag}{s}"),
                order: 2 * (s * cell.runs_per_session + r) as u32 + interleave,
                buckets,
            });
        }
    }
    out
}

fn nested_trial(
    rng: &mut ChaCha8Rng,
    cell: &NestedCell,
    factor: f64,
    options: &CompareOptions,
) -> crate::compare::Comparison {
    let calibration_cell = NestedCell {
        sessions_per_side: CALIBRATION_SESSIONS,
        ..cell.clone()
    };
    if cell.pooled {
        // Interleaved sides share a session id: one `kbench ab`.
        let interleaved = cell.sessions_per_side == 1 && !cell.calibrated;
        let (ta, tb) = if interleaved { ("s", "s") } else { ("a", "b") };
        let a = pooled_side(rng, cell, 1.0, ta, 0);
        let b = pooled_side(rng, cell, factor, tb, 1);
        let calibration = cell.calibrated.then(|| {
            let runs = pooled_side(rng, &calibration_cell, 1.0, "cal", 0);
            let units = crate::pooled::session_estimates(&runs, 0.5, 100, rng.random());
            crate::nested::components_from_units(&units)
        });
        let opts = crate::pooled::PooledOptions {
            compare: *options,
            resamples: 400,
            seed: rng.random(),
            calibration,
        };
        return crate::pooled::compare_pooled_quantiles(&a, &b, &[0.5], &opts).remove(0);
    }
    let new_sessions = cell.new_sessions.unwrap_or(cell.sessions_per_side);
    let a = nested_side(rng, cell, cell.sessions_per_side, 1.0, "a", 0);
    let b = nested_side(rng, cell, new_sessions, factor, "b", 0);
    let calibration = cell.calibrated.then(|| {
        let sessions = calibration_cell.sessions_per_side;
        crate::nested::noise_components(&nested_side(
            rng,
            &calibration_cell,
            sessions,
            1.0,
            "cal",
            0,
        ))
    });
    crate::nested::compare_nested(
        &a,
        &b,
        &crate::nested::NestedOptions {
            compare: *options,
            calibration,
        },
    )
}

/// Runs one nested cell at one shift.
pub fn run_nested_cell(
    cell: &NestedCell,
    shift_pct: f64,
    trials: usize,
    seed: u64,
    options: &CompareOptions,
) -> NestedRow {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let factor = 1.0 + shift_pct / 100.0;
    let (mut claims, mut up, mut equivalent, mut no_claim) = (0, 0, 0, 0);
    for _ in 0..trials {
        let c = nested_trial(&mut rng, cell, factor, options);
        let claim = c.verdict.claims_difference();
        claims += claim as usize;
        up += (claim && c.shift_pct.unwrap_or(0.0) > 0.0) as usize;
        equivalent += (c.verdict == Verdict::Equivalent) as usize;
        no_claim += c.nested.as_ref().is_some_and(|n| n.no_claim.is_some()) as usize;
    }
    let rate = |c: usize| c as f64 / trials.max(1) as f64;
    let alpha = options.alpha;
    NestedRow {
        cell: cell.clone(),
        shift_pct,
        trials,
        claims_rate: rate(claims),
        claims_up_rate: rate(up),
        equivalent_rate: rate(equivalent),
        no_claim_rate: rate(no_claim),
        limit: alpha + 2.0 * (alpha * (1.0 - alpha) / trials.max(1) as f64).sqrt(),
    }
}

/// The cells issue 9 asks for: session SD 0.5, 1 and 3 %, within-session CV 1, 5 and
/// 20 %, one and three sessions a side, with and without a calibration; then
/// pooled-percentile cells whose runs carry their own offsets (interleaved, and one
/// session a side with a calibration).
pub fn nested_cells() -> Vec<NestedCell> {
    let mut cells = Vec::new();
    for session_sd_pct in [0.5, 1.0, 3.0] {
        for within_cv_pct in [1.0, 5.0, 20.0] {
            for sessions_per_side in [1, 3] {
                for calibrated in [false, true] {
                    cells.push(NestedCell {
                        session_sd_pct,
                        within_cv_pct,
                        sessions_per_side,
                        new_sessions: None,
                        runs_per_session: 10,
                        calibrated,
                        pooled: false,
                    });
                }
            }
        }
    }
    // One session against three, no calibration: the one borrows the three's spread.
    for (session_sd_pct, new_sessions) in [(1.0, 3), (3.0, 3), (1.0, 5)] {
        cells.push(NestedCell {
            session_sd_pct,
            within_cv_pct: 5.0,
            sessions_per_side: 1,
            new_sessions: Some(new_sessions),
            runs_per_session: 10,
            calibrated: false,
            pooled: false,
        });
    }
    for (session_sd_pct, runs_per_session, calibrated) in [
        (0.0, 10, false),
        (0.0, 5, false),
        (1.0, 10, true),
        (3.0, 10, true),
        (1.0, 5, true),
    ] {
        cells.push(NestedCell {
            session_sd_pct,
            within_cv_pct: 3.0,
            sessions_per_side: 1,
            new_sessions: None,
            runs_per_session,
            calibrated,
            pooled: true,
        });
    }
    cells
}

/// Every nested cell at shifts 0 (A/A), +2 % and +5 %, each with its own seed.
pub fn run_nested_calibration(
    trials: usize,
    seed: u64,
    options: &CompareOptions,
) -> Vec<NestedRow> {
    let mut rows = Vec::new();
    for (i, cell) in nested_cells().iter().enumerate() {
        for (j, shift) in [0.0, 2.0, 5.0].into_iter().enumerate() {
            let cell_seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(((i * 3 + j) as u64).wrapping_mul(1_442_695_040_888_963_407));
            let cell_trials = if cell.pooled { trials / 4 } else { trials };
            rows.push(run_nested_cell(
                cell,
                shift,
                cell_trials.max(50),
                cell_seed,
                options,
            ));
        }
    }
    rows
}

/// The nested table as text (≤ 80 columns): one line per cell, A/A claims against
/// the limit, then the power at +2 % and +5 %.
pub fn format_nested_table(rows: &[NestedRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<7} {:>5} {:>5} {:>4} {:>4} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "metric",
        "sess%",
        "cv%",
        "sess",
        "runs",
        "cal",
        "claims",
        "limit",
        "noclm",
        "pow+2",
        "pow+5"
    );
    for chunk in rows.chunks(3) {
        let [aa, two, five] = chunk else { continue };
        let c = &aa.cell;
        let _ = writeln!(
            out,
            "{:<7} {:>5} {:>5} {:>4} {:>4} {:>4} {:>6.3} {:>6.3} {:>6.2} {:>6.2} {:>6.2}",
            if c.pooled { "pooled" } else { "run" },
            c.session_sd_pct,
            c.within_cv_pct,
            match c.new_sessions {
                Some(n) => format!("{}/{n}", c.sessions_per_side),
                None => c.sessions_per_side.to_string(),
            },
            c.runs_per_session,
            if c.calibrated { "yes" } else { "no" },
            aa.claims_rate,
            aa.limit,
            aa.no_claim_rate,
            two.claims_up_rate,
            five.claims_up_rate,
        );
    }
    out
}
