//! `sched wakeup --trace`: the run's wakes traced through a tracefs instance of its
//! own, then matched into phases (`kbench_trace`).
//!
//! The instance gets the clock `mono` (the workload's own clock, so the phases can be
//! checked against its wake latency), a buffer sized for the run, the waker's and
//! wakee's CPUs, and only the events a wake is made of, `sched_waking` and
//! `sched_wakeup` filtered to the wakee. No pid filter (`set_event_pid`): the target's
//! IPI handler and idle exit run in whatever task's context is current there, and the
//! target's switches say whether it was idle. Tracing starts before the warm-up, so every CPU's state is known when the
//! measured wakes begin; marks (`trace_marker`) bound the measured region and precede
//! each measured wake, written in the waker's gap before it spins, never between t0
//! and t2. Each mark's write is timed (`meta.trace_marker_write_ns`).
//!
//! SIGINT, SIGTERM and SIGHUP remove the instance before the process exits with
//! 128 + the signal, so an interrupted run leaves tracefs as it found it; an instance
//! left by a run killed with SIGKILL is removed by the next traced run.
use crate::clock::now_ns;
use crate::wakephases::{self, TraceSource};
use crate::WorkloadError;
use kbench_record::{LatencySeries, WakePhases};
use kbench_sys::tracefs::{cpumask_hex, Instance, Tracefs, TracefsError};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

/// Instances are named `kbench-<pid>`, so a stale one can be told from a live one.
const INSTANCE_PREFIX: &str = "kbench-";
/// Buffer per CPU and traced wake: a wake leaves about ten events on each CPU.
const BUFFER_KB_PER_WAKE: u64 = 2;
const MIN_BUFFER_KB: u64 = 4096;
const MAX_BUFFER_KB: u64 = 256 * 1024;
const TRACE_CLOCK: &str = "mono";

/// The events a wake is made of, each enabled when the kernel has it; arm64 has no
/// `irq_vectors`, x86 no `ipi_entry`, older kernels `ipi_raise` instead of
/// `ipi_send_cpu`.
const EVENTS: &[&str] = &[
    "sched/sched_waking",
    "sched/sched_wakeup",
    "sched/sched_switch",
    "sched/sched_wake_idle_without_ipi",
    "ipi/ipi_send_cpu",
    "ipi/ipi_send_cpumask",
    "irq_vectors/reschedule_entry",
    "irq_vectors/reschedule_exit",
    "irq_vectors/call_function_single_entry",
    "irq_vectors/call_function_single_exit",
    "irq_vectors/call_function_entry",
    "irq_vectors/call_function_exit",
    "ipi/ipi_entry",
    "ipi/ipi_exit",
    "power/cpu_idle",
];
/// Without a generic send event, arm's own.
const OLD_SEND_EVENT: &str = "ipi/ipi_raise";
/// Where IPIs are ordinary IRQs (arm64) and have no vector events: the IRQ handler
/// events, the entry filtered to IPIs.
const IRQ_EVENTS: [(&str, Option<&str>); 2] = [
    ("irq/irq_handler_entry", Some("name == \"IPI\"")),
    ("irq/irq_handler_exit", None),
];
const REQUIRED: [&str; 2] = ["sched/sched_waking", "sched/sched_switch"];
/// The events about the woken task, filtered to the wakee.
const WAKEE_EVENTS: [&str; 2] = ["sched/sched_waking", "sched/sched_wakeup"];

/// The instance of the run in flight, where the signal thread can reach it.
static ACTIVE: Mutex<Option<Instance>> = Mutex::new(None);
static SIGNAL_THREAD: Once = Once::new();

fn active() -> MutexGuard<'static, Option<Instance>> {
    ACTIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A traced run in progress.
pub struct WakeTrace {
    events: Vec<String>,
    marker_costs_ns: Mutex<Vec<u64>>,
}

/// What the trace gave: the phase series and their description, the marker cost.
pub struct TracedPhases {
    pub series: Vec<LatencySeries>,
    pub phases: WakePhases,
    pub marker_write_ns: Option<u64>,
}

fn tracefs_error(e: TracefsError) -> WorkloadError {
    match e {
        TracefsError::NotRoot => WorkloadError::Usage(format!("--trace: {e}")),
        TracefsError::Unavailable(_) => WorkloadError::Unsupported(format!("--trace: {e}")),
        TracefsError::Io { .. } => WorkloadError::Failed(format!("--trace: {e}")),
    }
}

/// `--trace` without root: refused before anything runs.
pub fn check_privilege() -> Result<(), WorkloadError> {
    if rustix::process::geteuid().is_root() {
        Ok(())
    } else {
        Err(tracefs_error(TracefsError::NotRoot))
    }
}

impl WakeTrace {
    /// Sets up the instance with tracing off; `wakes` sizes its buffer.
    pub fn prepare(cpus: &[u32], wakes: u64) -> Result<WakeTrace, WorkloadError> {
        check_privilege()?;
        let tracefs = Tracefs::open().map_err(tracefs_error)?;
        for event in REQUIRED {
            if !tracefs.has_event(event) {
                return Err(WorkloadError::Unsupported(format!(
                    "--trace: this kernel has no {event} event"
                )));
            }
        }
        tracefs.remove_stale_instances(INSTANCE_PREFIX);
        install_signal_thread();
        let name = format!("{INSTANCE_PREFIX}{}", std::process::id());
        let mut instance = tracefs.create_instance(&name).map_err(tracefs_error)?;
        let buffer_kb = (wakes * BUFFER_KB_PER_WAKE).clamp(MIN_BUFFER_KB, MAX_BUFFER_KB);
        instance
            .write("trace_clock", TRACE_CLOCK)
            .map_err(tracefs_error)?;
        instance
            .write("buffer_size_kb", &buffer_kb.to_string())
            .map_err(tracefs_error)?;
        instance
            .write("tracing_cpumask", &cpumask_hex(cpus))
            .map_err(tracefs_error)?;
        let events = enable_events(&tracefs, &instance).map_err(tracefs_error)?;
        instance.open_marker().map_err(tracefs_error)?;
        *active() = Some(instance);
        Ok(WakeTrace {
            events,
            marker_costs_ns: Mutex::new(Vec::with_capacity(wakes as usize)),
        })
    }

