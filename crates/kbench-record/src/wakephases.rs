//! The phases of each wake as the kernel traced them (`sched wakeup --trace`,
//! `kbench import-trace`): which path the wakes took, how many could not be followed
//! and why, and which latency series of the record hold each phase.
//!
//! A phase runs from one traced milestone of a wake to the next one the same wake has,
//! in the order they happened: on x86 with HLT idle the IPI handler runs before the
//! idle exit event, with MWAIT and on arm64 after it, and the phase names say which.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A traced point in one wake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Milestone {
    /// `sched_waking` on the waker's CPU: the wake call reached try_to_wake_up.
    Waking,
    /// `sched_wakeup`: the wakee was made runnable. A wake begins here only in a
    /// trace without `sched_waking`, and its path is judged from this event's CPU.
    Wakeup,
    /// `sched_wakeup_new`: a new task's first wake (wake_up_new_task), which has no
    /// `sched_waking`.
    WakeupNew,
    /// The IPI to the target CPU was sent (`ipi_send_cpu`, `ipi_send_cpumask`, `ipi_raise`).
    IpiSent,
    /// `sched_wake_idle_without_ipi`: the target was polling, a flag replaced the IPI.
    IpiSkipped,
    /// `power:cpu_idle` with state -1 on the target: it left its idle state.
    IdleExit,
    /// The IPI handler started on the target.
    HandlerEntry,
    /// The IPI handler returned.
    HandlerExit,
    /// `sched_switch` to the wakee on the target.
    SwitchIn,
}

impl Milestone {
    pub fn as_str(self) -> &'static str {
        match self {
            Milestone::Waking => "waking",
            Milestone::Wakeup => "wakeup",
            Milestone::WakeupNew => "wakeup_new",
            Milestone::IpiSent => "ipi_sent",
            Milestone::IpiSkipped => "ipi_skipped",
            Milestone::IdleExit => "idle_exit",
            Milestone::HandlerEntry => "handler_entry",
            Milestone::HandlerExit => "handler_exit",
            Milestone::SwitchIn => "switch_in",
        }
    }

    /// The name of the latency series of the phase from `self` to `to`.
    pub fn phase_series_name(self, to: Milestone) -> String {
        format!("phase_{}_to_{}", self.as_str(), to.as_str())
    }

    /// The tracepoint of a milestone a wake can begin at; `None` for the others,
    /// which several tracepoints can stand for.
    pub fn beginning_tracepoint(self) -> Option<&'static str> {
        match self {
            Milestone::Waking => Some("sched_waking"),
            Milestone::Wakeup => Some("sched_wakeup"),
            Milestone::WakeupNew => Some("sched_wakeup_new"),
            _ => None,
        }
    }
}

/// Each wake's phases are kept whole when a run followed at most this many: the
/// percentiles of one or two wakes say nothing.
pub const EACH_WAKE_MAX: usize = 2;

/// One wake followed, phase by phase ([`WakePhases::each`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OneWake {
    pub pid: i32,
    pub path: WakePath,
    /// From the event that began the wake to the switch-in, in order.
    pub phases: Vec<OnePhase>,
}

/// One phase of one wake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OnePhase {
    pub from: Milestone,
    pub to: Milestone,
    pub ns: u64,
}

impl OneWake {
    /// The milestone the wake began at: `Waking`, or `Wakeup`/`WakeupNew`.
    pub fn began_at(&self) -> Option<Milestone> {
        self.phases.first().map(|p| p.from)
    }

    /// From its beginning to the switch-in.
    pub fn total_ns(&self) -> u64 {
        self.phases.iter().map(|p| p.ns).sum()
    }
}

/// How a wake reached the target CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WakePath {
    /// A reschedule IPI (remote enqueue, then `resched_curr`).
    Reschedule,
    /// A call-function-single IPI (the remote wakelist, TTWU_QUEUE).
    CallFunctionSingle,
    /// A function-call IPI (arm64 has one kind for single and many).
    CallFunction,
    /// An IPI of another kind.
    OtherIpi,
    /// No IPI: the target was polling and only had its need-resched flag set.
    Polling,
    /// No IPI: enqueued directly on a busy target without preempting it; the wakee
    /// waited for the running task.
    Queued,
    /// The waker's own CPU: no IPI at all.
    Local,
    /// Another CPU, in a trace that recorded no IPI events (no `ipi_send_*`,
    /// `sched_wake_idle_without_ipi` or handler events): how the wake got there is not
    /// known, and not guessed.
    Untraced,
}

impl WakePath {
    pub fn as_str(self) -> &'static str {
        match self {
            WakePath::Reschedule => "reschedule",
            WakePath::CallFunctionSingle => "call_function_single",
            WakePath::CallFunction => "call_function",
            WakePath::OtherIpi => "other_ipi",
            WakePath::Polling => "polling",
            WakePath::Queued => "queued",
            WakePath::Local => "local",
            WakePath::Untraced => "untraced",
        }
    }
}

