//! `sched messaging`: perf's port of hackbench.
//!
//! G groups of 20 senders and 20 receivers. Every sender writes `loops` 100-byte
//! messages to every receiver of its group over a socketpair (or a pipe with `-p`).
//! All workers announce themselves on a "ready" channel, then block in poll() on a
//! "wake" channel; the coordinator starts the clock and writes one byte that wakes
//! them all at once. The clock stops when the last worker has been reaped.
//!
//! Every run also records the interrupts its CPUs received per message, and with
//! `--counters` the perf_event_open counters of all its workers: opened by the
//! coordinator before the first fork or spawn, so every worker inherits them.
use crate::counters::RunCounters;
use crate::events::PerOp;
use crate::measure::{RegionEnd, TimedRegion};
use crate::perfopt::{OptKind, OptSpec, ParsedOptions};
use crate::shared::{SharedStats, TaskSlot};
use crate::workers::{self, Exit};
use crate::{no_check, preflight, Instruments, RunRecord, Workload, WorkloadError};
use rustix::event::{poll, PollFd, PollFlags};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use std::collections::BTreeMap;

/// Senders (and receivers) per group; fixed in perf.
pub const FDS_PER_GROUP: u32 = 20;
/// Bytes per message; fixed in perf.
pub const MESSAGE_BYTES: usize = 100;
/// Workers sample their CPU once per this many messages.
const CPU_SAMPLE_EVERY: u64 = 64;
/// System calls per message: the sender's write and the receiver's read. Both loop on
/// a short transfer, but 100 bytes on a socketpair or a pipe move whole.
const SYSCALLS_PER_MESSAGE: f64 = 2.0;
/// Small stacks, as perf's PTHREAD_STACK_MIN: hundreds of groups must not reserve
/// gigabytes.
const THREAD_STACK_BYTES: usize = 64 * 1024;

pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        short: Some('p'),
        long: "pipe",
        kind: OptKind::Bool,
        help: "Use pipe() instead of socketpair()",
    },
    OptSpec {
        short: Some('t'),
        long: "thread",
        kind: OptKind::Bool,
        help: "Be multi thread instead of multi process",
    },
    OptSpec {
        short: Some('g'),
        long: "group",
        kind: OptKind::UInt,
        help: "Specify number of groups",
    },
    OptSpec {
        short: Some('l'),
        long: "nr_loops",
        kind: OptKind::UInt,
        help: "Specify the number of loops to run (default: 100)",
    },
];

pub static WORKLOAD: Workload = Workload {
    collection: "sched",
    name: "messaging",
    summary: "Benchmark for scheduling and IPC",
    usage: "perf bench sched messaging <options>",
    options: OPTIONS,
    comm: "sched-messaging",
    in_perf_all: true,
    check: no_check,
    validate: crate::no_validate,
    takes_counters: true,
    run: run_parsed,
};

/// The parameters of one messaging run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub groups: u32,
    pub loops: u32,
    pub use_pipe: bool,
    pub threads: bool,
    /// perf_event_open counters over the run (`--counters`).
    pub counters: bool,
}

impl Params {
    pub fn from_parsed(parsed: &ParsedOptions, instruments: Instruments) -> Self {
        Self {
            groups: parsed.uint("group").unwrap_or(10),
            loops: parsed.uint("nr_loops").unwrap_or(100),
            use_pipe: parsed.bool("pipe").unwrap_or(false),
            threads: parsed.bool("thread").unwrap_or(false),
            counters: instruments.counters,
        }
    }

    /// Messages in all: every sender writes `loops` to each receiver of its group.
    pub fn messages(&self) -> u64 {
        u64::from(self.groups)
            .saturating_mul(u64::from(FDS_PER_GROUP * FDS_PER_GROUP))
            .saturating_mul(u64::from(self.loops))
    }

    /// Workers in all: a sender and a receiver per fd, per group (u32 as in perf).
    pub fn tasks(&self) -> u32 {
        2u32.wrapping_mul(FDS_PER_GROUP).wrapping_mul(self.groups)
    }