    /// Filters the wake events to `wakee` and starts tracing.
    pub fn start(&self, wakee: i32) -> Result<(), String> {
        with_instance(|i| {
            for event in WAKEE_EVENTS {
                i.write(
                    &format!("events/{event}/filter"),
                    &format!("pid == {wakee}"),
                )?;
            }
            i.write("tracing_on", "1")
        })
    }

    /// Writes a marker (the region's begin and end).
    pub fn mark(&self, text: &str) -> Result<(), String> {
        with_instance(|i| i.mark(text))
    }

    /// Marks measured wake `index`, timing the write.
    pub fn mark_wake(&self, index: u64) -> Result<(), String> {
        let text = kbench_trace::regions::wake_mark(index);
        let started = now_ns();
        self.mark(&text)?;
        let cost = now_ns().saturating_sub(started);
        self.marker_costs_ns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(cost);
        Ok(())
    }

    /// Stops tracing, reads the trace, removes the instance, and matches the region
    /// of `wakee_pid` into phases.
    pub fn finish(mut self, wakee_pid: i32) -> Result<TracedPhases, WorkloadError> {
        let (text, lost) = {
            let mut slot = active();
            let instance = slot.take().ok_or_else(|| {
                WorkloadError::Failed("--trace: the tracefs instance is gone".into())
            })?;
            instance.write("tracing_on", "0").map_err(tracefs_error)?;
            let text = instance.read("trace").map_err(tracefs_error)?;
            let lost = overruns(&instance);
            instance.remove().map_err(tracefs_error)?;
            (text, lost)
        };
        let (parsed, regions) = kbench_trace::analyse(&text, &kbench_trace::Selection::all())
            .map_err(|e| WorkloadError::Failed(format!("--trace: reading the trace: {e}")))?;
        let region = regions
            .into_iter()
            .find(|r| r.region.as_ref().is_some_and(|r| r.wakee_pid == wakee_pid))
            .ok_or_else(|| {
                WorkloadError::Failed(
                    "--trace: the trace holds no measured region (its begin mark was overwritten?)"
                        .into(),
                )
            })?;
        let source = TraceSource {
            name: "tracefs",
            clock: Some(TRACE_CLOCK),
            resolution_ns: parsed.resolution_ns,
            events: std::mem::take(&mut self.events),
        };
        let (series, mut phases) =
            wakephases::phase_series(&region.matched, source).map_err(WorkloadError::Failed)?;
        if lost > 0 {
            phases.events.push(format!("({lost} events overwritten)"));
        }
        let mut costs = std::mem::take(
            &mut *self
                .marker_costs_ns
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        costs.sort_unstable();
        Ok(TracedPhases {
            series,
            phases,
            marker_write_ns: costs.get(costs.len() / 2).copied(),
        })
    }
}

impl Drop for WakeTrace {
    fn drop(&mut self) {
        // A run that failed removes its instance too.
        drop(active().take());
    }
}

fn with_instance(f: impl FnOnce(&Instance) -> Result<(), TracefsError>) -> Result<(), String> {
    let slot = active();
    let instance = slot
        .as_ref()
        .ok_or("--trace: the tracefs instance is gone")?;
    f(instance).map_err(|e| format!("--trace: {e}"))
}

/// Enables every wake event the kernel has; returns their names.
fn enable_events(tracefs: &Tracefs, instance: &Instance) -> Result<Vec<String>, TracefsError> {
    let mut wanted: Vec<(&str, Option<&str>)> = EVENTS.iter().map(|e| (*e, None)).collect();
    if !tracefs.has_event("ipi/ipi_send_cpu") {
        wanted.push((OLD_SEND_EVENT, None));
    }
    if !tracefs.has_event("irq_vectors/reschedule_entry") {
        wanted.extend(IRQ_EVENTS);
    }
    let mut enabled = Vec::new();
    for (event, filter) in wanted.into_iter().filter(|(e, _)| tracefs.has_event(e)) {
        if let Some(filter) = filter {
            instance.write(&format!("events/{event}/filter"), filter)?;
        }
        instance.write(&format!("events/{event}/enable"), "1")?;
        enabled.push(event.to_string());
    }
    Ok(enabled)
}

/// Events the ring buffer overwrote, over every CPU (`per_cpu/cpuN/stats`).
fn overruns(instance: &Instance) -> u64 {
    (0..)
        .map_while(|cpu| instance.read(&format!("per_cpu/cpu{cpu}/stats")).ok())
        .map(|stats| {
            stats
                .lines()
                .find_map(|l| l.strip_prefix("overrun:"))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

/// One thread, for the life of the process, that removes the active instance when a
/// terminating signal arrives, then exits as the other workloads do.
fn install_signal_thread() {
    SIGNAL_THREAD.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Held until the exit: a thread that would mark or read the trace
                // waits instead of failing the run on the instance being gone.
                let mut slot = active();
                drop(slot.take());
                std::process::exit(128 + signal);
            }
        });
    });
}
