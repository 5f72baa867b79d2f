//! kbench: rigorous A/B benchmarking of kernel hot paths.
// print! and eprint! panic when their reader has gone (`kbench show | head -1`): all
// output goes through kbench-term's out!, outln! and errln!, which end quietly instead.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#[macro_use]
extern crate kbench_term;
mod args;
mod boots;
mod cmd;
mod error;
mod guest;
mod input;
mod output;
mod session;
mod verdict;
mod vm;

use clap::{CommandFactory, Parser, Subcommand};

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
    /// Sessions copied from this database to another (a lab's PostgreSQL): each once,
    /// whole, and a push cut off completes when run again.
    Push(cmd::push::PushArgs),
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
    /// The commit that moved a metric: each candidate built and booted under qemu, its
    /// boots the units of a decision at every step.
    Bisect(cmd::bisect::BisectArgs),
    /// A LAVA job that boots two kernels alternately on one board, kbench as their /init.
    LavaJob(cmd::lava_job::LavaJobArgs),
    /// Whether a claimed saving per event (an IPI, a context switch) could explain a
    /// change: the largest change it could make in a label's runs, and with --base, the
    /// saving the observed change would need.
    Plausible(cmd::plausible::PlausibleArgs),
    /// Each metric's unit means per label in order, per machine, and where the series
    /// changes: a lab's history of kernels, with boots as units.
    History(cmd::history::HistoryArgs),
    /// The comparison as one self-contained HTML page with its plots: verdicts, runs in
    /// the order they ran, distributions, latency percentiles.
    Report(cmd::report::ReportArgs),
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

/// Puts /dev/null where stdin, stdout or stderr is closed (`kbench list >&-`): the
/// next file kbench opened would otherwise get that descriptor, and its output or
/// messages would be written into it. Opening /dev/null gives the lowest free
/// descriptor, so each open fills one closed slot, until one lands above 2.
fn fill_closed_standard_fds() {
    use std::os::fd::{AsRawFd, IntoRawFd};
    while let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        if null.as_raw_fd() > 2 {
            return;
        }
        // A standard descriptor is inherited by the commands kbench runs.
        let _ = rustix::io::fcntl_setfd(&null, rustix::io::FdFlags::empty());
        let _ = null.into_raw_fd();
    }
}

/// `--runs -1` is a bad value of --runs, and says so, rather than an unknown option
/// `-1`.
fn negative_numbers_are_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|arg| {
        if arg.get_action().takes_values() {
            arg.allow_negative_numbers(true)
        } else {
            arg
        }
    })
    .mut_subcommands(negative_numbers_are_values)
}

/// clap's message on one line, without its usage block: the first line with the
/// indented ones that continue it (the names of missing arguments).
fn clap_message(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or("bad arguments");
    let continued: Vec<&str> = lines
        .take_while(|l| l.starts_with("  ") && !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let message = first.trim_start_matches("error: ");
    if continued.is_empty() {
        message.to_string()
    } else {
        format!("{message} {}", continued.join(", "))
    }
}

/// An error as the one line it must be: a control character it carries from the
/// input (a label with a newline or an escape sequence) is shown escaped, never sent
/// to the terminal.
fn one_line(message: &str) -> String {
    message
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A command only a host runs (boots, labs, imports, shell files), left out of the
/// guest build with one line, exit 2; the constant condition drops its code there.
fn on_host(what: &str, command: impl FnOnce() -> anyhow::Result<i32>) -> anyhow::Result<i32> {
    if cfg!(feature = "host-commands") {
        command()
    } else {
        error::built_without("the host's commands", what)
    }
}

fn main() -> ExitCode {
    // As the initramfs /init of a booted kernel: run what its command line says.
    if rustix::process::getpid().is_init() {
        kbench_boot::guest::run_as_init();
    }
    fill_closed_standard_fds();
    let parsed = negative_numbers_are_values(Cli::command())
        .try_get_matches()
        .and_then(|matches| <Cli as clap::FromArgMatches>::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            errln!("kbench: {}", one_line(&clap_message(&e)));
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
        Command::Report(args) => cmd::report::run(args),
        Command::Calibrate(args) => cmd::calibrate::run(args),
        Command::Exec(args) => cmd::exec::run(args),
        Command::Ab(args) => cmd::ab::run(args),
        Command::List(args) => cmd::list::run(args),
        Command::Show(args) => cmd::show::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Push(args) => cmd::push::run(args),
        Command::Import(args) => on_host("import", || cmd::import::run(args)),
        Command::Stat(args) => cmd::stat::run(args),
        Command::VmAb(args) => on_host("vm-ab", || cmd::vm_ab::run(args)),
        Command::Bisect(args) => on_host("bisect", || cmd::bisect::run(args)),
        Command::ImportConsole(args) => {
            on_host("import-console", || cmd::import_console::run(args))
        }
        Command::ImportTrace(args) => on_host("import-trace", || cmd::import_trace::run(args)),
        Command::LavaJob(args) => on_host("lava-job", || cmd::lava_job::run(args)),
        Command::Plausible(args) => cmd::plausible::run(args),
        Command::History(args) => cmd::history::run(args),
        Command::Env(args) => cmd::env::run(args),
        Command::Initramfs(args) => on_host("initramfs", || cmd::initramfs::run(args)),
        Command::Completions(args) => on_host("completions", || {
            cmd::completions::run(args, Cli::command())
        }),
        Command::Manpage(args) => on_host("manpage", || cmd::manpage::run(args, Cli::command())),
    };
    match result {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        // Whose mistake it is, asked once of every error in the chain.
        Err(e) => {
            errln!("kbench: {}", one_line(&error::message(&e)));
            ExitCode::from(error::exit_status(&e))
        }
    }
}
