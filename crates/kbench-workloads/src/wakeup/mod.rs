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
mod params;
mod record;
mod threads;

pub(crate) use params::bounded;
pub use params::{Mode, Params};

use crate::clock;
use crate::measure::UsageSnapshot;
use crate::perfopt::{OptKind, OptSpec, ParsedOptions};
use crate::shared::SharedStats;
use crate::wakechan::{Mech, WakeChannel};
use crate::waketrace::WakeTrace;
use crate::{no_check, RunRecord, Workload, WorkloadError};
use kbench_sys::Sysroot;
use params::jittered_gaps_ns;
use record::{add_meta, build_record};
use std::sync::atomic::Ordering;
use threads::{run_threads, Control, Setup};

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

fn validate(parsed: &ParsedOptions) -> Result<(), String> {
    Params::from_parsed(parsed)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn run_parsed(parsed: &ParsedOptions, _: crate::Instruments) -> Result<RunRecord, WorkloadError> {
    run(&Params::from_parsed(parsed)?)
}

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
