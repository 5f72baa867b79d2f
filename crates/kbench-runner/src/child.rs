//! Every run in a fresh child process: a workload through `kbench bench --json`, or
//! any command, timed as a whole with the child's own rusage (wait4).
use crate::capture::{Capture, CapturedOutput};
use crate::hooks::HookFailure;
use crate::spec::WorkloadSpec;
use kbench_record::{RawJson, StoredRun, Value};
use kbench_workloads::measure::unix_now_ns;
use kbench_workloads::RunRecord;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs one workload in a fresh `kbench bench` process, pinned to `cpus` if given.
/// A run still going after `timeout` is stopped (SIGTERM, which makes it kill and reap
/// its workers; SIGKILL two seconds later) and reported as failed.
pub fn run_workload(
    spec: &WorkloadSpec,
    cpus: Option<&str>,
    timeout: Duration,
) -> Result<RunRecord, String> {
    let mut cmd = bench_command(spec, cpus)?;
    die_with_kbench(&mut cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: cannot start kbench bench: {e}", spec.display()))?;
    // Read both pipes while waiting, so a large record cannot fill a pipe and stall.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_with_timeout(&mut child, timeout)
        .map_err(|e| format!("waiting for kbench bench: {e}"))?;
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    let Some(status) = status else {
        return Err(timed_out_message(&spec.display(), timeout));
    };
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr);
        let reason = stderr.lines().last().unwrap_or("no message").to_string();
        return Err(format!("{} failed ({status}): {reason}", spec.display()));
    }
    serde_json::from_slice(&stdout)
        .map_err(|e| format!("{}: unreadable run record: {e}", spec.display()))
}

/// Why a run that was stopped at its deadline has no figures.
pub fn timed_out_message(what: &str, timeout: Duration) -> String {
    format!(
        "{what} timed out after {} s and was stopped",
        timeout.as_secs_f64()
    )
}

/// The stored form of one workload run: its record's values, or, when it failed, a
/// run of the workload with its error (which names the spec).
pub fn stored_workload_run(
    spec: &WorkloadSpec,
    result: &Result<RunRecord, String>,
    run_index: u32,
    warmup: bool,
    pinned_cpus: Option<&str>,
) -> StoredRun {
    match result {
        Ok(record) => kbench_record::stored_run(
            record,
            run_index,
            warmup,
            pinned_cpus.map(str::to_string),
            kbench_sys::format_cpulist(&record.cpus_used),
        ),
        Err(message) => StoredRun {
            workload: spec.workload.key(),
            run_index,
            warmup,
            exit_status: Some(1),
            pinned_cpus: pinned_cpus.map(str::to_string),
            error: Some(message.clone()),
            ..Default::default()
        },
    }
}

/// `kbench bench --json [--cpus L] [--counters] sched pipe ARGS`, or `... ipi ARGS`
/// for a collection of one benchmark, which takes no name.
fn bench_command(spec: &WorkloadSpec, cpus: Option<&str>) -> Result<Command, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("{}: cannot find kbench itself: {e}", spec.display()))?;
    let mut cmd = Command::new(exe);
    cmd.arg("bench").arg("--json");
    if let Some(cpus) = cpus {
        cmd.arg("--cpus").arg(cpus);
    }
    if spec.instruments.counters {
        cmd.arg("--counters");
    }
    cmd.arg(spec.workload.collection);
    if spec.workload.name != spec.workload.collection {
        cmd.arg(spec.workload.name);
    }
    cmd.args(&spec.args);
    Ok(cmd)
}

fn drain<R: std::io::Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buf);
        }
        buf
    })
}

/// The child's status, or `None` when it had to be stopped at the deadline (SIGTERM,
/// then SIGKILL after a grace period).
pub fn wait_with_timeout(
    child: &mut std::process::Child,
    timeout: Duration,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let deadline = Instant::now() + timeout;
    // A pidfd becomes readable when the child exits: the wait ends then, not at the
    // next tick of a polling loop. Without one (a kernel before 5.3), 5 ms ticks.
    let pidfd = rustix::process::Pid::from_raw(child.id() as i32).and_then(|pid| {
        rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
    });
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            stop(child);
            return Ok(None);
        }
        let tick = match &pidfd {
            Some(_) => (deadline - now).min(Duration::from_secs(1)),
            None => Duration::from_millis(5),
        };
        match &pidfd {
            Some(fd) => wait_readable(fd, tick),
            None => std::thread::sleep(tick),
        }
    }
}

