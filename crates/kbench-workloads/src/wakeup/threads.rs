//! The threads of a run, the waker, the wakee and (preempt) the hog, and what they
//! measure per wake.
use super::params::{Mode, Params};
use crate::clock::{self, now_ns, sleep_until_ns, spin_until_ns};
use crate::cpus;
use crate::ipiaccount::IpiSnapshot;
use crate::measure::{Elapsed, Stopwatch};
use crate::shared::{SharedStats, TaskSlot};
use crate::wakechan::WakeChannel;
use crate::waketrace::WakeTrace;
use crate::WorkloadError;
use kbench_sys::Sysroot;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long the waker waits for the wakee (or the hog) before calling the run failed.
const STALL_TIMEOUT: Duration = Duration::from_secs(10);

/// What the threads share besides the channels.
#[derive(Default)]
pub(super) struct Control {
    /// Set by any thread that fails (or on panic): everyone stops.
    abort: AtomicBool,
    /// The wakee is about to block for wake number `wakee_ready - 1`.
    wakee_ready: AtomicU64,
    /// The wakee has finished handling this many wakes.
    wakee_done: AtomicU64,
    hog_running: AtomicBool,
    stop_hog: AtomicBool,
    /// Thread ids, for the trace's filter and its region mark (0 until known).
    waker_tid: AtomicI32,
    pub(super) wakee_tid: AtomicI32,
}

fn current_tid() -> i32 {
    rustix::thread::gettid().as_raw_nonzero().get()
}

impl Control {
    fn aborted(&self) -> bool {
        self.abort.load(Ordering::Acquire)
    }

    /// Polls (sleeping, so a waiter on the same CPU never starves the thread it waits
    /// for) until `ready` holds; fails on abort or after [`STALL_TIMEOUT`].
    fn wait_for(&self, what: &str, ready: impl Fn() -> bool) -> Result<(), String> {
        let started = Instant::now();
        while !ready() {
            if self.aborted() {
                return Err(ABORTED.into());
            }
            if started.elapsed() > STALL_TIMEOUT {
                return Err(format!("{what} did not happen within {STALL_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_micros(20));
        }
        Ok(())
    }
}

/// The error of a thread stopped because another one failed; the other's error is the
/// one reported.
const ABORTED: &str = "stopped because another thread failed";

/// Sets the abort flag and wakes every channel when dropped armed: a thread that fails
/// or panics never leaves its peer blocked.
struct AbortOnDrop<'a> {
    control: &'a Control,
    channels: &'a [WakeChannel; 2],
    armed: bool,
}

impl<'a> AbortOnDrop<'a> {
    fn new(control: &'a Control, channels: &'a [WakeChannel; 2]) -> Self {
        Self {
            control,
            channels,
            armed: true,
        }
    }

    /// Runs `body`; disarms on success.
    fn guard<T>(mut self, body: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
        let result = body();
        self.armed = result.is_err();
        result
    }
}

impl Drop for AbortOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.control.abort.store(true, Ordering::Release);
            for channel in self.channels {
                channel.kick();
            }
        }
    }
}

/// What the waker (thread A) saw, per wake.
pub(super) struct WakerLog {
    pub(super) t0_ns: Vec<u64>,
    pub(super) t1_ns: Vec<u64>,
    pub(super) overrun: Vec<bool>,
    /// Pingpong only: the return leg as A saw it.
    pub(super) back: Option<SideLog>,
    pub(super) elapsed: Elapsed,
    pub(super) ipis_before: IpiSnapshot,
    pub(super) ipis_after: IpiSnapshot,
}

/// What a woken side saw, per wake.
pub(super) struct SideLog {
    pub(super) t2_ns: Vec<u64>,
    /// The t0 read from the stamp line (pingpong's return leg is stamped by B).
    pub(super) t0_seen_ns: Vec<u64>,
    pub(super) cpu: Vec<u32>,
    pub(super) slept: Vec<bool>,
    pub(super) seq_ok: Vec<bool>,
}

