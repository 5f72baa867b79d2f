//! kbench: rigorous A/B benchmarking of kernel hot paths.
#[macro_use]
mod output;
mod cmd;
mod error;
mod guest;
mod qmp;
mod runner;
mod session;

use clap::{CommandFactory, Parser, Subcommand};

/// An analysis failure: a missing label or calibration is the user's input (exit 2).
pub fn analysis_error(e: kbench_analysis::AnalysisError) -> anyhow::Error {
    match e {
        kbench_analysis::AnalysisError::Usage(message) => error::UsageError(message).into(),
        kbench_analysis::AnalysisError::Store(e) => session::store_error(e),
    }
}
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "kbench",
    version,
    about = "Rigorous A/B benchmarking of kernel hot paths"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The main job: repeated, interleaved runs recorded under a label.
    Run(cmd::run::RunArgs),
    /// The verdict: BASE against NEW, per workload and metric.
    Compare(cmd::compare::CompareArgs),
    /// An A/A experiment on this machine: its noise floor, per metric, for compare.
    Calibrate(cmd::calibrate::CalibrateArgs),
    /// A real workload command (a kernel build) timed as a whole, repeated.
    Exec(cmd::exec::ExecArgs),
    /// Two commands or workload specs, interleaved ABBA in this boot, then the verdict.
    Ab(cmd::ab::AbArgs),
    /// The labels in the database.
    List(cmd::list::ListArgs),
    /// The sessions and runs of one label.
    Show(cmd::show::ShowArgs),
    /// Everything under a label as JSON (re-importable) or CSV.
    Export(cmd::export::ExportArgs),
    /// perf bench, perf stat -r, hackbench or cyclictest output, hyperfine JSON, kbench run records or a kbench export.
    Import(cmd::import::ImportArgs),
    /// Single runs of perf's sched benchmarks, drop-in compatible with `perf bench`.
    Bench(cmd::bench::BenchArgs),
    /// The boots in a board's serial capture or a LAVA job log, checked as vm-ab checks its own.
    ImportConsole(cmd::import_console::ImportConsoleArgs),
    /// Wake phases from a kernel trace (ftrace's trace file or trace-cmd report), stored as runs.
    ImportTrace(cmd::import_trace::ImportTraceArgs),
    /// Two kernels booted alternately under qemu, kbench as their /init: the verdict with boots as units.
    VmAb(cmd::vm_ab::VmAbArgs),
    /// A LAVA job that boots two kernels alternately on one board, kbench as their /init.
    LavaJob(cmd::lava_job::LavaJobArgs),
    /// Whether a claimed saving per event (an IPI, a context switch) could explain a
    /// change: the largest change it could make in a label's runs, and with --base, the
    /// saving the observed change would need.
    Plausible(cmd::plausible::PlausibleArgs),
    /// Compare two files of numbers (one per line), ministat-style, with a verdict.
    Stat(cmd::stat::StatArgs),
    /// The machine on one screen: CPU classes, frequency, idle, isolation, and a noise checklist.
    Env(cmd::env::EnvArgs),
    /// A reproducible initramfs with this kbench as /init, to boot a kernel under test.
    Initramfs(cmd::initramfs::InitramfsArgs),
    /// The completion script for a shell: `kbench completions bash > /etc/bash_completion.d/kbench`.
    Completions(cmd::completions::CompletionsArgs),
    /// This manual page, in roff: `kbench manpage | man -l -`.
    Manpage(cmd::manpage::ManpageArgs),
}

fn main() -> ExitCode {
    // As the initramfs /init of a booted kernel: run what its command line says.
    if rustix::process::getpid().is_init() {
        guest::run_as_init();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // One line: clap's first, without its usage block.
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("bad arguments");
            eprintln!("kbench: {}", first.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let result = match cli.command {
        Command::Bench(args) => cmd::bench::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Compare(args) => cmd::compare::run(args),
        Command::Calibrate(args) => cmd::calibrate::run(args),
        Command::Exec(args) => cmd::exec::run(args),
        Command::Ab(args) => cmd::ab::run(args),
        Command::List(args) => cmd::list::run(args),
        Command::Show(args) => cmd::show::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Stat(args) => cmd::stat::run(args),
        Command::VmAb(args) => cmd::vm_ab::run(args),
        Command::ImportConsole(args) => cmd::import_console::run(args),
        Command::ImportTrace(args) => cmd::import_trace::run(args),
        Command::LavaJob(args) => cmd::lava_job::run(args),
        Command::Plausible(args) => cmd::plausible::run(args),
        Command::Env(args) => cmd::env::run(args),
        Command::Initramfs(args) => cmd::initramfs::run(args),
        Command::Completions(args) => cmd::completions::run(args, Cli::command()),
        Command::Manpage(args) => cmd::manpage::run(args, Cli::command()),
    };
    match result {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            let code = if e.downcast_ref::<error::UsageError>().is_some() {
                2
            } else {
                1
            };
            eprintln!("kbench: {e:#}");
            ExitCode::from(code)
        }
    }
}
