//! `sched wakeup`: the latency from a wake call on one CPU to the woken task running
//! on another, one sample per wake, with the evidence of which path the wakes took.
//!
//! Two threads of this process, each pinned: the waker on `--waker-cpu` (A) and the
//! wakee on `--wakee-cpu` (B). Per sample (all CLOCK_MONOTONIC, ns):
//! - t0: waker, just before the wake call, stored beside the futex word;
//! - t1: waker, just after the wake call returned;
//! - t2: wakee, first thing after its blocking call returned.
//!
//! Series: `wake_latency` = t2 - t0 (primary), `waker_cost` = t1 - t0; in `pingpong`
//! also the return leg and the round trip.
//!
//! Modes:
//! - `idle`: the waker sleeps a jittered gap (default 2 ms +-25 %) before each wake, so
//!   B is idle: idle exit plus the wakelist IPI (or none with a polling idle);
//! - `preempt`: as idle, but a SCHED_IDLE spinner keeps B busy: remote enqueue plus a
//!   reschedule IPI to preempt it;
//! - `pingpong`: back to back, both directions (no gap);
//! - `same-cpu`: A = B: no IPI, the context-switch floor.
//!
//! The waker runs an open-loop schedule (planned wake times, re-based after an
//! overrun); it sleeps until `--waker-spin-us` before the planned time and spins the
//! rest, so it is on CPU and hot when it stamps t0.
//!
//! `--trace` (root) also traces each measured wake through tracefs and breaks it into
//! its phases, waking to IPI to handler to switch-in (`waketrace`), recorded as more
//! series and described in `RunRecord::wake_phases`.
//!
//! A sample is invalid, counted by reason and kept out of every histogram, when the
//! wakee ran on the wrong CPU (`wrong_cpu`), did not really block (`did_not_block`: no
//! voluntary switch since the previous sample), saw another wake's stamp
//! (`out_of_sequence`), or the waker found it not yet blocked at the planned time
//! (`overrun`).
use crate::clock::{self, now_ns, sleep_until_ns, spin_until_ns};
use crate::cpus;
use crate::ipiaccount::{IpiSnapshot, Region};
use crate::latency::LatencyRecorder;
use crate::measure::{Elapsed, Stopwatch, UsageSnapshot};
use crate::perfopt::{OptKind, OptSpec, Parsed};
use crate::shared::{SharedStats, TaskSlot};
use crate::wakechan::{Mech, WakeChannel};
use crate::waketrace::{TracedPhases, WakeTrace};
use crate::{no_check, RunRecord, Workload, WorkloadError};
use kbench_sys::Sysroot;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const DEFAULT_WAKES: i32 = 2_000;
const DEFAULT_WARMUP: i32 = 100;
const DEFAULT_GAP_US: i32 = 2_000;
const DEFAULT_GAP_JITTER_PCT: i32 = 25;
const DEFAULT_WAKER_SPIN_US: i32 = 50;
const DEFAULT_SEED: u64 = 1;
/// Bounds that keep the pre-allocated sample arrays and the run length sane.
const MAX_WAKES: i32 = 1_000_000;
const MAX_GAP_US: i32 = 10_000_000;
const MAX_DELAY_US: i32 = 1_000_000;
/// How long the waker waits for the wakee (or the hog) before calling the run failed.
const STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// More invalid samples than this fraction earns a warning.
const INVALID_WARN_FRACTION: f64 = 0.1;

pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        short: None,
        long: "mode",
        kind: OptKind::Str {
            argh: "idle|preempt|pingpong|same-cpu",
        },
        help: "Target state before each wake (default idle)",
    },
    OptSpec {
        short: None,
        long: "mech",
        kind: OptKind::Str {
            argh: "futex|pipe|eventfd",
        },
        help: "Wake mechanism (default futex, private)",
    },
    OptSpec {
        short: None,
        long: "waker-cpu",
        kind: OptKind::Int,
        help: "CPU of the waker (default: first usable CPU)",
    },
    OptSpec {
        short: None,
        long: "wakee-cpu",
        kind: OptKind::Int,
        help: "CPU of the wakee (default: another usable CPU, not an SMT sibling)",
    },
    OptSpec {
        short: None,
        long: "wakes",
        kind: OptKind::Int,
        help: "Measured wakes (default 2000)",
    },
    OptSpec {
        short: None,
        long: "warmup",
        kind: OptKind::Int,
        help: "Warm-up wakes, discarded (default 100)",
    },
    OptSpec {
        short: None,
        long: "gap-us",
        kind: OptKind::Int,
        help: "Mean gap before each wake in us (default 2000)",
    },
    OptSpec {
        short: None,
        long: "gap-jitter-pct",
        kind: OptKind::Int,
        help: "Random jitter on the gap, +- percent (default 25)",
    },
    OptSpec {
        short: None,
        long: "waker-spin-us",
        kind: OptKind::Int,
        help: "Waker spins this long before each planned wake (default 50)",
    },
    OptSpec {
        short: None,
        long: "seed",
        kind: OptKind::U64,
        help: "Seed of the gap jitter (default 1)",
    },
    OptSpec {
        short: None,
        long: "trace",
        kind: OptKind::Bool,
        help: "Also trace each wake's phases through tracefs (root)",
    },
    OptSpec {
        short: None,
        long: "inject-delay-us",
        kind: OptKind::Int,
        help: "Testing only: wakee spins this long before taking t2",
    },
];

