//! Worker processes that never outlive their coordinator.
//!
//! perf leaves orphans behind when set-up fails half-way, when a worker dies early,
//! or (before 6.7) on Ctrl-C. kbench does not:
//! - every worker asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG), and checks
//!   after the call that the parent is still the one that forked it;
//! - the coordinator is a child subreaper, so a grandchild (the seccomp target) that
//!   loses its parent is re-parented to the coordinator and reaped by it;
//! - SIGINT, SIGTERM and SIGHUP run a handler that SIGKILLs every registered worker,
//!   reaps every child, and exits with 128 + the signal number;
//! - [`kill_and_reap_all`] does the same on any error path.
//!
//! Forking is only done from a single-threaded coordinator ([`prepare`] checks it), so
//! the child may allocate and use the standard library freely.
use rustix::process::{Pid, Signal, WaitOptions, WaitStatus};
use std::io;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering};

/// Pids of live workers, readable from the signal handler. Slots hold 0 when free.
static REGISTRY: AtomicPtr<AtomicI32> = AtomicPtr::new(std::ptr::null_mut());
static REGISTRY_LEN: AtomicUsize = AtomicUsize::new(0);
const HANDLED_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Makes room for `capacity` workers, installs the signal handlers and becomes a
/// child subreaper. Fails when the process has more than one thread, because forking
/// a multi-threaded process leaves the child with locks held by threads that vanished.
pub fn prepare(capacity: usize) -> io::Result<()> {
    ensure_single_threaded()?;
    let registry: Box<[AtomicI32]> = (0..capacity).map(|_| AtomicI32::new(0)).collect();
    // The previous registry (if any) is leaked on purpose: the signal handler may be
    // reading it, and a registry is a few bytes per worker of one run.
    REGISTRY_LEN.store(0, Ordering::SeqCst);
    REGISTRY.store(Box::leak(registry).as_mut_ptr(), Ordering::SeqCst);
    REGISTRY_LEN.store(capacity, Ordering::SeqCst);
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
    install_signal_handlers();
    Ok(())
}

fn ensure_single_threaded() -> io::Result<()> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(1);
    if threads > 1 {
        return Err(io::Error::other(format!(
            "cannot fork workers from a process with {threads} threads"
        )));
    }
    Ok(())
}

fn registry() -> &'static [AtomicI32] {
    let ptr = REGISTRY.load(Ordering::SeqCst);
    let len = REGISTRY_LEN.load(Ordering::SeqCst);
    if ptr.is_null() {
        return &[];
    }
    // SAFETY: `ptr` comes from a leaked boxed slice of at least `len` elements that is
    // never freed; `len` is published after `ptr` and reset before it changes.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

fn register(pid: Pid) -> bool {
    registry().iter().any(|slot| {
        slot.compare_exchange(
            0,
            pid.as_raw_nonzero().get(),
            Ordering::SeqCst,
            Ordering::SeqCst,
        )
        .is_ok()
    })
}

fn unregister(pid: Pid) {
    let raw = pid.as_raw_nonzero().get();
    for slot in registry() {
        let _ = slot.compare_exchange(raw, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

extern "C" fn on_fatal_signal(signal: libc::c_int) {
    kill_registered();
    reap_every_child();
    const MSG: &[u8] = b"kbench: interrupted; every worker killed and reaped\n";
    // SAFETY: write(2) and _exit(2) are async-signal-safe; MSG is a static buffer.
    unsafe {
        libc::write(2, MSG.as_ptr().cast(), MSG.len());
        libc::_exit(128 + signal);
    }
}

/// SIGKILLs every registered worker. Async-signal-safe: atomics and kill(2) only.
fn kill_registered() {
    for slot in registry() {
        let pid = slot.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill(2) is async-signal-safe and takes no pointers.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Waits for every child until none is left. Async-signal-safe: waitpid(2) only.
fn reap_every_child() {
    loop {
        // SAFETY: waitpid(2) with a null status pointer is async-signal-safe.
        let pid = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::__WALL) };
        if pid < 0 {
            let errno = io::Error::last_os_error().raw_os_error();
            if errno == Some(libc::EINTR) {
                continue;
            }
            break;
        }
    }
}

fn install_signal_handlers() {
    for signal in HANDLED_SIGNALS {
        // SAFETY: `on_fatal_signal` only makes async-signal-safe calls.
        let _ = unsafe { install_handler(signal, on_fatal_signal) };
    }
}

/// Installs `handler` for `signal`, with an empty mask and no SA_RESTART, so a
/// blocking call interrupted by the signal returns EINTR.
///
/// # Safety
/// `handler` must make only async-signal-safe calls.
pub(crate) unsafe fn install_handler(
    signal: libc::c_int,
    handler: extern "C" fn(libc::c_int),
) -> io::Result<()> {
    set_signal_action(signal, handler as *const () as libc::sighandler_t)
}

/// Restores the default action of `signal`.
fn reset_to_default(signal: libc::c_int) {
    let _ = set_signal_action(signal, libc::SIG_DFL);
}

fn set_signal_action(signal: libc::c_int, handler: libc::sighandler_t) -> io::Result<()> {
    // SAFETY: a zeroed sigaction is valid (empty mask, no flags); `handler` is SIG_DFL
    // or comes from `install_handler`, whose callers vouch for it.
    let rc = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut())
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Blocks the handled signals; returns the previous mask.
fn block_handled_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset/sigaddset initialise it, and
    // sigprocmask only reads `set` and writes `old`.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in HANDLED_SIGNALS {
            libc::sigaddset(&mut set, signal);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old);
        old
    }
}

