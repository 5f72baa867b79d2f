//! From stored runs of two labels to a [`CompareReport`]: group, never pool what
//! differs, compare at the level of replication the runs have, and say everything
//! else.
use crate::calibration::{self, Calibration, ComponentKey, Fingerprint, POOLED_QUANTILES};
use crate::group::{self, Key, RunKey, Side};
use crate::label::LabelData;
use crate::model::*;
use crate::AnalysisError;
use kbench_record::Role;
use kbench_stats::{
    CompareOptions, Comparison, Design, Level, NestedOptions, NoClaim, PooledOptions, SummaryStats,
    Verdict,
};
use kbench_store::{RunRow, SessionRow, Store, SummaryRow};
use kbench_sys::kconfig::{self, KernelConfig};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// Options of a comparison report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReportOptions {
    /// `--delta`: when `None`, each row's delta is the larger of 1 % and what this
    /// machine resolves with the row's units (from a calibration).
    pub delta_pct: Option<f64>,
    pub alpha: f64,
    /// Seed of the pooled-percentile bootstraps.
    pub seed: u64,
    /// Use a matching calibration of this machine.
    pub use_calibration: bool,
    /// The time the report is made, for the calibration's age.
    pub now_unix_ns: u64,
}

/// The two-sided error rate of every interval (confidence 1 − α).
pub const ALPHA: f64 = 0.05;

/// The key [`ReportNote::SessionsDiffer`] names when a side's sessions ran on
/// kernels of different configs.
pub const SESSIONS_DIFFER_KERNEL_CONFIG: &str = "kernel_config";

/// The default floor of delta, percent.
pub const DEFAULT_DELTA_PCT: f64 = 1.0;

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            delta_pct: None,
            alpha: ALPHA,
            seed: 20_261_201,
            use_calibration: true,
            now_unix_ns: 0,
        }
    }
}

/// Which machines' runs a comparison uses. Runs of different machines are never
/// pooled unless asked ([`Machines::Across`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Machines {
    /// The one machine both labels ran on; several such machines are an error that
    /// names them. Sessions without an environment belong to no known machine and
    /// count with whichever there is.
    #[default]
    Same,
    /// This machine's runs only (`--machine`).
    Only(String),
    /// Every machine's runs, each machine one unit of replication (`--across-machines`).
    Across,
}

/// The distinct known machines of a side's sessions, sorted.
pub fn machines_of(sessions: &[SessionRow]) -> Vec<String> {
    let known: BTreeSet<&String> = sessions.iter().filter_map(|s| s.machine.as_ref()).collect();
    known.into_iter().cloned().collect()
}

/// The machine of `known` that `--machine asked` names: the machine shown as
/// `asked`; or, for `name [id]` (what a session of this host knows of itself), the
/// bare `name` a store shows while one id is seen under it; or the one machine
/// shown as `... [asked]`, by its id alone. `None` when none does.
pub fn resolve_machine<'a>(
    known: impl IntoIterator<Item = &'a String> + Clone,
    asked: &str,
) -> Option<String> {
    if known.clone().into_iter().any(|m| m == asked) {
        return Some(asked.to_string());
    }
    if let Some((name, _)) = kbench_store::split_machine_key(asked) {
        if known.clone().into_iter().any(|m| m == name) {
            return Some(name.to_string());
        }
    }
    let mut by_id = known
        .into_iter()
        .filter(|m| kbench_store::split_machine_key(m).is_some_and(|(_, id)| id == asked));
    match (by_id.next(), by_id.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    }
}

/// Which machines of the two sides `choice` asks for, to narrow both to with
/// [`narrowed`]; `None` when the labels hold no two machines' runs.
fn select_machines(
    a: &LabelData,
    b: &LabelData,
    choice: &Machines,
) -> Result<Option<MachinesCompared>, AnalysisError> {
    let (in_a, in_b) = (machines_of(&a.sessions), machines_of(&b.sessions));
    let all: BTreeSet<&String> = in_a.iter().chain(&in_b).collect();
    let resolved;
    let choice = match choice {
        Machines::Only(asked) => {
            resolved = Machines::Only(
                resolve_machine(all.iter().copied(), asked).unwrap_or_else(|| asked.clone()),
            );
            &resolved
        }
        other => other,
    };
    let one = |machine: &str| {
        let left_out = |side: &[String]| side.iter().filter(|m| *m != machine).cloned().collect();
        MachinesCompared::One {
            machine: machine.to_string(),
            base_left_out: left_out(&in_a),
            new_left_out: left_out(&in_b),
        }
    };
    if let Machines::Only(machine) = choice {
        for (label_side, machines) in [("BASE", &in_a), ("NEW", &in_b)] {
            if !machines.contains(machine) {
                return Err(AnalysisError::Usage(format!(
                    "{label_side} has no runs on machine '{machine}' (it ran on: {})",
                    listed(machines)
                )));
            }
        }
    }
    // The labels hold no two machines' runs: nothing to narrow, or to say.
    if all.len() <= 1 {
        return Ok(None);
    }
    match choice {
        Machines::Only(machine) => Ok(Some(one(machine))),
        Machines::Across => Ok(Some(MachinesCompared::Across {
            base: in_a.clone(),
            new: in_b.clone(),
        })),
        Machines::Same => {
            let common: Vec<&String> = in_a.iter().filter(|m| in_b.contains(m)).collect();
            match common[..] {
                [machine] => Ok(Some(one(machine))),
                _ => Err(AnalysisError::Usage(format!(
                    "the labels ran on more than one machine (BASE: {}; NEW: {}), whose runs \
                     are never pooled: name one with --machine NAME, or compare with \
                     --across-machines (machines as the units)",
                    listed(&in_a),
                    listed(&in_b)
                ))),
            }
        }
    }
}

