//! kbench's own JSON export read back (`kbench import` of an export): what the store
//! wrote, checked and upgraded to the current version.
use kbench_record::export::config_hash;
pub use kbench_record::export::{Export, EXPORT_FORMAT, EXPORT_VERSION};
use kbench_record::{mark_legacy_primary, AbSide, RawJson, StoredRun};
use serde_json::Value as Json;

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
        if config_hash(text) != *hash {
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

/// An export of an older version in the current one's terms, each run with its facts
/// read from its record, once, here ([`StoredRun::with_facts`]).
fn upgraded(mut export: Export) -> Export {
    let old = export.version < 2;
    for run in export.sessions.iter_mut().flat_map(|s| s.runs.iter_mut()) {
        if old {
            upgrade_v1_run(run);
        }
        run.facts = Some(run.record_facts());
    }
    if old {
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