/// Why a wake could not be followed from waking to switch-in. Such a wake is counted,
/// never completed by a guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Incomplete {
    /// A wake was marked but no `sched_waking` of the wakee followed (the wakee had not
    /// blocked yet, so the kernel had nothing to wake).
    NoWaking,
    /// The wakee was not switched in before the trace or the region ended.
    NoSwitchIn,
    /// A remote wake with neither an IPI send nor `sched_wake_idle_without_ipi`, and no
    /// proof that it was queued on a busy CPU.
    NoIpiEvent,
    /// An IPI was sent but the target shows no matching handler entry and exit.
    NoHandler,
    /// The target was in an idle state but shows no idle exit.
    NoIdleExit,
    /// Nothing said whether the target was idle, and it showed no idle exit.
    TargetStateUnknown,
    /// The ring buffer lost events of a CPU the wake involved.
    EventsLost,
    /// The wakee ran on another CPU than the one the wake targeted.
    Migrated,
}

impl Incomplete {
    pub fn as_str(self) -> &'static str {
        match self {
            Incomplete::NoWaking => "no_waking",
            Incomplete::NoSwitchIn => "no_switch_in",
            Incomplete::NoIpiEvent => "no_ipi_event",
            Incomplete::NoHandler => "no_handler",
            Incomplete::NoIdleExit => "no_idle_exit",
            Incomplete::TargetStateUnknown => "target_state_unknown",
            Incomplete::EventsLost => "events_lost",
            Incomplete::Migrated => "migrated",
        }
    }
}

/// One phase and the record's latency series that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseSeries {
    pub from: Milestone,
    pub to: Milestone,
    /// The name of the series in `RunRecord::series` (`phase_waking_to_ipi_sent`).
    pub series: String,
}

/// The wake phases of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WakePhases {
    /// Where the events came from: `tracefs` (traced live), `ftrace` (a `trace` file) or
    /// `trace-cmd` (`trace-cmd report` output).
    pub source: String,
    /// The trace clock, when known (`mono` for live runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_clock: Option<String>,
    /// The coarsest timestamp step in the trace: 1000 for the kernel's `trace` file,
    /// which prints microseconds; 1 for `trace-cmd report -t`.
    pub timestamp_resolution_ns: u64,
    /// Wakes looked at: the marked wakes of a kbench region, else every selected
    /// `sched_waking`.
    pub wakes: u64,
    /// Wakes followed from waking to switch-in, by path.
    pub paths: BTreeMap<WakePath, u64>,
    /// Wakes that could not be followed, by reason.
    pub incomplete: BTreeMap<Incomplete, u64>,
    /// The phases, in the order they happen (by their median start).
    pub phases: Vec<PhaseSeries>,
    /// The series of the whole kernel-side wake, waking to switch-in.
    pub total_series: String,
    /// The tracepoints enabled (live runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// Wakes followed that began at another event than `sched_waking`, by that event
    /// ([`Milestone::Wakeup`] or [`Milestone::WakeupNew`]): a trace recorded without
    /// `sched_waking`, or new tasks' first wakes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub began_without_waking: BTreeMap<Milestone, u64>,
    /// Each wake followed, phase by phase, when there are at most [`EACH_WAKE_MAX`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub each: Vec<OneWake>,
}

impl WakePhases {
    /// Wakes followed from waking to switch-in.
    pub fn complete(&self) -> u64 {
        self.paths.values().sum()
    }

    /// Wakes that could not be followed.
    pub fn incomplete_count(&self) -> u64 {
        self.incomplete.values().sum()
    }

    /// Whether `series` (a name in `RunRecord::series`) belongs to the phases.
    pub fn holds_series(&self, series: &str) -> bool {
        self.total_series == series || self.phases.iter().any(|p| p.series == series)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_keyed_by_enums_round_trip_through_json() {
        let phases = WakePhases {
            source: "ftrace".into(),
            timestamp_resolution_ns: 1000,
            wakes: 3,
            paths: BTreeMap::from([(WakePath::CallFunctionSingle, 2)]),
            incomplete: BTreeMap::from([(Incomplete::NoSwitchIn, 1)]),
            phases: vec![PhaseSeries {
                from: Milestone::Waking,
                to: Milestone::IpiSent,
                series: Milestone::Waking.phase_series_name(Milestone::IpiSent),
            }],
            total_series: "kernel_wake_latency".into(),
            ..WakePhases::default()
        };
        let json = serde_json::to_string(&phases).unwrap();
        assert!(json.contains("\"call_function_single\":2"), "{json}");
        assert!(json.contains("\"no_switch_in\":1"), "{json}");
        assert!(json.contains("phase_waking_to_ipi_sent"), "{json}");
        assert_eq!(serde_json::from_str::<WakePhases>(&json).unwrap(), phases);
        assert_eq!((phases.complete(), phases.incomplete_count()), (2, 1));
        assert!(phases.holds_series("kernel_wake_latency"));
        assert!(!phases.holds_series("wake_latency"));
    }
}
