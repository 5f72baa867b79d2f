//! kbench's one scheduler. Every kind of run (a workload in a fresh child process, a
//! shell command, a boot of a kernel: kbench-boot's machine) is an [`Executor`] of a
//! [`Unit`]; the [`scheduler`] repeats them in blocks (shuffled, or ABBA between two
//! sides), with warm-ups first, the hooks around them and a [`StopRule`] asked after
//! every block, and hands every unit, failed ones included, to a [`RunSink`] (the
//! store, the guest's console, a test's vector) before the next one starts.
//!
//! Every sequential decision is the one [`SequentialDriver`], a stop rule whose looks
//! are a [`Looker`]'s: runs as units (`ab`), two labels' boots (`vm-ab`), a
//! bisection's steps. A sink is one small trait, so the guest reports runs over its
//! console without a database.
#[macro_use]
extern crate kbench_term;

pub mod ab;
pub mod arm;
pub mod capture;
pub mod child;
pub mod driver;
pub mod executor;
pub mod figures;
pub mod hooks;
pub mod kernel_build;
pub mod labels;
pub mod progress;
pub mod scheduler;
pub mod session;
pub mod sink;
pub mod spec;
pub mod stop;
pub mod suite;
pub mod suites;

pub use driver::{
    Bounds, Decidable, Looker, PrimaryState, PrimaryStates, PrimaryUnits, Reached, Seen,
    SequentialDriver, UnitLooker, UnitsOf,
};
pub use executor::{Attempt, CommandExecutor, Executor, Failed, Unit, WorkloadExecutor};
pub use figures::{FigureOptions, FigureReader};
pub use hooks::{HookFailure, HookKind, Hooks};
pub use labels::LabelLooker;
pub use scheduler::{ArmOutcome, MeasuredRun, Measurement, Observer, Order, RunFailure, Schedule};
pub use sink::{MemorySink, RunSink};
pub use spec::WorkloadSpec;
pub use stop::{NextBlock, StopPolicy, StopRule};
pub use suite::{run_suite, Plan, WorkloadOutcome};

/// Why a schedule stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The user's mistake, found while running: a command that cannot start, a
    /// `--metric` its output does not give.
    #[error("{0}")]
    Usage(String),
    /// The sink could not take a run (the database is full, locked, gone): its error
    /// as it gave it.
    #[error(transparent)]
    Sink(anyhow::Error),
    /// The executor failed for a reason that is not the user's (a file it could not
    /// write): its error as it gave it.
    #[error(transparent)]
    Executor(anyhow::Error),
    /// The stop rule gave up: every arm kept failing.
    #[error("{0}")]
    GaveUp(String),
}

impl RunnerError {
    /// Whether it is the user's mistake (exit status 2). A sink's error is not known
    /// here: whose it is, its own type says ([`RunnerError::Sink`] holds it whole).
    pub fn is_usage(&self) -> bool {
        matches!(self, RunnerError::Usage(_))
    }
}
