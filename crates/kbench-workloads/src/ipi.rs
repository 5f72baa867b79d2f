//! `ipi`: the cost of an IPI round trip from user space, through
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`.
//!
//! The kernel answers that command with a synchronous (wait=1) function-call IPI to
//! every other CPU whose current task shares our mm. A peer thread of this process
//! spins in user mode on `--target-cpu`, so each call from `--sender-cpu` is one IPI
//! round trip: send, remote entry, handler, acknowledgement, return.
//!
//! Two series, each with its own IPI accounting:
//! - `ipi_round_trip`: the call with the peer spinning on the target;
//! - `baseline_no_peer`: the same call with the peer blocked (no other CPU runs our mm,
//!   so no IPI is sent): the syscall's own cost.
//!
//! Both distributions are reported whole; their difference is not taken percentile
//! by percentile (the difference of quantiles is not the quantile of differences).
use crate::clock::{self, now_ns, spin_until_ns};
use crate::cpus;
use crate::ipiaccount::{IpiAccounting, IpiRegion, IpiSnapshot};
use crate::latency::{LatencyRecorder, LatencySeries};
use crate::measure::{Elapsed, Stopwatch, UsageSnapshot};
use crate::perfopt::{OptKind, OptSpec, ParsedOptions};
use crate::shared::SharedStats;
use crate::wakeup::bounded;
use crate::{no_check, RunRecord, Workload, WorkloadError};
use kbench_sys::Sysroot;
use rustix::thread::futex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const DEFAULT_ITERATIONS: i32 = 20_000;
const DEFAULT_WARMUP: i32 = 1_000;
const DEFAULT_INTERVAL_US: i32 = 20;
const MAX_ITERATIONS: i32 = 100_000_000;
const MAX_INTERVAL_US: i32 = 1_000_000;
/// How long the sender waits for the peer to park or spin before giving up.
const PEER_TIMEOUT: Duration = Duration::from_secs(10);
/// After the peer announced it is parking, time for it to really block.
const PARK_SETTLE: Duration = Duration::from_millis(5);

/// `linux/membarrier.h`.
const MEMBARRIER_CMD_QUERY: libc::c_int = 0;
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        short: None,
        long: "sender-cpu",
        kind: OptKind::Int,
        help: "CPU calling membarrier (default: first usable CPU)",
    },
    OptSpec {
        short: None,
        long: "target-cpu",
        kind: OptKind::Int,
        help: "CPU the peer spins on (default: another usable CPU)",
    },
    OptSpec {
        short: None,
        long: "iterations",
        kind: OptKind::Int,
        help: "Measured calls per series (default 20000)",
    },
    OptSpec {
        short: None,
        long: "warmup",
        kind: OptKind::Int,
        help: "Warm-up calls per series, discarded (default 1000)",
    },
    OptSpec {
        short: None,
        long: "interval-us",
        kind: OptKind::Int,
        help: "Spacing between calls in us, 0 = back to back (default 20)",
    },
];

pub static WORKLOAD: Workload = Workload {
    collection: "ipi",
    name: "ipi",
    summary: "IPI round trip through membarrier, peer spinning vs no peer",
    usage: "kbench bench ipi <options>",
    options: OPTIONS,
    comm: "ipi",
    in_perf_all: false,
    check: no_check,
    validate,
    takes_counters: false,
    run: run_parsed,
};

/// The parameters of one run, defaults resolved and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub sender_cpu: u32,
    pub target_cpu: u32,
    pub iterations: u32,
    pub warmup: u32,
    pub interval_us: u32,
}

impl Params {
    pub fn from_parsed(parsed: &ParsedOptions) -> Result<Self, WorkloadError> {
        let (sender_cpu, target_cpu) = resolve_cpus(parsed)?;
        Ok(Self {
            sender_cpu,
            target_cpu,
            iterations: bounded(parsed, "iterations", DEFAULT_ITERATIONS, 1, MAX_ITERATIONS)?,
            warmup: bounded(parsed, "warmup", DEFAULT_WARMUP, 0, MAX_ITERATIONS)?,
            interval_us: bounded(
                parsed,
                "interval-us",
                DEFAULT_INTERVAL_US,
                0,
                MAX_INTERVAL_US,
            )?,
        })
    }

    fn params_map(&self) -> BTreeMap<String, serde_json::Value> {
        BTreeMap::from([
            ("method".into(), "membarrier".into()),
            ("sender-cpu".into(), self.sender_cpu.into()),
            ("target-cpu".into(), self.target_cpu.into()),
            ("iterations".into(), self.iterations.into()),
            ("warmup".into(), self.warmup.into()),
            ("interval-us".into(), self.interval_us.into()),
        ])
    }
}

fn resolve_cpus(parsed: &ParsedOptions) -> Result<(u32, u32), WorkloadError> {
    let allowed = cpus::allowed_cpus()?;
    let given = (
        cpus::given_cpu(parsed, "sender-cpu", &allowed)?,
        cpus::given_cpu(parsed, "target-cpu", &allowed)?,
    );
    let (sender, target) = cpus::complete_pair(given, &allowed, "ipi")?;
    if sender == target {
        return Err(WorkloadError::Usage(format!(
            "--sender-cpu and --target-cpu are both {sender}: membarrier never IPIs its own CPU"
        )));
    }
    Ok((sender, target))
}

fn validate(parsed: &ParsedOptions) -> Result<(), String> {
    Params::from_parsed(parsed)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn run_parsed(parsed: &ParsedOptions, _: crate::Instruments) -> Result<RunRecord, WorkloadError> {
    run(&Params::from_parsed(parsed)?)
}

/// `membarrier(cmd, 0, 0)`.
fn membarrier(cmd: libc::c_int) -> std::io::Result<libc::c_long> {
    // SAFETY: membarrier takes three integers and no pointers; no crate wraps it.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            cmd,
            0 as libc::c_uint,
            0 as libc::c_int,
        )
    };
    if ret < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Checks the kernel offers the private expedited command and registers the process
/// for it (required once before the first call).
fn register_membarrier() -> Result<(), WorkloadError> {
    let supported = membarrier(MEMBARRIER_CMD_QUERY)
        .map_err(|e| WorkloadError::Unsupported(format!("membarrier is not available: {e}")))?;
    if supported & libc::c_long::from(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0 {
        return Err(WorkloadError::Unsupported(
            "this kernel's membarrier lacks MEMBARRIER_CMD_PRIVATE_EXPEDITED".into(),
        ));
    }
    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)
        .map(drop)
        .map_err(|e| WorkloadError::failed("membarrier REGISTER_PRIVATE_EXPEDITED", e))
}

/// What the sender tells the peer (the futex word the parked peer waits on).
const PEER_PARK: u32 = 0;
const PEER_SPIN: u32 = 1;
const PEER_EXIT: u32 = 2;
/// What the peer reports back.
const PEER_STARTING: u32 = 0;
const PEER_PARKING: u32 = 1;
const PEER_SPINNING: u32 = 2;
const PEER_FAILED: u32 = 3;

#[derive(Default)]
struct PeerControl {
    command: AtomicU32,
    state: AtomicU32,
}

impl PeerControl {
    fn command(&self, command: u32) {
        self.command.store(command, Ordering::Release);
        let _ = futex::wake(&self.command, futex::Flags::PRIVATE, 1);
    }

    fn wait_for_state(&self, wanted: u32) -> Result<(), String> {
        let started = Instant::now();
        loop {
            match self.state.load(Ordering::Acquire) {
                state if state == wanted => return Ok(()),
                PEER_FAILED => return Err("the peer thread failed".into()),
                _ if started.elapsed() > PEER_TIMEOUT => {
                    return Err(format!("the peer did not respond within {PEER_TIMEOUT:?}"))
                }
                _ => std::thread::sleep(Duration::from_micros(50)),
            }
        }
    }
}

/// The peer: pinned to the target, parked on the futex or spinning in user mode, as
/// the sender commands.
fn peer_thread(cpu: u32, control: &PeerControl, stats: &SharedStats) -> Result<(), String> {
    if let Err(e) = cpus::pin_current_thread(cpu) {
        control.state.store(PEER_FAILED, Ordering::Release);
        return Err(e);
    }
    let slot = stats.task(1);
    loop {
        slot.note_current_cpu();
        match control.command.load(Ordering::Acquire) {
            PEER_PARK => {
                control.state.store(PEER_PARKING, Ordering::Release);
                // Errors (AGAIN: the command changed; INTR) just re-read the command.
                let _ = futex::wait(&control.command, futex::Flags::PRIVATE, PEER_PARK, None);
            }
            PEER_SPIN => {
                control.state.store(PEER_SPINNING, Ordering::Release);
                while control.command.load(Ordering::Relaxed) == PEER_SPIN {
                    std::hint::spin_loop();
                }
            }
            _ => return Ok(()),
        }
    }
}

/// Tells the peer to exit when dropped, so an early return never leaves it spinning.
struct ExitPeerOnDrop<'a>(&'a PeerControl);

impl Drop for ExitPeerOnDrop<'_> {
    fn drop(&mut self) {
        self.0.command(PEER_EXIT);
    }
}

/// One timed series.
struct Phase {
    recorder: LatencyRecorder,
    elapsed: Elapsed,
    ipis: Option<IpiAccounting>,
}

/// The sender: baseline with the peer parked, then the IPI series with it spinning.
fn sender_thread(
    p: &Params,
    control: &PeerControl,
    root: &Sysroot,
    stats: &SharedStats,
) -> Result<(Phase, Phase), String> {
    let _exit_peer = ExitPeerOnDrop(control);
    cpus::pin_current_thread(p.sender_cpu)?;
    stats.task(0).note_current_cpu();
    control.wait_for_state(PEER_PARKING)?;
    std::thread::sleep(PARK_SETTLE);
    let baseline = timed_phase(p, root, "baseline_no_peer")?;
    control.command(PEER_SPIN);
    control.wait_for_state(PEER_SPINNING)?;
    let peer = timed_phase(p, root, "peer_spinning")?;
    stats.task(0).note_current_cpu();
    Ok((peer, baseline))
}

/// Warm-up calls, then `iterations` timed calls spaced by the interval, with
/// `/proc/interrupts` read around the timed ones.
fn timed_phase(p: &Params, root: &Sysroot, label: &str) -> Result<Phase, String> {
    let interval_ns = u64::from(p.interval_us) * 1_000;
    let mut recorder = LatencyRecorder::new()?;
    for _ in 0..p.warmup {
        one_call()?;
        spin_until_ns(now_ns().saturating_add(interval_ns));
    }
    let before = IpiSnapshot::take(root);
    let stopwatch = Stopwatch::start();
    for _ in 0..p.iterations {
        let (t0, t1) = one_call()?;
        recorder.record(t1.saturating_sub(t0));
        spin_until_ns(t1.saturating_add(interval_ns));
    }
    let elapsed = stopwatch.stop();
    let after = IpiSnapshot::take(root);
    let region = IpiRegion {
        label,
        per: "iteration",
        ops: u64::from(p.iterations),
    };
    let roles = [(p.sender_cpu, "sender"), (p.target_cpu, "target")];
    Ok(Phase {
        recorder,
        elapsed,
        ipis: before.account(&after, region, &roles),
    })
}

/// One timed `membarrier(PRIVATE_EXPEDITED)`: `(t0, t1)`.
#[inline]
fn one_call() -> Result<(u64, u64), String> {
    let t0 = now_ns();
    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
        .map_err(|e| format!("membarrier PRIVATE_EXPEDITED: {e}"))?;
    Ok((t0, now_ns()))
}

/// Runs one IPI benchmark.
pub fn run(p: &Params) -> Result<RunRecord, WorkloadError> {
    register_membarrier()?;
    let root = Sysroot::from_env();
    let stats = SharedStats::new(2, 0).map_err(|e| WorkloadError::failed("mmap", e))?;
    let control = PeerControl::default();
    control.state.store(PEER_STARTING, Ordering::Release);
    let clock_read_ns = clock::read_cost_ns();
    let usage_before = UsageSnapshot::take();
    let (sender, peer) = std::thread::scope(|scope| {
        let peer = scope.spawn(|| peer_thread(p.target_cpu, &control, &stats));
        let sender = scope.spawn(|| sender_thread(p, &control, &root, &stats));
        let sender = sender.join();
        // The sender's drop guard has told the peer to exit, even after a panic.
        let peer = peer.join();
        (sender, peer)
    });
    let usage = usage_before.delta_to(&UsageSnapshot::take());
    let (with_peer, baseline) = sender
        .unwrap_or_else(|_| Err("the sender thread panicked".into()))
        .map_err(|e| WorkloadError::Failed(format!("ipi: {e}")))?;
    peer.unwrap_or_else(|_| Err("the peer thread panicked".into()))
        .map_err(|e| WorkloadError::Failed(format!("ipi: peer: {e}")))?;
    let mut rec = build_record(p, with_peer, baseline, &stats);
    rec.rusage = usage;
    rec.meta.insert(
        "clocksource".into(),
        clock::clocksource().unwrap_or_default().into(),
    );
    rec.meta
        .insert("clock_read_ns".into(), clock_read_ns.into());
    Ok(rec)
}

fn build_record(p: &Params, with_peer: Phase, baseline: Phase, stats: &SharedStats) -> RunRecord {
    let series: Vec<LatencySeries> = vec![
        with_peer.recorder.summary(
            "ipi_round_trip",
            "membarrier(PRIVATE_EXPEDITED) with the peer spinning on the target",
        ),
        baseline.recorder.summary(
            "baseline_no_peer",
            "the same call with the peer blocked: no IPI is sent",
        ),
    ];
    let ipis: Vec<IpiAccounting> = [with_peer.ipis, baseline.ipis]
        .into_iter()
        .flatten()
        .collect();
    let warnings = ipi_warnings(p, &ipis);
    let mut rec = RunRecord {
        workload: WORKLOAD.key(),
        params: p.params_map(),
        variant: "membarrier".into(),
        total_ns: with_peer.elapsed.total_ns,
        tasks: vec![stats.task_record(0, "sender"), stats.task_record(1, "peer")],
        cpus_used: stats.all_cpus(),
        start_unix_ns: with_peer.elapsed.start_unix_ns,
        end_unix_ns: with_peer.elapsed.end_unix_ns,
        header_lines: vec![
            format!(
                "# {} membarrier(PRIVATE_EXPEDITED) calls from CPU {}, {} us apart",
                p.iterations, p.sender_cpu, p.interval_us
            ),
            format!(
                "# peer spinning on CPU {}; baseline: the peer blocked",
                p.target_cpu
            ),
        ],
        series,
        ipis,
        warnings,
        ..RunRecord::default()
    }
    .with_per_op(u64::from(p.iterations));
    rec.metrics = crate::metrics::latency(&rec);
    rec
}

/// Each call with the peer spinning should cost the target about one function-call
/// IPI, and the baseline about none; say so when not.
fn ipi_warnings(p: &Params, ipis: &[IpiAccounting]) -> Vec<String> {
    let rate_on_target = |label: &str| {
        ipis.iter()
            .find(|a| a.label == label)
            .and_then(|a| a.cpu(p.target_cpu))
            .map(|c| c.per_op.function_call)
    };
    let mut warnings = Vec::new();
    if let Some(rate) = rate_on_target("peer_spinning") {
        if rate < 0.9 {
            warnings.push(format!(
                "only {rate:.2} function-call IPIs per call reached CPU {} with the peer \
                 spinning (expected ~1)",
                p.target_cpu
            ));
        }
    }
    if let Some(rate) = rate_on_target("baseline_no_peer") {
        if rate > 0.1 {
            warnings.push(format!(
                "{rate:.2} function-call IPIs per call reached CPU {} in the baseline \
                 (expected ~0): something else of this process ran there",
                p.target_cpu
            ));
        }
    }
    warnings
}