    fn task_word(&self) -> &'static str {
        if self.threads {
            "threads"
        } else {
            "processes"
        }
    }

    fn params_map(&self) -> BTreeMap<String, serde_json::Value> {
        let mut map = BTreeMap::from([
            ("group".into(), self.groups.into()),
            ("nr_loops".into(), self.loops.into()),
            ("pipe".into(), self.use_pipe.into()),
            ("thread".into(), self.threads.into()),
            ("fds_per_group".into(), FDS_PER_GROUP.into()),
            ("message_bytes".into(), MESSAGE_BYTES.into()),
        ]);
        map.extend(crate::events::counters_param(self.counters));
        map
    }
}

fn run_parsed(
    parsed: &ParsedOptions,
    instruments: Instruments,
) -> Result<RunRecord, WorkloadError> {
    run(&Params::from_parsed(parsed, instruments))
}

/// A channel end pair: `[0]` is read, `[1]` written, as perf uses socketpairs.
struct FdPair {
    read: OwnedFd,
    write: OwnedFd,
}

fn fd_pair(use_pipe: bool) -> Result<FdPair, WorkloadError> {
    let (read, write) = if use_pipe {
        rustix::pipe::pipe().map_err(|e| WorkloadError::failed("pipe()", e))?
    } else {
        rustix::net::socketpair(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::STREAM,
            rustix::net::SocketFlags::empty(),
            None,
        )
        .map_err(|e| WorkloadError::failed("socketpair()", e))?
    };
    Ok(FdPair { read, write })
}

/// Descriptors the coordinator will hold at its peak, beyond those open now.
fn fds_needed(p: &Params) -> u64 {
    let control = 4; // ready and wake pairs
    if p.threads {
        // Thread mode keeps every data pair open until the end.
        control + 2 * u64::from(FDS_PER_GROUP) * u64::from(p.groups)
    } else if p.groups == 0 {
        control
    } else {
        // One group's write ends plus the pair being made.
        control + u64::from(FDS_PER_GROUP) + 1
    }
}

fn preflight(p: &Params) -> Result<(), WorkloadError> {
    let what = format!(
        "messaging with {} groups ({} {})",
        p.groups,
        p.tasks(),
        p.task_word()
    );
    preflight::check_nofile(preflight::open_fds() + fds_needed(p), &what)?;
    preflight::check_tasks(u64::from(p.tasks()), &what)
}

/// Runs one messaging benchmark.
pub fn run(p: &Params) -> Result<RunRecord, WorkloadError> {
    preflight(p)?;
    let tasks = p.tasks() as usize;
    let stats = SharedStats::new(tasks, 0).map_err(|e| WorkloadError::failed("mmap", e))?;
    let ready = fd_pair(p.use_pipe)?;
    let wake = fd_pair(p.use_pipe)?;
    let channels = Channels {
        ready: ready.write.as_fd(),
        wake: wake.read.as_fd(),
    };
    let mut counters = RunCounters::open_if(p.counters);
    let end = if p.threads {
        run_threads(p, &channels, &ready, &wake, &stats, &mut counters)?
    } else {
        workers::prepare(tasks).map_err(|e| WorkloadError::failed("preparing workers", e))?;
        let result = run_processes(p, &channels, &ready, &wake, &stats, &mut counters);
        if result.is_err() {
            workers::kill_and_reap_all();
        }
        result?
    };
    Ok(record(p, end, counters, &stats))
}

