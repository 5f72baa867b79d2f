//! What the report's plots draw, beside the comparison they illustrate: each primary
//! metric's runs in the order they ran on both sides, with where and when they ran,
//! the outliers the comparison flagged, each side's median and its interval, and the
//! percentile curves of the latency series. Renderers draw these; they compute no
//! statistic of their own.
use crate::group::{self, Key, RunKey};
use crate::label::LabelData;
use crate::model::{CompareReport, CompareRow, Diagnostic, RowKind, SideName};
use crate::Comparisons;
use kbench_record::PlacementKind;
use kbench_stats::RunHistogram;
use kbench_store::SessionRow;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The confidence of each side's median interval in the distribution plots.
pub const MEDIAN_CONFIDENCE: f64 = 0.95;

/// How runs were flagged as outliers, for the plots' legends.
pub const OUTLIER_RULE: &str = "modified z-score > 3.5 (Iglewicz & Hoaglin)";

/// The quantiles a latency curve is drawn through: 1/(1-p) from 2 to 10,000, evenly
/// on its log scale, capped per side by the samples it has.
const CURVE_STEPS_PER_DECADE: u32 = 12;
const CURVE_MAX_INVERSE_TAIL: f64 = 10_000.0;

/// The plots of one comparison, in the order of its primary rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlotData {
    pub base_machines: Vec<Machine>,
    pub new_machines: Vec<Machine>,
    pub workloads: Vec<WorkloadPlot>,
}

/// A machine and kernel a side's sessions ran on, from their environment snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    pub hostname: String,
    /// The CPU models, `+` between different ones (big.LITTLE).
    pub cpus: String,
    pub kernel_release: String,
}

/// One primary metric of one workload spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadPlot {
    pub workload: String,
    pub params: String,
    pub variant: String,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Both sides' runs, in the order each side ran them.
    pub points: Vec<RunPoint>,
    pub base: SideSpread,
    pub new: SideSpread,
    /// The latency series of the spec, each side's percentile curve.
    pub latency: Vec<LatencyCurves>,
}

/// One measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPoint {
    pub side: SideName,
    /// 1-based, in the side's run order (as the comparison's diagnostics count).
    pub run: u32,
    pub start_unix_ns: Option<u64>,
    pub value: f64,
    pub cpus: Vec<u32>,
    /// The CPU classes its CPUs belong to (`A53+A72` when mixed), empty when unknown.
    pub cpu_class: String,
    pub placement: Option<PlacementKind>,
    pub session: String,
    pub boot: String,
    pub outlier: bool,
}

/// One side's values at a glance.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideSpread {
    pub n: usize,
    pub median: Option<f64>,
    /// The [`MEDIAN_CONFIDENCE`] interval of the median (order statistics).
    pub median_ci: Option<(f64, f64)>,
}

/// The percentile curves of one latency series, both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyCurves {
    pub series: String,
    /// (quantile, value in the series' unit), quantiles rising.
    pub base: Vec<(f64, f64)>,
    pub new: Vec<(f64, f64)>,
}

/// The plot data of `report`, from the labels it compared as they were read.
pub fn plot_data(report: &CompareReport, base: &LabelData, new: &LabelData) -> PlotData {
    let base = PlotSide::of(base, report.machines.as_ref());
    let new = PlotSide::of(new, report.machines.as_ref());
    let workloads = report
        .rows
        .iter()
        .filter(|row| row.is_primary() && !row.is_split() && row.kind == RowKind::PerRun)
        .map(|row| workload_plot(row, report, &base, &new))
        .collect();
    PlotData {
        base_machines: machines(&base.sessions),
        new_machines: machines(&new.sessions),
        workloads,
    }
}

/// The plot data of each comparison, beside it.
pub fn plot_each(comparisons: &Comparisons) -> Vec<PlotData> {
    comparisons
        .reports
        .iter()
        .zip(&comparisons.news)
        .map(|(report, new)| plot_data(report, &comparisons.base, new))
        .collect()
}

/// The distinct machines and kernels of `sessions`, in order of first use; a session
/// without a snapshot (an import) adds none.
fn machines(sessions: &[SessionRow]) -> Vec<Machine> {
    group::distinct(
        sessions
            .iter()
            .filter_map(crate::snapshot)
            .map(|s| Machine {
                hostname: s.hostname.clone().unwrap_or_default(),
                cpus: group::distinct(s.cpu_models.iter().map(String::as_str)).join("+"),
                kernel_release: s.kernel_release.clone().unwrap_or_default(),
            }),
    )
}

/// One label's runs, grouped as the comparison grouped them.
struct PlotSide {
    sessions: Vec<SessionRow>,
    groups: BTreeMap<Key, group::SideObservations>,
    series: group::SeriesRuns,
}

