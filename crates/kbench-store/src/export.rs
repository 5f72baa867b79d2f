//! kbench's own export: every session of a label with its runs, as JSON (complete,
//! re-importable) or CSV (one line per value, for spreadsheets).
use crate::store::{SessionRow, SessionWithRuns, Store, StoreError, SummaryRow};
use kbench_record::{mark_legacy_primary, AbSide, RawJson, StoredRun};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The marker and version of the JSON export format.
pub const EXPORT_FORMAT: &str = "kbench-export";
/// 2: typed failures (`error`), `ab_side`, primary values, structured `source`, and
/// pipe's `perf_signed_loops` in the record instead of a parameter. Version 1 exports
/// are read and upgraded. Kernel configs came later without a new version: a reader
/// that does not know them ignores them, and loses nothing else.
pub const EXPORT_VERSION: u32 = 2;

/// A label's sessions, as `kbench export --format json` writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Export {
    pub format: String,
    pub version: u32,
    pub label: String,
    pub sessions: Vec<SessionWithRuns>,
    /// The kernel configs the sessions ran on, each once, by hash
    /// ([`SessionWithRuns::kernel_config_hash`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kernel_configs: BTreeMap<String, String>,
}

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
                    check_kernel_configs(&e).map(|()| upgraded(e))
                }
            }),
    )
}

/// Every config is the text its hash names, and every session's config is there: an
/// export edited by hand must not attach one kernel's config to another's sessions.
fn check_kernel_configs(export: &Export) -> Result<(), String> {
    for (hash, text) in &export.kernel_configs {
        if crate::config_hash(text) != *hash {
            return Err(format!(
                "a kbench export, but malformed: kernel config {hash} is not the text of that hash"
            ));
        }
    }
    let missing = export
        .sessions
        .iter()
        .filter_map(|s| s.kernel_config_hash.as_ref())
        .find(|h| !export.kernel_configs.contains_key(*h));
    match missing {
        Some(hash) => Err(format!(
            "a kbench export, but malformed: no kernel config {hash} for a session that ran on it"
        )),
        None => Ok(()),
    }
}

/// An export of an older version in the current one's terms.
fn upgraded(mut export: Export) -> Export {
    if export.version < 2 {
        for run in export.sessions.iter_mut().flat_map(|s| s.runs.iter_mut()) {
            upgrade_v1_run(run);
        }
        export.version = EXPORT_VERSION;
    }
    export
}

/// A version 1 run: ab kept its side in the record (the workload's record one level
/// down), a failure was variant `failed` with `{"error": ...}` as its record, pipe's
/// signed loop count was a parameter, and no value was marked primary.
fn upgrade_v1_run(run: &mut StoredRun) {
    let mut record = run.record.take().and_then(|r| r.value());
    if run.workload == "ab" {
        if let Some(Json::Object(mut outer)) = record.take() {
            match outer.get("side").and_then(Json::as_str) {
                Some(side) => {
                    let variant = outer.get("variant").and_then(Json::as_str);
                    run.ab_side = Some(AbSide {
                        side: side.into(),
                        workload: text_of(outer.get("workload")),
                        params: outer
                            .get("params")
                            .and_then(|p| serde_json::from_value(p.clone()).ok())
                            .unwrap_or_default(),
                        variant: text_of(
                            variant.filter(|v| *v != "failed").map(Json::from).as_ref(),
                        ),
                    });
                    record = outer.remove("record").filter(|r| !r.is_null());
                }
                None => record = Some(Json::Object(outer)),
            }
        }
    }
    if run.variant == "failed" {
        let error = record.as_ref().and_then(|r| r.get("error")?.as_str());
        run.error = Some(error.unwrap_or("failed").to_string());
        record = None;
        run.variant = if run.workload == "ab" { "ab" } else { "" }.into();
    }
    run.params.remove("signed_loops");
    if let Some(side) = run.ab_side.as_mut() {
        side.params.remove("signed_loops");
    }
    if let Some(Json::Object(fields)) = record.as_mut() {
        let loops = fields
            .get_mut("params")
            .and_then(|p| p.as_object_mut()?.remove("signed_loops"));
        if let Some(loops) = loops {
            fields.insert("perf_signed_loops".into(), loops);
        }
    }
    run.record = record.and_then(|r| RawJson::from_value(&r));
    mark_legacy_primary(&run.workload, &mut run.values);
}

fn text_of(value: Option<&Json>) -> String {
    value.and_then(Json::as_str).unwrap_or_default().to_string()
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