fn record(p: &Params, end: RegionEnd, mut counters: RunCounters, stats: &SharedStats) -> RunRecord {
    let RegionEnd {
        elapsed,
        usage,
        interrupts,
    } = end;
    let tasks = (0..stats.tasks())
        .map(|i| stats.task_record(i, task_name(i)))
        .collect();
    let mut rec = RunRecord {
        workload: WORKLOAD.key(),
        params: p.params_map(),
        variant: "perf".into(),
        total_ns: elapsed.total_ns,
        ops: None,
        usecs_per_op: None,
        ops_per_sec: None,
        bytes_transferred: Some(stats.total_bytes()),
        rusage: usage,
        tasks,
        cpus_used: stats.all_cpus(),
        start_unix_ns: elapsed.start_unix_ns,
        end_unix_ns: elapsed.end_unix_ns,
        header_lines: vec![
            format!(
                "# {} sender and receiver {} per group",
                FDS_PER_GROUP,
                p.task_word()
            ),
            format!(
                "# {} groups == {} {} run",
                p.groups,
                p.tasks(),
                p.task_word()
            ),
        ],
        ..RunRecord::default()
    };
    let per_op = PerOp {
        per: "message",
        ops: p.messages(),
        syscalls_per_op: SYSCALLS_PER_MESSAGE,
    };
    let cpus = crate::ipiaccount::cpus_with_role(&rec.cpus_used, "workers");
    crate::events::record_events(&mut rec, per_op, &interrupts, &cpus, counters.read());
    rec.metrics = crate::metrics::total_time(&rec);
    rec.metrics.extend(crate::metrics::events(&rec));
    rec
}

/// Table slot names: receivers then senders, per group, as perf's worker table.
fn task_name(index: usize) -> String {
    let per_group = 2 * FDS_PER_GROUP as usize;
    let group = index / per_group;
    let within = index % per_group;
    let fds = FDS_PER_GROUP as usize;
    if within < fds {
        format!("group {group} receiver {within}")
    } else {
        format!("group {group} sender {}", within - fds)
    }
}

/// The ends every worker uses to announce itself and to wait for the start.
struct Channels<'a> {
    ready: BorrowedFd<'a>,
    wake: BorrowedFd<'a>,
}

/// Announce readiness, then wait for the start byte (never read, so everyone wakes).
fn ready_then_wait(ch: &Channels<'_>) -> Result<(), String> {
    let written =
        rustix::io::write(ch.ready, b"R").map_err(|e| format!("CLIENT: ready write: {e}"))?;
    if written != 1 {
        return Err("CLIENT: ready write: short write".into());
    }
    loop {
        let mut fds = [PollFd::new(&ch.wake, PollFlags::IN)];
        match poll(&mut fds, None) {
            Ok(1) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Ok(n) => return Err(format!("poll: returned {n}")),
            Err(e) => return Err(format!("poll: {e}")),
        }
    }
}

/// Reads `messages` messages of 100 bytes, gathering short reads.
fn receive(
    ch: &Channels<'_>,
    input: BorrowedFd<'_>,
    messages: u64,
    slot: TaskSlot<'_>,
) -> Result<(), String> {
    ready_then_wait(ch)?;
    let mut buf = [0u8; MESSAGE_BYTES];
    slot.note_current_cpu();
    // Counted locally and published once: no shared write per message.
    let mut bytes: u64 = 0;
    for i in 0..messages {
        let mut got = 0;
        while got < MESSAGE_BYTES {
            match rustix::io::read(input, &mut buf[got..]) {
                Ok(0) => return Err("SERVER: read: unexpected end of file".into()),
                Ok(n) => got += n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(format!("SERVER: read: {e}")),
            }
        }
        bytes += MESSAGE_BYTES as u64;
        if i % CPU_SAMPLE_EVERY == 0 {
            slot.note_current_cpu();
        }
    }
    slot.add_bytes(bytes);
    slot.note_current_cpu();
    Ok(())
}

