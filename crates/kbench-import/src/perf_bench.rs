//! Reader of `perf bench sched` text output (messaging, pipe, seccomp-notify).
//!
//! The formats are those of docs/perf-compat.md §1.1 (driver headers and
//! `sched all`), §2.3 (messaging), §3.3 (pipe), §4.3 (seccomp-notify) and the raw
//! transcripts of §8, observed with Debian's perf 6.1. This reader is written from that
//! description, not from perf's source.
//!
//! Accepted, in any mix and any number of runs (a shell loop appending to one file):
//! - default format: a `# Running 'sched/<name>' benchmark:` header, the benchmark's own
//!   `#` lines, `Total time: <s> [sec]`, and for pipe and seccomp-notify the
//!   `usecs/op` and `ops/sec` lines;
//! - `sched all`: `# Running sched/<name> benchmark...` headers before each benchmark;
//! - simple format (`-f simple`): a bare `<s>.<ms>` line per run, workload `unknown`
//!   unless a `sched all` header names it.
//!
//! **Variant.** perf ≤ 6.14 ran the pipe loop as a ping-pong, ≥ 6.15 symmetrically, and
//! the output does not say which, so pipe runs (and runs of unknown workload) get the
//! variant `perf-unknown-version`, which kbench never pools with its own runs. Two hints
//! resolve it, applying to the runs after them:
//! - a line `perf version X.Y...` (what `perf --version` prints, e.g. when a script logs
//!   it above the results): ≤ 6.14 gives `pingpong`, ≥ 6.15 `symmetric`;
//! - a line `# kbench-variant: <name>` (written by hand or by a kbench script), which
//!   sets the variant of every later run verbatim.
//!
//! Messaging and seccomp-notify have a single loop in every perf version, so their runs
//! get the variant `perf`, the one kbench's own implementations record.
use super::{ImportError, Imported, ImportedRun};
use kbench_record::{Direction, MetricValue, WorkloadId};
use serde_json::Value;
use std::collections::BTreeMap;

/// The `source_format` this reader reports.
pub const FORMAT_NAME: &str = "perf-bench";

/// The variant of a pipe run whose perf version is unknown (see the module docs).
pub const UNKNOWN_VERSION_VARIANT: &str = "perf-unknown-version";

/// Whether `text` looks like perf bench output: a driver header, a `Total time:` line, or
/// a first non-blank line that is a bare simple-format time.
pub fn looks_like(text: &str) -> bool {
    let mut non_blank = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first_is_simple = non_blank
        .next()
        .is_some_and(|l| parse_simple_time(l).is_some());
    first_is_simple
        || text.lines().any(|l| {
            let l = l.trim();
            l.starts_with("# Running ") || l.starts_with("Total time:")
        })
}

/// Reads a whole file of perf bench output.
pub fn parse(path: &str, text: &str) -> Result<Imported, ImportError> {
    let runs = parse_lines(path, text.lines().enumerate().map(|(i, l)| (i + 1, l)))?;
    if runs.is_empty() {
        return Err(ImportError::new(
            path,
            1,
            "perf bench output without any result",
        ));
    }
    Ok(Imported {
        source_format: FORMAT_NAME.into(),
        runs,
        summaries: Vec::new(),
    })
}

/// Reads numbered lines (1-based) of perf bench output into runs, in order.
fn parse_lines<'a>(
    path: &str,
    lines: impl IntoIterator<Item = (usize, &'a str)>,
) -> Result<Vec<ImportedRun>, ImportError> {
    let mut reader = Reader::default();
    for (number, text) in lines {
        let line = classify(text).map_err(|m| ImportError::new(path, number, m))?;
        reader
            .feed(number, line)
            .map_err(|(line, m)| ImportError::new(path, line, m))?;
    }
    reader
        .finish()
        .map_err(|(line, m)| ImportError::new(path, line, m))?;
    Ok(reader.runs)
}