/// A side's runs on the machines a comparison uses: the label itself when it holds
/// one machine's runs.
fn narrowed<'a>(data: &'a LabelData, machines: Option<&MachinesCompared>) -> Cow<'a, LabelData> {
    match machines {
        None => Cow::Borrowed(data),
        Some(MachinesCompared::One { machine, .. }) => Cow::Owned(data.of_machine(machine)),
        Some(MachinesCompared::Across { .. }) => Cow::Owned(data.machines_as_boots()),
    }
}

fn listed(machines: &[String]) -> String {
    if machines.is_empty() {
        "no known machine".into()
    } else {
        machines.join(", ")
    }
}

fn side_summary(label: &str, loaded: &LabelData) -> SideSummary {
    let sessions: BTreeSet<String> = loaded.sessions.iter().map(group::session_unit).collect();
    SideSummary {
        label: label.to_string(),
        runs: loaded.runs.iter().filter(|r| r.is_measured()).count(),
        sessions: sessions.len(),
        boots: boots(&loaded.sessions),
    }
}

/// Everything a row needs to know beyond its two sides.
struct Context<'a> {
    opts: ReportOptions,
    calibration: Option<&'a Calibration>,
    /// The clock both labels were measured with: δ's default, a series' unit.
    clock: kbench_record::Clock,
}

impl Context<'_> {
    fn compare_options(&self, higher_is_better: bool, delta_pct: f64) -> CompareOptions {
        CompareOptions {
            delta_pct,
            alpha: self.opts.alpha,
            higher_is_better,
        }
    }

    fn noise(&self, key: &ComponentKey) -> Option<kbench_stats::NoiseComponents> {
        self.calibration?.find(key).cloned()
    }

    /// δ's floor when `--delta` is not given: the default of the labels' clock.
    fn default_delta_pct(&self) -> f64 {
        crate::clock::default_delta_pct(self.clock)
    }

    /// `--delta`, or the default of the labels' clock.
    fn delta_or_default(&self) -> f64 {
        self.opts.delta_pct.unwrap_or(self.default_delta_pct())
    }

    /// The row's delta: `--delta`, or the larger of the clock's default (1 % timed)
    /// and what the calibration lets this machine resolve with `units` of `level` a
    /// side.
    fn delta_for(
        &self,
        noise: Option<&kbench_stats::NoiseComponents>,
        design: Design,
        units: usize,
    ) -> (f64, Option<Diagnostic>) {
        if let Some(d) = self.opts.delta_pct {
            return (d, None);
        }
        let level = design.level();
        let resolvable = noise.and_then(|n| {
            if level == Level::Run {
                return None;
            }
            kbench_stats::resolvable_change_pct(n, level, units, self.opts.alpha)
        });
        match resolvable {
            Some(r) if r > self.default_delta_pct() => (
                r,
                Some(Diagnostic::DeltaRaised {
                    delta_pct: r,
                    level,
                    units,
                }),
            ),
            _ => (self.default_delta_pct(), None),
        }
    }
}

/// Compares `new` against `base`, on the one machine they share.
pub fn compare_labels(
    store: &Store,
    base: &str,
    new: &str,
    opts: ReportOptions,
) -> Result<CompareReport, AnalysisError> {
    compare_labels_on(store, base, new, opts, &Machines::Same)
}

/// Compares `new` against `base` on the machines `machines` chooses.
pub fn compare_labels_on(
    store: &Store,
    base: &str,
    new: &str,
    opts: ReportOptions,
    machines: &Machines,
) -> Result<CompareReport, AnalysisError> {
    refuse_same(base, new)?;
    for label in [base, new] {
        check_label(store, label)?;
    }
    let (a, b) = (LabelData::load(store, base)?, LabelData::load(store, new)?);
    compare_loaded(store, &a, &b, opts, machines)
}

/// Each of `news` compared against `base`, each label read once, in order: the
/// comparisons with the labels they were drawn from (for the plots).
pub fn compare_each(
    store: &Store,
    base: &str,
    news: &[String],
    opts: ReportOptions,
    machines: &Machines,
) -> Result<Comparisons, AnalysisError> {
    let mut base_data: Option<LabelData> = None;
    let (mut loaded, mut reports) = (Vec::new(), Vec::new());
    for new in news {
        refuse_same(base, new)?;
        for label in [base, new.as_str()] {
            check_label(store, label)?;
        }
        let (a, b) = match base_data.take() {
            Some(a) => (a, LabelData::load(store, new)?),
            None => LabelData::load_two(store, base, new)?,
        };
        let report = compare_loaded(store, &a, &b, opts, machines)?;
        base_data = Some(a);
        loaded.push(b);
        reports.push(report);
    }
    Ok(Comparisons {
        base: base_data.unwrap_or_default(),
        news: loaded,
        reports,
    })
}

/// The comparisons of NEW labels against one BASE, with the labels as read.
#[derive(Debug, Clone, Default)]
pub struct Comparisons {
    pub base: LabelData,
    /// The NEW labels, in the order asked.
    pub news: Vec<LabelData>,
    /// The comparison of each NEW label against BASE, in the same order.
    pub reports: Vec<CompareReport>,
}