/// Waits until `fd` is readable or `timeout` has passed (an interrupted wait returns
/// early; the caller checks again).
fn wait_readable(fd: &rustix::fd::OwnedFd, timeout: Duration) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let timeout = Timespec {
        tv_sec: timeout.as_secs() as _,
        tv_nsec: timeout.subsec_nanos() as _,
    };
    let _ = poll(&mut [PollFd::new(fd, PollFlags::IN)], Some(&timeout));
}

/// SIGTERM, then SIGKILL after a grace period, and the child reaped.
pub fn stop(child: &mut std::process::Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
    let grace = Instant::now() + Duration::from_secs(2);
    while Instant::now() < grace {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// What a command did, measured from outside.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandRun {
    pub wall_ns: u64,
    pub user_us: u64,
    pub sys_us: u64,
    pub max_rss_kib: u64,
    pub voluntary_csw: u64,
    pub involuntary_csw: u64,
    /// Exit code, or 128 + signal when killed.
    pub exit_status: i32,
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    /// What it printed, kept to read its figures from.
    pub output: CapturedOutput,
    /// Set when it ran past its timeout and was killed, with everything it started.
    pub timed_out_after: Option<Duration>,
}

/// Runs `argv` (no shell) once, keeping what it prints; its output also goes to ours
/// when `show_output`. A command still running after `timeout` is killed with every
/// process it started (see [`Watchdog`]).
pub fn run_command(
    argv: &[String],
    show_output: bool,
    cpus: Option<&[u32]>,
    timeout: Duration,
) -> Result<CommandRun, String> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| "no command given".to_string())?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    die_with_kbench(&mut cmd);
    let start_unix_ns = unix_now_ns();
    let started = Instant::now();
    let mut child =
        pin_and_spawn(&mut cmd, cpus).map_err(|e| format!("cannot run '{program}': {e}"))?;
    let watchdog = Watchdog::start(child.id(), timeout);
    let capture = Capture::start(&mut child, show_output);
    let waited = wait4(child.id() as libc::pid_t);
    let wall_ns = started.elapsed().as_nanos() as u64;
    let timed_out_after = watchdog.finish().then_some(timeout);
    let output = capture.finish();
    let (status, usage) = waited.map_err(|e| format!("waiting for '{program}': {e}"))?;
    // The child was reaped by wait4; dropping the handle does not wait again.
    drop(child);
    let tv_us = |t: libc::timeval| (t.tv_sec as u64) * 1_000_000 + t.tv_usec as u64;
    Ok(CommandRun {
        wall_ns,
        user_us: tv_us(usage.ru_utime),
        sys_us: tv_us(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss as u64,
        voluntary_csw: usage.ru_nvcsw as u64,
        involuntary_csw: usage.ru_nivcsw as u64,
        exit_status: decode_status(status),
        start_unix_ns,
        end_unix_ns: unix_now_ns(),
        output,
        timed_out_after,
    })
}

/// Makes the kernel SIGKILL a child when kbench dies, however kbench dies: a killed
/// coordinator leaves no workload or command running on.
pub fn die_with_kbench(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: runs in the forked child before exec and calls only prctl, which is
    // async-signal-safe; it allocates nothing and touches no lock.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Kills a command and everything it started once its time is up, from a thread of
/// its own, so that the waiting thread can block in wait4 and time the command to the
/// microsecond. The command is named by a pidfd, which a reused pid cannot fool.
struct Watchdog {
    done: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<bool>,
}

impl Watchdog {
    fn start(pid: u32, timeout: Duration) -> Watchdog {
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let pidfd = rustix::process::Pid::from_raw(pid as i32).and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
        let thread = std::thread::spawn(move || match finished.recv_timeout(timeout) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                kill_tree(pid, pidfd.as_ref());
                true
            }
            _ => false,
        });
        Watchdog { done, thread }
    }

    /// Whether the command had to be killed.
    fn finish(self) -> bool {
        let _ = self.done.send(());
        self.thread.join().unwrap_or(false)
    }
}

/// SIGKILLs `root` and its descendants. They are stopped first, until no new one
/// appears, so that none can fork a process that escapes the kill.
fn kill_tree(root: u32, root_fd: Option<&rustix::fd::OwnedFd>) {
    use rustix::process::{kill_process, pidfd_send_signal, Pid, Signal};
    let signal_root = |signal| match root_fd {
        Some(fd) => pidfd_send_signal(fd, signal).is_ok(),
        None => Pid::from_raw(root as i32).is_some_and(|p| kill_process(p, signal).is_ok()),
    };
    if !signal_root(Signal::STOP) {
        return;
    }
    let mut stopped: Vec<u32> = Vec::new();
    for _ in 0..100 {
        let fresh: Vec<u32> = descendants(root)
            .into_iter()
            .filter(|pid| !stopped.contains(pid))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for &pid in &fresh {
            if let Some(pid) = Pid::from_raw(pid as i32) {
                let _ = kill_process(pid, Signal::STOP);
            }
        }
        stopped.extend(fresh);
    }
    signal_root(Signal::KILL);
    for pid in stopped {
        if let Some(pid) = Pid::from_raw(pid as i32) {
            let _ = kill_process(pid, Signal::KILL);
        }
    }
}

