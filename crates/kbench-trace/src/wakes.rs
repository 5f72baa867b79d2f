//! Each wake's events, matched from the waker's `sched_waking` to the wakee's
//! `sched_switch` on the target, in one pass over the trace.
//!
//! The rules (see docs/wake-phases.md):
//! - a wake starts at `sched_waking` of a selected task, on the waker's CPU A. Where no
//!   `sched_waking` precedes it, it starts at `sched_wakeup_new` (a new task's first
//!   wake has none), or, in a trace recorded without `sched_waking` at all, at
//!   `sched_wakeup`: A is then that event's CPU. Its target
//!   T is the `sched_waking` CPU, replaced by the `sched_wakeup` CPU or by the CPU of
//!   the IPI the wake sent (a task may be placed elsewhere than it slept);
//! - the IPI send (or `sched_wake_idle_without_ipi`) belongs to the wake when it is the
//!   first on A after the waking and before A's next waking or switch: one
//!   try_to_wake_up sends at most one;
//! - on T, after the send: the first handler entry of a kind that IPI raises, the exit
//!   of that same handler, and the first idle exit after the waking;
//! - the wake ends at the switch to the wakee, on T;
//! - whether T was in an idle state at the waking comes from its last `cpu_idle` and
//!   `sched_switch` events; a wake whose target was idle must show an idle exit.
//!
//! A wake missing an event its path needs is counted under an [`Incomplete`] reason and
//! gives no phases: nothing is filled in by guess. In a trace that recorded no IPI
//! event at all, a remote wake's path is [`WakePath::Untraced`], with the phases the
//! trace has.
use crate::event::{Event, EventKind, Handler, IpiKind};
use crate::regions::RegionMarks;
use kbench_record::{Incomplete, Milestone, WakePath};
use std::collections::{BTreeMap, HashMap};

/// Which woken tasks count: empty lists accept every task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub pids: Vec<i32>,
    pub comms: Vec<String>,
}

impl Selection {
    pub fn all() -> Self {
        Self::default()
    }

    pub fn pid(pid: i32) -> Self {
        Self {
            pids: vec![pid],
            comms: Vec::new(),
        }
    }

    fn accepts(&self, pid: i32, comm: &str) -> bool {
        (self.pids.is_empty() || self.pids.contains(&pid))
            && (self.comms.is_empty() || self.comms.iter().any(|c| c == comm))
    }
}

/// One wake followed from waking to switch-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wake {
    pub pid: i32,
    pub waker_cpu: u32,
    pub target_cpu: u32,
    pub path: WakePath,
    /// In the order they happened: the event that began it first (`Waking`, else
    /// `Wakeup` or `WakeupNew`), `SwitchIn` last.
    pub milestones: Vec<(Milestone, u64)>,
}

impl Wake {
    /// Waking to switch-in.
    pub fn total_ns(&self) -> u64 {
        match (self.milestones.first(), self.milestones.last()) {
            (Some(first), Some(last)) => last.1.saturating_sub(first.1),
            _ => 0,
        }
    }

    /// Each milestone to the next: `(from, to, duration)`; they add up to the total.
    pub fn phases(&self) -> Vec<(Milestone, Milestone, u64)> {
        self.milestones
            .windows(2)
            .map(|w| (w[0].0, w[1].0, w[1].1.saturating_sub(w[0].1)))
            .collect()
    }
}

/// The wakes of a trace (or of one region of it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WakeMatch {
    pub wakes: Vec<Wake>,
    pub incomplete: BTreeMap<Incomplete, u64>,
    /// Wakes looked at: the region's wake marks, else the selected wakings.
    pub looked_at: u64,
}

