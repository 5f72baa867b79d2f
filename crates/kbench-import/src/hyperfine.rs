//! Reader of hyperfine's JSON export (`hyperfine --export-json FILE ...`).
//!
//! The file is `{"results": [...]}` with one object per benchmarked command: `command`,
//! the per-run `times` (seconds) and `exit_codes`, optional `parameters` (from `-P`/`-L`),
//! and summary fields (`mean`, `stddev`, ...) that are not read because the runs are.
//! hyperfine 1.15 writes `user` and `system` as means (scalars); newer versions may write
//! per-run arrays, and add `memory_usage_byte` per run. Per-run arrays are read, scalars
//! (means over the runs) are not, since an [`ImportedRun`] holds one run's values.
//!
//! Each time becomes one run of workload `command` with params `{"command": ...}` plus
//! the parameters, values `wall_sec` (and `user_sec`, `sys_sec`, `max_rss_bytes` when
//! per-run), the exit status (`null` when hyperfine saw a signal), and variant
//! `hyperfine`: an external command has one loop semantics, whatever it is.
use super::{ImportError, Imported, ImportedRun};
use kbench_record::{Direction, MetricValue, WorkloadId};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The `source_format` this reader reports.
pub const FORMAT_NAME: &str = "hyperfine";

/// Whether `text` looks like a hyperfine export: a JSON object mentioning `"results"`.
/// A truncated file still matches, so its reader can say where it ends.
pub fn looks_like(text: &str) -> bool {
    text.trim_start().starts_with('{') && text.contains("\"results\"")
}

#[derive(Deserialize)]
struct Export {
    results: Vec<CommandResult>,
}

#[derive(Deserialize)]
struct CommandResult {
    command: String,
    times: Vec<f64>,
    #[serde(default)]
    exit_codes: Vec<Option<i32>>,
    #[serde(default)]
    parameters: BTreeMap<String, Value>,
    #[serde(default)]
    user: Option<PerRunOrMean>,
    #[serde(default)]
    system: Option<PerRunOrMean>,
    #[serde(default)]
    memory_usage_byte: Option<PerRunOrMean>,
}

/// A field written either per run or as one aggregate, depending on hyperfine's version.
#[derive(Deserialize)]
#[serde(untagged)]
enum PerRunOrMean {
    PerRun(Vec<f64>),
    /// Accepted so that hyperfine 1.15's files parse; the value is not needed.
    Mean(#[allow(dead_code)] f64),
}

/// Reads a hyperfine JSON export into one run per measured time.
pub fn parse(path: &str, text: &str) -> Result<Imported, ImportError> {
    let export: Export = serde_json::from_str(text).map_err(|e| json_error(path, &e))?;
    let result_lines = result_object_lines(text);
    let mut runs = Vec::new();
    for (index, result) in export.results.iter().enumerate() {
        let line = result_lines.get(index).copied().unwrap_or(1);
        runs.extend(runs_of(result, line).map_err(|m| ImportError::new(path, line, m))?);
    }
    if runs.is_empty() {
        return Err(ImportError::new(
            path,
            1,
            "hyperfine export without any measured run",
        ));
    }
    Ok(Imported {
        source_format: FORMAT_NAME.into(),
        runs,
        summaries: Vec::new(),
    })
}

/// serde_json's message, the line in the error's own field and the column in the message.
fn json_error(path: &str, error: &serde_json::Error) -> ImportError {
    ImportError::new(
        path,
        error.line().max(1),
        format!(
            "invalid hyperfine JSON (column {}): {}",
            error.column(),
            super::json_message(error)
        ),
    )
}

/// The runs of one command.
fn runs_of(result: &CommandResult, line: usize) -> Result<Vec<ImportedRun>, String> {
    let n = result.times.len();
    if !result.exit_codes.is_empty() && result.exit_codes.len() != n {
        return Err(format!(
            "{:?}: {} exit codes for {n} times",
            result.command,
            result.exit_codes.len()
        ));
    }
    let user = per_run(&result.user, n, "user", &result.command)?;
    let system = per_run(&result.system, n, "system", &result.command)?;
    let rss = per_run(
        &result.memory_usage_byte,
        n,
        "memory_usage_byte",
        &result.command,
    )?;
    let mut params = result.parameters.clone();
    params.insert("command".into(), result.command.clone().into());
    let runs = (0..n)
        .map(|i| {
            // The wall time is what hyperfine reports; the rest is secondary.
            let lower = Direction::LowerIsBetter;
            let mut values = vec![MetricValue::primary(
                "wall_sec",
                result.times[i],
                "s",
                lower,
            )];
            let optional = [
                ("user_sec", user, "s"),
                ("sys_sec", system, "s"),
                ("max_rss_bytes", rss, "B"),
            ];
            for (metric, series, unit) in optional {
                if let Some(series) = series {
                    values.push(MetricValue::secondary(metric, series[i], unit, lower));
                }
            }
            values.sort_by(|a, b| a.name.cmp(&b.name));
            ImportedRun {
                workload: WorkloadId::Command.key().into(),
                params: params.clone(),
                variant: FORMAT_NAME.into(),
                values,
                line,
                exit_status: result.exit_codes.get(i).copied().flatten(),
            }
        })
        .collect();
    Ok(runs)
}

/// A per-run series, if the field is one; an aggregate gives `None`.
fn per_run<'a>(
    field: &'a Option<PerRunOrMean>,
    n: usize,
    name: &str,
    command: &str,
) -> Result<Option<&'a [f64]>, String> {
    match field {
        Some(PerRunOrMean::PerRun(series)) if series.len() != n => Err(format!(
            "{command:?}: {} `{name}` values for {n} times",
            series.len()
        )),
        Some(PerRunOrMean::PerRun(series)) => Ok(Some(series)),
        Some(PerRunOrMean::Mean(_)) | None => Ok(None),
    }
}

/// The 1-based line of each object directly inside the top-level `results` array, found
/// by a small scan that tracks nesting and skips strings (serde keeps no positions).
fn result_object_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 1;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if c == '\n' {
            line += 1;
        }
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                // Depth 1 is the root object, 2 the `results` array (its only array).
                if c == '{' && depth == 2 {
                    lines.push(line);
                }
                depth += 1;
            }
            '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    lines
}
