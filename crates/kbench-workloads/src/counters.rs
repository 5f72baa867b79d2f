//! perf_event_open counters over a run's timed region (`--counters`, kbench's).
//!
//! The counters are opened on the task that runs the timed region, disabled and with
//! `inherit`, before it creates the run's other tasks: every task forked or spawned
//! afterwards gets its own copy, and the kernel folds each copy's count into the
//! original when the task exits. One set of descriptors thus counts two pipe workers
//! or the 400 tasks of a default messaging run alike, the workers' exits included,
//! and nothing outside the run. The task that starts the clock enables them just
//! before it starts it and disables them just after it stops it: for seccomp-notify
//! that is the supervisor, which inherited them from the coordinator.
//!
//! Counting costs something on every context switch of the counted tasks (about 13%
//! on a same-CPU pipe round trip here), which is why they are opt-in and why a run
//! with counters records it in its parameters: it is never compared with one without.
use kbench_record::{CounterOutcome, CounterReading, PerfCounter};
use perf_event::events::{Hardware, Software};
use perf_event::{Builder, Counter};
use std::io;

/// The counters of one run, each open or with the reason it is not.
pub struct RunCounters {
    slots: Vec<Slot>,
}

struct Slot {
    counter: PerfCounter,
    state: Result<Counter, CounterOutcome>,
}

impl RunCounters {
    /// No counters: what a run without `--counters` carries, at no cost.
    pub fn none() -> RunCounters {
        RunCounters { slots: Vec::new() }
    }

    /// Every counter of [`PerfCounter::ALL`] on the calling thread, disabled, inherited
    /// by the tasks it creates from now on. Those the kernel refuses are kept with
    /// the reason, typed (not supported, not permitted).
    pub fn open() -> RunCounters {
        let no_perf_events = no_perf_events();
        let slots = PerfCounter::ALL
            .iter()
            .map(|&counter| Slot {
                counter,
                state: if let Some(reason) = &no_perf_events {
                    Err(CounterOutcome::NotSupported {
                        reason: reason.clone(),
                    })
                } else {
                    builder(counter)
                        .build()
                        .map_err(|e| refusal(counter, &e, paranoid_setting()))
                },
            })
            .collect();
        RunCounters { slots }
    }

    /// [`RunCounters::open`] when `wanted`, else [`RunCounters::none`].
    pub fn open_if(wanted: bool) -> RunCounters {
        if wanted {
            RunCounters::open()
        } else {
            RunCounters::none()
        }
    }

    /// Whether the run asked for counters (whatever the kernel made of them).
    pub fn wanted(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Enables every open counter, in this task and in the tasks that inherited them.
    pub fn start(&mut self) {
        self.for_each_open(Counter::enable, "enabling");
    }

    /// Disables every open counter: what follows is not counted.
    pub fn stop(&mut self) {
        self.for_each_open(Counter::disable, "disabling");
    }

    /// The readings, once the counted tasks have exited (their counts are folded into
    /// ours as they exit). Empty for [`RunCounters::none`].
    pub fn read(&mut self) -> Vec<CounterReading> {
        self.slots
            .iter_mut()
            .map(|slot| CounterReading {
                counter: slot.counter,
                outcome: match &mut slot.state {
                    Ok(counter) => match counter.read_count_and_time() {
                        Ok(c) => counted(c.count, c.time_enabled, c.time_running),
                        Err(e) => CounterOutcome::NotCounted {
                            reason: format!("reading the counter failed: {e}"),
                        },
                    },
                    Err(outcome) => outcome.clone(),
                },
            })
            .collect()
    }

    fn for_each_open(&mut self, action: fn(&mut Counter) -> io::Result<()>, doing: &str) {
        for slot in &mut self.slots {
            if let Ok(counter) = &mut slot.state {
                if let Err(e) = action(counter) {
                    slot.state = Err(CounterOutcome::NotCounted {
                        reason: format!("{doing} the counter failed: {e}"),
                    });
                }
            }
        }
    }
}

/// The attributes of one counter. Software counters count kernel and user mode
/// together (context switches and migrations happen in the kernel); instructions and
/// cycles are opened twice, once per mode, so a change can be placed on either side.
fn builder(counter: PerfCounter) -> Builder<'static> {
    let mut b = match counter {
        PerfCounter::TaskClock => Builder::new(Software::TASK_CLOCK),
        PerfCounter::ContextSwitches => Builder::new(Software::CONTEXT_SWITCHES),
        PerfCounter::CpuMigrations => Builder::new(Software::CPU_MIGRATIONS),
        PerfCounter::PageFaults => Builder::new(Software::PAGE_FAULTS),
        PerfCounter::InstructionsUser | PerfCounter::InstructionsKernel => {
            Builder::new(Hardware::INSTRUCTIONS)
        }
        PerfCounter::CyclesUser | PerfCounter::CyclesKernel => Builder::new(Hardware::CPU_CYCLES),
    };
    let (user, kernel) = match counter {
        PerfCounter::InstructionsUser | PerfCounter::CyclesUser => (true, false),
        PerfCounter::InstructionsKernel | PerfCounter::CyclesKernel => (false, true),
        _ => (true, true),
    };
    b.exclude_user(!user)
        .exclude_kernel(!kernel)
        .exclude_hv(true)
        .inherit(true)
        .enabled(false);
    b
}