/// What one line of perf bench output says.
#[derive(Debug, Clone, PartialEq)]
enum Line {
    Blank,
    /// `# Running 'sched/pipe' benchmark:` (default format) or
    /// `# Running sched/pipe benchmark...` (`sched all`, printed in both formats).
    Header {
        workload: String,
    },
    /// `# Executed N pipe operations between two processes|threads`.
    PipeInfo {
        loops: i64,
        threaded: bool,
    },
    /// `# Executed N system calls` (seccomp-notify).
    SeccompInfo {
        loops: u64,
    },
    /// `# 20 sender and receiver processes|threads per group`.
    MessagingTasks {
        threaded: bool,
    },
    /// `# G groups == T processes|threads run`.
    MessagingGroups {
        groups: u64,
    },
    /// `Total time: 0.084 [sec]`.
    Total(f64),
    /// `4.246500 usecs/op` (may be `inf` for `-l 0`).
    UsecsPerOp(f64),
    /// `235488 ops/sec`.
    OpsPerSec(f64),
    /// A simple-format result: `0.083`.
    Simple(f64),
    /// A variant hint (see the module docs).
    VariantHint(String),
    /// Another `#` line: a comment, kept out of the data.
    Comment,
}

/// Recognizes one line; an error says what is wrong with a line that starts like a
/// known one, or that the line is unknown.
fn classify(raw: &str) -> Result<Line, String> {
    let line = raw.trim();
    if line.is_empty() {
        return Ok(Line::Blank);
    }
    if let Some(comment) = line.strip_prefix('#') {
        return classify_comment(comment.trim());
    }
    if let Some(rest) = line.strip_prefix("Total time:") {
        return parse_total(rest).map(Line::Total);
    }
    if let Some(number) = line.strip_suffix("usecs/op") {
        return parse_number(number.trim(), "usecs/op").map(Line::UsecsPerOp);
    }
    if let Some(number) = line.strip_suffix("ops/sec") {
        return parse_number(number.trim(), "ops/sec").map(Line::OpsPerSec);
    }
    if let Some(version) = line.strip_prefix("perf version ") {
        return Ok(Line::VariantHint(variant_of_perf_version(version).into()));
    }
    if let Some(seconds) = parse_simple_time(line) {
        return Ok(Line::Simple(seconds));
    }
    Err(format!("unrecognized line in perf bench output: {line:?}"))
}

/// Recognizes the text after a leading `#`.
fn classify_comment(comment: &str) -> Result<Line, String> {
    if let Some(rest) = comment.strip_prefix("Running ") {
        return parse_header(rest);
    }
    if let Some(rest) = comment.strip_prefix("Executed ") {
        return parse_executed(rest);
    }
    if let Some(variant) = comment.strip_prefix("kbench-variant:") {
        let variant = variant.trim();
        if variant.is_empty() {
            return Err("`# kbench-variant:` without a variant name".into());
        }
        return Ok(Line::VariantHint(variant.into()));
    }
    if comment.contains("sender and receiver") {
        return parse_messaging_tasks(comment);
    }
    if comment.contains(" groups == ") {
        return parse_messaging_groups(comment);
    }
    Ok(Line::Comment)
}

/// `'sched/pipe' benchmark:` or `sched/pipe benchmark...`.
fn parse_header(rest: &str) -> Result<Line, String> {
    let name = rest
        .strip_suffix(" benchmark:")
        .and_then(|n| n.strip_prefix('\'')?.strip_suffix('\''))
        .or_else(|| rest.strip_suffix(" benchmark..."));
    match name {
        Some(workload) if !workload.is_empty() && !workload.contains(char::is_whitespace) => {
            Ok(Line::Header {
                workload: workload.into(),
            })
        }
        _ => Err(format!("malformed benchmark header: \"# Running {rest}\"")),
    }
}

/// `N pipe operations between two processes|threads` or `N system calls`.
fn parse_executed(rest: &str) -> Result<Line, String> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.as_slice() {
        [n, "pipe", "operations", "between", "two", kind] => Ok(Line::PipeInfo {
            // perf prints the loop count signed (§3.5: `-l -5` prints `-5`).
            loops: n.parse().map_err(|_| bad_count(n, "pipe operations"))?,
            threaded: parse_task_kind(kind)?,
        }),
        [n, "system", "calls"] => Ok(Line::SeccompInfo {
            loops: n.parse().map_err(|_| bad_count(n, "system calls"))?,
        }),
        _ => Err(format!(
            "unrecognized `# Executed` line: \"# Executed {rest}\""
        )),
    }
}