/// NEW labels are columns: one named twice is a mistake, refused before anything is read.
pub fn check_distinct(news: &[String]) -> Result<(), AnalysisError> {
    for (i, label) in news.iter().enumerate() {
        if news[..i].contains(label) {
            return Err(AnalysisError::Usage(format!("'{label}' is named twice")));
        }
    }
    Ok(())
}

fn refuse_same(base: &str, new: &str) -> Result<(), AnalysisError> {
    if base == new {
        return Err(AnalysisError::Usage(format!(
            "BASE and NEW are both '{base}': name two labels"
        )));
    }
    Ok(())
}

/// A usage error unless `store` holds runs labelled `label`.
pub fn check_label(store: &Store, label: &str) -> Result<(), AnalysisError> {
    if !store.has_label(label)? {
        return Err(AnalysisError::Usage(format!(
            "no runs labelled '{label}' in {}",
            store.path().display()
        )));
    }
    Ok(())
}

/// Compares the loaded label `new` against `base` on the machines `machines` chooses;
/// the store gives only this machine's calibration and the kernel configs.
pub fn compare_loaded(
    store: &Store,
    base_data: &LabelData,
    new_data: &LabelData,
    opts: ReportOptions,
    machines: &Machines,
) -> Result<CompareReport, AnalysisError> {
    let (base, new) = (base_data.label.as_str(), new_data.label.as_str());
    refuse_same(base, new)?;
    let clock = crate::clock::shared_clock((base, &base_data.sessions), (new, &new_data.sessions))?;
    let machines = select_machines(base_data, new_data, machines)?;
    let (a, b) = (
        narrowed(base_data, machines.as_ref()),
        narrowed(new_data, machines.as_ref()),
    );
    // A calibration describes one machine: both sides must have run on it.
    let machine = match (
        calibration::fingerprint_of(&a.sessions),
        calibration::fingerprint_of(&b.sessions),
    ) {
        (Some(fa), Some(fb)) if fa.same_machine(&fb) => Some(fb),
        _ => None,
    };
    // Nor is one machine's noise the noise of machines as units.
    let across = matches!(machines, Some(MachinesCompared::Across { .. }));
    let calibration = match (&machine, opts.use_calibration && !across) {
        (Some(m), true) => calibration::matching(store, m)?,
        _ => None,
    };
    let ctx = Context {
        opts,
        calibration: calibration.as_ref(),
        clock,
    };
    let (groups_b, groups_a) = crate::parallel::join(
        || group::group(&b.runs, &b.sessions),
        || group::group(&a.runs, &a.sessions),
    );
    let keys: Vec<(&Key, &Side, &Side)> = groups_a
        .iter()
        .filter_map(|(key, side_a)| Some((key, side_a, groups_b.get(key)?)))
        .collect();
    let mut rows: Vec<CompareRow> = crate::parallel::map_ordered(&keys, |(key, side_a, side_b)| {
        key_rows(key, side_a, side_b, &ctx, (&a, &b))
    })
    .into_iter()
    .flatten()
    .collect();
    rows.extend(compare_summaries(&a.summaries, &b.summaries, &ctx));
    rows.extend(pooled_percentile_rows(&a, &b, &ctx));
    // The headline figure first, then its mechanism rows.
    rows.sort_by_key(|r| {
        (
            r.workload.clone(),
            r.params.clone(),
            !r.is_primary(),
            matches!(r.kind, RowKind::PooledPercentile { .. }),
            r.metric.clone(),
        )
    });
    adjust_for_multiple_rows(&mut rows, opts.alpha);
    let mut tally = Tally::default();
    for row in rows.iter().filter(|r| r.is_primary() && !r.is_split()) {
        tally.add(row.verdict);
    }
    let not_compared = unmatched(&groups_a, &groups_b)
        .into_iter()
        .chain(unmatched_summaries(&a.summaries, &b.summaries))
        .collect();
    let mut notes = side_notes(SideName::Base, &a);
    notes.extend(side_notes(SideName::New, &b));
    if rows.is_empty() {
        notes.push(ReportNote::NothingToCompare);
    }
    if clock == kbench_record::Clock::Instructions {
        notes.push(ReportNote::Counted);
    }
    let calibration_used = calibration
        .as_ref()
        .map(|c| calibration_used(c, machine.as_ref(), &rows, &ctx));
    let carried = crate::carried::carried_over(&rows);
    Ok(CompareReport {
        base: side_summary(base, &a),
        new: side_summary(new, &b),
        delta: DeltaChoice {
            pct: ctx.delta_or_default(),
            explicit: opts.delta_pct.is_some(),
        },
        calibration: calibration_used,
        tally,
        rows,
        not_compared,
        environment_differences: environment_differences(&a.sessions, &b.sessions),
        config_differences: config_differences(store, &a.sessions, &b.sessions)?,
        notes,
        reproduce: reproduce(
            base,
            new,
            &a.sessions,
            &b.sessions,
            opts.delta_pct,
            machines.as_ref(),
        ),
        seed: opts.seed,
        machines,
        carried,
        clock,
    })
}