/// What the trace last said about a CPU.
#[derive(Debug, Clone, Copy, Default)]
struct CpuState {
    /// The running task, from `sched_switch`.
    current: Option<i32>,
    /// Inside an idle state, from `cpu_idle`.
    in_idle_state: Option<bool>,
    /// The wake whose try_to_wake_up may still be running here (its wakee).
    ttwu_of: Option<i32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TargetState {
    InIdleState,
    IdleTask,
    Busy,
    Unknown,
}

impl CpuState {
    fn target_state(&self) -> TargetState {
        match (self.in_idle_state, self.current) {
            (Some(true), _) => TargetState::InIdleState,
            (_, Some(0)) => TargetState::IdleTask,
            (_, Some(_)) => TargetState::Busy,
            _ => TargetState::Unknown,
        }
    }
}

/// A milestone seen: the event's index (its order) and time.
type Seen = Option<(usize, u64)>;

/// A wake not yet switched in.
#[derive(Debug, Clone)]
struct Open {
    /// The event that began it: `Waking`, or `Wakeup`/`WakeupNew` where no waking did.
    began: Milestone,
    /// That event's index and time.
    began_at: (usize, u64),
    waker_cpu: u32,
    target_cpu: u32,
    woke_on: Option<u32>,
    target_state: TargetState,
    ipi: Option<(usize, u64, Option<IpiKind>)>,
    skipped: Seen,
    idle_exit: Seen,
    entry: Option<(usize, u64, Handler)>,
    exit: Seen,
    lost: bool,
}

/// Matches the wakes of `events`: those of selected tasks, or, for a kbench region,
/// those of its wakee that start inside it.
pub fn match_wakes(
    events: &[Event],
    selection: &Selection,
    region: Option<&RegionMarks>,
) -> WakeMatch {
    let mut matcher = Matcher {
        selection,
        region,
        cpus: HashMap::new(),
        open: HashMap::new(),
        result: WakeMatch::default(),
        mark_had_waking: None,
        has_waking: events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Waking { .. })),
        has_ipi_events: events.iter().any(|e| {
            matches!(
                e.kind,
                EventKind::IpiSend { .. }
                    | EventKind::IdleWithoutIpi { .. }
                    | EventKind::HandlerEntry(_)
                    | EventKind::HandlerExit(_)
            )
        }),
    };
    for (index, event) in events.iter().enumerate() {
        matcher.step(index, event);
    }
    matcher.finish()
}

struct Matcher<'a> {
    selection: &'a Selection,
    region: Option<&'a RegionMarks>,
    cpus: HashMap<u32, CpuState>,
    open: HashMap<i32, Open>,
    result: WakeMatch,
    /// For a region: whether the latest wake mark has seen its waking yet.
    mark_had_waking: Option<bool>,
    /// Whether the trace recorded `sched_waking`: without it, wakes begin at
    /// `sched_wakeup`.
    has_waking: bool,
    /// Whether the trace recorded any IPI event: without any, a remote wake's path is
    /// [`WakePath::Untraced`] rather than a wake missing its IPI.
    has_ipi_events: bool,
}

