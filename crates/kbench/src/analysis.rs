//! From stored runs of two labels to a [`CompareReport`]: group, never pool what
//! differs, compare, and say everything else.
use kbench_report::compare::{CompareReport, CompareRow, EnvDifference};
use kbench_stats::{CompareOptions, Comparison, Sample, SummaryStats, Verdict};
use kbench_store::{RunRow, SessionRow, Store, SummaryRow};
use std::collections::{BTreeMap, BTreeSet};

/// What identifies comparable values: never pooled across different keys.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    workload: String,
    params: String,
    variant: String,
    metric: String,
}

/// Values of one key on one side.
#[derive(Debug, Default, Clone)]
struct Side {
    samples: Vec<Sample>,
    /// Per sample: the CPU classes its run used (`A53+A72` when mixed), or empty when
    /// unknown (an imported run, a session without a topology).
    classes: Vec<String>,
    /// Per sample: the CPUs its run used.
    cpus: Vec<Vec<u32>>,
    unit: String,
    higher_is_better: bool,
}

impl Side {
    /// The samples whose run used exactly the class set `class`.
    fn only(&self, class: &str) -> Side {
        let keep: Vec<usize> = (0..self.samples.len())
            .filter(|&i| self.classes[i] == class)
            .collect();
        Side {
            samples: keep.iter().map(|&i| self.samples[i].clone()).collect(),
            classes: keep.iter().map(|&i| self.classes[i].clone()).collect(),
            cpus: keep.iter().map(|&i| self.cpus[i].clone()).collect(),
            unit: self.unit.clone(),
            higher_is_better: self.higher_is_better,
        }
    }

    /// Distinct class sets, in order of first appearance.
    fn class_sets(&self) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for c in &self.classes {
            if !c.is_empty() && !seen.contains(c) {
                seen.push(c.clone());
            }
        }
        seen
    }
}

/// Options of a comparison report.
#[derive(Debug, Clone, Copy)]
pub struct ReportOptions {
    pub delta_pct: f64,
    pub alpha: f64,
}

impl ReportOptions {
    /// The engine's options for one metric.
    fn stats(&self, higher_is_better: bool) -> CompareOptions {
        CompareOptions {
            delta_pct: self.delta_pct,
            alpha: self.alpha,
            higher_is_better,
        }
    }
}

struct Loaded {
    runs: Vec<RunRow>,
    sessions: Vec<SessionRow>,
    summaries: Vec<SummaryRow>,
}

fn load(store: &Store, label: &str) -> anyhow::Result<Loaded> {
    let map = crate::session::store_error;
    Ok(Loaded {
        runs: store.runs(label).map_err(map)?,
        sessions: store.sessions(label).map_err(map)?,
        summaries: store.summaries(label).map_err(map)?,
    })
}

fn measured(run: &RunRow) -> bool {
    run.is_measured()
}

