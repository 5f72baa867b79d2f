//! `sched pipe`: two tasks pass a 4-byte token back and forth through two pipes.
//!
//! Worker 0 reads pipe 1 and writes pipe 2; worker 1 the opposite. In process mode
//! the coordinator forks worker 0 and is worker 1 itself, as perf is; with `-T` two
//! threads do the work. The clock covers the fork (or thread creation), the loop,
//! the exit and the reaping, exactly as perf's.
//!
//! Two loop orders exist and their results must never be mixed:
//! - `symmetric` (perf >= 6.15, the default): both workers write, then read; two
//!   tokens circulate, about one context switch per loop;
//! - `pingpong` (perf <= 6.14, Debian's perf 6.1): worker 0 reads first, so one
//!   token circulates and every read blocks, about two switches per loop.
//!
//! `--placement same-cpu|cross-cpu` (kbench's) pins the workers, each pinning itself
//! as it starts; a round trip on one CPU and one across two are different paths with
//! several times different costs, and a free run lands on either.
//!
//! Every run also records the interrupts its CPUs received per loop, and with
//! `--counters` the perf_event_open counters of both workers (see `counters.rs`).
use crate::counters::RunCounters;
use crate::events::PerOp;
use crate::measure::{RegionEnd, TimedRegion};
use crate::perfopt::{OptKind, OptSpec, ParsedOptions};
use crate::shared::{SharedStats, TaskSlot};
use crate::workers::{self, Exit};
use crate::{cgroup, Instruments, OptionProblem, RunRecord, Workload, WorkloadError};
use kbench_record::PlacementRequest;
use rustix::event::epoll;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use std::collections::BTreeMap;

const DEFAULT_LOOPS: i32 = 1_000_000;
/// Workers sample their CPU once per this many loops.
const CPU_SAMPLE_EVERY: i64 = 64;
/// System calls per loop: each of the two workers writes the token once and reads it
/// once.
const SYSCALLS_PER_LOOP: f64 = 4.0;
/// With `-n`, each read is preceded by an epoll_wait until the token is there (level
/// triggered, so the read that follows does not fail).
const SYSCALLS_PER_LOOP_NONBLOCKING: f64 = 6.0;
/// The workers' names in the IPI accounting's roles.
const ROLES: [&str; 2] = ["worker 0", "worker 1"];

pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        short: Some('n'),
        long: "nonblocking",
        kind: OptKind::Bool,
        help: "Use non-blocking operations",
    },
    OptSpec {
        short: Some('l'),
        long: "loop",
        kind: OptKind::Int,
        help: "Specify number of loops",
    },
    OptSpec {
        short: Some('T'),
        long: "threaded",
        kind: OptKind::Bool,
        help: "Specify threads/process based task setup",
    },
    OptSpec {
        short: Some('G'),
        long: "cgroups",
        kind: OptKind::Str { argh: "SEND,RECV" },
        help: "Put sender and receivers in given cgroups",
    },
    OptSpec {
        short: None,
        long: "pingpong",
        kind: OptKind::Bool,
        help: "Loop order of perf <= 6.14 (one token, every read blocks)",
    },
    crate::placement::OPTION,
];

pub static WORKLOAD: Workload = Workload {
    collection: "sched",
    name: "pipe",
    summary: "Benchmark for pipe() between two processes",
    usage: "perf bench sched pipe <options>",
    options: OPTIONS,
    comm: "sched-pipe",
    in_perf_all: true,
    check: check_options,
    validate: at_least_one_loop,
    takes_counters: true,
    run: run_parsed,
};

/// The loop order, recorded as the run's variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopOrder {
    Symmetric,
    PingPong,
}

impl LoopOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            LoopOrder::Symmetric => "symmetric",
            LoopOrder::PingPong => "pingpong",
        }
    }
}

/// The parameters of one pipe run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// Signed, as perf's: a negative count runs no loop and prints negative figures.
    pub loops: i32,
    pub threaded: bool,
    pub nonblocking: bool,
    /// `(SEND, RECV)` cgroup names, relative to the cgroup mount.
    pub cgroups: Option<(String, String)>,
    pub order: LoopOrder,
    pub placement: PlacementRequest,
    /// perf_event_open counters over the run (`--counters`).
    pub counters: bool,
}

impl Params {
    pub fn from_parsed(parsed: &ParsedOptions, instruments: Instruments) -> Self {
        Self {
            loops: parsed.int("loop").unwrap_or(DEFAULT_LOOPS),
            threaded: parsed.bool("threaded").unwrap_or(false),
            nonblocking: parsed.bool("nonblocking").unwrap_or(false),
            cgroups: parsed
                .str("cgroups")
                .flatten()
                .and_then(|v| split_cgroups(&v)),
            order: if parsed.bool("pingpong").unwrap_or(false) {
                LoopOrder::PingPong
            } else {
                LoopOrder::Symmetric
            },
            placement: crate::placement::requested(parsed),
            counters: instruments.counters,
        }
    }