fn calibration_used(
    c: &Calibration,
    machine: Option<&Fingerprint>,
    rows: &[CompareRow],
    ctx: &Context,
) -> CalibrationUsed {
    let mut warnings = Vec::new();
    if let Some(m) = machine {
        if !c.fingerprint.same_kernel(m) {
            warnings.push(CalibrationWarning::OtherKernel {
                calibrated: c.fingerprint.kernel_text(),
                compared: m.kernel_text(),
            });
        }
        if c.fingerprint.kbench_version != m.kbench_version {
            warnings.push(CalibrationWarning::OtherVersion {
                calibrated: c.fingerprint.kbench_version.clone(),
            });
        }
    }
    let age_days = ctx.opts.now_unix_ns.saturating_sub(c.row.created_unix_ns) as f64 / 86_400e9;
    if ctx.opts.now_unix_ns > 0 && age_days > calibration::STALE_AFTER_DAYS {
        warnings.push(CalibrationWarning::Old {
            age_days,
            limit_days: calibration::STALE_AFTER_DAYS,
        });
    }
    let headline = rows.iter().filter(|r| r.is_primary()).find_map(|r| {
        let key = ComponentKey {
            run: RunKey {
                workload: r.workload.clone(),
                params: r.params.clone(),
                variant: r.variant.clone(),
            },
            metric: r.metric.clone(),
            pooled_quantile: None,
        };
        let sd = c.find(&key)?.between_session_sd?;
        Some(100.0 * sd.exp_m1())
    });
    CalibrationUsed {
        id: c.row.id,
        created_unix_ns: c.row.created_unix_ns,
        sessions: c.row.sessions as usize,
        boots: c.row.boots as usize,
        kernel_release: c.fingerprint.kernel_release.clone(),
        headline_between_session_cv_pct: headline,
        warnings,
    }
}

/// Boots as the analysis counts them ([`group::boot_of_session`]).
fn boots(sessions: &[SessionRow]) -> usize {
    sessions
        .iter()
        .map(|s| group::boot_of_session(s.id, s.boot_id.as_deref()))
        .collect::<BTreeSet<_>>()
        .len()
}

/// The rows of one key: its runs pooled, then split by CPU class and by placement
/// where the runs had more than one.
fn key_rows(
    key: &Key,
    side_a: &Side,
    side_b: &Side,
    ctx: &Context,
    (a, b): (&LabelData, &LabelData),
) -> Vec<CompareRow> {
    let mut pooled = per_run_row(key, side_a, side_b, ctx);
    failed_runs(&mut pooled, &key.run, a, b);
    let by_class = split_by_class(key, side_a, side_b, ctx);
    if !by_class.is_empty() {
        pooled.diagnostics.insert(0, class_mix(side_a, side_b));
    }
    let by_placement = split_by_placement(key, side_a, side_b, ctx);
    pooled
        .diagnostics
        .extend(placement_mix(side_a, side_b, !by_placement.is_empty()));
    for (side, name) in [(side_a, SideName::Base), (side_b, SideName::New)] {
        pooled.diagnostics.extend(modes_as_classes(side, name));
        pooled.diagnostics.extend(modes_as_placements(side, name));
    }
    let mut rows = vec![pooled];
    rows.extend(by_class);
    rows.extend(by_placement);
    rows
}

/// A per-run metric of one key, both sides, at the replication level the runs have.
fn per_run_row(key: &Key, a: &Side, b: &Side, ctx: &Context) -> CompareRow {
    let noise = ctx.noise(&ComponentKey {
        run: key.run.clone(),
        metric: key.metric.clone(),
        pooled_quantile: None,
    });
    let design = kbench_stats::choose_design(&a.observations, &b.observations);
    let units = |side: &Side| kbench_stats::unit_count(&side.observations, design.level());
    let (delta_pct, raised) = ctx.delta_for(noise.as_ref(), design, units(a).min(units(b)));
    let options = NestedOptions {
        compare: ctx.compare_options(a.higher_is_better, delta_pct),
        calibration: noise,
    };
    let c = kbench_stats::compare_nested(&a.observations, &b.observations, &options);
    let mut r = row_from(
        &key.run,
        &key.metric,
        &a.unit,
        &c,
        if a.primary {
            Role::Primary
        } else {
            Role::Secondary
        },
    );
    r.diagnostics.extend(raised);
    r
}

/// A row from a comparison: numbers, verdict, and the diagnostics as data.
fn row_from(run: &RunKey, metric: &str, unit: &str, c: &Comparison, role: Role) -> CompareRow {
    let nested = c.nested.as_ref();
    let mut row = CompareRow {
        workload: run.workload.clone(),
        metric: metric.to_string(),
        unit: unit.to_string(),
        params: run.params.clone(),
        variant: run.variant.clone(),
        cpu_classes: String::new(),
        placement: None,
        kind: RowKind::PerRun,
        role,
        higher_is_better: c.higher_is_better,
        n_a: c.n_a,
        n_b: c.n_b,
        design: nested.map(|n| n.design),
        units_a: nested.map_or(c.n_a, |n| units_shown(n, &n.units_a, c.n_a)),
        units_b: nested.map_or(c.n_b, |n| units_shown(n, &n.units_b, c.n_b)),
        median_a: c.median_a,
        median_b: c.median_b,
        shift_pct: c.shift_pct,
        ci_low_pct: c.ci_low_pct,
        ci_high_pct: c.ci_high_pct,
        p_value: c.p_value,
        q_value: None,
        delta_pct: c.delta_pct,
        verdict: c.verdict,
        runs_needed: c.runs_needed,
        units_needed: nested.and_then(|n| n.units_needed),
        settle: c.settle.clone(),
        method: c.method.clone(),
        diagnostics: comparison_diagnostics(c),
    };
    if row.design == Some(Design::Interleaved) || row.design.is_none() {
        row.units_needed = None;
    } else {
        row.runs_needed = None;
    }
    row
}