/// Parameters as `name=value` words, in name order.
pub fn params_text(params: &BTreeMap<String, serde_json::Value>) -> String {
    params
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The CPU classes of each session, from its environment snapshot.
fn session_classes(sessions: &[SessionRow]) -> BTreeMap<i64, Vec<kbench_sys::CpuClass>> {
    sessions
        .iter()
        .filter_map(|s| Some((s.id, snapshot(s)?.classes)))
        .collect()
}

/// The classes a run's CPUs belong to, joined with `+`; empty when unknown.
fn run_class(
    run: &RunRow,
    classes: &BTreeMap<i64, Vec<kbench_sys::CpuClass>>,
) -> (String, Vec<u32>) {
    let cpus = run
        .run
        .cpus_used
        .as_deref()
        .and_then(|c| kbench_sys::parse_cpulist(c).ok())
        .unwrap_or_default();
    let Some(session_classes) = classes.get(&run.session_id) else {
        return (String::new(), cpus);
    };
    let names: Vec<&str> = session_classes
        .iter()
        .filter(|c| c.cpus.iter().any(|cpu| cpus.contains(cpu)))
        .map(|c| c.name.as_str())
        .collect();
    (names.join("+"), cpus)
}

/// The parameters that make runs comparable: the workload's, and the pinning (pinned
/// and unpinned runs measure different placements and are never pooled).
fn key_params(run: &RunRow) -> String {
    let params = params_text(&run.run.params);
    match &run.run.pinned_cpus {
        Some(cpus) if params.is_empty() => format!("pinned={cpus}"),
        Some(cpus) => format!("{params} pinned={cpus}"),
        None => params,
    }
}

fn group(runs: &[RunRow], sessions: &[SessionRow]) -> BTreeMap<Key, Side> {
    let classes = session_classes(sessions);
    let mut groups: BTreeMap<Key, Side> = BTreeMap::new();
    let mut position: BTreeMap<Key, u32> = BTreeMap::new();
    for run in runs.iter().filter(|r| measured(r)) {
        let (class, cpus) = run_class(run, &classes);
        for v in &run.run.values {
            let key = Key {
                workload: run.run.workload.clone(),
                params: key_params(run),
                variant: run.run.variant.clone(),
                metric: v.metric.clone(),
            };
            let index = position.entry(key.clone()).or_default();
            let side = groups.entry(key).or_default();
            side.unit = v.unit.clone();
            side.higher_is_better = v.higher_is_better;
            side.samples.push(Sample {
                value: v.value,
                boot_id: run.boot_id.clone().unwrap_or_else(|| "unknown".into()),
                run_index: *index,
            });
            side.classes.push(class.clone());
            side.cpus.push(cpus.clone());
            *index += 1;
        }
    }
    groups
}

/// Compares `new` against `base`.
pub fn compare_labels(
    store: &Store,
    base: &str,
    new: &str,
    opts: ReportOptions,
) -> anyhow::Result<CompareReport> {
    if base == new {
        return crate::error::usage(format!("BASE and NEW are both '{base}': name two labels"));
    }
    for label in [base, new] {
        if !store
            .has_label(label)
            .map_err(crate::session::store_error)?
        {
            return crate::error::usage(format!(
                "no runs labelled '{label}' in {}",
                store.path().display()
            ));
        }
    }
    let (a, b) = (load(store, base)?, load(store, new)?);
    let (groups_a, groups_b) = (group(&a.runs, &a.sessions), group(&b.runs, &b.sessions));
    let mut rows = Vec::new();
    for (key, side_a) in &groups_a {
        if let Some(side_b) = groups_b.get(key) {
            let mut pooled = compare_key(key, side_a, side_b, &a, &b, opts);
            let split = split_by_class(key, side_a, side_b, opts);
            if !split.is_empty() {
                pooled
                    .diagnostics
                    .insert(0, class_mix_note(side_a, side_b, base, new));
            }
            pooled.diagnostics.extend(modes_as_classes(side_a, base));
            pooled.diagnostics.extend(modes_as_classes(side_b, new));
            rows.push(pooled);
            rows.extend(split);
        }
    }
    rows.extend(compare_summaries(&a.summaries, &b.summaries, opts));
    rows.extend(pooled_percentile_rows(&a.runs, &b.runs, opts));
    // The figure perf prints first, context switches after it.
    rows.sort_by_key(|r| {
        (
            r.workload.clone(),
            r.metric.starts_with("csw"),
            r.metric.clone(),
        )
    });
    adjust_for_multiple_rows(&mut rows, opts.alpha);
    let not_compared = unmatched(&groups_a, &groups_b, base, new)
        .into_iter()
        .chain(unmatched_summaries(&a.summaries, &b.summaries, base, new))
        .collect();
    let mut notes = side_notes(base, &a);
    notes.extend(side_notes(new, &b));
    if rows.is_empty() {
        notes.push(
            "nothing to compare: the labels share no workload with the same parameters".into(),
        );
    }
    Ok(CompareReport {
        base: base.into(),
        new: new.into(),
        delta_pct: opts.delta_pct,
        base_runs: a.runs.iter().filter(|r| measured(r)).count(),
        new_runs: b.runs.iter().filter(|r| measured(r)).count(),
        base_boots: boots(&a.sessions),
        new_boots: boots(&b.sessions),
        rows,
        not_compared,
        environment_differences: environment_differences(&a.sessions, &b.sessions),
        notes,
        reproduce: reproduce(base, new, &a.sessions, &b.sessions, opts.delta_pct),
    })
}

fn boots(sessions: &[SessionRow]) -> usize {
    sessions
        .iter()
        .filter_map(|s| s.boot_id.as_deref())
        .collect::<BTreeSet<_>>()
        .len()
}

fn compare_key(
    key: &Key,
    a: &Side,
    b: &Side,
    la: &Loaded,
    lb: &Loaded,
    opts: ReportOptions,
) -> CompareRow {
    let options = opts.stats(a.higher_is_better);
    let c = kbench_stats::compare_replicated(&a.samples, &b.samples, &options);
    let mut diagnostics = comparison_diagnostics(&c);
    for (label, loaded) in [("base", la), ("new", lb)] {
        let failed = loaded
            .runs
            .iter()
            .filter(|r| !r.run.warmup && r.run.workload == key.workload && !measured(r))
            .count();
        if failed > 0 {
            diagnostics.push(format!(
                "{label}: {failed} failed run(s) excluded and not averaged in"
            ));
        }
    }
    row(key, &a.unit, c, diagnostics)
}

fn row(key: &Key, unit: &str, c: Comparison, diagnostics: Vec<String>) -> CompareRow {
    CompareRow {
        workload: key.workload.clone(),
        metric: key.metric.clone(),
        unit: unit.to_string(),
        params: key.params.clone(),
        variant: key.variant.clone(),
        cpu_classes: String::new(),
        n_a: c.n_a,
        n_b: c.n_b,
        median_a: c.median_a,
        median_b: c.median_b,
        shift_pct: c.shift_pct,
        ci_low_pct: c.ci_low_pct,
        ci_high_pct: c.ci_high_pct,
        p_value: c.p_value,
        q_value: None,
        verdict: c.verdict.as_str().to_string(),
        runs_needed: c.runs_needed,
        method: c.method.clone(),
        summary_based: c.summary_based,
        diagnostics,
    }
}

/// Histogram buckets (`upper_ns` → count) of each latency series, merged over the
/// measured runs of one comparison key.
type PooledSeries = BTreeMap<String, BTreeMap<u64, u64>>;

fn pooled_series(runs: &[RunRow]) -> BTreeMap<(String, String, String), (PooledSeries, usize)> {
    let mut out: BTreeMap<(String, String, String), (PooledSeries, usize)> = BTreeMap::new();
    for run in runs.iter().filter(|r| measured(r)) {
        let Some(record) = run.record().filter(|r| !r.series.is_empty()) else {
            continue;
        };
        let key = (
            run.run.workload.clone(),
            key_params(run),
            run.run.variant.clone(),
        );
        let entry = out.entry(key).or_default();
        entry.1 += 1;
        for s in &record.series {
            let buckets = entry.0.entry(s.name.clone()).or_default();
            for [upper, count] in &s.buckets {
                *buckets.entry(*upper).or_default() += count;
            }
        }
    }
    out
}

/// Percentiles of latency distributions pooled over each side's runs, compared with
/// order-statistic confidence intervals (every wake a sample). The per-run p50/p99
/// rows compare runs as replicates; these compare the distributions' tails.
fn pooled_percentile_rows(a: &[RunRow], b: &[RunRow], opts: ReportOptions) -> Vec<CompareRow> {
    let (pa, pb) = (pooled_series(a), pooled_series(b));
    let options = opts.stats(false);
    let mut rows = Vec::new();
    for (key, (series_a, runs_a)) in &pa {
        let Some((series_b, runs_b)) = pb.get(key) else {
            continue;
        };
        for (name, buckets_a) in series_a {
            let Some(buckets_b) = series_b.get(name) else {
                continue;
            };
            let ha: Vec<(f64, u64)> = buckets_a.iter().map(|(v, c)| (*v as f64, *c)).collect();
            let hb: Vec<(f64, u64)> = buckets_b.iter().map(|(v, c)| (*v as f64, *c)).collect();
            let (na, nb): (u64, u64) = (ha.iter().map(|b| b.1).sum(), hb.iter().map(|b| b.1).sum());
            for (label, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)] {
                let metric = format!("{name}_{label}_pooled");
                let k = Key {
                    workload: key.0.clone(),
                    params: key.1.clone(),
                    variant: key.2.clone(),
                    metric,
                };
                rows.push(percentile_row(
                    &k,
                    &ha,
                    &hb,
                    q,
                    &options,
                    [na, nb],
                    [*runs_a, *runs_b],
                ));
            }
        }
    }
    rows
}

