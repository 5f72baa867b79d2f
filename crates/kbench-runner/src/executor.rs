//! What one run is: a workload in a fresh `kbench bench` child, or a shell command.
use crate::arm::MeasuredRun;
use crate::child::{
    run_command, run_workload, shell_join, stored_command_failure, stored_command_run,
    stored_workload_run, timed_out_message,
};
use crate::figures::FigureReader;
use crate::hooks::HookFailure;
use crate::spec::WorkloadSpec;
use crate::RunnerError;
use kbench_record::{PlacementKind, StoredRun};
use std::time::Duration;

/// One run as it is to be stored, and whether it counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub run: StoredRun,
    /// Why it failed; `None` for a run that counts.
    pub failure: Option<String>,
    /// Where its two tasks mostly ran, when the workload says (pipe, seccomp-notify).
    pub placement: Option<PlacementKind>,
}

/// Runs one arm of a schedule, one unit per call: a run (an [`Attempt`]) for a workload
/// or a command, a whole boot for a machine (kbench-boot).
pub trait Executor<U: Unit = Attempt> {
    /// One unit with this stored index. A unit that fails says why in itself; an error
    /// is the user's mistake or a fault that stops the schedule.
    fn run(&mut self, index: u32, warmup: bool) -> Result<U, RunnerError>;

    /// The stored form of the unit a failed hook took the place of.
    fn hook_failure_run(&self, failure: &HookFailure, index: u32) -> U::Kept;
}

/// What one call of an executor gives, as the scheduler sees it: whether it counts and
/// what the stop rule is to see of it, and what the sink keeps.
pub trait Unit {
    /// What the stop rule sees of a unit that counts.
    type Measured: Clone;
    /// What the sink keeps of it.
    type Kept;
    /// What it measured, or why it does not count.
    fn judged(&self) -> Result<Self::Measured, Failed>;
    fn kept(self) -> Self::Kept;
}

/// Why a unit does not count, and the exit status it is reported with.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    pub message: String,
    pub exit_status: i32,
}

impl Unit for Attempt {
    type Measured = MeasuredRun;
    type Kept = StoredRun;

    fn judged(&self) -> Result<MeasuredRun, Failed> {
        match &self.failure {
            None => Ok(MeasuredRun {
                values: self.run.values.clone(),
                placement: self.placement,
            }),
            Some(message) => Err(Failed {
                message: message.clone(),
                // A workload that gave no record has no status of its own.
                exit_status: self.run.exit_status.unwrap_or(1),
            }),
        }
    }

    fn kept(self) -> StoredRun {
        self.run
    }
}

/// A workload spec, each run in a fresh `kbench bench --json` process.
pub struct WorkloadExecutor {
    pub spec: WorkloadSpec,
    /// The cpulist every run is pinned to, if any.
    pub cpus: Option<String>,
    pub timeout: Duration,
    /// Applies `--metric` to the run's values (`kbench ab`).
    pub metric: Option<FigureReader>,
}

impl Executor for WorkloadExecutor {
    fn run(&mut self, index: u32, warmup: bool) -> Result<Attempt, RunnerError> {
        let cpus = self.cpus.as_deref();
        let result = run_workload(&self.spec, cpus, self.timeout);
        let mut run = stored_workload_run(&self.spec, &result, index, warmup, cpus);
        match result {
            Ok(record) => {
                if let Some(reader) = &self.metric {
                    reader.primary_by_name(&mut run.values, None)?;
                }
                Ok(Attempt {
                    run,
                    failure: None,
                    placement: record.placement.map(|p| p.effective()),
                })
            }
            Err(message) => {
                errln!("kbench: {message}");
                Ok(Attempt {
                    run,
                    failure: Some(message),
                    placement: None,
                })
            }
        }
    }

    fn hook_failure_run(&self, failure: &HookFailure, index: u32) -> StoredRun {
        stored_workload_run(
            &self.spec,
            &Err(failure.message.clone()),
            index,
            false,
            None,
        )
    }
}

/// A command (no shell of its own: `sh -c` is the caller's choice), timed as a whole,
/// its figures read from its output.
pub struct CommandExecutor {
    pub argv: Vec<String>,
    /// The command as the user wrote it, for messages.
    pub display: String,
    /// Let its output through to ours.
    pub show_output: bool,
    pub cpus: Option<Vec<u32>>,
    pub timeout: Duration,
    pub reader: FigureReader,
    /// The cpulist its stored runs say they were pinned to.
    pub pinned: Option<String>,
}

impl CommandExecutor {
    /// `sh -c COMMAND`, shown as written.
    pub fn shell(command: &str, reader: FigureReader, timeout: Duration) -> CommandExecutor {
        CommandExecutor {
            argv: vec!["sh".into(), "-c".into(), command.into()],
            display: command.into(),
            show_output: false,
            cpus: None,
            timeout,
            reader,
            pinned: None,
        }
    }

    /// `argv` run as it is, shown as a shell would read it back.
    pub fn direct(argv: &[String], reader: FigureReader, timeout: Duration) -> CommandExecutor {
        CommandExecutor {
            argv: argv.to_vec(),
            display: shell_join(argv),
            show_output: false,
            cpus: None,
            timeout,
            reader,
            pinned: None,
        }
    }
}

impl Executor for CommandExecutor {
    fn run(&mut self, index: u32, warmup: bool) -> Result<Attempt, RunnerError> {
        let run = run_command(
            &self.argv,
            self.show_output,
            self.cpus.as_deref(),
            self.timeout,
        )
        .map_err(RunnerError::Usage)?;
        if let Some(after) = run.timed_out_after {
            errln!("kbench: {}", timed_out_message(&self.display, after));
        }
        let values = self.reader.values(&run)?;
        let failure =
            (run.exit_status != 0).then(|| format!("exited with status {}", run.exit_status));
        let pinned = self.pinned.clone();
        Ok(Attempt {
            run: stored_command_run(&self.argv, &run, index, warmup, pinned, values),
            failure,
            placement: None,
        })
    }

    fn hook_failure_run(&self, failure: &HookFailure, index: u32) -> StoredRun {
        stored_command_failure(&self.argv, failure, index, self.pinned.clone())
    }
}