impl Matcher<'_> {
    fn cpu(&mut self, cpu: u32) -> &mut CpuState {
        self.cpus.entry(cpu).or_default()
    }

    fn count(&mut self, reason: Incomplete) {
        *self.result.incomplete.entry(reason).or_default() += 1;
    }

    fn step(&mut self, index: usize, event: &Event) {
        self.note_marks(index);
        match &event.kind {
            EventKind::Waking {
                pid,
                comm,
                target_cpu,
            } => {
                self.cpu(event.cpu).ttwu_of = None;
                if self.wanted(index, *pid, comm) {
                    self.open_wake(index, event, *pid, *target_cpu, Milestone::Waking);
                }
            }
            EventKind::Wakeup {
                pid,
                comm,
                target_cpu,
                new,
            } => self.woken(index, event, *pid, comm, *target_cpu, *new),
            EventKind::IpiSend { targets, kind } => self.ipi_sent(index, event, targets, *kind),
            EventKind::IdleWithoutIpi { cpu } => self.ipi_skipped(index, event, *cpu),
            EventKind::CpuIdle { state, cpu } => self.cpu_idle(index, event, *state, *cpu),
            EventKind::HandlerEntry(handler) => self.handler_entry(index, event, handler),
            EventKind::HandlerExit(handler) => self.handler_exit(index, event, handler),
            EventKind::Switch { prev_pid, next_pid } => {
                self.switch(index, event, *prev_pid, *next_pid)
            }
            EventKind::Lost { cpu } => self.lost(*cpu),
            EventKind::Marker(_) | EventKind::Other => {}
        }
    }

    /// Counts a wake mark that saw no waking when the next mark (or the region's end)
    /// comes.
    fn note_marks(&mut self, index: usize) {
        let Some(marks) = self.region else {
            return;
        };
        let is_wake_mark = marks.wake_marks.binary_search(&index).is_ok();
        let is_end = marks.end == Some(index);
        if is_wake_mark || is_end {
            if self.mark_had_waking == Some(false) {
                self.count(Incomplete::NoWaking);
            }
            self.mark_had_waking = is_wake_mark.then_some(false);
        }
        if is_wake_mark {
            self.result.looked_at += 1;
        }
    }

    fn wanted(&self, index: usize, pid: i32, comm: &str) -> bool {
        match self.region {
            Some(marks) => marks.contains(index) && pid == marks.region.wakee_pid,
            None => self.selection.accepts(pid, comm),
        }
    }

    /// `sched_wakeup(_new)` of `pid`: the destination of its open wake, or the
    /// beginning of one where nothing else begins it (module docs).
    fn woken(
        &mut self,
        index: usize,
        event: &Event,
        pid: i32,
        comm: &str,
        target_cpu: u32,
        new: bool,
    ) {
        if !self.open.contains_key(&pid) && (new || !self.has_waking) {
            if !self.wanted(index, pid, comm) {
                return;
            }
            let began = match new {
                true => Milestone::WakeupNew,
                false => Milestone::Wakeup,
            };
            self.open_wake(index, event, pid, target_cpu, began);
        }
        if let Some(wake) = self.open.get_mut(&pid) {
            wake.woke_on = Some(event.cpu);
            wake.target_cpu = target_cpu;
        }
    }

    fn open_wake(
        &mut self,
        index: usize,
        event: &Event,
        pid: i32,
        target_cpu: u32,
        began: Milestone,
    ) {
        if self.region.is_none() {
            self.result.looked_at += 1;
        }
        if let Some(flag) = self.mark_had_waking.as_mut() {
            *flag = true;
        }
        if self.open.remove(&pid).is_some() {
            // Woken again before it ran: the earlier wake's end is not in the trace.
            self.count(Incomplete::NoSwitchIn);
        }
        let target_state = self.cpu(target_cpu).target_state();
        self.open.insert(
            pid,
            Open {
                began,
                began_at: (index, event.ts_ns),
                waker_cpu: event.cpu,
                target_cpu,
                woke_on: None,
                target_state,
                ipi: None,
                skipped: None,
                idle_exit: None,
                entry: None,
                exit: None,
                lost: false,
            },
        );
        self.cpu(event.cpu).ttwu_of = Some(pid);
    }

    /// The wake whose try_to_wake_up is running on `cpu` and has sent nothing yet.
    fn waking_on(&mut self, cpu: u32) -> Option<&mut Open> {
        let pid = self.cpus.get(&cpu)?.ttwu_of?;
        self.open
            .get_mut(&pid)
            .filter(|w| w.ipi.is_none() && w.skipped.is_none())
    }

    fn ipi_sent(&mut self, index: usize, event: &Event, targets: &[u32], kind: Option<IpiKind>) {
        let Some(wake) = self.waking_on(event.cpu) else {
            return;
        };
        let target = if targets.contains(&wake.target_cpu) {
            wake.target_cpu
        } else if let [only] = targets {
            *only
        } else {
            return;
        };
        wake.target_cpu = target;
        wake.ipi = Some((index, event.ts_ns, kind));
    }

    fn ipi_skipped(&mut self, index: usize, event: &Event, target: u32) {
        if let Some(wake) = self.waking_on(event.cpu) {
            wake.target_cpu = target;
            wake.skipped = Some((index, event.ts_ns));
        }
    }

    fn cpu_idle(&mut self, index: usize, event: &Event, state: u32, cpu: u32) {
        let left_idle = state == u32::MAX;
        self.cpu(cpu).in_idle_state = Some(!left_idle);
        if !left_idle {
            return;
        }
        for wake in self.open.values_mut() {
            if wake.target_cpu == cpu && wake.idle_exit.is_none() {
                wake.idle_exit = Some((index, event.ts_ns));
            }
        }
    }

    fn handler_entry(&mut self, index: usize, event: &Event, handler: &Handler) {
        for wake in self.open.values_mut() {
            let raised_by = wake
                .ipi
                .filter(|_| wake.target_cpu == event.cpu && wake.entry.is_none());
            if let Some((_, _, kind)) = raised_by {
                if kind.is_none_or(|k| k.handled_by(handler.kind)) {
                    wake.entry = Some((index, event.ts_ns, handler.clone()));
                }
            }
        }
    }

    fn handler_exit(&mut self, index: usize, event: &Event, handler: &Handler) {
        for wake in self.open.values_mut() {
            let same_handler = wake
                .entry
                .as_ref()
                .is_some_and(|(_, _, entered)| entered.layer == handler.layer);
            if wake.target_cpu == event.cpu && same_handler && wake.exit.is_none() {
                wake.exit = Some((index, event.ts_ns));
            }
        }
    }

    fn switch(&mut self, index: usize, event: &Event, prev_pid: i32, next_pid: i32) {
        let state = self.cpu(event.cpu);
        state.ttwu_of = None;
        state.current = Some(next_pid);
        if prev_pid == 0 {
            state.in_idle_state = Some(false);
        }
        if let Some(wake) = self.open.remove(&next_pid) {
            match classify(&wake, (index, event.ts_ns), event.cpu, self.has_ipi_events) {
                Ok((path, milestones)) => self.result.wakes.push(Wake {
                    pid: next_pid,
                    waker_cpu: wake.waker_cpu,
                    target_cpu: wake.target_cpu,
                    path,
                    milestones,
                }),
                Err(reason) => self.count(reason),
            }
        }
    }

    /// What came before on `cpu` is gone: the open wakes it takes part in cannot be
    /// followed, and its state is unknown again.
    fn lost(&mut self, cpu: u32) {
        *self.cpu(cpu) = CpuState::default();
        for wake in self.open.values_mut() {
            if wake.waker_cpu == cpu || wake.target_cpu == cpu {
                wake.lost = true;
            }
        }
    }

    fn finish(mut self) -> WakeMatch {
        if self.mark_had_waking == Some(false) {
            self.count(Incomplete::NoWaking);
        }
        for _ in 0..self.open.len() {
            self.count(Incomplete::NoSwitchIn);
        }
        self.result
    }
}

