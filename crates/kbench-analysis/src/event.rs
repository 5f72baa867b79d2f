//! The events a patch may make cheaper (context switches, IPIs, wakeups...), as the
//! metrics of a run count them per operation: shared by the plausibility check
//! ([`crate::plausible`]) and the micro-to-macro prediction ([`crate::carried`]).
use kbench_record::WorkloadId;
use serde::{Deserialize, Serialize};

/// An event a patch may make cheaper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    Irq,
    /// Every IPI kind together.
    Ipi,
    IpiCall,
    IpiResched,
    Csw,
    Syscall,
    Migration,
    Wake,
    /// The softirqs of I/O (`NET_RX`, `NET_TX`, `BLOCK`, `IRQ_POLL`).
    Softirq,
}

impl Event {
    pub const ALL: [Event; 9] = [
        Event::Irq,
        Event::Ipi,
        Event::IpiCall,
        Event::IpiResched,
        Event::Csw,
        Event::Syscall,
        Event::Migration,
        Event::Wake,
        Event::Softirq,
    ];

    /// The name `--saving` takes.
    pub fn name(self) -> &'static str {
        match self {
            Event::Irq => "irq",
            Event::Ipi => "ipi",
            Event::IpiCall => "ipi:call",
            Event::IpiResched => "ipi:resched",
            Event::Csw => "csw",
            Event::Syscall => "syscall",
            Event::Migration => "migration",
            Event::Wake => "wake",
            Event::Softirq => "softirq",
        }
    }

    pub fn parse(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The per-op metrics whose sum is this event's count per op.
    pub(crate) fn metrics(self) -> &'static [&'static str] {
        match self {
            Event::Irq => &["irqs_per_op", "timer_irqs_per_op"],
            Event::Ipi => &["call_ipis_per_op", "resched_ipis_per_op"],
            Event::IpiCall => &["call_ipis_per_op"],
            Event::IpiResched => &["resched_ipis_per_op"],
            Event::Csw => &["csw_per_op"],
            Event::Syscall => &["syscalls_per_op"],
            Event::Migration => &["migrations_per_op"],
            Event::Wake => &["wakes_per_op"],
            Event::Softirq => &["softirqs_per_op"],
        }
    }

    /// The count per op a workload has by definition, whatever its runs recorded: a
    /// wakeup run's op is one wake.
    pub(crate) fn per_op_by_definition(self, workload: &str) -> Option<f64> {
        (self == Event::Wake && WorkloadId::of(workload) == Some(WorkloadId::Wakeup)).then_some(1.0)
    }
}

/// Nanoseconds per unit of a metric that is a time per op; `None` for the others.
pub(crate) fn ns_per_unit(unit: &str) -> Option<f64> {
    match unit {
        "us/op" => Some(1e3),
        "ns" | "ns/op" => Some(1.0),
        _ => None,
    }
}
