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
#[derive(Debug, Default)]
struct Side {
    samples: Vec<Sample>,
    unit: String,
    higher_is_better: bool,
}

/// Options of a comparison report.
#[derive(Debug, Clone, Copy)]
pub struct ReportOptions {
    pub delta_pct: f64,
    pub alpha: f64,
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
    !run.run.warmup && matches!(run.run.exit_status, Some(0) | None) && run.run.variant != "failed"
}

fn params_text(params: &BTreeMap<String, serde_json::Value>) -> String {
    params
        .iter()
        .filter(|(k, _)| k.as_str() != "signed_loops")
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn group(runs: &[RunRow]) -> BTreeMap<Key, Side> {
    let mut groups: BTreeMap<Key, Side> = BTreeMap::new();
    let mut position: BTreeMap<Key, u32> = BTreeMap::new();
    for run in runs.iter().filter(|r| measured(r)) {
        for v in &run.run.values {
            let key = Key {
                workload: run.run.workload.clone(),
                params: params_text(&run.run.params),
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
    let (groups_a, groups_b) = (group(&a.runs), group(&b.runs));
    let mut rows = Vec::new();
    for (key, side_a) in &groups_a {
        if let Some(side_b) = groups_b.get(key) {
            rows.push(compare_key(key, side_a, side_b, &a, &b, opts));
        }
    }
    rows.extend(compare_summaries(&a.summaries, &b.summaries, opts));
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
    let options = CompareOptions {
        delta_pct: opts.delta_pct,
        alpha: opts.alpha,
        higher_is_better: a.higher_is_better,
    };
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

/// The diagnostics of a comparison in words, each naming the runs concerned.
fn comparison_diagnostics(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(d) = &c.diagnostics {
        for (label, side) in [("base", &d.a), ("new", &d.b)] {
            if !side.outliers.is_empty() {
                let runs: Vec<String> = side.outliers.iter().map(|i| (i + 1).to_string()).collect();
                out.push(format!(
                    "{label}: outlier run(s) {} flagged, kept",
                    runs.join(", ")
                ));
            }
            if side.bimodality.bimodal {
                out.push(format!("{label}: bimodal (two populations of runs)"));
            }
            if side.drifting {
                out.push(format!(
                    "{label}: drifts over run order ({:+.2}%/run)",
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
    out.extend(c.notes.iter().cloned());
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
        let options = CompareOptions {
            delta_pct: opts.delta_pct,
            alpha: opts.alpha,
            higher_is_better: false,
        };
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
            .clone()
            .map(|src| format!("kbench import {src} --label {}", s.label))
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