pub static WORKLOAD: Workload = Workload {
    collection: "sched",
    name: "wakeup",
    summary: "Wakeup latency: wake call on one CPU to the wakee running on another",
    usage: "kbench bench sched wakeup <options>",
    options: OPTIONS,
    comm: "sched-wakeup",
    in_perf_all: false,
    check: no_check,
    validate,
    takes_counters: false,
    run: run_parsed,
};

/// What B is doing when the wake arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Idle,
    Preempt,
    PingPong,
    SameCpu,
}

impl Mode {
    const NAMES: &'static str = "idle, preempt, pingpong or same-cpu";

    pub fn parse(name: &str) -> Option<Mode> {
        match name {
            "idle" => Some(Mode::Idle),
            "preempt" => Some(Mode::Preempt),
            "pingpong" => Some(Mode::PingPong),
            "same-cpu" => Some(Mode::SameCpu),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Idle => "idle",
            Mode::Preempt => "preempt",
            Mode::PingPong => "pingpong",
            Mode::SameCpu => "same-cpu",
        }
    }
}

/// The parameters of one run, defaults resolved and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub mode: Mode,
    pub mech: Mech,
    pub waker_cpu: u32,
    pub wakee_cpu: u32,
    pub wakes: u32,
    pub warmup: u32,
    pub gap_us: u32,
    pub gap_jitter_pct: u32,
    pub waker_spin_us: u32,
    pub seed: u64,
    pub inject_delay_us: u32,
    /// Trace the wake phases through tracefs.
    pub trace: bool,
}

impl Params {
    /// Resolves defaults (CPUs from this process's affinity) and validates; every
    /// user mistake is a one-line [`WorkloadError::Usage`].
    pub fn from_parsed(parsed: &Parsed) -> Result<Self, WorkloadError> {
        let mode = parse_choice(parsed, "mode", "idle", Mode::parse, Mode::NAMES)?;
        let mech = parse_choice(parsed, "mech", "futex", Mech::parse, Mech::NAMES)?;
        let (waker_cpu, wakee_cpu) = resolve_cpus(parsed, mode)?;
        let trace = parsed.bool("trace") == Some(true);
        if trace {
            if mode == Mode::PingPong {
                return Err(WorkloadError::Usage(
                    "--trace needs a gap between wakes: use --mode idle, preempt or same-cpu"
                        .into(),
                ));
            }
            crate::waketrace::check_privilege()?;
        }
        Ok(Self {
            mode,
            mech,
            waker_cpu,
            wakee_cpu,
            wakes: bounded(parsed, "wakes", DEFAULT_WAKES, 1, MAX_WAKES)?,
            warmup: bounded(parsed, "warmup", DEFAULT_WARMUP, 0, MAX_WAKES)?,
            gap_us: bounded(parsed, "gap-us", DEFAULT_GAP_US, 0, MAX_GAP_US)?,
            gap_jitter_pct: bounded(parsed, "gap-jitter-pct", DEFAULT_GAP_JITTER_PCT, 0, 100)?,
            waker_spin_us: bounded(
                parsed,
                "waker-spin-us",
                DEFAULT_WAKER_SPIN_US,
                0,
                MAX_GAP_US,
            )?,
            seed: parsed.u64("seed").unwrap_or(DEFAULT_SEED),
            inject_delay_us: bounded(parsed, "inject-delay-us", 0, 0, MAX_DELAY_US)?,
            trace,
        })
    }