/// Writes `loops` rounds of one 100-byte message to each output, looping on short writes.
fn send(
    ch: &Channels<'_>,
    outputs: &[BorrowedFd<'_>],
    loops: u32,
    slot: TaskSlot<'_>,
) -> Result<(), String> {
    ready_then_wait(ch)?;
    let buf = [b'S'; MESSAGE_BYTES];
    slot.note_current_cpu();
    for round in 0..u64::from(loops) {
        for out in outputs {
            let mut done = 0;
            while done < MESSAGE_BYTES {
                match rustix::io::write(out, &buf[done..]) {
                    Ok(n) => done += n,
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return Err(format!("SENDER: write: {e}")),
                }
            }
        }
        // A round is 20 messages: sample as often as the receivers do.
        if round % (CPU_SAMPLE_EVERY / u64::from(FDS_PER_GROUP)).max(1) == 0 {
            slot.note_current_cpu();
        }
    }
    slot.note_current_cpu();
    Ok(())
}

/// Process exit code of a worker body's result, with the error on stderr.
fn exit_code(result: Result<(), String>) -> i32 {
    match result {
        Ok(()) => 0,
        Err(message) => {
            crate::errln!("kbench: {message}");
            1
        }
    }
}

/// Waits for the ready bytes of every worker, checking that none died first (perf
/// hangs forever if one does, since it holds the ready channel's write end).
fn collect_ready(ready: &FdPair, tasks: u32, processes: bool) -> Result<(), WorkloadError> {
    let mut byte = [0u8; 1];
    for _ in 0..tasks {
        loop {
            let mut fds = [PollFd::new(&ready.read, PollFlags::IN)];
            let timeout = rustix::time::Timespec {
                tv_sec: 0,
                tv_nsec: 100_000_000,
            };
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => {
                    if processes {
                        if let Some((pid, exit)) = workers::try_reap_any()
                            .map_err(|e| WorkloadError::failed("waiting for workers", e))?
                        {
                            return Err(WorkloadError::Failed(format!(
                                "Reading for readyfds: worker {} {exit} before it was ready",
                                pid.as_raw_nonzero()
                            )));
                        }
                    }
                }
                Ok(_) => break,
                Err(e) => return Err(WorkloadError::failed("Reading for readyfds", e)),
            }
        }
        match rustix::io::read(&ready.read, &mut byte) {
            Ok(1) => {}
            Ok(_) => {
                return Err(WorkloadError::Failed(
                    "Reading for readyfds: end of file".into(),
                ))
            }
            Err(e) => return Err(WorkloadError::failed("Reading for readyfds", e)),
        }
    }
    Ok(())
}

fn start_everyone(wake: &FdPair) -> Result<(), WorkloadError> {
    match rustix::io::write(&wake.write, b"W") {
        Ok(1) => Ok(()),
        Ok(_) => Err(WorkloadError::Failed(
            "Writing to start them: short write".into(),
        )),
        Err(e) => Err(WorkloadError::failed("Writing to start them", e)),
    }
}

fn run_processes(
    p: &Params,
    ch: &Channels<'_>,
    ready: &FdPair,
    wake: &FdPair,
    stats: &SharedStats,
    counters: &mut RunCounters,
) -> Result<RegionEnd, WorkloadError> {
    let fds = FDS_PER_GROUP as usize;
    let messages = u64::from(FDS_PER_GROUP) * u64::from(p.loops);
    workers::flush_stdio();
    for group in 0..p.groups as usize {
        let base = group * 2 * fds;
        let mut write_ends = Vec::with_capacity(fds);
        for i in 0..fds {
            let FdPair { read, write } = fd_pair(p.use_pipe)?;
            let slot = stats.task(base + i);
            let write_raw = std::os::fd::AsRawFd::as_raw_fd(&write);
            // `read` moves into the closure: the parent drops (closes) it after the
            // fork, as perf's parent closes each receiver's read end.
            workers::fork_worker(move || {
                close_own_write_end(write_raw);
                exit_code(receive(ch, read.as_fd(), messages, slot))
            })
            .map_err(|e| WorkloadError::failed("fork()", e))?;
            write_ends.push(write);
        }
        let outputs: Vec<BorrowedFd<'_>> = write_ends.iter().map(|fd| fd.as_fd()).collect();
        for j in 0..fds {
            let slot = stats.task(base + fds + j);
            workers::fork_worker(|| exit_code(send(ch, &outputs, p.loops, slot)))
                .map_err(|e| WorkloadError::failed("fork()", e))?;
        }
        drop(outputs);
        drop(write_ends); // the senders hold their own copies
    }
    collect_ready(ready, p.tasks(), true)?;
    let region = TimedRegion::start(counters);
    start_everyone(wake)?;
    for _ in 0..p.tasks() {
        let (pid, exit) = workers::reap_any().map_err(|e| WorkloadError::failed("wait()", e))?;
        if exit != Exit::Code(0) {
            return Err(WorkloadError::Failed(format!(
                "worker {} {exit}",
                pid.as_raw_nonzero()
            )));
        }
    }
    Ok(region.stop())
}