fn percentile_row(
    key: &Key,
    a: &[(f64, u64)],
    b: &[(f64, u64)],
    q: f64,
    options: &CompareOptions,
    samples: [u64; 2],
    runs: [usize; 2],
) -> CompareRow {
    let pooled = format!(
        "pooled over {} and {} samples from {} and {} runs; order-statistic CIs treat samples as independent (the per-run rows treat runs as the replicates)",
        samples[0], samples[1], runs[0], runs[1]
    );
    let mut r = CompareRow {
        workload: key.workload.clone(),
        metric: key.metric.clone(),
        unit: "ns".into(),
        params: key.params.clone(),
        variant: key.variant.clone(),
        n_a: samples[0] as usize,
        n_b: samples[1] as usize,
        verdict: Verdict::Insufficient.as_str().into(),
        method: "order-statistic CIs of pooled samples".into(),
        diagnostics: vec![pooled],
        ..CompareRow::default()
    };
    match kbench_stats::compare_percentile(a, b, q, options) {
        Some(shift) => {
            r.median_a = Some(shift.a.estimate);
            r.median_b = Some(shift.b.estimate);
            r.shift_pct = Some(shift.shift_pct);
            r.ci_low_pct = Some(shift.ci_low_pct);
            r.ci_high_pct = Some(shift.ci_high_pct);
            r.verdict = shift.verdict.as_str().into();
            r.method = shift.method;
            r.diagnostics.push(format!(
                "base {} ns [{}, {}], new {} ns [{}, {}] ({:.1}% intervals)",
                shift.a.estimate,
                shift.a.lower,
                shift.a.upper,
                shift.b.estimate,
                shift.b.lower,
                shift.b.upper,
                100.0 * (1.0 - options.alpha / 2.0)
            ));
        }
        None => r
            .diagnostics
            .push("too few samples for an order-statistic interval at this percentile".into()),
    }
    r
}