/// Replicates a side: its runs when runs are the units, else its sessions or boots.
fn units_shown(n: &kbench_stats::NestedInfo, units: &[String], runs: usize) -> usize {
    if n.design == Design::Interleaved {
        runs
    } else {
        units.len()
    }
}

/// What the engine found, as data.
fn comparison_diagnostics(c: &Comparison) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(n) = &c.nested {
        if n.no_claim == Some(NoClaim::NoBetweenUnitVariance) {
            out.push(Diagnostic::NoReplication {
                level: n.design.level(),
            });
        }
        if let Some(b) = &n.between {
            out.push(Diagnostic::BorrowedNoise {
                level: n.design.level(),
                source: b.source,
                unit_cv_pct: 100.0 * b.unit_sd.exp_m1(),
                df: b.df,
            });
        }
    }
    if let Some(d) = &c.diagnostics {
        for (side, diag) in [(SideName::Base, &d.a), (SideName::New, &d.b)] {
            if !diag.outliers.is_empty() {
                out.push(Diagnostic::Outliers {
                    side,
                    runs: diag.outliers.iter().map(|i| i + 1).collect(),
                });
            }
            if diag.bimodality.bimodal {
                out.push(Diagnostic::Bimodal { side });
            }
            if diag.drifting {
                out.push(Diagnostic::Drift {
                    side,
                    pct_per_run: diag.drift_pct_per_run.unwrap_or(0.0),
                });
            }
        }
        if let Some(v) = d.verdict_without_outliers {
            out.push(Diagnostic::WithoutOutliers {
                verdict: v,
                shift_pct: d.shift_pct_without_outliers,
            });
        }
        if d.shape.as_ref().is_some_and(|s| s.shape_changed) {
            out.push(Diagnostic::ShapeChanged);
        }
    }
    out.extend(
        c.notes
            .iter()
            .map(|n| Diagnostic::Engine { text: n.clone() }),
    );
    out
}

/// Failed runs of the row's workload and parameters (a failed run has no variant).
fn failed_runs(row: &mut CompareRow, key: &RunKey, a: &LabelData, b: &LabelData) {
    for (side, loaded) in [(SideName::Base, a), (SideName::New, b)] {
        let count = loaded
            .runs
            .iter()
            .filter(|r| !r.run.warmup && !r.is_measured())
            .map(group::run_key)
            .filter(|k| k.workload == key.workload && k.params == key.params)
            .count();
        if count > 0 {
            row.diagnostics.push(Diagnostic::FailedRuns { side, count });
        }
    }
}

/// Percentiles of latency distributions pooled over each side's runs: intervals and
/// verdicts from resampling runs (and units), never from counting every sample as a
/// replicate.
fn pooled_percentile_rows(a: &LabelData, b: &LabelData, ctx: &Context) -> Vec<CompareRow> {
    let ((sa, ticks_a), (sb, ticks_b)) = (
        group::series_runs(&a.runs, &a.sessions),
        group::series_runs(&b.runs, &b.sessions),
    );
    let mut rows = Vec::new();
    for (run_key, series_a) in &sa {
        let Some(series_b) = sb.get(run_key) else {
            continue;
        };
        for (name, runs_a) in series_a {
            let Some(runs_b) = series_b.get(name) else {
                continue;
            };
            let tick = (run_key.clone(), name.clone());
            let resolution = ticks_a.get(&tick).max(ticks_b.get(&tick)).copied();
            let positions = kbench_stats::pooled::positions;
            let (pa, pb) = (positions(runs_a), positions(runs_b));
            let design = kbench_stats::choose_design(&pa, &pb);
            let units = kbench_stats::unit_count(&pa, design.level())
                .min(kbench_stats::unit_count(&pb, design.level()));
            let samples = |runs: &[kbench_stats::RunHistogram]| -> u64 {
                runs.iter()
                    .flat_map(|r| r.buckets.iter().map(|b| b.1))
                    .sum()
            };
            let pooled = Diagnostic::Pooled {
                samples_a: samples(runs_a),
                samples_b: samples(runs_b),
                runs_a: runs_a.len(),
                runs_b: runs_b.len(),
            };
            // One comparison per quantile: each has its own calibrated noise and so
            // its own delta.
            for (q, _) in POOLED_QUANTILES {
                let noise = ctx.noise(&ComponentKey {
                    run: run_key.clone(),
                    metric: name.clone(),
                    pooled_quantile: Some(q),
                });
                let (delta_pct, raised) = ctx.delta_for(noise.as_ref(), design, units);
                let options = PooledOptions {
                    compare: ctx.compare_options(false, delta_pct),
                    resamples: 1000,
                    seed: ctx.opts.seed,
                    calibration: noise,
                };
                let c = kbench_stats::compare_pooled_quantiles(runs_a, runs_b, &[q], &options)
                    .remove(0);
                // A latency series' quantiles, in the unit of the labels' clock.
                let unit = ctx.clock.duration_unit();
                let mut row = row_from(run_key, name, unit, &c, Role::Secondary);
                row.kind = RowKind::PooledPercentile {
                    series: name.clone(),
                    quantile: q,
                };
                row.diagnostics.insert(0, pooled.clone());
                row.diagnostics.extend(raised);
                if let Some(resolution_ns) = resolution {
                    unclaim_within_resolution(&mut row, resolution_ns);
                }
                rows.push(row);
            }
        }
    }
    rows
}