/// `20 sender and receiver processes|threads per group`.
fn parse_messaging_tasks(comment: &str) -> Result<Line, String> {
    let words: Vec<&str> = comment.split_whitespace().collect();
    match words.as_slice() {
        [n, "sender", "and", "receiver", kind, "per", "group"] if n.parse::<u64>().is_ok() => {
            Ok(Line::MessagingTasks {
                threaded: parse_task_kind(kind)?,
            })
        }
        _ => Err(format!("malformed messaging header line: \"# {comment}\"")),
    }
}

/// `G groups == T processes|threads run`.
fn parse_messaging_groups(comment: &str) -> Result<Line, String> {
    let words: Vec<&str> = comment.split_whitespace().collect();
    match words.as_slice() {
        [g, "groups", "==", t, kind, "run"] if t.parse::<u64>().is_ok() => {
            parse_task_kind(kind)?;
            Ok(Line::MessagingGroups {
                groups: g.parse().map_err(|_| bad_count(g, "groups"))?,
            })
        }
        _ => Err(format!("malformed messaging header line: \"# {comment}\"")),
    }
}

fn parse_task_kind(word: &str) -> Result<bool, String> {
    match word {
        "processes" => Ok(false),
        "threads" => Ok(true),
        _ => Err(format!("expected `processes` or `threads`, found {word:?}")),
    }
}

fn bad_count(word: &str, what: &str) -> String {
    format!("the number of {what} {word:?} is not an integer")
}

/// The text after `Total time:`, i.e. `0.084 [sec]`.
fn parse_total(rest: &str) -> Result<f64, String> {
    let number = rest.trim().strip_suffix("[sec]").map(str::trim);
    match number {
        // perf prints `<sec>.<msec>` from integers, so a non-finite total is corrupt.
        Some(n) => parse_number(n, "Total time").and_then(|t| {
            t.is_finite()
                .then_some(t)
                .ok_or(format!("the Total time {n:?} is not finite"))
        }),
        None => Err(format!(
            "`Total time:` line without `[sec]`: {:?}",
            rest.trim()
        )),
    }
}

/// A number perf printed with `%lf`, `%d` or `%lu.%03lu`; `inf` and `-nan` occur for
/// degenerate loop counts (§1.2), so they parse here and are dropped later.
fn parse_number(word: &str, what: &str) -> Result<f64, String> {
    let lowered = word.to_ascii_lowercase();
    let unsigned = lowered.trim_start_matches(['-', '+']);
    if unsigned == "nan" {
        return Ok(f64::NAN);
    }
    word.parse::<f64>()
        .map_err(|_| format!("the {what} value {word:?} is not a number"))
}

/// A simple-format line: digits, a dot, digits (perf prints `<sec>.<msec>`).
fn parse_simple_time(line: &str) -> Option<f64> {
    let (whole, frac) = line.split_once('.')?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if all_digits(whole) && all_digits(frac) {
        line.parse().ok().filter(|t: &f64| t.is_finite())
    } else {
        None
    }
}

/// The pipe loop order a perf version ran: the change landed in 6.15 (§0).
fn variant_of_perf_version(version: &str) -> &'static str {
    let mut parts = version.trim().split(['.', '-', ' ']);
    let major = parts.next().and_then(|p| p.parse::<u32>().ok());
    let minor = parts.next().and_then(|p| p.parse::<u32>().ok());
    match (major, minor) {
        (Some(major), Some(minor)) if (major, minor) >= (6, 15) => "symmetric",
        (Some(major), Some(_)) if major > 0 => "pingpong",
        _ => UNKNOWN_VERSION_VARIANT,
    }
}

/// The two per-op lines of pipe and seccomp-notify.
#[derive(Debug, Clone, Copy)]
enum PerOp {
    UsecsPerOp,
    OpsPerSec,
}

impl PerOp {
    /// The metric name and the text perf prints.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            PerOp::UsecsPerOp => ("usecs_per_op", "usecs/op"),
            PerOp::OpsPerSec => ("ops_per_sec", "ops/sec"),
        }
    }
}

