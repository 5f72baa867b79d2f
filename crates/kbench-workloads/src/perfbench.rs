//! `perf bench`'s driver grammar, as `kbench bench` takes it: perf's common options
//! (with kbench's own, `--json`, `--cpus` and `--counters`), the collection and
//! benchmark the words after them name, and kbench's options taken back out of the words
//! after the benchmark name, where the workload's perf-compatible parser must not see
//! them. What is printed is kbench-report's (`bench`).
use crate::perfopt::{OptKind, OptSpec, OptValue, ParsedOptions, Parser};
use crate::{Instruments, Workload, WorkloadError};

static COMMON_OPTIONS: &[OptSpec] = &[
    OptSpec {
        short: Some('f'),
        long: "format",
        kind: OptKind::Str {
            argh: "default|simple",
        },
        help: "Specify the output formatting style",
    },
    OptSpec {
        short: Some('r'),
        long: "repeat",
        kind: OptKind::UInt,
        help: "Specify number of times to repeat the run",
    },
    OptSpec {
        short: None,
        long: "cpus",
        kind: OptKind::Str { argh: "LIST" },
        help: "Pin the benchmark to these CPUs or class:NAME (kbench; also after the name)",
    },
    OptSpec {
        short: None,
        long: "json",
        kind: OptKind::Bool,
        help: "One JSON run record per run (kbench; also after the name)",
    },
    OptSpec {
        short: None,
        long: "counters",
        kind: OptKind::Bool,
        help: "Count perf_event_open counters over the run (kbench; also after the name)",
    },
];

/// perf bench's usage line.
pub const COMMON_USAGE: &str = "perf bench [<common options>] <collection> <benchmark> [<options>]";

/// The parser of perf bench's common options, before the collection.
pub fn common_parser() -> Parser<'static> {
    Parser {
        usage: COMMON_USAGE,
        specs: COMMON_OPTIONS,
        stop_at_non_option: true,
    }
}