/// When the runs of the two sides used more than one set of CPU classes, one row per
/// class set present on both sides (with at least two runs each).
fn split_by_class(key: &Key, a: &Side, b: &Side, opts: ReportOptions) -> Vec<CompareRow> {
    let mut sets = a.class_sets();
    for c in b.class_sets() {
        if !sets.contains(&c) {
            sets.push(c);
        }
    }
    if sets.len() < 2 {
        return Vec::new();
    }
    let options = opts.stats(a.higher_is_better);
    sets.iter()
        .filter_map(|class| {
            let (sa, sb) = (a.only(class), b.only(class));
            if sa.samples.len() < 2 || sb.samples.len() < 2 {
                return None;
            }
            let c = kbench_stats::compare_replicated(&sa.samples, &sb.samples, &options);
            let diagnostics = comparison_diagnostics(&c);
            let mut r = row(key, &a.unit, c, diagnostics);
            r.cpu_classes = class.clone();
            Some(r)
        })
        .collect()
}

/// "new: runs 3 and 7 ran on Cortex-A53 (CPUs 2-5), runs 1-2, 4-6 on Cortex-A72 (CPUs 0-1)".
fn class_mix_note(a: &Side, b: &Side, base: &str, new: &str) -> String {
    let describe = |side: &Side, label: &str| -> String {
        let sets = side.class_sets();
        if sets.len() == 1 {
            return format!("{label}: all runs on {}", sets[0]);
        }
        let parts: Vec<String> = sets
            .iter()
            .map(|class| {
                let runs: Vec<u32> = (0..side.classes.len())
                    .filter(|&i| &side.classes[i] == class)
                    .map(|i| i as u32 + 1)
                    .collect();
                let mut cpus: Vec<u32> = (0..side.classes.len())
                    .filter(|&i| &side.classes[i] == class)
                    .flat_map(|i| side.cpus[i].clone())
                    .collect();
                cpus.sort_unstable();
                cpus.dedup();
                format!(
                    "run{} {} on {class} (CPUs {})",
                    if runs.len() == 1 { "" } else { "s" },
                    kbench_sys::format_cpulist(&runs),
                    kbench_sys::format_cpulist(&cpus)
                )
            })
            .collect();
        format!("{label}: {}", parts.join(", "))
    };
    format!(
        "runs used different CPU classes, so this pooled row mixes them and the rows per class follow; {}; {}",
        describe(a, base),
        describe(b, new)
    )
}

