//! The trace events the wake matcher reads, typed; every other event is [`EventKind::Other`].
use std::fmt;

/// One line of a trace that is an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// 1-based line of the file, for errors and for the order of events.
    pub line: usize,
    /// The CPU the event was recorded on.
    pub cpu: u32,
    pub ts_ns: u64,
    /// The task that was running (the `TASK-PID` column).
    pub pid: i32,
    pub kind: EventKind,
}

/// What an event says, for the events wakes are made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// `sched_waking`: `pid` is being woken; `target_cpu` is its CPU before placement.
    Waking {
        pid: i32,
        comm: String,
        target_cpu: u32,
    },
    /// `sched_wakeup`: `pid` is runnable on `target_cpu`, its real destination; or
    /// `sched_wakeup_new` (`new`): a new task's first wake, which has no waking.
    Wakeup {
        pid: i32,
        comm: String,
        target_cpu: u32,
        new: bool,
    },
    /// `sched_switch`.
    Switch {
        prev_pid: i32,
        next_pid: i32,
    },
    /// `sched_wake_idle_without_ipi`: `cpu` was polling, no IPI needed.
    IdleWithoutIpi {
        cpu: u32,
    },
    /// An IPI sent to `targets`; its kind when the event says (a callback, a reason).
    IpiSend {
        targets: Vec<u32>,
        kind: Option<IpiKind>,
    },
    /// `power:cpu_idle`: `cpu` entered idle state `state`, or left idle when `state` is
    /// `u32::MAX` (the kernel's -1).
    CpuIdle {
        state: u32,
        cpu: u32,
    },
    HandlerEntry(Handler),
    HandlerExit(Handler),
    /// A `trace_marker` write.
    Marker(String),
    /// The buffer of `cpu` lost events here (`CPU:N [LOST M EVENTS]`), or only starts
    /// here (`##### CPU N buffer started ####`): what came before on it is gone.
    Lost {
        cpu: u32,
    },
    Other,
}

/// The kinds of IPI a wake can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpiKind {
    Reschedule,
    CallFunctionSingle,
    CallFunction,
    Other,
}

impl IpiKind {
    /// Whether a handler of kind `handler` can be the one an IPI of kind `self` raised:
    /// arm64 handles single and many function calls with one IPI.
    pub fn handled_by(self, handler: Option<IpiKind>) -> bool {
        let function_call =
            |k: IpiKind| matches!(k, IpiKind::CallFunction | IpiKind::CallFunctionSingle);
        match handler {
            None => true,
            Some(h) => h == self || (function_call(h) && function_call(self)),
        }
    }
}

/// Which layer of IPI handling an entry or exit event belongs to: an entry is only
/// closed by an exit of the same layer and id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HandlerLayer {
    /// x86 `irq_vectors:*_entry/exit`, by vector name (`reschedule`).
    X86Vector(&'static str),
    /// arm/arm64 `ipi:ipi_entry/exit`, by reason text.
    Ipi(String),
    /// `irq:irq_handler_entry/exit` of the IRQ numbered so (arm64 IPIs since 5.10).
    Irq(u32),
}

/// An IPI handler entry or exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    pub layer: HandlerLayer,
    /// `None` when the event does not say (an IRQ named only `IPI`).
    pub kind: Option<IpiKind>,
}

impl fmt::Display for IpiKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IpiKind::Reschedule => "reschedule",
            IpiKind::CallFunctionSingle => "call_function_single",
            IpiKind::CallFunction => "call_function",
            IpiKind::Other => "other",
        })
    }
}