/// A claim between pooled percentiles of a tick-bound series (a traced wake phase) that
/// lie one tick apart or less is withdrawn (the per-run means still see such a change): a percentile that falls on a tie
/// jumps a whole tick between samples of one distribution, and the interval, from
/// resampling those ties, does not see it.
fn unclaim_within_resolution(row: &mut CompareRow, resolution_ns: u64) {
    let claimed = matches!(
        row.verdict,
        Verdict::Regression | Verdict::Improvement | Verdict::Changed
    );
    // One tick apart, give or take the histogram's bucket rounding (0.1%).
    let within = match (row.median_a, row.median_b) {
        (Some(a), Some(b)) => (b - a).abs() < 1.5 * resolution_ns as f64,
        _ => false,
    };
    if claimed && within {
        row.verdict = Verdict::Inconclusive;
        row.diagnostics
            .push(Diagnostic::WithinResolution { resolution_ns });
    }
}

/// When the runs of the two sides used more than one set of CPU classes, one row per
/// class set present on both sides (with at least two runs each).
fn split_by_class(key: &Key, a: &Side, b: &Side, ctx: &Context) -> Vec<CompareRow> {
    let mut sets = a.class_sets();
    for c in b.class_sets() {
        if !sets.contains(&c) {
            sets.push(c);
        }
    }
    if sets.len() < 2 {
        return Vec::new();
    }
    sets.iter()
        .filter_map(|class| {
            let (sa, sb) = (a.only(class), b.only(class));
            if sa.observations.len() < 2 || sb.observations.len() < 2 {
                return None;
            }
            let mut row = per_run_row(key, &sa, &sb, ctx);
            row.cpu_classes = class.clone();
            Some(row)
        })
        .collect()
}

/// When the runs of the two sides ran with more than one placement, one row per
/// placement present on both sides (with at least two runs each).
fn split_by_placement(key: &Key, a: &Side, b: &Side, ctx: &Context) -> Vec<CompareRow> {
    let kinds = group::distinct(a.placement_kinds().into_iter().chain(b.placement_kinds()));
    if kinds.len() < 2 {
        return Vec::new();
    }
    kinds
        .into_iter()
        .filter_map(|kind| {
            let (sa, sb) = (a.only_placement(kind), b.only_placement(kind));
            if sa.observations.len() < 2 || sb.observations.len() < 2 {
                return None;
            }
            let mut row = per_run_row(key, &sa, &sb, ctx);
            row.placement = Some(kind);
            Some(row)
        })
        .collect()
}

/// A side's runs by placement, each group with its median.
fn placement_runs(side: &Side) -> Vec<PlacementRuns> {
    crate::modes::placement_groups(&side.values(), &side.placements)
}

/// The placements of both sides, when together they have more than one.
fn placement_mix(a: &Side, b: &Side, rows_follow: bool) -> Option<Diagnostic> {
    let kinds = group::distinct(a.placement_kinds().into_iter().chain(b.placement_kinds()));
    (kinds.len() > 1).then(|| Diagnostic::PlacementMix {
        base: placement_runs(a),
        new: placement_runs(b),
        rows_follow,
    })
}

/// A bimodal side whose modes are its placements: said as such, not as noise.
fn modes_as_placements(side: &Side, name: SideName) -> Option<Diagnostic> {
    let groups = crate::modes::placement_modes(&side.values(), &side.placements)?;
    Some(Diagnostic::ModesArePlacements { side: name, groups })
}

fn class_runs(side: &Side) -> Vec<ClassRuns> {
    side.class_sets()
        .into_iter()
        .map(|class| {
            let members: Vec<usize> = (0..side.classes.len())
                .filter(|&i| *side.classes[i] == *class)
                .collect();
            let mut cpus: Vec<u32> = members
                .iter()
                .flat_map(|&i| side.cpus[i].iter().copied())
                .collect();
            cpus.sort_unstable();
            cpus.dedup();
            ClassRuns {
                class,
                runs: members.iter().map(|&i| i as u32 + 1).collect(),
                cpus,
            }
        })
        .collect()
}

fn class_mix(a: &Side, b: &Side) -> Diagnostic {
    Diagnostic::ClassMix {
        base: class_runs(a),
        new: class_runs(b),
    }
}

/// A bimodal side whose modes are its CPU classes: said as such, not as noise.
fn modes_as_classes(side: &Side, name: SideName) -> Option<Diagnostic> {
    let medians = crate::modes::modes_are_groups(&side.values(), &side.classes)?;
    Some(Diagnostic::ModesAreClasses {
        side: name,
        medians,
    })
}

/// Benjamini-Hochberg across the rows (Benjamini & Hochberg 1995): a row may claim a
/// difference only if the claim survives at the report's level, so that a report of
/// 30 rows does not show one row's 5 % chance finding as a verdict. A claim that does
/// not survive becomes `inconclusive`, and the row says what it alone would have
/// claimed.
fn adjust_for_multiple_rows(rows: &mut [CompareRow], alpha: f64) {
    let with_p: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].p_value.is_some_and(f64::is_finite))
        .collect();
    let ps: Vec<f64> = with_p.iter().filter_map(|&i| rows[i].p_value).collect();
    let qs = kbench_stats::benjamini_hochberg(&ps);
    for (&i, q) in with_p.iter().zip(qs) {
        let row = &mut rows[i];
        row.q_value = Some(q);
        if row.verdict.claims_difference() && q > alpha && ps.len() > 1 {
            row.diagnostics.push(Diagnostic::NotSignificantAfterBh {
                rows: ps.len(),
                q,
                row_verdict: row.verdict,
            });
            row.verdict = Verdict::Inconclusive;
        }
    }
}

