//! Reader of kbench's own run records: what `kbench bench --json` (or `-f json`)
//! prints, one JSON [`RunRecord`] per line, one line per run (`-r N` prints N).
//!
//! Each record becomes one run with its workload, parameters, variant and the metrics
//! it declares. A record without metrics (written before runs declared them) is
//! rejected, since which of its figures is primary would be a guess.
use super::{ImportError, Imported, ImportedRun};
use kbench_record::RunRecord;

/// The `source_format` this reader reports.
pub const FORMAT_NAME: &str = "kbench-record";

/// Whether the first non-blank line is a JSON object with a `workload` and `metrics`.
pub fn looks_like(text: &str) -> bool {
    let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return false;
    };
    first.starts_with('{')
        && serde_json::from_str::<serde_json::Value>(first).is_ok_and(|v| {
            v.get("workload").is_some_and(serde_json::Value::is_string)
                && v.get("metrics").is_some_and(serde_json::Value::is_array)
        })
}

/// Reads one run per non-blank line.
pub fn parse(path: &str, text: &str) -> Result<Imported, ImportError> {
    let mut runs = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let record: RunRecord = serde_json::from_str(line).map_err(|e| {
            let message = format!(
                "not a kbench run record (column {}): {}",
                e.column(),
                super::json_message(&e)
            );
            ImportError::new(path, number, message)
        })?;
        runs.push(run_of(record, number).map_err(|m| ImportError::new(path, number, m))?);
    }
    if runs.is_empty() {
        return Err(ImportError::new(path, 1, "no kbench run record found"));
    }
    Ok(Imported {
        source_format: FORMAT_NAME.into(),
        runs,
        summaries: Vec::new(),
    })
}

fn run_of(record: RunRecord, line: usize) -> Result<ImportedRun, String> {
    let primaries = record.metrics.iter().filter(|m| m.is_primary()).count();
    if primaries != 1 {
        return Err(format!(
            "the {} run record declares {primaries} primary metrics, not one",
            record.workload
        ));
    }
    let mut values = record.metrics;
    values.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(ImportedRun {
        workload: record.workload,
        params: record.params,
        variant: record.variant,
        values,
        line,
        exit_status: None,
    })
}
