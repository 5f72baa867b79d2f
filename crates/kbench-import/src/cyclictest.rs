//! Reader of cyclictest's text output (rt-tests), in its live and quiet (`-q`) forms.
//!
//! Format, as observed with Debian 12's rt-tests 2.4 (fixtures
//! `tests/fixtures/import/cyclictest_*.txt`); this reader is written from the output,
//! not from cyclictest's source:
//!
//! ```text
//! # /dev/cpu_dma_latency set to 0us
//! policy: fifo: loadavg: 0.48 1.72 3.25 1/84 22765
//!
//! T: 0 (22764) P:80 I:1000 C:   1000 Min:      3 Act:    5 Avg:    6 Max:      20
//! T: 1 (22765) P:80 I:1500 C:    667 Min:      4 Act:    6 Avg:    6 Max:      17
//! ```
//!
//! - One line per measuring thread, `T: <thread> (<tid>)` then `KEY:VALUE` fields;
//!   Min, Avg and Max are latencies in microseconds (with `-N` cyclictest prints
//!   nanoseconds without saying so: such output is read as microseconds).
//! - Live mode redraws the thread lines while it runs (an escape sequence moves the
//!   cursor up before each `policy:` line), so the last line of each thread is its final
//!   figure; quiet mode prints only those final lines.
//! - A thread line whose cycle count `C` is lower than the previous line of that thread
//!   had, or a `#` line after thread lines, starts the next run (a shell loop appending).
//! - A thread that has not completed a cycle (`C: 0`) measured nothing and is left out.
//!
//! Each run's metrics: `thread<N>_latency_min_us`, `..._avg_us`, `..._max_us` for
//! every thread, and `latency_max_us`, the largest of them, which is primary: the worst
//! wake-up latency is what cyclictest is run for. Histogram (`-h`) and verbose (`-v`)
//! output is not read.
use super::{ImportError, Imported, ImportedRun};
use kbench_record::{Direction, MetricValue};
use std::collections::BTreeMap;

/// The `source_format` this reader reports.
pub const FORMAT_NAME: &str = "cyclictest";

/// The primary metric: the largest latency any thread saw.
pub const MAX_LATENCY_METRIC: &str = "latency_max_us";

/// Whether `text` holds a cyclictest thread line.
pub fn looks_like(text: &str) -> bool {
    text.lines()
        .any(|l| parse_thread_line(strip_cursor_moves(l).trim()).is_ok())
}

/// Reads every run of a file of cyclictest output.
pub fn parse(path: &str, text: &str) -> Result<Imported, ImportError> {
    let mut runs = Vec::new();
    let mut current = Run::default();
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = strip_cursor_moves(raw).trim().to_string();
        if line.is_empty() || line.starts_with("policy:") {
            continue;
        }
        if line.starts_with('#') {
            // cyclictest's own notes come before a run's thread lines.
            if !current.threads.is_empty() {
                runs.push(std::mem::take(&mut current).finish(path)?);
            }
            continue;
        }
        let thread = parse_thread_line(&line).map_err(|m| ImportError::new(path, number, m))?;
        let restarted = current
            .threads
            .get(&thread.number)
            .is_some_and(|last| thread.cycles < last.cycles);
        if restarted {
            runs.push(std::mem::take(&mut current).finish(path)?);
        }
        current.start_line.get_or_insert(number);
        current.threads.insert(thread.number, thread);
    }
    if !current.threads.is_empty() {
        runs.push(current.finish(path)?);
    }
    if runs.is_empty() {
        return Err(ImportError::new(
            path,
            1,
            "cyclictest output without any thread line",
        ));
    }
    Ok(Imported {
        source_format: FORMAT_NAME.into(),
        runs,
        summaries: Vec::new(),
    })
}

/// The last line of each thread of one run.
#[derive(Debug, Default)]
struct Run {
    threads: BTreeMap<u32, Thread>,
    start_line: Option<usize>,
}

impl Run {
    /// The run's metrics; a run none of whose threads completed a cycle is an error.
    fn finish(self, path: &str) -> Result<ImportedRun, ImportError> {
        let line = self.start_line.unwrap_or(1);
        let measured: Vec<&Thread> = self.threads.values().filter(|t| t.cycles > 0).collect();
        let Some(max_us) = measured.iter().map(|t| t.max_us).reduce(f64::max) else {
            return Err(ImportError::new(
                path,
                line,
                "the cyclictest run starting here has no thread with a completed cycle",
            ));
        };
        let lower = Direction::LowerIsBetter;
        let mut values = vec![MetricValue::primary(
            MAX_LATENCY_METRIC,
            max_us,
            "us",
            lower,
        )];
        for t in measured {
            for (what, value) in [("min", t.min_us), ("avg", t.avg_us), ("max", t.max_us)] {
                let name = format!("thread{}_latency_{what}_us", t.number);
                values.push(MetricValue::secondary(name, value, "us", lower));
            }
        }
        values.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(ImportedRun {
            workload: FORMAT_NAME.into(),
            params: BTreeMap::from([("threads".to_string(), self.threads.len().into())]),
            variant: FORMAT_NAME.into(),
            values,
            line,
            exit_status: None,
        })
    }
}

/// One `T:` line.
#[derive(Debug, Clone, PartialEq)]
struct Thread {
    number: u32,
    cycles: u64,
    min_us: f64,
    avg_us: f64,
    max_us: f64,
}

/// `T: 0 (22764) P:80 I:1000 C:   1000 Min:      3 Act:    5 Avg:    6 Max:      20`.
fn parse_thread_line(line: &str) -> Result<Thread, String> {
    let unknown = || format!("unrecognized line in cyclictest output: {line:?}");
    let rest = line.strip_prefix("T:").ok_or_else(unknown)?;
    // The thread id in parentheses is padded inside them: `(    0)`.
    let (number, fields) = rest.split_once('(').ok_or_else(unknown)?;
    let fields = fields.split_once(')').ok_or_else(unknown)?.1;
    let number: u32 = number.trim().parse().map_err(|_| unknown())?;
    let fields = parse_fields(fields);
    let field = |key: &str| -> Result<u64, String> {
        let text = fields
            .get(key)
            .ok_or_else(|| format!("cyclictest thread line without `{key}:`: {line:?}"))?;
        text.parse()
            .map_err(|_| format!("the cyclictest `{key}:` value {text:?} is not a whole number"))
    };
    Ok(Thread {
        number,
        cycles: field("C")?,
        min_us: field("Min")? as f64,
        avg_us: field("Avg")? as f64,
        max_us: field("Max")? as f64,
    })
}

/// `P:80 I:1000 C:   1000 Min:  3` → {P: 80, I: 1000, C: 1000, Min: 3}: a word ending
/// in `:` takes the next word as its value (cyclictest pads values to a width).
fn parse_fields(text: &str) -> BTreeMap<&str, &str> {
    let mut fields = BTreeMap::new();
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        let Some((key, value)) = word.split_once(':') else {
            continue;
        };
        let value = if value.is_empty() {
            words.next().unwrap_or_default()
        } else {
            value
        };
        fields.insert(key, value);
    }
    fields
}

/// The line without the `ESC [ <n> A` cursor moves that live mode prints before a redraw.
fn strip_cursor_moves(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        rest = match after[digits..].chars().next() {
            Some(c) if c.is_ascii_alphabetic() => &after[digits + 1..],
            _ => after,
        };
    }
    out.push_str(rest);
    out
}