    fn params_map(&self) -> BTreeMap<String, serde_json::Value> {
        let mut params = BTreeMap::from([
            ("mode".into(), self.mode.as_str().into()),
            ("mech".into(), self.mech.as_str().into()),
            ("waker-cpu".into(), self.waker_cpu.into()),
            ("wakee-cpu".into(), self.wakee_cpu.into()),
            ("wakes".into(), self.wakes.into()),
            ("warmup".into(), self.warmup.into()),
            ("gap-us".into(), self.gap_us.into()),
            ("gap-jitter-pct".into(), self.gap_jitter_pct.into()),
            ("waker-spin-us".into(), self.waker_spin_us.into()),
            ("seed".into(), self.seed.into()),
            ("inject-delay-us".into(), self.inject_delay_us.into()),
        ]);
        // Only when set: traced runs pay for their events and are never pooled with
        // untraced ones, and untraced records keep the parameters they always had.
        if self.trace {
            params.insert("trace".into(), true.into());
        }
        params
    }

    fn total_wakes(&self) -> usize {
        self.warmup as usize + self.wakes as usize
    }
}

/// A `Str` option that must name one of a few choices.
pub(crate) fn parse_choice<T>(
    parsed: &Parsed,
    long: &str,
    default: &str,
    parse: fn(&str) -> Option<T>,
    names: &str,
) -> Result<T, WorkloadError> {
    let given = parsed.str(long).flatten();
    let name = given.as_deref().unwrap_or(default);
    parse(name).ok_or_else(|| {
        WorkloadError::Usage(format!(
            "--{long} {name}: unknown {long} (expected {names})"
        ))
    })
}

/// An `Int` option within `min..=max`, or its default.
pub(crate) fn bounded(
    parsed: &Parsed,
    long: &str,
    default: i32,
    min: i32,
    max: i32,
) -> Result<u32, WorkloadError> {
    let value = parsed.int(long).unwrap_or(default);
    if (min..=max).contains(&value) {
        Ok(value.unsigned_abs())
    } else {
        Err(WorkloadError::Usage(format!(
            "--{long} {value}: must be between {min} and {max}"
        )))
    }
}

/// The waker and wakee CPUs: as given (checked against the usable CPUs), else the
/// first usable CPU and a partner that is not its SMT sibling.
fn resolve_cpus(parsed: &Parsed, mode: Mode) -> Result<(u32, u32), WorkloadError> {
    let allowed = cpus::allowed_cpus()?;
    let (waker, wakee) = (
        cpus::given_cpu(parsed, "waker-cpu", &allowed)?,
        cpus::given_cpu(parsed, "wakee-cpu", &allowed)?,
    );
    if mode == Mode::SameCpu {
        let first = allowed
            .first()
            .copied()
            .ok_or_else(|| WorkloadError::Unsupported("no usable CPU".into()))?;
        return match (waker, wakee) {
            (Some(a), Some(b)) if a != b => Err(WorkloadError::Usage(format!(
                "--mode same-cpu: --waker-cpu {a} and --wakee-cpu {b} must be the same CPU"
            ))),
            (Some(cpu), _) | (None, Some(cpu)) => Ok((cpu, cpu)),
            (None, None) => Ok((first, first)),
        };
    }
    let (waker, wakee) = cpus::complete_pair(
        (waker, wakee),
        &allowed,
        &format!("--mode {}", mode.as_str()),
    )?;
    if waker == wakee {
        return Err(WorkloadError::Usage(format!(
            "--waker-cpu and --wakee-cpu are both {waker}: use --mode same-cpu for one CPU"
        )));
    }
    Ok((waker, wakee))
}

