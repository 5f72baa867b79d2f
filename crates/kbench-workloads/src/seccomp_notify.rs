//! `sched seccomp-notify`: the round trip of a syscall that a seccomp filter turns
//! into a user-space notification, answered by a supervisor.
//!
//! The sequence is perf's: start the clock, set no_new_privs, install a 4-instruction
//! filter that sends `gettid` to a listener, fork the target (which calls `gettid`
//! until it does not get INT_MAX back), answer `loops` notifications with INT_MAX,
//! SIGKILL the target, reap it, stop the clock.
//!
//! perf installs the filter on itself and stays filtered for the rest of its life.
//! kbench runs the whole sequence in a forked supervisor process instead, so the
//! coordinator stays clean; the fork of the supervisor is outside the timed region.
//! With `--placement` (kbench's), the supervisor pins itself before the clock starts
//! and the target as it starts.
//!
//! Every run also records the interrupts its CPUs received per notification. They are
//! read by the coordinator around the supervisor's whole life, so the window also
//! holds the supervisor's fork, pinning and exit, a few interrupts at most, outside
//! perf's timed region. With `--counters` the coordinator opens the counters before it
//! forks the supervisor, which inherits them and enables them around its clock only.
use crate::counters::RunCounters;
use crate::events::PerOp;
use crate::ipiaccount::IpiWindow;
use crate::measure::{Stopwatch, UsageSnapshot};
use crate::perfopt::{OptKind, OptSpec, ParsedOptions};
use crate::shared::SharedStats;
use crate::workers::{self, Exit};
use crate::{Instruments, RunRecord, Workload, WorkloadError};
use kbench_record::PlacementRequest;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI32, Ordering};

const DEFAULT_LOOPS: u64 = 1_000_000;
/// The value the supervisor fakes as gettid's result.
const FAKE_TID: i64 = i32::MAX as i64;
/// The target samples its CPU once per this many calls.
const CPU_SAMPLE_EVERY: u64 = 64;
/// System calls per notification: the target's trapped gettid, then the supervisor's
/// SECCOMP_IOCTL_NOTIF_RECV and SECCOMP_IOCTL_NOTIF_SEND.
const SYSCALLS_PER_NOTIFICATION: f64 = 3.0;
/// The tasks' names in the IPI accounting's roles, in task-slot order.
const ROLES: [&str; 2] = ["supervisor", "target"];

// Kernel ABI values (include/uapi/linux/seccomp.h, filter.h).
const SECCOMP_SET_MODE_FILTER: libc::c_ulong = 1;
const SECCOMP_FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_IOCTL_NOTIF_RECV: libc::c_ulong = 0xc050_2100;
const SECCOMP_IOCTL_NOTIF_SEND: libc::c_ulong = 0xc018_2101;
const SECCOMP_IOCTL_NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;
const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: libc::c_ulong = 1;
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_RET_K: u16 = 0x06;

/// Shared words the supervisor fills for the coordinator.
const SCALAR_TOTAL_NS: usize = 0;
const SCALAR_START_UNIX_NS: usize = 1;
const SCALAR_END_UNIX_NS: usize = 2;
const SCALARS: usize = 3;
/// Task slots: the supervisor and the target.
const SUPERVISOR: usize = 0;
const TARGET: usize = 1;

pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        short: Some('l'),
        long: "loop",
        kind: OptKind::U64,
        help: "Specify number of loops",
    },
    OptSpec {
        short: Some('s'),
        long: "sync-mode",
        kind: OptKind::Bool,
        help: "Enable the synchronous mode for seccomp notifications",
    },
    crate::placement::OPTION,
];

pub static WORKLOAD: Workload = Workload {
    collection: "sched",
    name: "seccomp-notify",
    summary: "Benchmark for seccomp user notify",
    // perf's usage string really has three c's.
    usage: "perf bench sched secccomp-notify <options>",
    options: OPTIONS,
    comm: "sched-seccomp-n",
    in_perf_all: true,
    check: crate::placement::check,
    validate: crate::no_validate,
    takes_counters: true,
    run: run_parsed,
};