/// In a forked receiver, closes its copy of its own write end, as perf does, so the
/// only writers left are the senders.
fn close_own_write_end(write_end: std::os::fd::RawFd) {
    // SAFETY: runs in the child only; the child leaves through _exit and never drops
    // the OwnedFd that also names this descriptor, so it is closed exactly once.
    unsafe {
        libc::close(write_end);
    }
}

fn run_threads(
    p: &Params,
    ch: &Channels<'_>,
    ready: &FdPair,
    wake: &FdPair,
    stats: &SharedStats,
    counters: &mut RunCounters,
) -> Result<RegionEnd, WorkloadError> {
    workers::prepare(0).map_err(|e| WorkloadError::failed("preparing workers", e))?;
    let fds = FDS_PER_GROUP as usize;
    let mut pairs: Vec<Vec<FdPair>> = Vec::with_capacity(p.groups as usize);
    for _ in 0..p.groups {
        pairs.push(
            (0..fds)
                .map(|_| fd_pair(p.use_pipe))
                .collect::<Result<_, _>>()?,
        );
    }
    let outputs: Vec<Vec<BorrowedFd<'_>>> = pairs
        .iter()
        .map(|group| group.iter().map(|pair| pair.write.as_fd()).collect())
        .collect();
    std::thread::scope(|scope| {
        let started = start_threads(scope, p, ch, &pairs, &outputs, stats)
            .and_then(|handles| collect_ready(ready, p.tasks(), false).map(|()| handles));
        // Threads already started wait for the start byte or for their peers: an error
        // now can only end the process, or the scope would wait for them forever.
        let handles = started.unwrap_or_else(|e| workers::exit_now(1, &e.to_string()));
        let region = TimedRegion::start(counters);
        if let Err(e) = start_everyone(wake) {
            workers::exit_now(1, &e.to_string());
        }
        for handle in handles {
            match handle.join() {
                Ok(0) => {}
                _ => return Err(WorkloadError::Failed("a worker thread failed".into())),
            }
        }
        Ok(region.stop())
    })
}

type Handles<'scope> = Vec<std::thread::ScopedJoinHandle<'scope, i32>>;

/// Starts every worker thread: receivers then senders, group by group.
fn start_threads<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    p: &'env Params,
    ch: &'env Channels<'env>,
    pairs: &'env [Vec<FdPair>],
    outputs: &'env [Vec<BorrowedFd<'env>>],
    stats: &'env SharedStats,
) -> Result<Handles<'scope>, WorkloadError> {
    let fds = FDS_PER_GROUP as usize;
    let messages = u64::from(FDS_PER_GROUP) * u64::from(p.loops);
    {
        let mut handles = Vec::with_capacity(p.tasks() as usize);
        for (group, group_pairs) in pairs.iter().enumerate() {
            let base = group * 2 * fds;
            for (i, pair) in group_pairs.iter().enumerate() {
                let slot = stats.task(base + i);
                let input = pair.read.as_fd();
                handles.push(spawn_worker(scope, move || {
                    receive(ch, input, messages, slot)
                })?);
            }
            for j in 0..fds {
                let slot = stats.task(base + fds + j);
                let outs = &outputs[group];
                handles.push(spawn_worker(scope, move || send(ch, outs, p.loops, slot))?);
            }
        }
        Ok(handles)
    }
}

/// Spawns a worker thread with a small stack. A worker that fails ends the whole
/// process, as perf's err() does: its peers would otherwise wait forever.
fn spawn_worker<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    body: impl FnOnce() -> Result<(), String> + Send + 'scope,
) -> Result<std::thread::ScopedJoinHandle<'scope, i32>, WorkloadError> {
    std::thread::Builder::new()
        .stack_size(THREAD_STACK_BYTES)
        .spawn_scoped(scope, move || {
            let code = exit_code(body());
            if code != 0 {
                // SAFETY: ends the process at once; the coordinator's peers are blocked
                // and no data would be lost that a failed run could keep.
                unsafe { libc::_exit(code) }
            }
            code
        })
        .map_err(|e| WorkloadError::failed("pthread_create failed", e))
}
