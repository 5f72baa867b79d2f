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
use kbench_report::bench::{self as formats, list, RunFormat};
use kbench_workloads::perfbench::{self, BenchChoices, BenchTarget as Target};
use kbench_workloads::perfopt::{ParseExit, ParsedOptions, Parser};
use kbench_workloads::{Instruments, Workload};

#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct BenchArgs {
    /// `[-f default|simple|json] [--json] [--cpus LIST] [--counters] [-r N] sched messaging|pipe|seccomp-notify|all [OPTIONS] [--json] [--cpus LIST] [--counters]`
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

pub fn run(args: BenchArgs) -> anyhow::Result<i32> {
    let parsed = match perfbench::common_parser().parse(&args.args) {
        Ok(parsed) => parsed,
        Err(exit) => return Ok(emit(&exit)),
    };
    let mut choices = BenchChoices::before_name(&parsed, |name| formats::by_name(name).is_some())?;
    // perf hands words after `--` back to the driver: `perf bench -- sched pipe` runs.
    let words: Vec<String> = parsed
        .rest
        .into_iter()
        .chain(parsed.after_double_dash)
        .collect();
    let (target, after_name) = perfbench::target_of(&words);
    let workload_args = choices.take_after_name(after_name)?;
    if let Some(spec) = choices.pinning()? {
        pin_to(spec)?;
    }
    if let Target::One(workload) = target {
        perfbench::check_counters(workload, choices.instruments)?;
    }
    let Some(format) = formats::by_name(&choices.format) else {
        return Err(UsageError(format!("Unknown format descriptor: '{}'", choices.format)).into());
    };
    execute(target, &workload_args, format.as_ref(), choices.instruments)
}

/// Lists, runs, or says what is unknown, as perf does.
fn execute(
    target: Target<'_>,
    workload_args: &[String],
    format: &dyn RunFormat,
    instruments: Instruments,
) -> anyhow::Result<i32> {
    let (text, status) = match target {
        Target::Collections => (list::collections(perfbench::COMMON_USAGE), 0),
        Target::Benchmarks(collection) => {
            let workloads = kbench_workloads::collection(collection).map(|w| (w.name, w.summary));
            (list::benchmarks(collection, workloads), 0)
        }
        Target::All(collection) => return Ok(run_all(collection, format, instruments)),
        Target::One(workload) => return run_one(workload, workload_args, format, instruments),
        Target::UnknownBenchmark { collection, name } => {
            (list::unknown_benchmark(collection, name), 1)
        }
        Target::UnknownCollection(collection) => (list::unknown_collection(collection), 1),
    };
    print_out(&text);
    Ok(status)
}

/// Pins this process (and so every worker it starts) to the CPUs of `spec`.
fn pin_to(spec: &str) -> anyhow::Result<()> {
    let cpus = crate::args::resolve_cpus(spec)?;
    rustix::thread::sched_setaffinity(None, &kbench_workloads::cpus::cpu_set(&cpus))
        .map_err(|e| UsageError(format!("--cpus {spec}: cannot pin: {e}")))?;
    Ok(())
}

/// Prints what perf would print instead of running, and returns its exit code.
fn emit(exit: &ParseExit) -> i32 {
    print_out(&exit.stdout);
    kbench_term::write_stderr(&exit.stderr);
    exit.code
}

fn print_out(text: &str) {
    let _ = kbench_term::write_stdout(text.as_bytes());
}

fn run_one(
    workload: &Workload,
    args: &[String],
    format: &dyn RunFormat,
    instruments: Instruments,
) -> anyhow::Result<i32> {
    perfbench::set_task_name(workload);
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
        perfbench::set_task_name(workload);
        if let Some(banner) = format.all_banner(&workload.key()) {
            print_out(&banner);
        }
        match (workload.run)(&ParsedOptions::default(), instruments) {
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