/// Every live process below `root`, from the parent pids in /proc.
fn descendants(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parent_pid(&stat)?))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(pid, ppid)| *ppid == parent && !found.contains(pid))
                .map(|(pid, _)| *pid)
                .collect::<Vec<_>>(),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// The fourth field of /proc/PID/stat; the name before it may hold spaces and ')'.
fn parent_pid(stat: &str) -> Option<u32> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Spawns with the affinity applied to ourselves around the spawn: the child inherits
/// it, and no code runs between fork and exec.
fn pin_and_spawn(cmd: &mut Command, cpus: Option<&[u32]>) -> std::io::Result<std::process::Child> {
    let Some(cpus) = cpus else {
        return cmd.spawn();
    };
    let previous = rustix::thread::sched_getaffinity(None)?;
    rustix::thread::sched_setaffinity(None, &kbench_workloads::cpus::cpu_set(cpus))?;
    let child = cmd.spawn();
    rustix::thread::sched_setaffinity(None, &previous)?;
    child
}

fn decode_status(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        -1
    }
}

fn wait4(pid: libc::pid_t) -> std::io::Result<(libc::c_int, libc::rusage)> {
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; wait4 writes `status` and `usage`, both live.
        let (rc, usage) = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            let rc = libc::wait4(pid, &mut status, 0, &mut usage);
            (rc, usage)
        };
        if rc == pid {
            return Ok((status, usage));
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// The stored form of a command run, with its values (see
/// [`crate::figures::FigureReader::values`]).
pub fn stored_command_run(
    argv: &[String],
    run: &CommandRun,
    run_index: u32,
    warmup: bool,
    pinned_cpus: Option<String>,
    values: Vec<Value>,
) -> StoredRun {
    StoredRun {
        exit_status: Some(run.exit_status),
        error: run
            .timed_out_after
            .map(|after| timed_out_message(&shell_join(argv), after)),
        start_unix_ns: Some(run.start_unix_ns),
        end_unix_ns: Some(run.end_unix_ns),
        rusage: RawJson::from_value(&serde_json::json!({
            "voluntary_csw": run.voluntary_csw,
            "involuntary_csw": run.involuntary_csw,
            "user_us": run.user_us,
            "sys_us": run.sys_us,
            "max_rss_kib": run.max_rss_kib,
        })),
        values,
        ..command_run_key(argv, run_index, warmup, pinned_cpus)
    }
}

/// The stored form of a command run that did not happen because a hook failed: a failed
/// run of the command, with the hook's exit status and message. Never a warm-up, even
/// before one: show and compare count it among the failed attempts they report.
pub fn stored_command_failure(
    argv: &[String],
    failure: &HookFailure,
    run_index: u32,
    pinned_cpus: Option<String>,
) -> StoredRun {
    StoredRun {
        exit_status: Some(failure.exit_status),
        error: Some(failure.message.clone()),
        ..command_run_key(argv, run_index, false, pinned_cpus)
    }
}

/// What every stored run of a command shares: workload `command`, the command as its
/// parameter, variant `exec`.
fn command_run_key(
    argv: &[String],
    run_index: u32,
    warmup: bool,
    pinned_cpus: Option<String>,
) -> StoredRun {
    StoredRun {
        workload: kbench_record::WorkloadId::Command.key().into(),
        params: BTreeMap::from([(
            "command".to_string(),
            serde_json::Value::from(shell_join(argv)),
        )]),
        variant: "exec".into(),
        run_index,
        warmup,
        pinned_cpus,
        ..StoredRun::default()
    }
}

/// Words joined so that a shell would split them back the same way.
pub fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A command that cannot start is refused before a session is stored for it: a path
/// must be an executable file, a bare name one found in $PATH.
pub fn check_runnable(program: &str) -> Result<(), crate::RunnerError> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &std::path::Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = if program.contains('/') {
        executable(std::path::Path::new(program))
    } else {
        std::env::var_os("PATH").is_some_and(|paths| {
            std::env::split_paths(&paths).any(|dir| executable(&dir.join(program)))
        })
    };
    if found {
        Ok(())
    } else {
        Err(crate::RunnerError::Usage(format!(
            "cannot run '{program}': no such executable"
        )))
    }
}