fn compare_summaries(a: &[SummaryRow], b: &[SummaryRow], ctx: &Context) -> Vec<CompareRow> {
    let mut rows = Vec::new();
    for sa in a {
        let Some(sb) = b
            .iter()
            .find(|s| s.workload == sa.workload && s.metric == sa.metric)
        else {
            continue;
        };
        let delta = ctx.delta_or_default();
        let c = kbench_stats::compare_summaries(
            &SummaryStats::from_std_error(sa.mean, sa.std_error, sa.n as usize),
            &SummaryStats::from_std_error(sb.mean, sb.std_error, sb.n as usize),
            &ctx.compare_options(sa.higher_is_better, delta),
        );
        let key = RunKey {
            workload: sa.workload.clone(),
            params: String::new(),
            variant: "summary".into(),
        };
        let role = if sa.primary {
            Role::Primary
        } else {
            Role::Secondary
        };
        let mut row = row_from(&key, &sa.metric, &sa.unit, &c, role);
        row.kind = RowKind::Summary;
        row.diagnostics.insert(0, Diagnostic::SummaryOnly);
        rows.push(row);
    }
    rows
}

/// Keys of one side with no exact match on the other, said plainly, one entry per
/// workload and reason (metrics of one run share their fate).
fn unmatched(a: &BTreeMap<Key, Side>, b: &BTreeMap<Key, Side>) -> Vec<NotCompared> {
    let mut out: Vec<NotCompared> = Vec::new();
    for (mine, other, me) in [(a, b, SideName::Base), (b, a, SideName::New)] {
        for key in mine.keys().filter(|k| !other.contains_key(*k)) {
            let near = other
                .keys()
                .find(|o| o.run.workload == key.run.workload && o.metric == key.metric);
            let entry = match near {
                Some(o) => {
                    let (kb, kn) = if me == SideName::Base {
                        (&key.run, &o.run)
                    } else {
                        (&o.run, &key.run)
                    };
                    if kb.variant != kn.variant {
                        NotCompared::VariantsDiffer {
                            workload: key.run.workload.clone(),
                            base: kb.variant.clone(),
                            new: kn.variant.clone(),
                        }
                    } else {
                        NotCompared::ParamsDiffer {
                            workload: key.run.workload.clone(),
                            differences: params_diff(&kb.params, &kn.params),
                        }
                    }
                }
                None => NotCompared::OnlyIn {
                    side: me,
                    workload: key.run.workload.clone(),
                    variant: key.run.variant.clone(),
                    params: key.run.params.clone(),
                },
            };
            if !out.contains(&entry) {
                out.push(entry);
            }
        }
    }
    out
}