/// A count scaled to the whole enabled time when the PMU had to share its counters
/// between events (running < enabled), as perf stat scales; a counter that never ran
/// has no count.
fn counted(raw: u64, enabled_ns: u64, running_ns: u64) -> CounterOutcome {
    if running_ns == 0 && enabled_ns > 0 {
        return CounterOutcome::NotCounted {
            reason: format!(
                "never on the PMU during the run (enabled {enabled_ns} ns, running 0): \
                 its counters were all in use"
            ),
        };
    }
    let value = if running_ns < enabled_ns {
        (raw as u128 * enabled_ns as u128 / running_ns as u128).min(u64::MAX as u128) as u64
    } else {
        raw
    };
    CounterOutcome::Counted {
        value,
        enabled_ns,
        running_ns,
    }
}

/// What a refused perf_event_open means, by its error: the event does not exist here,
/// or it exists and this process may not count it.
fn refusal(counter: PerfCounter, err: &io::Error, paranoid: Option<i64>) -> CounterOutcome {
    let errno = err.raw_os_error().unwrap_or(0);
    let failed = match errno_name(errno) {
        Some(name) => format!("perf_event_open failed with {name}"),
        None => format!("perf_event_open failed: {err}"),
    };
    match errno {
        libc::EACCES | libc::EPERM => CounterOutcome::NotPermitted {
            reason: format!(
                "{failed}: {}; counting kernel mode needs CAP_PERFMON or a setting of 1 or \
                 lower",
                paranoid_words(paranoid)
            ),
        },
        libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::ENXIO | libc::EINVAL => {
            CounterOutcome::NotSupported {
                reason: if counter.is_hardware() {
                    format!(
                        "{failed}: the kernel drives no hardware PMU with this event, or \
                         none that counts {} mode alone",
                        mode_word(counter)
                    )
                } else {
                    failed
                },
            }
        }
        libc::ENOSYS => CounterOutcome::NotSupported {
            reason: format!("{failed}: a kernel without perf events"),
        },
        _ => CounterOutcome::NotCounted { reason: failed },
    }
}

/// The errors [`refusal`] tells apart, by their C names (the strerror text of ENOENT,
/// "No such file or directory", would mislead).
fn errno_name(errno: i32) -> Option<&'static str> {
    Some(match errno {
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENODEV => "ENODEV",
        libc::ENXIO => "ENXIO",
        libc::EINVAL => "EINVAL",
        libc::ENOSYS => "ENOSYS",
        _ => return None,
    })
}

fn paranoid_words(paranoid: Option<i64>) -> String {
    match paranoid {
        Some(n) => format!("perf_event_paranoid is {n}"),
        None => "perf_event_paranoid is unreadable".to_string(),
    }
}

fn mode_word(counter: PerfCounter) -> &'static str {
    match counter {
        PerfCounter::InstructionsKernel | PerfCounter::CyclesKernel => "kernel",
        _ => "user",
    }
}

