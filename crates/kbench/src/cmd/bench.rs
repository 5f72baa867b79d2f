//! `kbench bench`: single runs, a drop-in for `perf bench` (collection `sched`).
//!
//! Options, output and exit codes follow perf (see docs/perf-compat.md), with three
//! deliberate differences, each where perf misbehaves: an unknown `-f` format or
//! `-r 0` is an error (exit 2) rather than a message and exit 0; `sched all` exits 1
//! when a benchmark failed; and `-f json` / `--json` print kbench's run records.
//!
//! kbench's own options, `--json`, `--cpus` and `--counters`, are also taken after the
//! benchmark name, where perf would reject them; a benchmark's `-h` still prints perf's
//! help, without them, so it stays byte for byte perf's.
use crate::error::UsageError;
use kbench_report::bench::{self as formats, RunFormat};
use kbench_workloads::perfopt::{OptKind, OptSpec, OptValue, ParseExit, Parsed, Parser};
use kbench_workloads::{Instruments, Workload};
use std::io::Write;

#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct BenchArgs {
    /// `[-f default|simple|json] [--json] [--cpus LIST] [--counters] [-r N] sched messaging|pipe|seccomp-notify|all [OPTIONS] [--json] [--cpus LIST] [--counters]`
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

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

const COMMON_USAGE: &str = "perf bench [<common options>] <collection> <benchmark> [<options>]";

pub fn run(args: BenchArgs) -> anyhow::Result<i32> {
    let common = Parser {
        usage: COMMON_USAGE,
        specs: COMMON_OPTIONS,
        stop_at_non_option: true,
    };
    let parsed = match common.parse(&args.args) {
        Ok(parsed) => parsed,
        Err(exit) => return Ok(emit(&exit)),
    };
    let mut choices = Choices::before_name(&parsed)?;
    // perf hands words after `--` back to the driver: `perf bench -- sched pipe` runs.
    let words: Vec<String> = parsed
        .rest
        .into_iter()
        .chain(parsed.after_double_dash)
        .collect();
    let (target, after_name) = target_of(&words);
    let workload_args = choices.take_after_name(after_name)?;
    if let Some(spec) = choices.pinning()? {
        pin_to(spec)?;
    }
    if let Target::One(workload) = target {
        check_counters(workload, choices.instruments)?;
    }
    execute(
        target,
        &workload_args,
        choices.format.as_ref(),
        choices.instruments,
    )
}

/// `--counters` for a workload that cannot count them is a usage error, not ignored:
/// the run would be recorded as if counted.
fn check_counters(workload: &Workload, instruments: Instruments) -> anyhow::Result<()> {
    if let Some(reason) = instruments
        .counters
        .then(kbench_workloads::counters::no_perf_events)
        .flatten()
    {
        return Err(UsageError(format!("--counters: {reason}")).into());
    }
    if instruments.counters && !workload.takes_counters {
        let takers: Vec<&str> = kbench_workloads::REGISTRY
            .iter()
            .filter(|w| w.takes_counters)
            .map(|w| w.name)
            .collect();
        return Err(UsageError(format!(
            "--counters: {} {} has no perf_event_open counters (only {} have)",
            workload.collection,
            workload.name,
            takers.join(", ")
        ))
        .into());
    }
    Ok(())
}

/// Lists, runs, or says what is unknown, as perf does.
fn execute(
    target: Target<'_>,
    workload_args: &[String],
    format: &dyn RunFormat,
    instruments: Instruments,
) -> anyhow::Result<i32> {
    match target {
        Target::Collections => {
            print_out(&collections_list());
            Ok(0)
        }
        Target::Benchmarks(collection) => {
            print_out(&benchmarks_list(collection));
            Ok(0)
        }
        Target::All(collection) => Ok(run_all(collection, format, instruments)),
        Target::One(workload) => run_one(workload, workload_args, format, instruments),
        Target::UnknownBenchmark { collection, name } => {
            print_out(&format!(
                "Unknown benchmark: '{name}' for collection '{collection}'\n"
            ));
            Ok(1)
        }
        Target::UnknownCollection(collection) => {
            print_out(&format!("Unknown collection: '{collection}'\n"));
            Ok(1)
        }
    }
}

