//! The events behind a run's time, per operation: what the workload's tasks did (system
//! calls by construction, and, with `--counters`, perf_event_open counters) over the
//! timed region. The interrupts the CPUs received are in [`crate::ipi`].
//!
//! A question such as "could saving 5 ns per IRQ explain this change?" needs the events
//! per operation; [`crate::RunRecord::events_per_op`] puts them together.
use crate::ipi::{IpiRates, IrqRates};
use serde::{Deserialize, Serialize};

/// A perf_event_open counter kbench opens on a run's tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PerfCounter {
    /// CPU time of the tasks, in ns (software: every kernel with perf events has it).
    TaskClock,
    /// Context switches of the tasks (software).
    ContextSwitches,
    /// Moves of the tasks from one CPU to another (software).
    CpuMigrations,
    /// Page faults of the tasks (software).
    PageFaults,
    /// Instructions retired in user mode (hardware: needs a PMU the kernel drives).
    InstructionsUser,
    /// Instructions retired in kernel mode (hardware).
    InstructionsKernel,
    /// CPU cycles in user mode (hardware).
    CyclesUser,
    /// CPU cycles in kernel mode (hardware).
    CyclesKernel,
}

impl PerfCounter {
    /// Every counter, in the order a record lists them.
    pub const ALL: [PerfCounter; 8] = [
        PerfCounter::TaskClock,
        PerfCounter::ContextSwitches,
        PerfCounter::CpuMigrations,
        PerfCounter::PageFaults,
        PerfCounter::InstructionsUser,
        PerfCounter::InstructionsKernel,
        PerfCounter::CyclesUser,
        PerfCounter::CyclesKernel,
    ];

    /// The name in records and metric names (`task_clock`, `instructions_user`).
    pub fn as_str(self) -> &'static str {
        match self {
            PerfCounter::TaskClock => "task_clock",
            PerfCounter::ContextSwitches => "context_switches",
            PerfCounter::CpuMigrations => "cpu_migrations",
            PerfCounter::PageFaults => "page_faults",
            PerfCounter::InstructionsUser => "instructions_user",
            PerfCounter::InstructionsKernel => "instructions_kernel",
            PerfCounter::CyclesUser => "cycles_user",
            PerfCounter::CyclesKernel => "cycles_kernel",
        }
    }

    /// Whether the counter needs a hardware PMU (instructions, cycles).
    pub fn is_hardware(self) -> bool {
        matches!(
            self,
            PerfCounter::InstructionsUser
                | PerfCounter::InstructionsKernel
                | PerfCounter::CyclesUser
                | PerfCounter::CyclesKernel
        )
    }
}

/// One counter of a run: its count, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterReading {
    pub counter: PerfCounter,
    #[serde(flatten)]
    pub outcome: CounterOutcome,
}

impl CounterReading {
    /// The count, when the counter counted.
    pub fn value(&self) -> Option<u64> {
        match self.outcome {
            CounterOutcome::Counted { value, .. } => Some(value),
            _ => None,
        }
    }
}

/// What became of one counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CounterOutcome {
    /// Counted over the timed region. `value` is scaled by `enabled/running` when the
    /// PMU had to share its counters (`running_ns < enabled_ns`), as perf stat does.
    Counted {
        value: u64,
        enabled_ns: u64,
        running_ns: u64,
    },
    /// The kernel or the machine has no such event (no PMU, as in most VMs; a kernel
    /// without perf events; a PMU that cannot split user from kernel).
    NotSupported { reason: String },
    /// The event exists but this process may not count it (`perf_event_paranoid`).
    NotPermitted { reason: String },
    /// Opened but never on the PMU during the run (its count would be a guess), or an
    /// unexpected error.
    NotCounted { reason: String },
}

/// The events of one run's timed region, besides the interrupts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventAccounting {
    /// What one operation is: `loop` (pipe), `notification` (seccomp-notify),
    /// `message` (messaging). The per-op figures divide by `ops`.
    pub per: String,
    pub ops: u64,
    /// System calls the workload's tasks make per operation by construction (each
    /// workload says which), not counting kbench's own bookkeeping (CPU samples).
    pub syscalls_per_op: f64,
    /// perf_event_open counters over the timed region, for the tasks of the run; empty
    /// unless the run was made with `--counters`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterReading>,
}

impl EventAccounting {
    /// The reading of `counter`, if the run opened it.
    pub fn counter(&self, counter: PerfCounter) -> Option<&CounterReading> {
        self.counters.iter().find(|r| r.counter == counter)
    }

    /// `counter`'s count per operation, when it counted and there were operations.
    pub fn counter_per_op(&self, counter: PerfCounter) -> Option<f64> {
        let value = self.counter(counter)?.value()?;
        (self.ops > 0).then(|| value as f64 / self.ops as f64)
    }
}

/// Events per operation of one run, put together from its record: what a saving per
/// event multiplies to give a saving per operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventsPerOp {
    /// What one operation is (`loop`, `notification`, `message`).
    pub per: String,
    /// By construction.
    pub syscalls: f64,
    /// The context-switches counter when counted, else the tasks' rusage.
    pub context_switches: f64,
    /// The cpu-migrations counter; `None` without `--counters`.
    pub migrations: Option<f64>,
    /// IPIs received, by kind, summed over the CPUs the tasks used; `None` when
    /// `/proc/interrupts` could not be read.
    pub ipis: Option<IpiRates>,
    /// Device and local-timer interrupts, summed over the same CPUs.
    pub irqs: Option<IrqRates>,
}