impl PlotSide {
    /// The label's runs, of the one machine the comparison used when it used one.
    fn of(data: &LabelData, machines: Option<&crate::MachinesCompared>) -> PlotSide {
        let data = match machines {
            Some(crate::MachinesCompared::One { machine, .. }) => {
                Cow::Owned(data.of_machine(machine))
            }
            _ => Cow::Borrowed(data),
        };
        let groups = group::group(&data.runs, &data.sessions);
        let (series, _) = group::series_runs(&data.runs, &data.sessions);
        PlotSide {
            sessions: data.sessions.clone(),
            groups,
            series,
        }
    }
}

fn row_key(row: &CompareRow) -> Key {
    Key {
        run: RunKey {
            workload: row.workload.clone(),
            params: row.params.clone(),
            variant: row.variant.clone(),
        },
        metric: row.metric.clone(),
    }
}

fn workload_plot(
    row: &CompareRow,
    report: &CompareReport,
    base: &PlotSide,
    new: &PlotSide,
) -> WorkloadPlot {
    let key = row_key(row);
    let mut points = side_points(SideName::Base, &key, base, row);
    points.extend(side_points(SideName::New, &key, new, row));
    let spread = |side: SideName| {
        spread_of(
            &points
                .iter()
                .filter(|p| p.side == side)
                .map(|p| p.value)
                .collect::<Vec<_>>(),
        )
    };
    WorkloadPlot {
        workload: row.workload.clone(),
        params: row.params.clone(),
        variant: row.variant.clone(),
        metric: row.metric.clone(),
        unit: row.unit.clone(),
        higher_is_better: row.higher_is_better,
        base: spread(SideName::Base),
        new: spread(SideName::New),
        points,
        latency: latency_curves(&key.run, report, base, new),
    }
}

fn side_points(name: SideName, key: &Key, side: &PlotSide, row: &CompareRow) -> Vec<RunPoint> {
    let Some(group) = side.groups.get(key) else {
        return Vec::new();
    };
    let outliers = flagged_outliers(row, name);
    group
        .observations
        .iter()
        .enumerate()
        .map(|(i, o)| RunPoint {
            side: name,
            run: i as u32 + 1,
            start_unix_ns: group.starts_unix_ns[i],
            value: o.value,
            cpus: group.cpus[i].to_vec(),
            cpu_class: group.classes[i].to_string(),
            placement: group.placements[i],
            session: o.session.to_string(),
            boot: o.boot.to_string(),
            outlier: outliers.contains(&(i + 1)),
        })
        .collect()
}

/// The 1-based runs of `side` the row's diagnostics flag as outliers.
fn flagged_outliers(row: &CompareRow, side: SideName) -> Vec<usize> {
    row.diagnostics
        .iter()
        .filter_map(|d| match d {
            Diagnostic::Outliers { side: s, runs } if *s == side => Some(runs.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

fn spread_of(values: &[f64]) -> SideSpread {
    use kbench_stats::descriptive::{median, percentile_ci, sorted_copy};
    let sorted = sorted_copy(values);
    SideSpread {
        n: values.len(),
        median: (!sorted.is_empty()).then(|| median(&sorted)),
        median_ci: percentile_ci(&sorted, 0.5, MEDIAN_CONFIDENCE).map(|ci| (ci.lower, ci.upper)),
    }
}

/// The percentile curves of every latency series the spec has on both sides, for the
/// series the comparison compared.
fn latency_curves(
    key: &RunKey,
    report: &CompareReport,
    base: &PlotSide,
    new: &PlotSide,
) -> Vec<LatencyCurves> {
    let compared: Vec<&str> = report
        .rows
        .iter()
        .filter(|r| {
            r.workload == key.workload && r.params == key.params && r.variant == key.variant
        })
        .filter_map(|r| match &r.kind {
            RowKind::PooledPercentile { series, .. } => Some(series.as_str()),
            _ => None,
        })
        .collect();
    let (Some(a), Some(b)) = (base.series.get(key), new.series.get(key)) else {
        return Vec::new();
    };
    group::distinct(compared)
        .into_iter()
        .filter_map(|series| {
            Some(LatencyCurves {
                series: series.to_string(),
                base: percentile_curve(a.get(series)?),
                new: percentile_curve(b.get(series)?),
            })
        })
        .collect()
}

/// The pooled quantiles of a side's runs at the curve's steps, as far as its samples
/// reach (a quantile beyond 1 - 1/samples is one sample, not a tail).
fn percentile_curve(runs: &[RunHistogram]) -> Vec<(f64, f64)> {
    let samples: u64 = runs
        .iter()
        .flat_map(|r| r.buckets.iter().map(|b| b.1))
        .sum();
    let reach = (samples as f64).min(CURVE_MAX_INVERSE_TAIL);
    let steps = (reach.log10() * f64::from(CURVE_STEPS_PER_DECADE)).floor() as u32;
    (0..=steps)
        .map(|i| 10f64.powf(f64::from(i) / f64::from(CURVE_STEPS_PER_DECADE)))
        .filter(|inverse_tail| *inverse_tail >= 2.0)
        .filter_map(|inverse_tail| {
            let q = 1.0 - 1.0 / inverse_tail;
            Some((q, kbench_stats::pooled::pooled_quantile(runs, q)?))
        })
        .collect()
}