impl SideLog {
    /// Pre-allocated and written once, so the hot loop never faults a page in.
    fn new(total: usize) -> Self {
        Self {
            t2_ns: vec![u64::MAX; total],
            t0_seen_ns: vec![u64::MAX; total],
            cpu: vec![u32::MAX; total],
            slept: vec![false; total],
            seq_ok: vec![false; total],
        }
    }
}

/// Tracks the voluntary switches of the calling thread between samples.
struct SleepCheck {
    last: u64,
}

impl SleepCheck {
    fn new() -> Self {
        Self {
            last: clock::thread_voluntary_switches(),
        }
    }

    /// True when the thread blocked (switched out voluntarily) since the last call.
    fn slept_since_last(&mut self) -> bool {
        let now = clock::thread_voluntary_switches();
        let slept = now > self.last;
        self.last = now;
        slept
    }
}

/// Everything a side needs to receive wake `index` and log it.
struct Receiver<'a> {
    channel: &'a WakeChannel,
    control: &'a Control,
    slot: TaskSlot<'a>,
    inject_delay_ns: u64,
}

impl Receiver<'_> {
    /// Blocks for wake `index`, takes t2 at once, then does the bookkeeping.
    #[inline]
    fn receive(
        &self,
        index: usize,
        log: &mut SideLog,
        sleep: &mut SleepCheck,
    ) -> Result<(), String> {
        self.channel.wait()?;
        let mut t2 = now_ns();
        let cpu = rustix::thread::sched_getcpu();
        if self.inject_delay_ns > 0 {
            spin_until_ns(t2.saturating_add(self.inject_delay_ns));
            t2 = now_ns();
        }
        let (seq, t0) = self.channel.take_stamp();
        if self.control.aborted() {
            return Err(ABORTED.into());
        }
        log.t2_ns[index] = t2;
        log.t0_seen_ns[index] = t0;
        log.cpu[index] = u32::try_from(cpu).unwrap_or(u32::MAX);
        log.seq_ok[index] = seq == index as u64;
        log.slept[index] = sleep.slept_since_last();
        self.slot.note_current_cpu();
        Ok(())
    }
}

/// The shared pieces of one run, borrowed by every thread.
pub(super) struct Setup<'a> {
    pub(super) params: &'a Params,
    pub(super) channels: &'a [WakeChannel; 2],
    pub(super) control: &'a Control,
    pub(super) stats: &'a SharedStats,
    pub(super) gaps_ns: &'a [u64],
    pub(super) root: &'a Sysroot,
    pub(super) trace: Option<&'a WakeTrace>,
}

pub(super) const WAKER_SLOT: usize = 0;
pub(super) const WAKEE_SLOT: usize = 1;
pub(super) const HOG_SLOT: usize = 2;

/// Starts the hog (preempt mode), the wakee and the waker; joins them all.
pub(super) fn run_threads(s: &Setup<'_>) -> Result<(WakerLog, SideLog), WorkloadError> {
    let (hog, wakee, waker) = std::thread::scope(|scope| {
        let hog = (s.params.mode == Mode::Preempt).then(|| scope.spawn(|| hog_thread(s)));
        let wakee = scope.spawn(|| wakee_thread(s));
        let waker = scope.spawn(|| waker_thread(s));
        let waker = joined(waker.join());
        let wakee = joined(wakee.join());
        s.control.stop_hog.store(true, Ordering::Release);
        let hog = hog.map(|h| joined(h.join())).unwrap_or(Ok(()));
        (hog, wakee, waker)
    });
    let first_error = [
        waker.as_ref().err(),
        wakee.as_ref().err(),
        hog.as_ref().err(),
    ]
    .into_iter()
    .flatten()
    .find(|e| e.as_str() != ABORTED)
    .cloned();
    match (waker, wakee, first_error) {
        (Ok(waker), Ok(wakee), None) => Ok((waker, wakee)),
        (_, _, Some(e)) => Err(WorkloadError::Failed(format!("sched wakeup: {e}"))),
        _ => Err(WorkloadError::Failed(format!("sched wakeup: {ABORTED}"))),
    }
}

fn joined<T>(result: std::thread::Result<Result<T, String>>) -> Result<T, String> {
    result.unwrap_or_else(|_| Err("a benchmark thread panicked".into()))
}