fn validate(parsed: &Parsed) -> Result<(), String> {
    Params::from_parsed(parsed)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn run_parsed(parsed: &Parsed, _: crate::Instruments) -> Result<RunRecord, WorkloadError> {
    run(&Params::from_parsed(parsed)?)
}

/// What the threads share besides the channels.
#[derive(Default)]
struct Control {
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
    wakee_tid: AtomicI32,
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
struct WakerLog {
    t0_ns: Vec<u64>,
    t1_ns: Vec<u64>,
    overrun: Vec<bool>,
    /// Pingpong only: the return leg as A saw it.
    back: Option<SideLog>,
    elapsed: Elapsed,
    ipis_before: IpiSnapshot,
    ipis_after: IpiSnapshot,
}

/// What a woken side saw, per wake.
struct SideLog {
    t2_ns: Vec<u64>,
    /// The t0 read from the stamp line (pingpong's return leg is stamped by B).
    t0_seen_ns: Vec<u64>,
    cpu: Vec<u32>,
    slept: Vec<bool>,
    seq_ok: Vec<bool>,
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
struct Setup<'a> {
    params: &'a Params,
    channels: &'a [WakeChannel; 2],
    control: &'a Control,
    stats: &'a SharedStats,
    gaps_ns: &'a [u64],
    root: &'a Sysroot,
    trace: Option<&'a WakeTrace>,
}

const WAKER_SLOT: usize = 0;
const WAKEE_SLOT: usize = 1;
const HOG_SLOT: usize = 2;

/// Runs one wakeup benchmark.
pub fn run(p: &Params) -> Result<RunRecord, WorkloadError> {
    let root = Sysroot::from_env();
    let channels = [new_channel(p.mech)?, new_channel(p.mech)?];
    let control = Control::default();
    let stats = SharedStats::new(3, 0).map_err(|e| WorkloadError::failed("mmap", e))?;
    let gaps_ns = jittered_gaps_ns(p);
    let clock_read_ns = clock::read_cost_ns();
    let trace = if p.trace {
        let cpus = [p.waker_cpu, p.wakee_cpu];
        Some(WakeTrace::prepare(&cpus, p.total_wakes() as u64)?)
    } else {
        None
    };
    let setup = Setup {
        params: p,
        channels: &channels,
        control: &control,
        stats: &stats,
        gaps_ns: &gaps_ns,
        root: &root,
        trace: trace.as_ref(),
    };
    let usage_before = UsageSnapshot::take();
    let (waker, wakee) = run_threads(&setup)?;
    let usage = usage_before.delta_to(&UsageSnapshot::take());
    let traced = match trace {
        Some(trace) => Some(trace.finish(control.wakee_tid.load(Ordering::Acquire))?),
        None => None,
    };
    let mut rec = build_record(p, &waker, &wakee, &stats, traced)?;
    rec.rusage = usage;
    add_meta(&mut rec, p, clock_read_ns);
    Ok(rec)
}

fn new_channel(mech: Mech) -> Result<WakeChannel, WorkloadError> {
    WakeChannel::new(mech).map_err(|e| WorkloadError::failed(mech.as_str(), e))
}

/// The gap before each wake: `gap_us` +- `gap_jitter_pct` %, uniform, from the seeded
/// RNG (so a seed reproduces the schedule, and the jitter keeps wakes from locking onto
/// the tick).
fn jittered_gaps_ns(p: &Params) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let base_ns = f64::from(p.gap_us) * 1e3;
    let jitter = f64::from(p.gap_jitter_pct) / 100.0;
    (0..p.total_wakes())
        .map(|_| {
            let factor = if jitter > 0.0 {
                1.0 + rng.random_range(-jitter..=jitter)
            } else {
                1.0
            };
            (base_ns * factor).max(0.0) as u64
        })
        .collect()
}

/// Starts the hog (preempt mode), the wakee and the waker; joins them all.
fn run_threads(s: &Setup<'_>) -> Result<(WakerLog, SideLog), WorkloadError> {
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

/// Why a sample is kept out of the histograms, in order of precedence.
fn invalid_reason(
    p: &Params,
    index: usize,
    waker: &WakerLog,
    wakee: &SideLog,
) -> Option<&'static str> {
    let back = waker.back.as_ref();
    if !wakee.seq_ok[index] || back.is_some_and(|b| !b.seq_ok[index]) {
        return Some("out_of_sequence");
    }
    if wakee.cpu[index] != p.wakee_cpu || back.is_some_and(|b| b.cpu[index] != p.waker_cpu) {
        return Some("wrong_cpu");
    }
    if !wakee.slept[index] || back.is_some_and(|b| !b.slept[index]) {
        return Some("did_not_block");
    }
    if waker.overrun[index] {
        return Some("overrun");
    }
    None
}

/// The recorders of one run, one per series.
struct Series {
    wake: LatencyRecorder,
    waker_cost: LatencyRecorder,
    back: Option<(LatencyRecorder, LatencyRecorder)>,
}

fn recorder() -> Result<LatencyRecorder, WorkloadError> {
    LatencyRecorder::new().map_err(WorkloadError::Failed)
}

fn build_record(
    p: &Params,
    waker: &WakerLog,
    wakee: &SideLog,
    stats: &SharedStats,
    traced: Option<TracedPhases>,
) -> Result<RunRecord, WorkloadError> {
    let mut series = Series {
        wake: recorder()?,
        waker_cost: recorder()?,
        back: match waker.back {
            Some(_) => Some((recorder()?, recorder()?)),
            None => None,
        },
    };
    let mut invalid: BTreeMap<String, u64> = BTreeMap::new();
    let measured = p.warmup as usize..p.total_wakes();
    for index in measured.clone() {
        if let Some(reason) = invalid_reason(p, index, waker, wakee) {
            *invalid.entry(reason.to_string()).or_default() += 1;
            continue;
        }
        let t0 = waker.t0_ns[index];
        series.wake.record(wakee.t2_ns[index].saturating_sub(t0));
        series
            .waker_cost
            .record(waker.t1_ns[index].saturating_sub(t0));
        if let (Some((ret, round)), Some(back)) = (series.back.as_mut(), waker.back.as_ref()) {
            ret.record(back.t2_ns[index].saturating_sub(back.t0_seen_ns[index]));
            round.record(back.t2_ns[index].saturating_sub(t0));
        }
    }
    let valid = series.wake.count();
    let samples = measured.len() as u64;
    let mut rec = RunRecord {
        workload: WORKLOAD.key(),
        params: p.params_map(),
        variant: format!("{}-{}", p.mode.as_str(), p.mech.as_str()),
        total_ns: waker.elapsed.total_ns,
        tasks: task_records(p, stats),
        cpus_used: stats.all_cpus(),
        start_unix_ns: waker.elapsed.start_unix_ns,
        end_unix_ns: waker.elapsed.end_unix_ns,
        header_lines: header_lines(p),
        series: series_summaries(&series),
        invalid_samples: invalid.clone(),
        warnings: invalid_warnings(&invalid, samples),
        ..RunRecord::default()
    }
    .with_per_op(valid);
    let region = Region {
        label: "wakes",
        per: if p.mode == Mode::PingPong {
            "round_trip"
        } else {
            "wake"
        },
        ops: samples,
    };
    rec.ipis.extend(
        waker
            .ipis_before
            .account(&waker.ipis_after, region, &cpu_roles(p)),
    );
    if let Some(traced) = traced {
        add_traced_phases(&mut rec, traced);
    }
    rec.metrics = crate::metrics::latency(&rec);
    if valid == 0 {
        return Err(WorkloadError::Failed(format!(
            "sched wakeup: none of the {samples} samples was valid ({})",
            describe_counts(&invalid)
        )));
    }
    Ok(rec)
}

/// The traced phases as more series after the measured ones (so the primary stays
/// `wake_latency`), with what they are and the cost of the marks.
fn add_traced_phases(rec: &mut RunRecord, traced: TracedPhases) {
    rec.series.extend(traced.series);
    rec.warnings
        .extend(crate::wakephases::incomplete_warning(&traced.phases));
    if let Some(cost) = traced.marker_write_ns {
        rec.meta.insert("trace_marker_write_ns".into(), cost.into());
    }
    rec.wake_phases = Some(traced.phases);
}

fn series_summaries(series: &Series) -> Vec<crate::latency::LatencySeries> {
    let mut out = vec![
        series.wake.summary(
            "wake_latency",
            "t2 - t0: wake call on the waker CPU to the wakee running",
        ),
        series
            .waker_cost
            .summary("waker_cost", "t1 - t0: the waker's wake call"),
    ];
    if let Some((ret, round)) = &series.back {
        out.push(ret.summary("return_latency", "the wakee waking the waker back"));
        out.push(round.summary("round_trip", "waker's t0 to the waker running again"));
    }
    out
}

fn cpu_roles(p: &Params) -> Vec<(u32, &'static str)> {
    if p.waker_cpu == p.wakee_cpu {
        vec![(p.waker_cpu, "waker+wakee")]
    } else {
        vec![(p.waker_cpu, "waker"), (p.wakee_cpu, "wakee")]
    }
}

fn task_records(p: &Params, stats: &SharedStats) -> Vec<crate::TaskCpus> {
    let mut tasks = vec![
        stats.task_record(WAKER_SLOT, "waker"),
        stats.task_record(WAKEE_SLOT, "wakee"),
    ];
    if p.mode == Mode::Preempt {
        tasks.push(stats.task_record(HOG_SLOT, "hog (SCHED_IDLE)"));
    }
    tasks
}

fn header_lines(p: &Params) -> Vec<String> {
    let schedule = if p.mode == Mode::PingPong {
        "# back to back".to_string()
    } else {
        format!(
            "# gap {} us +-{}%, seed {}",
            p.gap_us, p.gap_jitter_pct, p.seed
        )
    };
    vec![
        format!(
            "# {} wakes (+{} warm-up), mode {}, mech {}, CPU {} -> CPU {}",
            p.wakes,
            p.warmup,
            p.mode.as_str(),
            p.mech.as_str(),
            p.waker_cpu,
            p.wakee_cpu
        ),
        schedule,
    ]
}

fn describe_counts(counts: &BTreeMap<String, u64>) -> String {
    counts
        .iter()
        .map(|(reason, n)| format!("{reason} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn invalid_warnings(invalid: &BTreeMap<String, u64>, samples: u64) -> Vec<String> {
    let bad: u64 = invalid.values().sum();
    if samples > 0 && bad as f64 > INVALID_WARN_FRACTION * samples as f64 {
        vec![format!(
            "{bad} of {samples} samples invalid ({}): the run may not measure what it says",
            describe_counts(invalid)
        )]
    } else {
        Vec::new()
    }
}

/// Clock facts and the injected delay, which a reader must know to trust the numbers.
fn add_meta(rec: &mut RunRecord, p: &Params, clock_read_ns: u64) {
    let clocksource = clock::clocksource();
    if let Some(source) = clocksource.as_deref() {
        if matches!(source, "hpet" | "acpi_pm" | "jiffies") {
            rec.warnings.push(format!(
                "clocksource {source} is not vDSO-readable: sub-us results are meaningless"
            ));
        }
    }
    rec.meta
        .insert("clocksource".into(), clocksource.unwrap_or_default().into());
    rec.meta.insert("clock".into(), "CLOCK_MONOTONIC".into());
    rec.meta
        .insert("clock_read_ns".into(), clock_read_ns.into());
    if p.inject_delay_us > 0 {
        rec.warnings.push(format!(
            "test mode: {} us injected before t2",
            p.inject_delay_us
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perfopt::OptValue;

    fn parsed(values: Vec<(&'static str, OptValue)>) -> Parsed {
        Parsed {
            values,
            ..Parsed::default()
        }
    }

    #[test]
    fn bad_choices_and_counts_are_usage_errors() {
        let cases = vec![
            parsed(vec![("mode", OptValue::Str(Some("sleepy".into())))]),
            parsed(vec![("mech", OptValue::Str(Some("signal".into())))]),
            parsed(vec![("wakes", OptValue::Int(0))]),
            parsed(vec![("gap-jitter-pct", OptValue::Int(101))]),
            parsed(vec![("wakee-cpu", OptValue::Int(-1))]),
            parsed(vec![("waker-cpu", OptValue::Int(100_000))]),
        ];
        for case in cases {
            match Params::from_parsed(&case) {
                Err(WorkloadError::Usage(message)) => assert!(!message.contains('\n')),
                other => panic!("{case:?}: expected a usage error, got {other:?}"),
            }
        }
    }

    #[test]
    fn same_cpu_mode_uses_one_cpu() {
        let p = Params::from_parsed(&parsed(vec![(
            "mode",
            OptValue::Str(Some("same-cpu".into())),
        )]))
        .unwrap();
        assert_eq!(p.waker_cpu, p.wakee_cpu);
    }

    #[test]
    fn gaps_are_jittered_within_bounds_and_reproducible() {
        let p = Params {
            mode: Mode::Idle,
            mech: Mech::Futex,
            waker_cpu: 0,
            wakee_cpu: 1,
            wakes: 1000,
            warmup: 0,
            gap_us: 2000,
            gap_jitter_pct: 25,
            waker_spin_us: 50,
            seed: 7,
            inject_delay_us: 0,
            trace: false,
        };
        let gaps = jittered_gaps_ns(&p);
        assert_eq!(gaps, jittered_gaps_ns(&p));
        assert!(gaps.iter().all(|&g| (1_500_000..=2_500_000).contains(&g)));
        let spread = gaps.iter().max().unwrap() - gaps.iter().min().unwrap();
        assert!(spread > 500_000, "jitter should use most of its range");
        let other = jittered_gaps_ns(&Params { seed: 8, ..p });
        assert_ne!(gaps, other);
    }
}