    fn task_word(&self) -> &'static str {
        if self.threaded {
            "threads"
        } else {
            "processes"
        }
    }

    fn params_map(&self) -> BTreeMap<String, serde_json::Value> {
        let cgroups = match &self.cgroups {
            Some((send, recv)) => serde_json::Value::from(format!("{send},{recv}")),
            None => serde_json::Value::Null,
        };
        let mut map = BTreeMap::from([
            ("loop".into(), self.loops.into()),
            ("threaded".into(), self.threaded.into()),
            ("nonblocking".into(), self.nonblocking.into()),
            ("cgroups".into(), cgroups),
        ]);
        map.extend(crate::placement::param(self.placement));
        map.extend(crate::events::counters_param(self.counters));
        map
    }

    fn syscalls_per_loop(&self) -> f64 {
        if self.nonblocking {
            SYSCALLS_PER_LOOP_NONBLOCKING
        } else {
            SYSCALLS_PER_LOOP
        }
    }
}

/// perf takes `-l 0` or a count past i32 (read as -1) and prints a negative time per
/// op; a run stored with one would poison every comparison.
fn at_least_one_loop(parsed: &ParsedOptions) -> Result<(), String> {
    match parsed.int("loop") {
        Some(loops) if loops < 1 => Err(format!(
            "-l {loops}: kbench runs at least one loop (a count past {} reads as -1)",
            i32::MAX
        )),
        _ => Ok(()),
    }
}

fn split_cgroups(value: &str) -> Option<(String, String)> {
    let (send, recv) = value.split_once(',')?;
    Some((send.to_string(), recv.to_string()))
}

fn check_options(parsed: &ParsedOptions) -> Result<(), OptionProblem> {
    check_cgroups(parsed)?;
    crate::placement::check(parsed)
}

/// perf rejects a `-G` value without a comma while parsing.
fn check_cgroups(parsed: &ParsedOptions) -> Result<(), OptionProblem> {
    match parsed.str("cgroups").flatten() {
        Some(value) if !value.contains(',') => Err(OptionProblem {
            long: "cgroups",
            message: format!("it should have two cgroup names: {value}"),
        }),
        _ => Ok(()),
    }
}

fn run_parsed(
    parsed: &ParsedOptions,
    instruments: Instruments,
) -> Result<RunRecord, WorkloadError> {
    run(&Params::from_parsed(parsed, instruments))
}

/// The two pipes; worker 0 reads `one` and writes `two`, worker 1 the reverse.
struct Pipes {
    one_read: OwnedFd,
    one_write: OwnedFd,
    two_read: OwnedFd,
    two_write: OwnedFd,
}

fn make_pipes(nonblocking: bool) -> Result<Pipes, WorkloadError> {
    let flags = if nonblocking {
        rustix::pipe::PipeFlags::NONBLOCK
    } else {
        rustix::pipe::PipeFlags::empty()
    };
    let (one_read, one_write) =
        rustix::pipe::pipe_with(flags).map_err(|e| WorkloadError::failed("pipe", e))?;
    let (two_read, two_write) =
        rustix::pipe::pipe_with(flags).map_err(|e| WorkloadError::failed("pipe", e))?;
    Ok(Pipes {
        one_read,
        one_write,
        two_read,
        two_write,
    })
}

/// One worker's side of the loop.
#[derive(Clone, Copy)]
struct PipeEnd<'a> {
    input: BorrowedFd<'a>,
    output: BorrowedFd<'a>,
    reads_first: bool,
    nonblocking: bool,
    cgroup: Option<&'a cgroup::Target>,
    /// The CPU the worker pins itself to first (`--placement`).
    cpu: Option<u32>,
    slot: TaskSlot<'a>,
    peer: TaskSlot<'a>,
}

/// What both sides share; [`SideConfig::side`] makes worker 0's or worker 1's view.
struct SideConfig<'a> {
    order: LoopOrder,
    nonblocking: bool,
    cgroups: Option<&'a (cgroup::Target, cgroup::Target)>,
    cpus: Option<[u32; 2]>,
    stats: &'a SharedStats,
}

impl<'a> SideConfig<'a> {
    fn side<'f>(&self, worker: usize, input: BorrowedFd<'f>, output: BorrowedFd<'f>) -> PipeEnd<'f>
    where
        'a: 'f,
    {
        PipeEnd {
            input,
            output,
            // In the ping-pong order worker 0 reads first; worker 1 always writes first.
            reads_first: worker == 0 && self.order == LoopOrder::PingPong,
            nonblocking: self.nonblocking,
            cgroup: self
                .cgroups
                .map(|(send, recv)| if worker == 0 { send } else { recv }),
            cpu: self.cpus.map(|c| c[worker]),
            slot: self.stats.task(worker),
            peer: self.stats.task(1 - worker),
        }
    }
}