/// The parameters of one seccomp-notify run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub loops: u64,
    pub sync_mode: bool,
    pub placement: PlacementRequest,
    /// perf_event_open counters over the run (`--counters`).
    pub counters: bool,
}

impl Params {
    pub fn from_parsed(parsed: &ParsedOptions, instruments: Instruments) -> Self {
        Self {
            loops: parsed.u64("loop").unwrap_or(DEFAULT_LOOPS),
            sync_mode: parsed.bool("sync-mode").unwrap_or(false),
            placement: crate::placement::requested(parsed),
            counters: instruments.counters,
        }
    }
}

fn run_parsed(
    parsed: &ParsedOptions,
    instruments: Instruments,
) -> Result<RunRecord, WorkloadError> {
    run(&Params::from_parsed(parsed, instruments))
}

/// Exit codes of the supervisor process, mapped back to errors by the coordinator.
const EXIT_UNSUPPORTED: i32 = 3;

/// Runs one seccomp-notify benchmark.
pub fn run(p: &Params) -> Result<RunRecord, WorkloadError> {
    let cpus = crate::placement::task_cpus(p.placement, "sched seccomp-notify")?;
    let stats = SharedStats::new(2, SCALARS).map_err(|e| WorkloadError::failed("mmap", e))?;
    workers::prepare(1).map_err(|e| WorkloadError::failed("preparing workers", e))?;
    workers::flush_stdio();
    let mut counters = RunCounters::open_if(p.counters);
    let usage_before = UsageSnapshot::take();
    let interrupts = IpiWindow::open();
    let supervisor = workers::fork_worker(|| supervise(p, cpus, &stats, &mut counters))
        .map_err(|e| WorkloadError::failed("fork", e))?;
    let exit = workers::reap(supervisor).map_err(|e| WorkloadError::failed("waitpid", e))?;
    let interrupts = interrupts.close();
    let usage = usage_before.delta_to(&UsageSnapshot::take());
    match exit {
        Exit::Code(0) => {}
        Exit::Code(EXIT_UNSUPPORTED) => {
            return Err(WorkloadError::Unsupported(
                "seccomp-notify: the kernel lacks a feature it needs (see above)".into(),
            ))
        }
        other => {
            return Err(WorkloadError::Failed(format!(
                "seccomp-notify: the supervisor {other}"
            )))
        }
    }
    let total_ns = stats.scalar(SCALAR_TOTAL_NS).load(Ordering::SeqCst);
    let tasks = [("supervisor", SUPERVISOR), ("target", TARGET)]
        .iter()
        .map(|(name, i)| stats.task_record(*i, *name))
        .collect();
    let rec = RunRecord {
        workload: WORKLOAD.key(),
        params: BTreeMap::from_iter(
            [
                ("loop".to_string(), p.loops.into()),
                ("sync-mode".to_string(), p.sync_mode.into()),
            ]
            .into_iter()
            .chain(crate::placement::param(p.placement))
            .chain(crate::events::counters_param(p.counters)),
        ),
        variant: "perf".into(),
        total_ns,
        ops: None,
        usecs_per_op: None,
        ops_per_sec: None,
        bytes_transferred: None,
        rusage: usage,
        tasks,
        cpus_used: stats.all_cpus(),
        start_unix_ns: stats.scalar(SCALAR_START_UNIX_NS).load(Ordering::SeqCst),
        end_unix_ns: stats.scalar(SCALAR_END_UNIX_NS).load(Ordering::SeqCst),
        header_lines: vec![format!("# Executed {} system calls", p.loops)],
        placement: stats.placement(),
        ..RunRecord::default()
    };
    let mut rec = rec.with_per_op(p.loops);
    let per_op = PerOp {
        per: "notification",
        ops: p.loops,
        syscalls_per_op: SYSCALLS_PER_NOTIFICATION,
    };
    let cpus = crate::ipiaccount::cpus_of_tasks(&rec.tasks, &ROLES);
    crate::events::record_events(&mut rec, per_op, &interrupts, &cpus, counters.read());
    rec.metrics = crate::metrics::per_op(&rec);
    rec.metrics.extend(crate::metrics::events(&rec));
    Ok(rec)
}