/// A run being assembled from its lines.
#[derive(Debug)]
struct Pending {
    workload: String,
    params: BTreeMap<String, Value>,
    variant: String,
    values: BTreeMap<String, f64>,
    start_line: usize,
    /// The line of `Total time:`, once seen.
    total_line: Option<usize>,
    /// Set by the `# Executed` lines: pipe and seccomp-notify print per-op figures after
    /// the total in default format, so a run ending without them was cut short.
    expects_per_op: bool,
    /// Whether any line after the header has been seen (a `sched all` header followed
    /// directly by a simple-format time is one run).
    has_body: bool,
    /// Whether the `usecs/op` and `ops/sec` lines came (their values may be dropped).
    saw_usecs_per_op: bool,
    saw_ops_per_sec: bool,
}

impl Pending {
    fn new(workload: &str, start_line: usize) -> Pending {
        Pending {
            workload: workload.into(),
            params: BTreeMap::new(),
            variant: String::new(),
            values: BTreeMap::new(),
            start_line,
            total_line: None,
            expects_per_op: false,
            has_body: false,
            saw_usecs_per_op: false,
            saw_ops_per_sec: false,
        }
    }
}

/// A malformed input: the 1-based line to blame and what is wrong.
type Blame = (usize, String);

#[derive(Debug, Default)]
struct Reader {
    runs: Vec<ImportedRun>,
    current: Option<Pending>,
    /// The variant set by the last hint, if any.
    hint: Option<String>,
}

impl Reader {
    fn feed(&mut self, number: usize, line: Line) -> Result<(), Blame> {
        match line {
            Line::Blank | Line::Comment => {}
            Line::VariantHint(variant) => self.hint = Some(variant),
            Line::Header { workload } => self.start_run(&workload, number)?,
            Line::PipeInfo { loops, threaded } => {
                let run = self.run_for_info(WorkloadId::Pipe, number)?;
                run.params.insert("loop".into(), loops.into());
                run.params.insert("threaded".into(), threaded.into());
                run.expects_per_op = true;
            }
            Line::SeccompInfo { loops } => {
                let run = self.run_for_info(WorkloadId::SeccompNotify, number)?;
                run.params.insert("loop".into(), loops.into());
                run.expects_per_op = true;
            }
            Line::MessagingTasks { threaded } => {
                let run = self.run_for_info(WorkloadId::Messaging, number)?;
                run.params.insert("thread".into(), threaded.into());
            }
            Line::MessagingGroups { groups } => {
                let run = self.run_for_info(WorkloadId::Messaging, number)?;
                run.params.insert("group".into(), groups.into());
            }
            Line::Total(seconds) => self.total(number, seconds)?,
            Line::UsecsPerOp(v) => self.per_op_value(number, PerOp::UsecsPerOp, v)?,
            Line::OpsPerSec(v) => self.per_op_value(number, PerOp::OpsPerSec, v)?,
            Line::Simple(seconds) => self.simple(number, seconds)?,
        }
        Ok(())
    }

    /// The run a benchmark's own `#` line belongs to: the open one if it has no total yet,
    /// else a new headerless run (output whose header was cut off).
    fn run_for_info(&mut self, id: WorkloadId, number: usize) -> Result<&mut Pending, Blame> {
        let workload = id.key();
        let reusable = self
            .current
            .as_ref()
            .is_some_and(|run| run.total_line.is_none());
        if !reusable {
            self.start_run(workload, number)?;
        }
        let run = self.current.as_mut().expect("just ensured");
        if run.workload != workload {
            return Err((
                number,
                format!(
                    "a {workload} line inside the {} run that starts on line {}",
                    run.workload, run.start_line
                ),
            ));
        }
        run.has_body = true;
        Ok(run)
    }

    fn total(&mut self, number: usize, seconds: f64) -> Result<(), Blame> {
        let has_open_run = self
            .current
            .as_ref()
            .is_some_and(|r| r.total_line.is_none());
        if !has_open_run {
            // A total without a header (or a second one): a run of unknown workload.
            self.start_run(WorkloadId::Unknown.key(), number)?;
        }
        let run = self.current.as_mut().expect("just ensured");
        run.total_line = Some(number);
        run.has_body = true;
        insert_finite(&mut run.values, "total_sec", seconds);
        Ok(())
    }