/// `(name, base value, new value)` for the parameters that differ.
fn params_diff(a: &str, b: &str) -> Vec<(String, String, String)> {
    let split = |s: &str| -> BTreeMap<String, String> {
        s.split(' ')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let (ma, mb) = (split(a), split(b));
    let keys: BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
    keys.into_iter()
        .filter(|k| ma.get(*k) != mb.get(*k))
        .map(|k| {
            let show =
                |m: &BTreeMap<String, String>| m.get(k).cloned().unwrap_or_else(|| "-".into());
            (k.clone(), show(&ma), show(&mb))
        })
        .collect()
}

fn unmatched_summaries(a: &[SummaryRow], b: &[SummaryRow]) -> Vec<NotCompared> {
    let mut out = Vec::new();
    for (mine, other, me) in [(a, b, SideName::Base), (b, a, SideName::New)] {
        for s in mine {
            if !other
                .iter()
                .any(|o| o.workload == s.workload && o.metric == s.metric)
            {
                out.push(NotCompared::OnlyIn {
                    side: me,
                    workload: s.workload.clone(),
                    variant: "summary".into(),
                    params: s.metric.clone(),
                });
            }
        }
    }
    out
}

fn environment_differences(a: &[SessionRow], b: &[SessionRow]) -> Vec<EnvDifference> {
    fn latest(sessions: &[SessionRow]) -> Option<&kbench_sys::EnvSnapshot> {
        sessions.iter().rev().find_map(crate::snapshot)
    }
    match (latest(a), latest(b)) {
        (Some(ea), Some(eb)) => kbench_sys::EnvSnapshot::differences(ea, eb)
            .into_iter()
            .filter(|(key, _, _)| key != "boot_id")
            .map(|(key, base, new)| EnvDifference { key, base, new })
            .collect(),
        _ => Vec::new(),
    }
}

/// The newest session's config of each side, compared option by option.
fn config_differences(
    store: &Store,
    a: &[SessionRow],
    b: &[SessionRow],
) -> Result<ConfigDifferences, AnalysisError> {
    let newest = |sessions: &[SessionRow]| -> Result<Option<(String, String)>, AnalysisError> {
        let Some(hash) = sessions
            .iter()
            .rev()
            .find_map(|s| s.kernel_config_hash.clone())
        else {
            return Ok(None);
        };
        Ok(store.kernel_config_by_hash(&hash)?.map(|text| (hash, text)))
    };
    let (base, new) = match (newest(a)?, newest(b)?) {
        (Some(base), Some(new)) => (base, new),
        (base, new) => {
            let sides = [
                (SideName::Base, base.is_none()),
                (SideName::New, new.is_none()),
            ]
            .into_iter()
            .filter_map(|(side, unknown)| unknown.then_some(side))
            .collect();
            return Ok(ConfigDifferences::Unknown { sides });
        }
    };
    let base_config = KernelConfig::parse(&base.1);
    let new_config = if new.0 == base.0 {
        base_config.clone()
    } else {
        KernelConfig::parse(&new.1)
    };
    let mut differences = kconfig::differences(&base_config, &new_config);
    // What a changed value does is the likelier surprise than an option one kernel
    // lacks: those first.
    differences.sort_by_key(|d| !d.is_change());
    let count = |f: &dyn Fn(&kconfig::ConfigDifference) -> bool| {
        differences.iter().filter(|d| f(d)).count()
    };
    Ok(ConfigDifferences::Compared(ConfigComparison {
        same_text: base.0 == new.0,
        base_hash: base.0,
        new_hash: new.0,
        base_options_set: base_config.set_count(),
        new_options_set: new_config.set_count(),
        changed: count(&|d| d.is_change()),
        only_base: count(&|d| d.base.is_set() && !d.new.is_set()),
        only_new: count(&|d| !d.base.is_set() && d.new.is_set()),
        differences,
    }))
}

/// Findings about one side's sessions as a whole.
fn side_notes(side: SideName, loaded: &LabelData) -> Vec<ReportNote> {
    let snapshots: Vec<_> = loaded.sessions.iter().filter_map(crate::snapshot).collect();
    let mut notes = Vec::new();
    let attempted = loaded.runs.iter().filter(|r| !r.run.warmup).count();
    if attempted > 0 && !loaded.runs.iter().any(RunRow::is_measured) {
        notes.push(ReportNote::AllRunsFailed {
            side,
            attempted,
            first_error: loaded.runs.iter().find_map(|r| r.run.error.clone()),
        });
    }
    let mut keys = BTreeSet::new();
    if let Some(first) = snapshots.first() {
        for other in &snapshots[1..] {
            for (key, _, _) in kbench_sys::EnvSnapshot::differences(first, other) {
                if key != "boot_id" && key != "load_average" && key != "runnable_tasks" {
                    keys.insert(key);
                }
            }
        }
    }
    let configs: BTreeSet<&String> = loaded
        .sessions
        .iter()
        .filter_map(|s| s.kernel_config_hash.as_ref())
        .collect();
    if configs.len() > 1 {
        keys.insert(SESSIONS_DIFFER_KERNEL_CONFIG.to_string());
    }
    if !keys.is_empty() {
        notes.push(ReportNote::SessionsDiffer {
            side,
            keys: keys.into_iter().collect(),
        });
    }
    if boots(&loaded.sessions) == 1 {
        notes.push(ReportNote::OneBoot { side });
    }
    notes
}

fn reproduce(
    base: &str,
    new: &str,
    a: &[SessionRow],
    b: &[SessionRow],
    delta_pct: Option<f64>,
    machines: Option<&MachinesCompared>,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for s in a.iter().chain(b) {
        let line = s
            .source
            .as_ref()
            .map(|src| match src.format.as_str() {
                // import-trace's own command line: its --pid and --comm chose the wakes.
                "ftrace" | "trace-cmd" if !s.command_line.is_empty() => s.command_line.clone(),
                _ => format!("kbench import {} --label {}", src.file, s.label),
            })
            .unwrap_or_else(|| s.command_line.clone());
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    let mut compare = format!("kbench compare {base} {new}");
    if let Some(d) = delta_pct {
        compare.push_str(&format!(" --delta {d}"));
    }
    if let Some(m) = machines {
        compare.push_str(&m.compare_option());
    }
    lines.push(compare);
    lines
}

/// When `--fail-on` makes a comparison fail, judged on each primary row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailOn {
    /// A row that got worse.
    Regression,
    /// Any real change, better or worse.
    Change,
}

impl FailOn {
    pub const ALL: [FailOn; 2] = [FailOn::Regression, FailOn::Change];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FailOn::Regression => "regression",
            FailOn::Change => "change",
        }
    }

    /// Whether a row of `verdict` fails the comparison.
    pub fn fails(self, verdict: Verdict) -> bool {
        match self {
            FailOn::Regression => verdict == Verdict::Regression,
            FailOn::Change => verdict.claims_difference(),
        }
    }
}

impl std::str::FromStr for FailOn {
    type Err = AnalysisError;

    fn from_str(name: &str) -> Result<FailOn, AnalysisError> {
        FailOn::ALL
            .into_iter()
            .find(|rule| rule.name() == name)
            .ok_or_else(|| AnalysisError::Usage(format!("unknown --fail-on rule '{name}'")))
    }
}

#[cfg(test)]
mod tests {
    use super::resolve_machine;

    #[test]
    fn a_machine_is_named_whole_by_its_id_or_as_a_session_knows_itself() {
        let known: Vec<String> = ["host: X [dt:aa]", "host: X [dt:bb]", "host: X", "solo: Y"]
            .map(String::from)
            .to_vec();
        let resolve = |asked| resolve_machine(&known, asked);
        assert_eq!(
            resolve("host: X [dt:aa]").as_deref(),
            Some("host: X [dt:aa]")
        );
        assert_eq!(resolve("dt:bb").as_deref(), Some("host: X [dt:bb]"));
        // The sessions stored before ids, by the bare name.
        assert_eq!(resolve("host: X").as_deref(), Some("host: X"));
        // A session of `solo` knows its id; the store shows it bare (one id).
        assert_eq!(resolve("solo: Y [mac:01]").as_deref(), Some("solo: Y"));
        assert_eq!(resolve("dt:cc"), None);
        assert_eq!(resolve("host"), None);
    }
}