/// What the words after perf's common options ask for.
enum Target<'w> {
    Collections,
    Benchmarks(&'w str),
    All(&'w str),
    One(&'static Workload),
    UnknownBenchmark { collection: &'w str, name: &'w str },
    UnknownCollection(&'w str),
}

/// The target, and the words after the benchmark name (none when nothing runs).
fn target_of(words: &[String]) -> (Target<'_>, &[String]) {
    let Some((first, rest)) = words.split_first() else {
        return (Target::Collections, &[]);
    };
    if first != "sched" {
        // A collection of one benchmark of the same name (`kbench bench ipi ...`).
        return match kbench_workloads::find(first, first) {
            Some(workload) => (Target::One(workload), rest),
            None => (Target::UnknownCollection(first), &[]),
        };
    }
    match rest.split_first() {
        None => (Target::Benchmarks(first), &[]),
        Some((name, _)) if name == "-h" || name == "--help" => (Target::Benchmarks(first), &[]),
        Some((name, after)) if name == "all" => (Target::All(first), after),
        Some((name, after)) => match kbench_workloads::find(first, name) {
            Some(workload) => (Target::One(workload), after),
            None => (
                Target::UnknownBenchmark {
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
struct Choices {
    format: Box<dyn RunFormat>,
    /// Every `--cpus` given, in order (`None` for `--no-cpus`).
    cpus: Vec<Option<String>>,
    instruments: Instruments,
}

impl Choices {
    fn before_name(parsed: &Parsed) -> anyhow::Result<Self> {
        let cpus = parsed
            .values
            .iter()
            .filter_map(|(long, value)| match (*long, value) {
                ("cpus", OptValue::Str(spec)) => Some(spec.clone()),
                _ => None,
            })
            .collect();
        Ok(Choices {
            format: output_format(parsed)?,
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
    fn take_after_name(&mut self, words: &[String]) -> anyhow::Result<Vec<String>> {
        let mut rest = Vec::new();
        let mut words = words.iter();
        while let Some(word) = words.next() {
            match word.as_str() {
                "--" => {
                    rest.push(word.clone());
                    rest.extend(words.by_ref().cloned());
                }
                "--json" => self.format = Box::new(formats::JsonFormat),
                "--counters" => self.instruments.counters = true,
                "--cpus" => {
                    let spec = words.next().ok_or_else(|| {
                        UsageError("--cpus requires a value: a cpulist or class:NAME".into())
                    })?;
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
    fn pinning(&self) -> anyhow::Result<Option<&str>> {
        match self.cpus.as_slice() {
            [] => Ok(None),
            [spec] => Ok(spec.as_deref()),
            _ => Err(UsageError(
                "--cpus given more than once: give it once, before the collection or after the benchmark name".into(),
            )
            .into()),
        }
    }
}

/// Pins this process (and so every worker it starts) to the CPUs of `spec`.
fn pin_to(spec: &str) -> anyhow::Result<()> {
    let cpus = crate::args::resolve_cpus(spec)?;
    rustix::thread::sched_setaffinity(None, &kbench_workloads::cpus::cpu_set(&cpus))
        .map_err(|e| UsageError(format!("--cpus {spec}: cannot pin: {e}")))?;
    Ok(())
}

fn output_format(parsed: &Parsed) -> anyhow::Result<Box<dyn RunFormat>> {
    if parsed.uint("repeat") == Some(0) {
        return Err(
            UsageError("Invalid repeat option: Must specify a positive value".into()).into(),
        );
    }
    if parsed.bool("json") == Some(true) {
        return Ok(Box::new(formats::JsonFormat));
    }
    let name = parsed
        .str("format")
        .flatten()
        .unwrap_or_else(|| "default".into());
    formats::by_name(&name)
        .ok_or_else(|| UsageError(format!("Unknown format descriptor: '{name}'")).into())
}

/// Prints what perf would print instead of running, and returns its exit code.
fn emit(exit: &ParseExit) -> i32 {
    print_out(&exit.stdout);
    kbench_term::write_stderr(&exit.stderr);
    exit.code
}

fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn collections_list() -> String {
    format!(
        "\n Usage: \n\t{COMMON_USAGE}\n\n        # List of all available benchmark collections:\n\n{:>14}: {}\n{:>14}: {}\n\n",
        "sched", "Scheduler and IPC benchmarks", "all", "All benchmarks"
    )
}

fn benchmarks_list(collection: &str) -> String {
    let mut out =
        format!("\n        # List of available benchmarks for collection '{collection}':\n\n");
    for w in kbench_workloads::collection(collection) {
        out.push_str(&format!("{:>14}: {}\n", w.name, w.summary));
    }
    out.push_str(&format!(
        "{:>14}: {}\n\n",
        "all", "Run all scheduler benchmarks"
    ));
    out
}

/// perf's task name for the benchmark, inherited by every worker (`pgrep sched-pipe`).
fn set_task_name(workload: &Workload) {
    if let Ok(name) = std::ffi::CString::new(workload.comm) {
        let _ = rustix::thread::set_name(&name);
    }
}

fn run_one(
    workload: &Workload,
    args: &[String],
    format: &dyn RunFormat,
    instruments: Instruments,
) -> anyhow::Result<i32> {
    set_task_name(workload);
    if let Some(banner) = format.banner(&workload.key()) {
        // perf prints this before parsing the benchmark's options, so it appears
        // even when parsing fails.
        print_out(&banner);
    }
    let parser = Parser {
        usage: workload.usage,
        specs: workload.options,
        stop_at_non_option: false,
    };
    let parsed = match parser.parse(args) {
        Ok(parsed) => parsed,
        Err(exit) => return Ok(emit(&exit)),
    };
    if let Err(problem) = (workload.check)(&parsed) {
        return Ok(emit(&parser.option_error(problem.long, &problem.message)));
    }
    match (workload.run)(&parsed, instruments) {
        Ok(record) => {
            print_out(&format.render(&record));
            Ok(0)
        }
        Err(e) => Err(e.into()),
    }
}

/// Runs every benchmark of the collection with its defaults, as `perf bench sched all`.
fn run_all(collection: &str, format: &dyn RunFormat, instruments: Instruments) -> i32 {
    let mut failed = false;
    for workload in kbench_workloads::collection(collection).filter(|w| w.in_perf_all) {
        set_task_name(workload);
        if let Some(banner) = format.all_banner(&workload.key()) {
            print_out(&banner);
        }
        match (workload.run)(&Parsed::default(), instruments) {
            Ok(record) => print_out(&format.render(&record)),
            Err(e) => {
                errln!("kbench: {}: {e}", workload.key());
                failed = true;
            }
        }
        if format.all_banner(&workload.key()).is_some() {
            print_out("\n");
        }
    }
    i32::from(failed)
}