/// The supervisor process: perf's whole timed sequence. Returns its exit code.
/// With `cpus` (supervisor's, target's), it pins itself before the clock starts and
/// the target pins itself first thing. The counters it inherited count from just
/// before its clock starts to just after it stops, the target included.
fn supervise(
    p: &Params,
    cpus: Option<[u32; 2]>,
    stats: &SharedStats,
    counters: &mut RunCounters,
) -> i32 {
    let (slot, peer) = (stats.task(SUPERVISOR), stats.task(TARGET));
    if let Some([cpu, _]) = cpus {
        if let Err(e) = crate::cpus::pin_current_thread(cpu) {
            crate::errln!("kbench: seccomp-notify: {e}");
            return 1;
        }
    }
    // The supervisor forks the target, so it keeps its own worker registry.
    if let Err(e) = workers::prepare(1) {
        crate::errln!("kbench: seccomp-notify: {e}");
        return 1;
    }
    counters.start();
    let stopwatch = Stopwatch::start();
    let listener = match install_filter() {
        Ok(fd) => fd,
        Err(e) => {
            crate::errln!(
                "kbench: seccomp-notify: can't create a notification descriptor \
                 (needs SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux >= 5.0, and seccomp allowed): {e}"
            );
            return EXIT_UNSUPPORTED;
        }
    };
    if let Err(e) = unblock_when_target_exits(listener) {
        crate::errln!("kbench: seccomp-notify: {e}");
        return 1;
    }
    let target_cpu = cpus.map(|[_, target]| target);
    let target = match workers::fork_worker(|| be_target(stats, target_cpu)) {
        Ok(pid) => pid,
        Err(e) => {
            crate::errln!("kbench: seccomp-notify: fork: {e}");
            return 1;
        }
    };
    if p.sync_mode {
        if let Err(e) = set_sync_wake_up(listener) {
            crate::errln!(
                "kbench: seccomp-notify --sync-mode: the kernel lacks \
                 SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux >= 6.6): {e}"
            );
            workers::kill_and_reap_all();
            return EXIT_UNSUPPORTED;
        }
    }
    slot.note_cpu_beside(&peer);
    for i in 0..p.loops {
        if let Err(message) = answer_one(listener) {
            crate::errln!("kbench: seccomp-notify: {message}");
            workers::kill_and_reap_all();
            return 1;
        }
        if i % CPU_SAMPLE_EVERY == 0 {
            slot.note_cpu_beside(&peer);
        }
    }
    slot.note_cpu_beside(&peer);
    slot.note_nr_migrations();
    let _ = rustix::process::kill_process(target, rustix::process::Signal::KILL);
    let exit = workers::reap(target);
    let elapsed = stopwatch.stop();
    counters.stop();
    if !matches!(exit, Ok(Exit::Signal(libc::SIGKILL))) {
        crate::errln!("kbench: seccomp-notify: unexpected exit of the target: {exit:?}");
        return 1;
    }
    stats
        .scalar(SCALAR_TOTAL_NS)
        .store(elapsed.total_ns, Ordering::SeqCst);
    stats
        .scalar(SCALAR_START_UNIX_NS)
        .store(elapsed.start_unix_ns, Ordering::SeqCst);
    stats
        .scalar(SCALAR_END_UNIX_NS)
        .store(elapsed.end_unix_ns, Ordering::SeqCst);
    0
}

/// The listener and a /dev/null descriptor, for the SIGCHLD handler.
static LISTENER_FD: AtomicI32 = AtomicI32::new(-1);
static DEVNULL_FD: AtomicI32 = AtomicI32::new(-1);

/// The supervisor is itself a user of the filter, so NOTIF_RECV would wait forever
/// for a target that died early. On SIGCHLD the handler puts /dev/null in the
/// listener's place: a RECV in progress returns EINTR (no SA_RESTART) and every later
/// one fails at once, whichever comes first. Nothing is added to the timed loop.
fn unblock_when_target_exits(listener: libc::c_int) -> std::io::Result<()> {
    let devnull = std::fs::OpenOptions::new().read(true).open("/dev/null")?;
    DEVNULL_FD.store(
        std::os::fd::IntoRawFd::into_raw_fd(devnull),
        Ordering::SeqCst,
    );
    LISTENER_FD.store(listener, Ordering::SeqCst);
    // SAFETY: the handler only makes the async-signal-safe dup2 call on the
    // descriptors published above.
    unsafe { workers::install_handler(libc::SIGCHLD, on_target_exit) }
}

