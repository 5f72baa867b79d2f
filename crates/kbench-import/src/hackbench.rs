//! Reader of hackbench's text output (the rt-tests hackbench, and the original one that
//! prints only its time).
//!
//! Format, as observed with Debian 12's rt-tests 2.4 (fixtures
//! `tests/fixtures/import/hackbench_*.txt`); this reader is written from the output,
//! not from hackbench's source:
//!
//! ```text
//! Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)
//! Each sender will pass 100 messages of 100 bytes
//! Time: 0.069
//! ```
//!
//! Each `Time:` line ends one run; the two lines before it, when present, give its
//! parameters (`threaded`, `groups`, `fds`, `loops`, `datasize`). Several runs in one
//! file (a shell loop appending) are all read. The time becomes `total_sec`, the name
//! perf bench messaging (hackbench's descendant) uses, and the run's primary metric.
use super::{ImportError, Imported, ImportedRun};
use kbench_record::{Direction, MetricValue};
use serde_json::Value;
use std::collections::BTreeMap;

/// The `source_format` this reader reports.
pub const FORMAT_NAME: &str = "hackbench";

const MODE_PREFIX: &str = "Running in ";
const SENDER_PREFIX: &str = "Each sender will pass ";
const TIME_PREFIX: &str = "Time:";

/// Whether `text` looks like hackbench output: a `Running in ... mode with` line or a
/// `Time: <seconds>` line.
pub fn looks_like(text: &str) -> bool {
    text.lines().map(str::trim).any(|l| {
        (l.starts_with(MODE_PREFIX) && l.contains(" mode with "))
            || l.strip_prefix(TIME_PREFIX)
                .is_some_and(|t| parse_seconds(t).is_ok())
    })
}

/// Reads every run of a file of hackbench output.
pub fn parse(path: &str, text: &str) -> Result<Imported, ImportError> {
    let mut runs = Vec::new();
    let mut params: BTreeMap<String, Value> = BTreeMap::new();
    let mut start_line = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let at = |message: String| ImportError::new(path, number, message);
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        start_line.get_or_insert(number);
        if let Some(rest) = line.strip_prefix(MODE_PREFIX) {
            params.extend(parse_mode_line(rest).map_err(at)?);
        } else if let Some(rest) = line.strip_prefix(SENDER_PREFIX) {
            params.extend(parse_sender_line(rest).map_err(at)?);
        } else if let Some(rest) = line.strip_prefix(TIME_PREFIX) {
            let seconds = parse_seconds(rest).map_err(at)?;
            runs.push(ImportedRun {
                workload: FORMAT_NAME.into(),
                params: std::mem::take(&mut params),
                // One loop semantics: whatever hackbench version printed it.
                variant: FORMAT_NAME.into(),
                values: vec![MetricValue::primary(
                    "total_sec",
                    seconds,
                    "s",
                    Direction::LowerIsBetter,
                )],
                line: start_line.take().unwrap_or(number),
                exit_status: None,
            });
        } else {
            return Err(at(format!(
                "unrecognized line in hackbench output: {line:?}"
            )));
        }
    }
    if let Some(line) = start_line {
        return Err(ImportError::new(
            path,
            line,
            "the hackbench run starting here has no `Time:` line",
        ));
    }
    if runs.is_empty() {
        return Err(ImportError::new(
            path,
            1,
            "hackbench output without any result",
        ));
    }
    Ok(Imported {
        source_format: FORMAT_NAME.into(),
        runs,
        summaries: Vec::new(),
    })
}

/// `process|threaded mode with G groups using F file descriptors each (== T tasks)`.
fn parse_mode_line(rest: &str) -> Result<[(String, Value); 3], String> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let malformed = || format!("malformed hackbench mode line: \"{MODE_PREFIX}{rest}\"");
    match words.as_slice() {
        [mode, "mode", "with", groups, "groups", "using", fds, "file", "descriptors", "each", ..] =>
        {
            let threaded = match *mode {
                "process" => false,
                "threaded" => true,
                _ => return Err(malformed()),
            };
            Ok([
                ("threaded".into(), threaded.into()),
                ("groups".into(), parse_count(groups, "groups")?.into()),
                ("fds".into(), parse_count(fds, "file descriptors")?.into()),
            ])
        }
        _ => Err(malformed()),
    }
}

/// `L messages of S bytes`.
fn parse_sender_line(rest: &str) -> Result<[(String, Value); 2], String> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.as_slice() {
        [loops, "messages", "of", size, "bytes"] => Ok([
            ("loops".into(), parse_count(loops, "messages")?.into()),
            ("datasize".into(), parse_count(size, "bytes")?.into()),
        ]),
        _ => Err(format!(
            "malformed hackbench sender line: \"{SENDER_PREFIX}{rest}\""
        )),
    }
}

fn parse_count(word: &str, what: &str) -> Result<u64, String> {
    word.parse()
        .map_err(|_| format!("the number of {what} {word:?} is not a whole number"))
}

/// The text after `Time:`, e.g. ` 0.069`.
fn parse_seconds(rest: &str) -> Result<f64, String> {
    let word = rest.trim();
    word.parse::<f64>()
        .ok()
        .filter(|t| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| format!("the hackbench time {word:?} is not a number of seconds"))
}
