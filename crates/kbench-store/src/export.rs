//! kbench's own export: every session of a label with its runs, as JSON (complete,
//! re-importable) or CSV (one line per value, for spreadsheets). The JSON's types are
//! kbench-record's ([`Export`]); kbench-import reads it back.
use crate::store::{SessionRow, SessionWithRuns, Store, StoreError, SummaryRow};
pub use kbench_record::export::{Export, EXPORT_FORMAT, EXPORT_VERSION};
use kbench_record::StoredRun;
use std::collections::BTreeMap;

/// Everything stored under `label`.
pub fn export_label(store: &Store, label: &str) -> Result<Export, StoreError> {
    let whole = whole_sessions(store, label)?;
    let mut kernel_configs = BTreeMap::new();
    for (row, _) in &whole {
        if let Some(hash) = &row.kernel_config_hash {
            if !kernel_configs.contains_key(hash) {
                if let Some(text) = store.kernel_config_by_hash(hash)? {
                    kernel_configs.insert(hash.clone(), text);
                }
            }
        }
    }
    Ok(Export {
        format: EXPORT_FORMAT.into(),
        version: EXPORT_VERSION,
        label: label.into(),
        sessions: whole.into_iter().map(|(_, s)| s).collect(),
        kernel_configs,
    })
}

/// Every session of `label`, oldest first, each with its runs and summaries, beside
/// its stored row (the export and `kbench push` read sessions whole).
pub fn whole_sessions(
    store: &Store,
    label: &str,
) -> Result<Vec<(SessionRow, SessionWithRuns)>, StoreError> {
    // The sessions first: one begun while the runs are read is left for next time
    // rather than taken with none of its runs.
    let sessions = store.sessions(label)?;
    let mut runs: BTreeMap<i64, Vec<StoredRun>> = BTreeMap::new();
    for r in store.runs(label)? {
        runs.entry(r.session_id).or_default().push(r.run);
    }
    let mut summaries: BTreeMap<i64, Vec<SummaryRow>> = BTreeMap::new();
    for m in store.summaries(label)? {
        summaries.entry(m.session_id).or_default().push(m);
    }
    Ok(sessions
        .into_iter()
        .map(|s| {
            let whole = SessionWithRuns {
                session: s.as_new_session(),
                ended_unix_ns: s.ended_unix_ns,
                runs: runs.remove(&s.id).unwrap_or_default(),
                summaries: summaries.remove(&s.id).unwrap_or_default(),
                kernel_config_hash: s.kernel_config_hash.clone(),
            };
            (s, whole)
        })
        .collect())
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// One CSV line per stored value.
pub fn export_csv(export: &Export) -> String {
    let mut out = String::from(
        "label,session,boot_id,kind,workload,params,variant,run_index,warmup,exit_status,start_unix_ns,cpus_used,metric,value,unit\n",
    );
    for (i, s) in export.sessions.iter().enumerate() {
        for run in &s.runs {
            let params = serde_json::to_string(&run.params).unwrap_or_default();
            for v in &run.values {
                let fields = [
                    csv_field(&s.session.label),
                    (i + 1).to_string(),
                    csv_field(s.session.boot_id.as_deref().unwrap_or("")),
                    csv_field(&s.session.kind),
                    csv_field(&run.workload),
                    csv_field(&params),
                    csv_field(&run.variant),
                    run.run_index.to_string(),
                    u8::from(run.warmup).to_string(),
                    run.exit_status.map(|e| e.to_string()).unwrap_or_default(),
                    run.start_unix_ns.map(|t| t.to_string()).unwrap_or_default(),
                    csv_field(run.cpus_used.as_deref().unwrap_or("")),
                    csv_field(&v.metric),
                    v.value.to_string(),
                    csv_field(&v.unit),
                ];
                out.push_str(&fields.join(","));
                out.push('\n');
            }
        }
    }
    out
}