/// Preempt mode: a SCHED_IDLE spinner on B, which every wakeup of the (SCHED_OTHER)
/// wakee must preempt.
fn hog_thread(s: &Setup<'_>) -> Result<(), String> {
    AbortOnDrop::new(s.control, s.channels).guard(|| {
        cpus::pin_current_thread(s.params.wakee_cpu)?;
        cpus::make_current_thread_sched_idle()?;
        let slot = s.stats.task(HOG_SLOT);
        slot.note_current_cpu();
        s.control.hog_running.store(true, Ordering::Release);
        let mut spins: u64 = 0;
        while !s.control.stop_hog.load(Ordering::Relaxed) && !s.control.aborted() {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins & ((1 << 20) - 1) == 0 {
                slot.note_current_cpu();
            }
        }
        Ok(())
    })
}

fn wakee_thread(s: &Setup<'_>) -> Result<SideLog, String> {
    AbortOnDrop::new(s.control, s.channels).guard(|| {
        cpus::pin_current_thread(s.params.wakee_cpu)?;
        s.control.wakee_tid.store(current_tid(), Ordering::Release);
        let total = s.params.total_wakes();
        let mut log = SideLog::new(total);
        let receiver = Receiver {
            channel: &s.channels[0],
            control: s.control,
            slot: s.stats.task(WAKEE_SLOT),
            inject_delay_ns: u64::from(s.params.inject_delay_us) * 1_000,
        };
        receiver.slot.note_current_cpu();
        let mut sleep = SleepCheck::new();
        for index in 0..total {
            s.control
                .wakee_ready
                .store(index as u64 + 1, Ordering::Release);
            receiver.receive(index, &mut log, &mut sleep)?;
            if s.params.mode == Mode::PingPong {
                s.channels[1].post(index as u64)?;
            }
            s.control
                .wakee_done
                .store(index as u64 + 1, Ordering::Release);
        }
        Ok(log)
    })
}

fn waker_thread(s: &Setup<'_>) -> Result<WakerLog, String> {
    AbortOnDrop::new(s.control, s.channels).guard(|| {
        cpus::pin_current_thread(s.params.waker_cpu)?;
        if s.params.mode == Mode::Preempt {
            s.control.wait_for("the SCHED_IDLE hog starting", || {
                s.control.hog_running.load(Ordering::Acquire)
            })?;
        }
        s.control.waker_tid.store(current_tid(), Ordering::Release);
        if let Some(trace) = s.trace {
            start_tracing(s, trace)?;
        }
        if s.params.mode == Mode::PingPong {
            ping_pong_loop(s)
        } else {
            gapped_wake_loop(s)
        }
    })
}

/// Starts tracing before the warm-up, once the wakee's thread id is known.
fn start_tracing(s: &Setup<'_>, trace: &WakeTrace) -> Result<(), String> {
    s.control.wait_for("the wakee starting", || {
        s.control.wakee_tid.load(Ordering::Acquire) != 0
    })?;
    trace.start(s.control.wakee_tid.load(Ordering::Acquire))
}

/// The begin mark of the measured region, with what the matcher needs to know.
fn region_mark(s: &Setup<'_>) -> String {
    kbench_trace::regions::begin_mark(&kbench_trace::Region {
        wakee_pid: s.control.wakee_tid.load(Ordering::Acquire),
        waker_pid: s.control.waker_tid.load(Ordering::Acquire),
        waker_cpu: s.params.waker_cpu,
        wakee_cpu: s.params.wakee_cpu,
        wakes: u64::from(s.params.wakes),
    })
}

/// The start of the measured region: after the warm-up wakes were fully handled.
struct Measured {
    stopwatch: Stopwatch,
    ipis_before: IpiSnapshot,
}

impl Measured {
    fn start(s: &Setup<'_>, handled: usize) -> Result<Self, String> {
        s.control.wait_for("the wakee finishing the warm-up", || {
            s.control.wakee_done.load(Ordering::Acquire) >= handled as u64
        })?;
        if let Some(trace) = s.trace {
            trace.mark(&region_mark(s))?;
        }
        Ok(Self {
            ipis_before: IpiSnapshot::take(s.root),
            stopwatch: Stopwatch::start(),
        })
    }