/// A bimodal side whose modes are its CPU classes: said as such, not as noise.
fn modes_as_classes(side: &Side, label: &str) -> Vec<String> {
    let sets = side.class_sets();
    if sets.len() < 2 || side.samples.len() < 5 {
        return Vec::new();
    }
    let values: Vec<f64> = side.samples.iter().map(|s| s.value).collect();
    if !kbench_stats::bimodality(&values).bimodal {
        return Vec::new();
    }
    let mut groups: Vec<(String, f64, f64, f64)> = sets
        .iter()
        .map(|class| {
            let v: Vec<f64> = (0..values.len())
                .filter(|&i| &side.classes[i] == class)
                .map(|i| values[i])
                .collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (class.clone(), kbench_stats::descriptive::median(&v), lo, hi)
        })
        .collect();
    groups.sort_by(|x, y| x.1.total_cmp(&y.1));
    let separated = groups.windows(2).all(|w| w[0].3 < w[1].2);
    if !separated {
        return Vec::new();
    }
    let medians: Vec<String> = groups
        .iter()
        .map(|(class, median, _, _)| {
            format!(
                "{class} median {}",
                kbench_report::compare::figure(Some(*median))
            )
        })
        .collect();
    vec![format!(
        "{label}: bimodal, and its modes are its CPU classes ({}): not noise",
        medians.join(", ")
    )]
}

