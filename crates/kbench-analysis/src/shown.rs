//! What `kbench show LABEL` shows of a label, loaded whole: its sessions, each
//! metric's figures per workload, parameters and variant (what is never pooled), the
//! failed runs per workload, and imported summary rows; kbench-report renders it.
use crate::AnalysisError;
use kbench_stats::descriptive::Summary;
use kbench_store::{SessionRow, Store, SummaryRow};
use std::collections::BTreeMap;

/// A label as `kbench show` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelShown {
    pub label: String,
    pub sessions: Vec<ShownSession>,
    /// In the order of workload, parameters, variant and metric.
    pub figures: Vec<MetricFigures>,
    /// Per workload, in name order.
    pub failed: Vec<FailedRuns>,
    pub summaries: Vec<SummaryRow>,
}

/// A session of the label.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownSession {
    pub row: SessionRow,
    /// It measured nothing, and kept a console log (a failed boot's).
    pub console_log_only: bool,
}

/// One metric of one workload, parameters and variant: its measured runs described.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricFigures {
    pub workload: String,
    pub params: String,
    pub variant: String,
    pub metric: String,
    pub unit: String,
    pub summary: Summary,
}

/// The failed runs of a workload (warm-ups aside), with the first reason stored.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedRuns {
    pub workload: String,
    pub runs: usize,
    pub first_error: Option<String>,
}

/// The sessions of `label`, or a usage error when it has none.
pub fn label_sessions(store: &Store, label: &str) -> Result<Vec<SessionRow>, AnalysisError> {
    if !store.has_label(label)? {
        return Err(AnalysisError::Usage(format!("no runs labelled '{label}'")));
    }
    Ok(store.sessions(label)?)
}

impl LabelShown {
    /// `label`, whose `sessions` ([`label_sessions`]) are read already.
    pub fn load(
        store: &Store,
        label: &str,
        sessions: Vec<SessionRow>,
    ) -> Result<LabelShown, AnalysisError> {
        let mut shown = Vec::with_capacity(sessions.len());
        for row in sessions {
            let console_log_only = row.runs == 0 && store.console_log(row.id)?.is_some();
            shown.push(ShownSession {
                row,
                console_log_only,
            });
        }
        type Key = (String, String, String, String);
        let mut groups: BTreeMap<Key, (Vec<f64>, String)> = BTreeMap::new();
        let mut failed: BTreeMap<String, (usize, Option<String>)> = BTreeMap::new();
        for r in store.runs(label)? {
            if r.run.warmup {
                continue;
            }
            if !r.is_measured() {
                let entry = failed.entry(r.run.workload.clone()).or_default();
                entry.0 += 1;
                entry.1 = entry.1.take().or_else(|| r.run.error.clone());
                continue;
            }
            let params = crate::group::params_text(&r.run.params);
            for v in &r.run.values {
                let key = (
                    r.run.workload.clone(),
                    params.clone(),
                    r.run.variant.clone(),
                    v.metric.clone(),
                );
                let group = groups.entry(key).or_insert((Vec::new(), v.unit.clone()));
                group.0.push(v.value);
            }
        }
        let figures =
            groups
                .into_iter()
                .map(
                    |((workload, params, variant, metric), (values, unit))| MetricFigures {
                        workload,
                        params,
                        variant,
                        metric,
                        unit,
                        summary: kbench_stats::describe(&values),
                    },
                );
        let failed = failed
            .into_iter()
            .map(|(workload, (runs, first_error))| FailedRuns {
                workload,
                runs,
                first_error,
            });
        Ok(LabelShown {
            label: label.to_string(),
            sessions: shown,
            figures: figures.collect(),
            failed: failed.collect(),
            summaries: store.summaries(label)?,
        })
    }
}

/// `kbench show LABEL --console ID`: the log kept with session `id` of `label`, whose
/// `sessions` are given; a usage error for a session of another label, or one that
/// kept no log.
pub fn console_log(
    store: &Store,
    label: &str,
    sessions: &[SessionRow],
    id: i64,
) -> Result<String, AnalysisError> {
    if !sessions.iter().any(|s| s.id == id) {
        let ids: Vec<String> = sessions.iter().map(|s| s.id.to_string()).collect();
        return Err(AnalysisError::Usage(format!(
            "'{label}' has no session {id} (its sessions: {})",
            ids.join(", ")
        )));
    }
    store.console_log_text(id)?.ok_or_else(|| {
        AnalysisError::Usage(format!(
            "session {id} of '{label}' has no console log: only boots (vm-ab, bisect, import-console) keep one"
        ))
    })
}