/// Runs one pipe benchmark.
pub fn run(p: &Params) -> Result<RunRecord, WorkloadError> {
    let targets = match &p.cgroups {
        Some((send, recv)) => Some((
            cgroup::Target::resolve(send, p.threaded)?,
            cgroup::Target::resolve(recv, p.threaded)?,
        )),
        None => None,
    };
    let home = if targets.is_some() && !p.threaded {
        Some(cgroup::Target::current()?)
    } else {
        None
    };
    let cpus = crate::placement::task_cpus(p.placement, "sched pipe")?;
    let pipes = make_pipes(p.nonblocking)?;
    let stats = SharedStats::new(2, 0).map_err(|e| WorkloadError::failed("mmap", e))?;
    let config = SideConfig {
        order: p.order,
        nonblocking: p.nonblocking,
        cgroups: targets.as_ref(),
        cpus,
        stats: &stats,
    };
    // In process mode the coordinator is worker 1 and pins itself.
    let _affinity = cpus.map(|_| crate::placement::AffinityGuard::save());
    workers::prepare(1).map_err(|e| WorkloadError::failed("preparing workers", e))?;
    // Opened before the workers exist, so that both inherit them.
    let mut counters = RunCounters::open_if(p.counters);
    let outcome = if p.threaded {
        run_threads(p.loops, pipes, &config, &mut counters)
    } else {
        run_processes(p.loops, pipes, &config, &mut counters)
    };
    if let Some(home) = &home {
        // perf leaves itself in the RECV cgroup; kbench goes back where it was.
        let _ = home.enter_self();
    }
    let end = outcome?;
    Ok(record(p, end, counters, &stats))
}

fn record(p: &Params, end: RegionEnd, mut counters: RunCounters, stats: &SharedStats) -> RunRecord {
    let RegionEnd {
        elapsed,
        usage,
        interrupts,
    } = end;
    let names = ["worker 0 (reads pipe 1)", "worker 1 (writes pipe 1)"];
    let tasks = names
        .iter()
        .enumerate()
        .map(|(i, name)| stats.task_record(i, *name))
        .collect();
    let base = RunRecord {
        workload: WORKLOAD.key(),
        params: p.params_map(),
        variant: p.order.as_str().into(),
        total_ns: elapsed.total_ns,
        ops: None,
        usecs_per_op: None,
        ops_per_sec: None,
        bytes_transferred: None,
        rusage: usage,
        tasks,
        cpus_used: stats.all_cpus(),
        start_unix_ns: elapsed.start_unix_ns,
        end_unix_ns: elapsed.end_unix_ns,
        header_lines: vec![format!(
            "# Executed {} pipe operations between two {}",
            p.loops,
            p.task_word()
        )],
        ..RunRecord::default()
    };
    let mut rec = base.with_per_op(u64::try_from(p.loops).unwrap_or(0));
    rec.perf_signed_loops = Some(p.loops.into());
    rec.placement = stats.placement();
    let per_op = PerOp {
        per: "loop",
        ops: rec.ops.unwrap_or(0),
        syscalls_per_op: p.syscalls_per_loop(),
    };
    let cpus = crate::ipiaccount::cpus_of_tasks(&rec.tasks, &ROLES);
    crate::events::record_events(&mut rec, per_op, &interrupts, &cpus, counters.read());
    rec.metrics = crate::metrics::per_op(&rec);
    rec.metrics.extend(crate::metrics::events(&rec));
    rec
}

fn run_processes(
    loops: i32,
    pipes: Pipes,
    config: &SideConfig<'_>,
    counters: &mut RunCounters,
) -> Result<RegionEnd, WorkloadError> {
    let Pipes {
        one_read,
        one_write,
        two_read,
        two_write,
    } = pipes;
    workers::flush_stdio();
    let region = TimedRegion::start(counters);
    let child = workers::fork_worker(|| {
        // Unlike perf, each process closes the ends it does not use, so a worker that
        // dies gives its peer end-of-file instead of a hang.
        close_in_child(&one_write);
        close_in_child(&two_read);
        match work(loops, config.side(0, one_read.as_fd(), two_write.as_fd())) {
            Ok(()) => 0,
            Err(message) => {
                crate::errln!("kbench: sched pipe worker 0: {message}");
                1
            }
        }
    })
    .map_err(|e| WorkloadError::failed("fork", e))?;
    drop(one_read);
    drop(two_write);
    let parent_result = work(loops, config.side(1, two_read.as_fd(), one_write.as_fd()));
    let child_exit = match parent_result {
        Ok(()) => workers::reap(child).map_err(|e| WorkloadError::failed("waitpid", e))?,
        Err(_) => {
            workers::kill_and_reap_all();
            Exit::Signal(libc::SIGKILL)
        }
    };
    let end = region.stop();
    parent_result.map_err(|m| WorkloadError::Failed(format!("sched pipe worker 1: {m}")))?;
    if child_exit != Exit::Code(0) {
        return Err(WorkloadError::Failed(format!(
            "sched pipe worker 0 {child_exit}"
        )));
    }
    Ok(end)
}