/// The diagnostics of a comparison in words, each naming the runs concerned.
fn comparison_diagnostics(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    // With several boots a side, the values analysed are per-boot medians: indices
    // then name boots (in the order of `replication`), not runs.
    let unit = match &c.replication {
        Some(r) if r.unit == "boot" => "boot",
        _ => "measured run",
    };
    if let Some(d) = &c.diagnostics {
        for (label, side) in [("base", &d.a), ("new", &d.b)] {
            if !side.outliers.is_empty() {
                let which: Vec<String> =
                    side.outliers.iter().map(|i| (i + 1).to_string()).collect();
                out.push(format!(
                    "{label}: outlier {unit}(s) {} flagged, kept",
                    which.join(", ")
                ));
            }
            if side.bimodality.bimodal {
                out.push(format!("{label}: bimodal (two populations of {unit}s)"));
            }
            if side.drifting {
                out.push(format!(
                    "{label}: drifts over {unit} order ({:+.2}%/{unit})",
                    side.drift_pct_per_run.unwrap_or(0.0)
                ));
            }
        }
        if let Some(v) = d.verdict_without_outliers {
            out.push(format!(
                "without the outliers the verdict would be {v} ({})",
                kbench_report::compare::percent(d.shift_pct_without_outliers)
            ));
        }
        if d.shape.as_ref().is_some_and(|s| s.shape_changed) {
            out.push("the distribution's shape changed, not only its location (KS)".into());
        }
    }
    // The engine's own note on outliers repeats the line above, without the shift.
    out.extend(
        c.notes
            .iter()
            .filter(|n| !n.starts_with("without the flagged outliers"))
            .cloned(),
    );
    out
}

/// Benjamini-Hochberg across the rows; a difference claimed by a row that does not
/// survive the adjustment is flagged, not silently kept.
fn adjust_for_multiple_rows(rows: &mut [CompareRow], alpha: f64) {
    let with_p: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].p_value.is_some())
        .collect();
    let ps: Vec<f64> = with_p.iter().filter_map(|&i| rows[i].p_value).collect();
    let qs = kbench_stats::benjamini_hochberg(&ps);
    for (&i, q) in with_p.iter().zip(qs) {
        rows[i].q_value = Some(q);
        let claims = matches!(
            rows[i].verdict.as_str(),
            "regression" | "improvement" | "changed"
        );
        if claims && q > alpha && rows.len() > 1 {
            let note = format!(
                "not significant after Benjamini-Hochberg across {} rows (q={q:.3})",
                ps.len()
            );
            rows[i].diagnostics.push(note);
        }
    }
}

fn compare_summaries(a: &[SummaryRow], b: &[SummaryRow], opts: ReportOptions) -> Vec<CompareRow> {
    let mut rows = Vec::new();
    for sa in a {
        let Some(sb) = b
            .iter()
            .find(|s| s.workload == sa.workload && s.metric == sa.metric)
        else {
            continue;
        };
        let options = opts.stats(false);
        let c = kbench_stats::compare_summaries(
            &SummaryStats::from_std_error(sa.mean, sa.std_error, sa.n as usize),
            &SummaryStats::from_std_error(sb.mean, sb.std_error, sb.n as usize),
            &options,
        );
        let key = Key {
            workload: sa.workload.clone(),
            params: String::new(),
            variant: "summary".into(),
            metric: sa.metric.clone(),
        };
        let mut diagnostics = vec!["summary-based (mean, standard error, n): no outlier, drift or shape diagnostics possible".to_string()];
        diagnostics.extend(c.notes.iter().cloned());
        rows.push(row(&key, &sa.unit, c, diagnostics));
    }
    rows
}

/// Keys of one side with no exact match on the other, said plainly, one line per
/// workload and reason (metrics of one run share their fate).
fn unmatched(
    a: &BTreeMap<Key, Side>,
    b: &BTreeMap<Key, Side>,
    base: &str,
    new: &str,
) -> Vec<String> {
    let mut out = BTreeSet::new();
    for (mine, other, me) in [(a, b, base), (b, a, new)] {
        for key in mine.keys().filter(|k| !other.contains_key(*k)) {
            let near = other
                .keys()
                .find(|o| o.workload == key.workload && o.metric == key.metric);
            let line = match near {
                Some(o) if o.variant != key.variant => format!(
                    "{}: variants differ ({} in {base}, {} in {new}): never compared",
                    key.workload,
                    if me == base { &key.variant } else { &o.variant },
                    if me == base { &o.variant } else { &key.variant },
                ),
                Some(o) => {
                    let (pa, pb) = if me == base {
                        (&key.params, &o.params)
                    } else {
                        (&o.params, &key.params)
                    };
                    format!(
                        "{}: parameters differ ({}): never pooled",
                        key.workload,
                        params_diff(pa, pb, base, new)
                    )
                }
                None => format!(
                    "{} [{}] {}: only in {me}",
                    key.workload, key.variant, key.params
                ),
            };
            out.insert(line);
        }
    }
    out.into_iter().collect()
}