    fn per_op_value(&mut self, number: usize, which: PerOp, value: f64) -> Result<(), Blame> {
        let (metric, label) = which.names();
        let Some(run) = self.current.as_mut().filter(|r| r.total_line.is_some()) else {
            let message = format!("a `{label}` line without a `Total time:` line before it");
            return Err((number, message));
        };
        let seen = match which {
            PerOp::UsecsPerOp => &mut run.saw_usecs_per_op,
            PerOp::OpsPerSec => &mut run.saw_ops_per_sec,
        };
        if std::mem::replace(seen, true) {
            return Err((number, format!("a second `{label}` line in one run")));
        }
        insert_finite(&mut run.values, metric, value);
        Ok(())
    }

    fn simple(&mut self, number: usize, seconds: f64) -> Result<(), Blame> {
        let header_waiting = self.current.as_ref().is_some_and(|r| !r.has_body);
        if !header_waiting {
            self.start_run(WorkloadId::Unknown.key(), number)?;
        }
        let run = self.current.as_mut().expect("just ensured");
        run.total_line = Some(number);
        run.has_body = true;
        insert_finite(&mut run.values, "total_sec", seconds);
        self.close_current()
    }

    /// Closes the open run and opens one; the variant hint in force now is its own.
    fn start_run(&mut self, workload: &str, number: usize) -> Result<(), Blame> {
        self.close_current()?;
        let mut run = Pending::new(workload, number);
        run.variant = self
            .hint
            .clone()
            .unwrap_or_else(|| default_variant(workload).into());
        self.current = Some(run);
        Ok(())
    }

    /// Validates and stores the open run, if any; the error carries the line to blame.
    fn close_current(&mut self) -> Result<(), Blame> {
        let Some(run) = self.current.take() else {
            return Ok(());
        };
        let Some(total_line) = run.total_line else {
            return Err((
                run.start_line,
                format!(
                    "the {} run starting here has no `Total time:` line",
                    run.workload
                ),
            ));
        };
        // In simple format the `# Executed` line is absent, so this only fires for
        // default-format output cut short after its total.
        if run.expects_per_op && !(run.saw_usecs_per_op && run.saw_ops_per_sec) {
            return Err((
                total_line,
                format!(
                    "the {} run's `Total time:` line is not followed by its `usecs/op` and `ops/sec` lines",
                    run.workload
                ),
            ));
        }
        self.runs.push(ImportedRun {
            workload: run.workload,
            params: run.params,
            variant: run.variant,
            values: metrics(&run.values),
            line: run.start_line,
            exit_status: None,
        });
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Blame> {
        self.close_current()
    }
}

/// The variant of a run without a hint (see the module docs).
fn default_variant(workload: &str) -> &'static str {
    match WorkloadId::of(workload) {
        Some(WorkloadId::Messaging | WorkloadId::SeccompNotify) => "perf",
        _ => UNKNOWN_VERSION_VARIANT,
    }
}

/// The values of a run as metrics: usecs/op primary when perf printed it (pipe,
/// seccomp-notify), else the total time (messaging, simple format).
fn metrics(values: &BTreeMap<String, f64>) -> Vec<MetricValue> {
    let primary = if values.contains_key("usecs_per_op") {
        "usecs_per_op"
    } else {
        "total_sec"
    };
    values
        .iter()
        .map(|(name, &value)| {
            let (unit, direction) = match name.as_str() {
                "usecs_per_op" => ("us/op", Direction::LowerIsBetter),
                "ops_per_sec" => ("ops/s", Direction::HigherIsBetter),
                _ => ("s", Direction::LowerIsBetter),
            };
            if name == primary {
                MetricValue::primary(name.as_str(), value, unit, direction)
            } else {
                MetricValue::secondary(name.as_str(), value, unit, direction)
            }
        })
        .collect()
}

/// perf prints `inf usecs/op` for `-l 0` (§3.5); a non-finite value carries no
/// measurement and cannot be stored or exported as JSON, so it is left out.
fn insert_finite(values: &mut BTreeMap<String, f64>, metric: &str, value: f64) {
    if value.is_finite() {
        values.insert(metric.into(), value);
    }
}