fn close_in_child(fd: &OwnedFd) {
    // SAFETY: runs in the forked child only, which leaves through _exit and never
    // drops the OwnedFd naming this descriptor, so it is closed exactly once.
    unsafe {
        libc::close(std::os::fd::AsRawFd::as_raw_fd(fd));
    }
}

fn run_threads(
    loops: i32,
    pipes: Pipes,
    config: &SideConfig<'_>,
    counters: &mut RunCounters,
) -> Result<RegionEnd, WorkloadError> {
    let sides = [
        config.side(0, pipes.one_read.as_fd(), pipes.two_write.as_fd()),
        config.side(1, pipes.two_read.as_fd(), pipes.one_write.as_fd()),
    ];
    let region = TimedRegion::start(counters);
    let results = std::thread::scope(|scope| {
        // A failed worker ends the process: its peer shares every descriptor and would
        // wait for it forever.
        let handles = sides.map(|side| {
            scope.spawn(move || {
                if let Err(m) = work(loops, side) {
                    workers::exit_now(1, &format!("sched pipe worker: {m}"));
                }
                Ok::<(), String>(())
            })
        });
        handles.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err("worker thread panicked".into()))
        })
    });
    let end = region.stop();
    for (i, result) in results.into_iter().enumerate() {
        result.map_err(|m| WorkloadError::Failed(format!("sched pipe worker {i}: {m}")))?;
    }
    Ok(end)
}

/// One worker: enter its cgroup and pin itself, then `loops` times write-and-read (or
/// read-and-write).
fn work(loops: i32, side: PipeEnd<'_>) -> Result<(), String> {
    // In this order: moving into a cgroup with a cpuset resets the task's affinity on
    // kernels before 6.2.
    if let Some(target) = side.cgroup {
        target.enter_worker().map_err(|e| e.to_string())?;
    }
    if let Some(cpu) = side.cpu {
        crate::cpus::pin_current_thread(cpu)?;
    }
    let poller = if side.nonblocking {
        Some(make_poller(side.input).map_err(|e| format!("epoll: {e}"))?)
    } else {
        None
    };
    let token = [0u8; 4];
    let mut buf = [0u8; 4];
    side.slot.note_current_cpu();
    for i in 0..i64::from(loops) {
        if side.reads_first {
            read_token(side.input, &mut buf, poller.as_ref())?;
            write_token(side.output, &token)?;
        } else {
            write_token(side.output, &token)?;
            read_token(side.input, &mut buf, poller.as_ref())?;
        }
        if i % CPU_SAMPLE_EVERY == 0 {
            side.slot.note_cpu_beside(&side.peer);
        }
    }
    side.slot.note_cpu_beside(&side.peer);
    side.slot.note_nr_migrations();
    Ok(())
}

fn make_poller(input: BorrowedFd<'_>) -> rustix::io::Result<OwnedFd> {
    let epfd = epoll::create(epoll::CreateFlags::empty())?;
    epoll::add(
        &epfd,
        input,
        epoll::EventData::new_u64(0),
        epoll::EventFlags::IN,
    )?;
    Ok(epfd)
}

fn write_token(output: BorrowedFd<'_>, token: &[u8; 4]) -> Result<(), String> {
    loop {
        match rustix::io::write(output, token) {
            Ok(4) => return Ok(()),
            Ok(n) => return Err(format!("write moved {n} bytes instead of 4")),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(format!("write: {e}")),
        }
    }
}

/// Reads the 4-byte token; with `-n`, waits in epoll first and retries on EAGAIN.
fn read_token(
    input: BorrowedFd<'_>,
    buf: &mut [u8; 4],
    poller: Option<&OwnedFd>,
) -> Result<(), String> {
    loop {
        if let Some(epfd) = poller {
            let mut events = [epoll::Event {
                flags: epoll::EventFlags::empty(),
                data: epoll::EventData::new_u64(0),
            }];
            match epoll::wait(epfd, &mut events[..], None) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(format!("epoll_wait: {e}")),
            }
        }
        match rustix::io::read(input, &mut buf[..]) {
            Ok(4) => return Ok(()),
            Ok(0) => return Err("read: the other worker is gone (end of file)".into()),
            Ok(n) => return Err(format!("read moved {n} bytes instead of 4")),
            Err(rustix::io::Errno::INTR) => continue,
            Err(rustix::io::Errno::AGAIN) if poller.is_some() => continue,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
}