fn restore_signal_mask(old: &libc::sigset_t) {
    // SAFETY: `old` was filled by sigprocmask in `block_handled_signals`.
    unsafe {
        libc::sigprocmask(libc::SIG_SETMASK, old, std::ptr::null_mut());
    }
}

/// Ends the process at once with `message` on stderr: the way out of a thread-mode
/// run whose threads are blocked on each other (a scope would wait for them forever).
/// Threads die with the process, as in perf's thread mode.
pub fn exit_now(code: i32, message: &str) -> ! {
    crate::errln!("kbench: {message}");
    flush_stdio();
    // SAFETY: _exit ends every thread of the process; nothing is left half-written
    // that a failed run could have kept.
    unsafe { libc::_exit(code) }
}

/// Empties the stdio buffers, so a forked child cannot print the parent's pending
/// output a second time.
pub fn flush_stdio() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
}

/// Forks a worker that runs `body` and exits with its return value via `_exit`
/// (no destructors, no stdio flush: the coordinator flushed before forking).
///
/// The handled signals are blocked across the fork, so the signal handler always
/// knows every worker that exists.
pub fn fork_worker(body: impl FnOnce() -> i32) -> io::Result<Pid> {
    let parent = rustix::process::getpid();
    let old_mask = block_handled_signals();
    // SAFETY: `prepare` checked that this process is single-threaded, so the child
    // starts with consistent allocator and stdio state and may run ordinary Rust code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let err = io::Error::last_os_error();
        restore_signal_mask(&old_mask);
        return Err(err);
    }
    if pid == 0 {
        become_worker(parent, &old_mask);
        let code = body();
        // SAFETY: _exit ends the child without running the parent's atexit handlers or
        // flushing stdio buffers it inherited.
        unsafe { libc::_exit(code) }
    }
    let result = match Pid::from_raw(pid) {
        Some(pid) if register(pid) => Ok(pid),
        Some(pid) => {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
            let _ = rustix::process::waitpid(Some(pid), WaitOptions::empty());
            Err(io::Error::other("worker registry full"))
        }
        None => Err(io::Error::last_os_error()),
    };
    restore_signal_mask(&old_mask);
    result
}

/// First steps of a forked worker: default signal actions, death signal, and a check
/// that the parent did not die before the death signal was armed.
fn become_worker(parent: Pid, old_mask: &libc::sigset_t) {
    for signal in HANDLED_SIGNALS {
        reset_to_default(signal);
    }
    REGISTRY_LEN.store(0, Ordering::SeqCst);
    let armed = rustix::process::set_parent_process_death_signal(Some(Signal::KILL)).is_ok();
    if !armed || rustix::process::getppid() != Some(parent) {
        // SAFETY: see fork_worker; nothing to clean up in a fresh child.
        unsafe { libc::_exit(1) }
    }
    restore_signal_mask(old_mask);
}

/// How a reaped worker ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    fn from_status(status: WaitStatus) -> Self {
        match (status.exit_status(), status.terminating_signal()) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(signal)) => Exit::Signal(signal),
            (None, None) => Exit::Code(-1),
        }
    }

    pub fn is_success(self) -> bool {
        self == Exit::Code(0)
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exited with status {code}"),
            Exit::Signal(signal) => write!(f, "was killed by signal {signal}"),
        }
    }
}

/// Waits for any worker (like perf's `wait()`), retrying on EINTR.
pub fn reap_any() -> io::Result<(Pid, Exit)> {
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) => {
                unregister(pid);
                return Ok((pid, Exit::from_status(status)));
            }
            Ok(None) => continue,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Waits for worker `pid`, retrying on EINTR.
pub fn reap(pid: Pid) -> io::Result<Exit> {
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => {
                unregister(pid);
                return Ok(Exit::from_status(status));
            }
            Ok(None) => continue,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Reaps a worker that has already exited, without blocking.
pub fn try_reap_any() -> io::Result<Option<(Pid, Exit)>> {
    match rustix::process::wait(WaitOptions::NOHANG) {
        Ok(Some((pid, status))) => {
            unregister(pid);
            Ok(Some((pid, Exit::from_status(status))))
        }
        Ok(None) => Ok(None),
        Err(rustix::io::Errno::CHILD) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// SIGKILLs every registered worker and reaps every child: the error path.
pub fn kill_and_reap_all() {
    let old_mask = block_handled_signals();
    kill_registered();
    reap_every_child();
    for slot in registry() {
        slot.store(0, Ordering::SeqCst);
    }
    restore_signal_mask(&old_mask);
}