/// What the words after perf's common options ask for.
pub enum BenchTarget<'w> {
    Collections,
    Benchmarks(&'w str),
    All(&'w str),
    One(&'static Workload),
    UnknownBenchmark { collection: &'w str, name: &'w str },
    UnknownCollection(&'w str),
}

/// The target, and the words after the benchmark name (none when nothing runs).
pub fn target_of(words: &[String]) -> (BenchTarget<'_>, &[String]) {
    let Some((first, rest)) = words.split_first() else {
        return (BenchTarget::Collections, &[]);
    };
    if first != "sched" {
        // A collection of one benchmark of the same name (`kbench bench ipi ...`).
        return match crate::find(first, first) {
            Some(workload) => (BenchTarget::One(workload), rest),
            None => (BenchTarget::UnknownCollection(first), &[]),
        };
    }
    match rest.split_first() {
        None => (BenchTarget::Benchmarks(first), &[]),
        Some((name, _)) if name == "-h" || name == "--help" => {
            (BenchTarget::Benchmarks(first), &[])
        }
        Some((name, after)) if name == "all" => (BenchTarget::All(first), after),
        Some((name, after)) => match crate::find(first, name) {
            Some(workload) => (BenchTarget::One(workload), after),
            None => (
                BenchTarget::UnknownBenchmark {
                    collection: first,
                    name,
                },
                &[],
            ),
        },
    }
}

/// kbench's own choices for a run: the output format, the CPUs to pin to, and the
/// counters. They may come before the collection (in perf's grammar, with the common
/// options) or after the benchmark name, where the workload's perf-compatible parser
/// must not see them.
pub struct BenchChoices {
    /// The name of the output format (`json` for `--json`), one `is_format` knew.
    pub format: String,
    /// Every `--cpus` given, in order (`None` for `--no-cpus`).
    pub cpus: Vec<Option<String>>,
    pub instruments: Instruments,
}

fn usage(message: impl Into<String>) -> WorkloadError {
    WorkloadError::Usage(message.into())
}

impl BenchChoices {
    /// The choices among perf's common options; `is_format` says whether a `-f` format
    /// is known.
    pub fn before_name(
        parsed: &ParsedOptions,
        is_format: impl Fn(&str) -> bool,
    ) -> Result<Self, WorkloadError> {
        let cpus = parsed
            .values
            .iter()
            .filter_map(|(long, value)| match (*long, value) {
                ("cpus", OptValue::Str(spec)) => Some(spec.clone()),
                _ => None,
            })
            .collect();
        Ok(BenchChoices {
            format: output_format(parsed, is_format)?,
            cpus,
            instruments: Instruments {
                counters: parsed.bool("counters").unwrap_or(false),
            },
        })
    }

    /// Takes `--json`, `--counters`, `--cpus LIST` and `--cpus=LIST` out of the words after the
    /// benchmark name and returns the others, for the workload's parser. Only these
    /// exact spellings count (no abbreviation, which could clash with a workload's
    /// option), and nothing after a `--`, which ends perf's option parsing.
    pub fn take_after_name(&mut self, words: &[String]) -> Result<Vec<String>, WorkloadError> {
        let mut rest = Vec::new();
        let mut words = words.iter();
        while let Some(word) = words.next() {
            match word.as_str() {
                "--" => {
                    rest.push(word.clone());
                    rest.extend(words.by_ref().cloned());
                }
                "--json" => self.format = "json".into(),
                "--counters" => self.instruments.counters = true,
                "--cpus" => {
                    let spec = words
                        .next()
                        .ok_or_else(|| usage("--cpus requires a value: a cpulist or class:NAME"))?;
                    self.cpus.push(Some(spec.clone()));
                }
                _ => match word.strip_prefix("--cpus=") {
                    Some(spec) => self.cpus.push(Some(spec.to_string())),
                    None => rest.push(word.clone()),
                },
            }
        }
        Ok(rest)
    }

    /// The CPUs to pin to. Pinning is recorded with the run, so two `--cpus` are
    /// refused rather than one silently overriding the other.
    pub fn pinning(&self) -> Result<Option<&str>, WorkloadError> {
        match self.cpus.as_slice() {
            [] => Ok(None),
            [spec] => Ok(spec.as_deref()),
            _ => Err(usage(
                "--cpus given more than once: give it once, before the collection or after the benchmark name",
            )),
        }
    }
}

fn output_format(
    parsed: &ParsedOptions,
    is_format: impl Fn(&str) -> bool,
) -> Result<String, WorkloadError> {
    if parsed.uint("repeat") == Some(0) {
        return Err(usage(
            "Invalid repeat option: Must specify a positive value",
        ));
    }
    if parsed.bool("json") == Some(true) {
        return Ok("json".into());
    }
    let name = parsed
        .str("format")
        .flatten()
        .unwrap_or_else(|| "default".into());
    match is_format(&name) {
        true => Ok(name),
        false => Err(usage(format!("Unknown format descriptor: '{name}'"))),
    }
}

/// `--counters` for a workload that cannot count them is a usage error, not ignored:
/// the run would be recorded as if counted.
pub fn check_counters(workload: &Workload, instruments: Instruments) -> Result<(), WorkloadError> {
    if let Some(reason) = instruments
        .counters
        .then(crate::counters::no_perf_events)
        .flatten()
    {
        return Err(usage(format!("--counters: {reason}")));
    }
    if instruments.counters && !workload.takes_counters {
        let takers: Vec<&str> = crate::REGISTRY
            .iter()
            .filter(|w| w.takes_counters)
            .map(|w| w.name)
            .collect();
        return Err(usage(format!(
            "--counters: {} {} has no perf_event_open counters (only {} have)",
            workload.collection,
            workload.name,
            takers.join(", ")
        )));
    }
    Ok(())
}

/// perf's task name for the benchmark, inherited by every worker (`pgrep sched-pipe`).
pub fn set_task_name(workload: &Workload) {
    if let Ok(name) = std::ffi::CString::new(workload.comm) {
        let _ = rustix::thread::set_name(&name);
    }
}