    fn finish(self, s: &Setup<'_>, log: WakerLogArrays, back: Option<SideLog>) -> WakerLog {
        let elapsed = self.stopwatch.stop();
        WakerLog {
            t0_ns: log.t0_ns,
            t1_ns: log.t1_ns,
            overrun: log.overrun,
            back,
            elapsed,
            ipis_before: self.ipis_before,
            ipis_after: IpiSnapshot::take(s.root),
        }
    }
}

/// The waker's per-wake arrays, pre-allocated.
struct WakerLogArrays {
    t0_ns: Vec<u64>,
    t1_ns: Vec<u64>,
    overrun: Vec<bool>,
}

impl WakerLogArrays {
    fn new(total: usize) -> Self {
        Self {
            t0_ns: vec![u64::MAX; total],
            t1_ns: vec![u64::MAX; total],
            overrun: vec![false; total],
        }
    }
}

/// idle, preempt and same-cpu: sleep the gap, spin the last bit, wake, repeat.
fn gapped_wake_loop(s: &Setup<'_>) -> Result<WakerLog, String> {
    let total = s.params.total_wakes();
    let warmup = s.params.warmup as usize;
    let spin_ns = u64::from(s.params.waker_spin_us) * 1_000;
    let slot = s.stats.task(WAKER_SLOT);
    let mut log = WakerLogArrays::new(total);
    let mut measured = None;
    let mut plan_ns = now_ns();
    for index in 0..total {
        if index == warmup {
            measured = Some(Measured::start(s, warmup)?);
            plan_ns = now_ns();
        }
        plan_ns = plan_ns.saturating_add(s.gaps_ns[index]);
        sleep_until_ns(plan_ns.saturating_sub(spin_ns));
        if let Some(trace) = s.trace.filter(|_| index >= warmup) {
            // In the gap, before the spin: the mark is never between t0 and t2.
            trace.mark_wake((index - warmup) as u64)?;
        }
        spin_until_ns(plan_ns);
        let ready = || s.control.wakee_ready.load(Ordering::Acquire) > index as u64;
        if !ready() {
            // The wakee is late: count it and re-base the schedule rather than let one
            // stall make every later wake late too.
            log.overrun[index] = true;
            s.control.wait_for("the wakee blocking again", ready)?;
            plan_ns = now_ns();
        }
        let (t0, t1) = s.channels[0].post(index as u64)?;
        log.t0_ns[index] = t0;
        log.t1_ns[index] = t1;
        slot.note_current_cpu();
    }
    s.control.wait_for("the wakee handling the last wake", || {
        s.control.wakee_done.load(Ordering::Acquire) >= total as u64
    })?;
    if let Some(trace) = s.trace {
        trace.mark(&kbench_trace::regions::end_mark())?;
    }
    let measured = measured.ok_or("no measured wakes")?;
    Ok(measured.finish(s, log, None))
}

/// pingpong: A wakes B, B wakes A at once, back to back.
fn ping_pong_loop(s: &Setup<'_>) -> Result<WakerLog, String> {
    let total = s.params.total_wakes();
    let warmup = s.params.warmup as usize;
    let mut log = WakerLogArrays::new(total);
    let mut back = SideLog::new(total);
    let receiver = Receiver {
        channel: &s.channels[1],
        control: s.control,
        slot: s.stats.task(WAKER_SLOT),
        inject_delay_ns: 0,
    };
    let mut measured = None;
    let mut sleep = SleepCheck::new();
    for index in 0..total {
        if index == warmup {
            measured = Some(Measured::start(s, warmup)?);
            sleep = SleepCheck::new();
        }
        let (t0, t1) = s.channels[0].post(index as u64)?;
        log.t0_ns[index] = t0;
        log.t1_ns[index] = t1;
        receiver.receive(index, &mut back, &mut sleep)?;
    }
    let measured = measured.ok_or("no measured wakes")?;
    Ok(measured.finish(s, log, Some(back)))
}