/// The path and milestones of a wake switched in at `switch` on `cpu`, or why it
/// cannot be followed.
fn classify(
    wake: &Open,
    switch: (usize, u64),
    cpu: u32,
    has_ipi_events: bool,
) -> Result<(WakePath, Vec<(Milestone, u64)>), Incomplete> {
    if wake.lost {
        return Err(Incomplete::EventsLost);
    }
    if cpu != wake.target_cpu {
        return Err(Incomplete::Migrated);
    }
    let mut seen: Vec<(usize, Milestone, u64)> = vec![
        (wake.began_at.0, wake.began, wake.began_at.1),
        (switch.0, Milestone::SwitchIn, switch.1),
    ];
    let mut add = |milestone: Milestone, at: Seen| {
        if let Some((index, ts)) = at {
            seen.push((index, milestone, ts));
        }
    };
    add(Milestone::IdleExit, wake.idle_exit);
    let path = if wake.target_cpu == wake.waker_cpu {
        WakePath::Local
    } else if let Some((index, ts, kind)) = wake.ipi {
        let (Some((entry_index, entry_ts, handler)), Some(exit)) = (&wake.entry, wake.exit) else {
            return Err(Incomplete::NoHandler);
        };
        check_idle_exit(wake)?;
        add(Milestone::IpiSent, Some((index, ts)));
        add(Milestone::HandlerEntry, Some((*entry_index, *entry_ts)));
        add(Milestone::HandlerExit, Some(exit));
        ipi_path(kind.or(handler.kind))
    } else if wake.skipped.is_some() {
        check_idle_exit(wake)?;
        add(Milestone::IpiSkipped, wake.skipped);
        WakePath::Polling
    } else if wake.woke_on == Some(wake.waker_cpu) && wake.target_state == TargetState::Busy {
        WakePath::Queued
    } else if !has_ipi_events {
        WakePath::Untraced
    } else {
        return Err(Incomplete::NoIpiEvent);
    };
    seen.sort_by_key(|(index, _, _)| *index);
    Ok((path, seen.into_iter().map(|(_, m, ts)| (m, ts)).collect()))
}

/// A target that was idle must show its idle exit; one of unknown state must show it
/// to prove it was idle.
fn check_idle_exit(wake: &Open) -> Result<(), Incomplete> {
    match (wake.target_state, wake.idle_exit) {
        (TargetState::InIdleState, None) => Err(Incomplete::NoIdleExit),
        (TargetState::Unknown, None) => Err(Incomplete::TargetStateUnknown),
        _ => Ok(()),
    }
}

fn ipi_path(kind: Option<IpiKind>) -> WakePath {
    match kind {
        Some(IpiKind::Reschedule) => WakePath::Reschedule,
        Some(IpiKind::CallFunctionSingle) => WakePath::CallFunctionSingle,
        Some(IpiKind::CallFunction) => WakePath::CallFunction,
        Some(IpiKind::Other) | None => WakePath::OtherIpi,
    }
}