/// `nr_loops 10 in base, 40 in new` for the parameters that differ.
fn params_diff(a: &str, b: &str, base: &str, new: &str) -> String {
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
            format!("{k} {} in {base}, {} in {new}", show(&ma), show(&mb))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn unmatched_summaries(a: &[SummaryRow], b: &[SummaryRow], base: &str, new: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (mine, other, me) in [(a, b, base), (b, a, new)] {
        for s in mine {
            if !other
                .iter()
                .any(|o| o.workload == s.workload && o.metric == s.metric)
            {
                out.push(format!(
                    "{} {} (summary): only in {me}",
                    s.workload, s.metric
                ));
            }
        }
    }
    out
}

fn snapshot(session: &SessionRow) -> Option<kbench_sys::EnvSnapshot> {
    serde_json::from_value(session.environment.clone()?).ok()
}

fn environment_differences(a: &[SessionRow], b: &[SessionRow]) -> Vec<EnvDifference> {
    let latest = |s: &[SessionRow]| s.iter().rev().find_map(snapshot);
    match (latest(a), latest(b)) {
        (Some(ea), Some(eb)) => kbench_sys::EnvSnapshot::differences(&ea, &eb)
            .into_iter()
            .filter(|(key, _, _)| key != "boot_id")
            .map(|(key, base, new)| EnvDifference { key, base, new })
            .collect(),
        _ => Vec::new(),
    }
}

/// Differences among one side's own sessions (a kernel that changed under a label).
fn side_notes(label: &str, loaded: &Loaded) -> Vec<String> {
    let snapshots: Vec<_> = loaded.sessions.iter().filter_map(snapshot).collect();
    let mut notes = Vec::new();
    let attempted = loaded.runs.iter().filter(|r| !r.run.warmup).count();
    if attempted > 0 && !loaded.runs.iter().any(measured) {
        let first_error = loaded
            .runs
            .iter()
            .find_map(|r| r.run.error.as_deref())
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        notes.push(format!(
            "{label}: every one of its {attempted} runs failed{first_error}"
        ));
    }
    if let Some(first) = snapshots.first() {
        let mut keys = BTreeSet::new();
        for other in &snapshots[1..] {
            for (key, _, _) in kbench_sys::EnvSnapshot::differences(first, other) {
                if key != "boot_id" {
                    keys.insert(key);
                }
            }
        }
        if !keys.is_empty() {
            let keys: Vec<_> = keys.into_iter().collect();
            notes.push(format!(
                "{label}: its sessions differ among themselves in {}",
                keys.join(", ")
            ));
        }
    }
    if boots(&loaded.sessions) == 1 {
        notes.push(format!(
            "{label}: one boot only; boot-to-boot variation is not sampled (run again after a reboot)"
        ));
    }
    notes
}

fn reproduce(
    base: &str,
    new: &str,
    a: &[SessionRow],
    b: &[SessionRow],
    delta_pct: f64,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for s in a.iter().chain(b) {
        let line = s
            .source
            .as_ref()
            .map(|src| format!("kbench import {} --label {}", src.file, s.label))
            .unwrap_or_else(|| s.command_line.clone());
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines.push(format!("kbench compare {base} {new} --delta {delta_pct}"));
    lines
}

/// Whether `--fail-on` matches a verdict.
pub fn fails_on(rule: &str, verdict: &str) -> bool {
    match rule {
        "regression" => verdict == Verdict::Regression.as_str(),
        "change" => matches!(verdict, "regression" | "improvement" | "changed"),
        _ => false,
    }
}
