//! kbench's own export: every session of a label with its runs, as JSON (complete,
//! re-importable) or CSV (one line per value, for spreadsheets).
use crate::store::{SessionWithRuns, Store, StoreError};
use crate::NewSession;
use serde::{Deserialize, Serialize};

/// The marker and version of the JSON export format.
pub const EXPORT_FORMAT: &str = "kbench-export";
pub const EXPORT_VERSION: u32 = 1;

/// A label's sessions, as `kbench export --format json` writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Export {
    pub format: String,
    pub version: u32,
    pub label: String,
    pub sessions: Vec<SessionWithRuns>,
}

/// Everything stored under `label`.
pub fn export_label(store: &Store, label: &str) -> Result<Export, StoreError> {
    let runs = store.runs(label)?;
    let summaries = store.summaries(label)?;
    let sessions = store
        .sessions(label)?
        .into_iter()
        .map(|s| SessionWithRuns {
            session: NewSession {
                label: s.label.clone(),
                kind: s.kind.clone(),
                boot_id: s.boot_id.clone(),
                started_unix_ns: s.started_unix_ns,
                kbench_version: s.kbench_version.clone(),
                command_line: s.command_line.clone(),
                seed: s.seed,
                environment: s.environment.clone(),
                source: s.source.clone(),
            },
            ended_unix_ns: s.ended_unix_ns,
            runs: runs
                .iter()
                .filter(|r| r.session_id == s.id)
                .map(|r| r.run.clone())
                .collect(),
            summaries: summaries
                .iter()
                .filter(|m| m.session_id == s.id)
                .cloned()
                .collect(),
        })
        .collect();
    Ok(Export {
        format: EXPORT_FORMAT.into(),
        version: EXPORT_VERSION,
        label: label.into(),
        sessions,
    })
}

/// Reads a kbench JSON export; `None` when the text is not one (another format).
pub fn parse_export(text: &str) -> Option<Result<Export, String>> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    if value.get("format").and_then(|f| f.as_str()) != Some(EXPORT_FORMAT) {
        return None;
    }
    Some(
        serde_json::from_value::<Export>(value)
            .map_err(|e| format!("a kbench export, but malformed: {e}"))
            .and_then(|e| {
                if e.version > EXPORT_VERSION {
                    Err(format!(
                        "export version {} is newer than this kbench ({EXPORT_VERSION})",
                        e.version
                    ))
                } else {
                    Ok(e)
                }
            }),
    )
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