extern "C" fn on_target_exit(_signal: libc::c_int) {
    let (listener, devnull) = (
        LISTENER_FD.load(Ordering::SeqCst),
        DEVNULL_FD.load(Ordering::SeqCst),
    );
    if listener >= 0 && devnull >= 0 {
        // SAFETY: dup2 is async-signal-safe and takes descriptor numbers only.
        unsafe {
            libc::dup2(devnull, listener);
        }
    }
}

/// no_new_privs, then the filter: `gettid` → USER_NOTIF, anything else allowed.
/// Returns the listener descriptor.
fn install_filter() -> std::io::Result<libc::c_int> {
    // perf ignores prctl's result; the seccomp call below fails clearly if it mattered.
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    }
    let mut filter = [
        bpf(BPF_LD_W_ABS, 0, 0, 0), // seccomp_data.nr is at offset 0
        bpf(BPF_JMP_JEQ_K, 0, 1, libc::SYS_gettid as u32),
        bpf(BPF_RET_K, 0, 0, SECCOMP_RET_USER_NOTIF),
        bpf(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ];
    let program = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_mut_ptr(),
    };
    // SAFETY: `program` points at `filter`, both alive across the call; the kernel
    // copies the program and does not keep the pointer.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &program as *const libc::sock_fprog,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd as libc::c_int)
}

fn bpf(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

fn set_sync_wake_up(listener: libc::c_int) -> std::io::Result<()> {
    // SAFETY: SET_FLAGS takes an integer argument, no pointer.
    let rc = unsafe {
        libc::ioctl(
            listener,
            SECCOMP_IOCTL_NOTIF_SET_FLAGS as _,
            SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Receives one notification and answers it with INT_MAX.
fn answer_one(listener: libc::c_int) -> Result<(), String> {
    // SAFETY: seccomp_notif is plain data; all-zero is the state the kernel expects
    // for RECV (it rejects a non-zeroed buffer).
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `notif` is a live, correctly sized seccomp_notif the kernel fills.
        let rc = unsafe { libc::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV as _, &mut notif) };
        if rc == 0 {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(format!("SECCOMP_IOCTL_NOTIF_RECV failed: {err}"));
        }
    }
    if i64::from(notif.data.nr) != libc::SYS_gettid {
        return Err(format!("unexpected syscall: {}", notif.data.nr));
    }
    let mut response = libc::seccomp_notif_resp {
        id: notif.id,
        val: FAKE_TID,
        error: 0,
        flags: 0,
    };
    // SAFETY: `response` is a live, correctly sized seccomp_notif_resp the kernel reads.
    let rc = unsafe { libc::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND as _, &mut response) };
    if rc < 0 {
        return Err(format!(
            "SECCOMP_IOCTL_NOTIF_SEND failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// The target: call gettid (trapped) until the answer is not INT_MAX. Never calls
/// anything that would itself be trapped besides that.
fn be_target(stats: &SharedStats, cpu: Option<u32>) -> i32 {
    let (slot, peer) = (stats.task(TARGET), stats.task(SUPERVISOR));
    // sched_setaffinity on the calling thread (pid 0) and write(2) are not trapped;
    // the message is written raw, without the locks and thread ids of eprintln.
    if let Some(cpu) = cpu {
        if let Err(e) = crate::cpus::pin_current_thread(cpu) {
            let line = format!("kbench: seccomp-notify target: {e}\n");
            let _ = rustix::io::write(rustix::stdio::stderr(), line.as_bytes());
            return 1;
        }
    }
    let mut calls: u64 = 0;
    loop {
        if calls.is_multiple_of(CPU_SAMPLE_EVERY) {
            slot.note_cpu_beside(&peer);
        }
        calls += 1;
        // SAFETY: gettid takes no arguments.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        if tid != FAKE_TID {
            return 1;
        }
    }
}