/// Every kernel built with perf events has it; a machine root without it (through
/// `$KBENCH_SYSROOT`) stands for one without.
const PARANOID_FILE: &str = "/proc/sys/kernel/perf_event_paranoid";

/// Why no counter can be opened at all, when the kernel has no perf events: `--counters`
/// is refused up front then, rather than recorded as counted.
pub fn no_perf_events() -> Option<String> {
    let root = kbench_sys::Sysroot::from_env();
    (!root.exists(PARANOID_FILE)).then(|| {
        format!(
            "a kernel without perf events (no {})",
            root.path(PARANOID_FILE).display()
        )
    })
}

/// `/proc/sys/kernel/perf_event_paranoid`, for the reason of a refusal.
fn paranoid_setting() -> Option<i64> {
    std::fs::read_to_string(PARANOID_FILE)
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_typed_by_their_error() {
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        match refusal(PerfCounter::CyclesKernel, &eacces, Some(2)) {
            CounterOutcome::NotPermitted { reason } => assert_eq!(
                reason,
                "perf_event_open failed with EACCES: perf_event_paranoid is 2; counting \
                 kernel mode needs CAP_PERFMON or a setting of 1 or lower"
            ),
            other => panic!("{other:?}"),
        }
        let enoent = io::Error::from_raw_os_error(libc::ENOENT);
        match refusal(PerfCounter::InstructionsUser, &enoent, Some(2)) {
            CounterOutcome::NotSupported { reason } => assert_eq!(
                reason,
                "perf_event_open failed with ENOENT: the kernel drives no hardware PMU \
                 with this event, or none that counts user mode alone"
            ),
            other => panic!("{other:?}"),
        }
        let emfile = io::Error::from_raw_os_error(libc::EMFILE);
        assert!(matches!(
            refusal(PerfCounter::TaskClock, &emfile, None),
            CounterOutcome::NotCounted { .. }
        ));
    }

    #[test]
    fn shared_pmu_counts_are_scaled_and_unscheduled_ones_dropped() {
        assert_eq!(
            counted(1000, 400, 100),
            CounterOutcome::Counted {
                value: 4000,
                enabled_ns: 400,
                running_ns: 100
            }
        );
        assert_eq!(
            counted(7, 50, 50),
            CounterOutcome::Counted {
                value: 7,
                enabled_ns: 50,
                running_ns: 50
            }
        );
        assert!(matches!(
            counted(0, 50, 0),
            CounterOutcome::NotCounted { .. }
        ));
        assert_eq!(
            RunCounters::none().read(),
            Vec::<CounterReading>::new(),
            "no counters, no readings"
        );
    }

    #[test]
    fn a_counted_child_is_folded_into_the_parent_reading() {
        // The real kernel: a forked child's page faults and task clock reach our
        // reading once it has exited, and nothing is counted while disabled.
        let mut counters = RunCounters::open();
        let Some(Ok(_)) = counters
            .slots
            .iter()
            .find(|s| s.counter == PerfCounter::PageFaults)
            .map(|s| s.state.as_ref().map(|_| ()))
        else {
            // A kernel without perf events (or forbidding them) has nothing to fold.
            return;
        };
        const PAGE_BYTES: usize = 4096;
        let mut pages = vec![1u8; 64 * PAGE_BYTES];
        counters.start();
        // SAFETY: the child neither allocates nor takes locks: it writes to memory it
        // shares copy-on-write with us (one fault a page) and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            for page in pages.chunks_mut(PAGE_BYTES) {
                page[0] = 2;
            }
            // SAFETY: _exit ends the child without running the parent's destructors.
            unsafe { libc::_exit(0) };
        }
        assert!(pid > 0, "fork failed");
        let mut status = 0;
        // SAFETY: waits for the child forked above; `status` is a live int.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        counters.stop();
        assert_eq!(status, 0);
        let readings = counters.read();
        let value = |c: PerfCounter| readings.iter().find(|r| r.counter == c).unwrap().value();
        assert!(
            value(PerfCounter::PageFaults).unwrap() >= 64,
            "{readings:?}"
        );
        assert!(value(PerfCounter::TaskClock).unwrap() > 0, "{readings:?}");
        let after_stop = counters.read();
        assert_eq!(readings, after_stop, "counted while disabled");
    }
}
