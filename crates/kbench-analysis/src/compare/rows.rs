//! The rows of a comparison: one a metric of each key both labels ran, split by CPU
//! class or placement where the runs differ, and the summary-only rows.
use super::context::Context;
use crate::calibration::{ComponentKey, POOLED_QUANTILES};
use crate::group::{self, Key, RunKey, SideObservations};
use crate::label::LabelData;
use crate::model::*;
use kbench_record::Role;
use kbench_stats::{
    Comparison, Design, NestedOptions, NoClaim, PooledOptions, SummaryStats, Verdict,
};
use kbench_store::SummaryRow;

/// The rows of one key: its runs pooled, then split by CPU class and by placement
/// where the runs had more than one.
pub(super) fn key_rows(
    key: &Key,
    side_a: &SideObservations,
    side_b: &SideObservations,
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
pub(super) fn per_run_row(
    key: &Key,
    a: &SideObservations,
    b: &SideObservations,
    ctx: &Context,
) -> CompareRow {
    let noise = ctx.noise(&ComponentKey {
        run: key.run.clone(),
        metric: key.metric.clone(),
        pooled_quantile: None,
    });
    let design = kbench_stats::choose_design(&a.observations, &b.observations);
    let units =
        |side: &SideObservations| kbench_stats::unit_count(&side.observations, design.level());
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
pub(super) fn row_from(
    run: &RunKey,
    metric: &str,
    unit: &str,
    c: &Comparison,
    role: Role,
) -> CompareRow {
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
pub(super) fn units_shown(n: &kbench_stats::NestedInfo, units: &[String], runs: usize) -> usize {
    if n.design == Design::Interleaved {
        runs
    } else {
        units.len()
    }
}

/// What the engine found, as data.
pub(super) fn comparison_diagnostics(c: &Comparison) -> Vec<Diagnostic> {
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
pub(super) fn failed_runs(row: &mut CompareRow, key: &RunKey, a: &LabelData, b: &LabelData) {
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
pub(super) fn pooled_percentile_rows(
    a: &LabelData,
    b: &LabelData,
    ctx: &Context,
) -> Vec<CompareRow> {
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
pub(super) fn unclaim_within_resolution(row: &mut CompareRow, resolution_ns: u64) {
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
pub(super) fn split_by_class(
    key: &Key,
    a: &SideObservations,
    b: &SideObservations,
    ctx: &Context,
) -> Vec<CompareRow> {
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
pub(super) fn split_by_placement(
    key: &Key,
    a: &SideObservations,
    b: &SideObservations,
    ctx: &Context,
) -> Vec<CompareRow> {
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
pub(super) fn placement_runs(side: &SideObservations) -> Vec<PlacementRuns> {
    crate::modes::placement_groups(&side.values(), &side.placements)
}

/// The placements of both sides, when together they have more than one.
pub(super) fn placement_mix(
    a: &SideObservations,
    b: &SideObservations,
    rows_follow: bool,
) -> Option<Diagnostic> {
    let kinds = group::distinct(a.placement_kinds().into_iter().chain(b.placement_kinds()));
    (kinds.len() > 1).then(|| Diagnostic::PlacementMix {
        base: placement_runs(a),
        new: placement_runs(b),
        rows_follow,
    })
}

/// A bimodal side whose modes are its placements: said as such, not as noise.
pub(super) fn modes_as_placements(side: &SideObservations, name: SideName) -> Option<Diagnostic> {
    let groups = crate::modes::placement_modes(&side.values(), &side.placements)?;
    Some(Diagnostic::ModesArePlacements { side: name, groups })
}

pub(super) fn class_runs(side: &SideObservations) -> Vec<ClassRuns> {
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

pub(super) fn class_mix(a: &SideObservations, b: &SideObservations) -> Diagnostic {
    Diagnostic::ClassMix {
        base: class_runs(a),
        new: class_runs(b),
    }
}

/// A bimodal side whose modes are its CPU classes: said as such, not as noise.
pub(super) fn modes_as_classes(side: &SideObservations, name: SideName) -> Option<Diagnostic> {
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
pub(super) fn adjust_for_multiple_rows(rows: &mut [CompareRow], alpha: f64) {
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

pub(super) fn compare_summaries(
    a: &[SummaryRow],
    b: &[SummaryRow],
    ctx: &Context,
) -> Vec<CompareRow> {
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
