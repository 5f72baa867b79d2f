//! kbench as the initramfs `/init` of a booted kernel (`kbench vm-ab`, a board).
//!
//! As PID 1 it mounts what a run needs, reads what to run from the kernel command line
//! (`kbench.session=NONCE kbench.suite="pipe:-l 2000;ipi" kbench.runs=N kbench.warmup=N
//! kbench.quick`), sets the cpufreq governor to performance where there is one, runs
//! the suite as `kbench run` does (each run a fresh child), and reports as framed lines
//! (`kbench-console`): BEGIN with the session, its environment and the planned runs
//! before the first run, one RECORD after each run (between runs, never during one),
//! END with its uptimes. The lines go to the host's virtio-serial port when the kernel
//! has one, else to the console. It then syncs and powers off. It never returns: PID 1 exiting
//! panics the kernel, so an error becomes an ERROR record before the power-off.
use kbench_console::payload::{Begin, BeginUptimes, CallCosts, End, EndUptimes, Outgoing};
use kbench_console::Emitter;
use kbench_runner::{Plan, StopPolicy, WorkloadSpec};
use std::io::Write;
use std::time::Duration;

/// The defaults of a boot: small enough for a TCG guest.
pub const DEFAULT_RUNS: u32 = 5;
pub const DEFAULT_SUITE: &str = "pipe:-l 2000 --placement same-cpu";
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// The guest's command line, as its sessions keep it.
fn command_line() -> String {
    let args: Vec<String> = std::iter::once("kbench".to_string())
        .chain(std::env::args().skip(1))
        .collect();
    kbench_runner::child::shell_join(&args)
}

/// What the kernel command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct BootRequest {
    pub nonce: String,
    pub suite: Vec<String>,
    pub runs: u32,
    pub warmup: u32,
}

/// The `kbench.*` words of a kernel command line; values may be double-quoted to hold
/// spaces, as the kernel allows.
pub fn parse_cmdline(cmdline: &str) -> Result<BootRequest, String> {
    let mut request = BootRequest {
        nonce: String::new(),
        suite: Vec::new(),
        runs: DEFAULT_RUNS,
        warmup: 1,
    };
    let mut quick = false;
    for (key, value) in cmdline_words(cmdline) {
        let number = |v: &str| {
            v.parse::<u32>()
                .map_err(|_| format!("{key}={v}: not a number"))
        };
        match key.as_str() {
            "kbench.session" => request.nonce = value,
            "kbench.suite" => {
                request.suite = value
                    .split(';')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            }
            "kbench.runs" => request.runs = number(&value)?,
            "kbench.warmup" => request.warmup = number(&value)?,
            "kbench.quick" => quick = true,
            _ => {}
        }
    }
    if request.nonce.is_empty() {
        return Err("no kbench.session=NONCE on the kernel command line".into());
    }
    if request.suite.is_empty() {
        request.suite = if quick {
            kbench_runner::suites::QUICK_SUITE
                .iter()
                .map(|s| s.to_string())
                .collect()
        } else {
            vec![DEFAULT_SUITE.to_string()]
        };
    }
    Ok(request)
}

/// `key=value` words of a command line, as the kernel reads them (a `"..."` value kept
/// whole); a bare `key` with an empty value.
fn cmdline_words(cmdline: &str) -> Vec<(String, String)> {
    kbench_sys::cmdline::params(cmdline)
        .map(|p| (p.name.to_string(), p.value.unwrap_or("").to_string()))
        .collect()
}

/// Runs as PID 1 and never returns.
pub fn run_as_init() -> ! {
    let mut reporter = Reporter::open();
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| boot_and_run(&mut reporter)));
    let error = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("{e:#}")),
        Err(_) => Some("kbench panicked as /init".to_string()),
    };
    if let Some(message) = error {
        reporter.send(Outgoing::Error(&message));
        reporter.send(Outgoing::End(None));
    }
    power_off()
}

fn read_nonce() -> Option<String> {
    let cmdline = std::fs::read_to_string("/proc/cmdline").ok()?;
    parse_cmdline(&cmdline).ok().map(|r| r.nonce)
}

/// BEGIN (the boot, its environment and the plan) before the first run, one RECORD
/// after each run, END with the uptimes after the last.
fn boot_and_run(reporter: &mut Reporter) -> anyhow::Result<()> {
    mount_filesystems();
    let init_started = uptime_s();
    quiet_standard_streams();
    // A board's LAVA job waits for this on the console before it watches for records.
    reporter.write_lines(&[kbench_console::READY_LINE.to_string()]);
    let release = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    let mut problems = load_modules(&release);
    problems.extend(bring_up_loopback().err());
    reporter.write_lines(&problems);
    reporter.prefer_virtio_port();
    let cmdline = std::fs::read_to_string("/proc/cmdline")?;
    let request = parse_cmdline(&cmdline).map_err(anyhow::Error::msg)?;
    reporter.start(&request.nonce);
    let governor = set_performance_governor();
    let plan = plan(&request)?;
    let mut session =
        kbench_runner::session::new_session("guest", "boot", Some(0), &command_line());
    session.command_line = cmdline.trim().to_string();
    let begin = Begin {
        version: Some(kbench_console::VERSION),
        kernel_release: Some(release),
        proc_version: Some(
            std::fs::read_to_string("/proc/version")
                .unwrap_or_default()
                .trim()
                .to_string(),
        ),
        governor: Some(governor),
        channel: Some(reporter.channel_name().to_string()),
        planned_runs: Some(planned_runs(&request)),
        call_cost_ns: Some(call_costs_ns()),
        // Only a kernel built with IKCONFIG has /proc/config.gz; its hash is the one
        // the store keys configs by, so it can be matched to a config given later.
        kernel_config_sha256: kbench_sys::kconfig::read_running(&kbench_sys::Sysroot::host())
            .map(|c| kbench_record::export::config_hash(&c.text)),
        uptime_s: Some(BeginUptimes { init: init_started }),
        session: Some(session),
    };
    reporter.send(Outgoing::Begin(&begin));
    let suite_started = uptime_s();
    // Each run goes out as it finishes: a boot that dies mid-suite has said how far
    // it got.
    let mut report_run = |_arm: usize, run: kbench_record::StoredRun| {
        reporter.send(Outgoing::Record(&run));
        Ok(())
    };
    kbench_runner::run_suite(&plan, &mut report_run)?;
    let suite_ended = uptime_s();
    // Seconds since the kernel started: kbench's own cost per boot is the time from
    // /init to the first run and from the last run to here.
    let end = End {
        uptime_s: Some(EndUptimes {
            init: init_started,
            suite_start: suite_started,
            suite_end: suite_ended,
            results: uptime_s(),
        }),
    };
    reporter.send(Outgoing::End(Some(&end)));
    Ok(())
}

/// How long a disk may take to appear once its driver is loaded: drivers probe
/// their devices asynchronously.
const DISK_PROBE_WAIT: Duration = Duration::from_secs(5);
/// vm-ab's scratch disk, the first virtio-blk disk.
const SCRATCH_DISK: &str = "/dev/vda";

/// Loads the modules the initramfs holds for this kernel (vm-ab's scratch disk's
/// driver and its transport), in their numbered order, then waits for the disk. A
/// module that is built in (EEXIST) is fine; one that fails is said on the console,
/// one line each, and the suite runs without it (a blkio run then fails and says why).
fn load_modules(release: &str) -> Vec<String> {
    let dir = std::path::Path::new("/")
        .join(crate::modules::INITRAMFS_DIR)
        .join(release);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<std::path::PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let loaded = std::fs::File::open(file)
            .map_err(|e| rustix::io::Errno::from_io_error(&e).unwrap_or(rustix::io::Errno::IO))
            .and_then(|f| rustix::system::finit_module(&f, c"", 0));
        match loaded {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => problems.push(format!("kbench: loading {}: {e}", file.display())),
        }
    }
    let started = std::time::Instant::now();
    while !files.is_empty()
        && !std::path::Path::new(SCRATCH_DISK).exists()
        && started.elapsed() < DISK_PROBE_WAIT
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    problems
}

/// Sets the loopback interface up, as an init system would: netrr talks over it, and
/// a kernel leaves it down until told.
fn bring_up_loopback() -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let socket = rustix::net::socket(
        rustix::net::AddressFamily::INET,
        rustix::net::SocketType::DGRAM,
        None,
    )
    .map_err(|e| format!("kbench: a socket to set lo up: {e}"))?;
    // SAFETY: ifreq is plain data; zeroed it names no interface and holds no flags.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    let fd = socket.as_raw_fd();
    // SAFETY: SIOCGIFFLAGS reads the name from and writes the flags into `request`, a
    // live ifreq; `fd` is the open socket above.
    if unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut request) } < 0 {
        return Err(format!("kbench: lo: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    unsafe { request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    // SAFETY: as above; SIOCSIFFLAGS only reads `request`.
    if unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &request) } < 0 {
        return Err(format!(
            "kbench: setting lo up: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// What the workloads' own probes cost per call in this guest: getcpu, with which
/// tasks sample where they run (a vDSO call on x86, a real syscall on arm64), and the
/// clock read around every timed section. The median of five batches.
fn call_costs_ns() -> CallCosts {
    fn per_call_ns(mut f: impl FnMut()) -> f64 {
        const CALLS: u32 = 2000;
        let mut batches: Vec<f64> = (0..5)
            .map(|_| {
                let started = std::time::Instant::now();
                for _ in 0..CALLS {
                    f();
                }
                started.elapsed().as_nanos() as f64 / f64::from(CALLS)
            })
            .collect();
        batches.sort_by(f64::total_cmp);
        (batches[2] * 10.0).round() / 10.0
    }
    CallCosts {
        getcpu: per_call_ns(|| {
            std::hint::black_box(rustix::thread::sched_getcpu());
        }),
        clock_monotonic: per_call_ns(|| {
            std::hint::black_box(std::time::Instant::now());
        }),
    }
}

/// The runs the suite makes if none fails: warm-ups included, as each is reported.
fn planned_runs(request: &BootRequest) -> u64 {
    request.suite.len() as u64 * (u64::from(request.runs.max(1)) + u64::from(request.warmup))
}

fn plan(request: &BootRequest) -> anyhow::Result<Plan> {
    let specs = request
        .suite
        .iter()
        .map(|s| WorkloadSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    Ok(Plan {
        specs,
        stopping: StopPolicy::Runs(request.runs.max(1)),
        warmup: request.warmup,
        cpus: None,
        seed: u64::from(std::process::id()) ^ kbench_workloads::measure::unix_now_ns(),
        run_timeout: RUN_TIMEOUT,
    })
}

/// Seconds since boot (`/proc/uptime`), when it can be read.
fn uptime_s() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/uptime").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The kernel gives /init the console as stdout and stderr: a progress bar or a
/// message there would slow an emulated UART and mix with the framed lines, which go
/// through [`Reporter`] alone.
fn quiet_standard_streams() {
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = rustix::stdio::dup2_stdout(&null);
        let _ = rustix::stdio::dup2_stderr(&null);
    }
}

/// proc, sysfs, devtmpfs, cgroup2 and tmpfs; one already there (a devtmpfs the kernel
/// mounted) is left as it is.
fn mount_filesystems() {
    use rustix::mount::{mount, MountFlags};
    for (source, target, fstype) in [
        ("proc", "/proc", "proc"),
        ("sysfs", "/sys", "sysfs"),
        ("devtmpfs", "/dev", "devtmpfs"),
        ("tmpfs", "/tmp", "tmpfs"),
        ("tmpfs", "/run", "tmpfs"),
        ("cgroup2", "/sys/fs/cgroup", "cgroup2"),
    ] {
        let _ = std::fs::create_dir_all(target);
        let _ = mount(source, target, fstype, MountFlags::empty(), None);
    }
}

/// Sets every CPU's governor to performance where cpufreq exists; what was set, for the
/// record (`none` without cpufreq, as in most guests).
fn set_performance_governor() -> String {
    let Ok(entries) = std::fs::read_dir("/sys/devices/system/cpu") else {
        return "none".into();
    };
    let mut set = 0;
    for entry in entries.flatten() {
        let path = entry.path().join("cpufreq/scaling_governor");
        if path.exists() && std::fs::write(&path, "performance").is_ok() {
            set += 1;
        }
    }
    if set == 0 {
        "none".into()
    } else {
        format!("performance on {set} CPUs")
    }
}

use kbench_console::RESULTS_PORT;

/// Where the framed lines go: the host's virtio-serial port when the kernel has the
/// driver built in (no printk is ever mixed into it), else /dev/console (ttyS0,
/// ttyAMA0, hvc0), which every boot has.
struct Reporter {
    out: Option<std::fs::File>,
    channel: String,
    emitter: Option<Emitter>,
}

impl Reporter {
    fn open() -> Reporter {
        Reporter {
            out: std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/console")
                .ok(),
            channel: "console".into(),
            emitter: None,
        }
    }

    /// Switches to the results port, if this kernel shows one (sysfs is mounted).
    fn prefer_virtio_port(&mut self) {
        let Some(device) = virtio_port_named(std::path::Path::new("/sys"), RESULTS_PORT) else {
            return;
        };
        let path = std::path::Path::new("/dev").join(&device);
        if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&path) {
            self.out = Some(file);
            self.channel = format!("virtio-serial {RESULTS_PORT} ({})", path.display());
        }
    }

    fn channel_name(&self) -> &str {
        &self.channel
    }

    fn start(&mut self, nonce: &str) {
        self.emitter = Some(Emitter::new(nonce));
    }

    /// One message: an error before the command line was read goes out under the
    /// nonce read again, or `unknown`, which the host shows as another boot's. A
    /// message that cannot be serialised goes out as the error saying so.
    fn send(&mut self, message: Outgoing<'_>) {
        let emitter = self
            .emitter
            .get_or_insert_with(|| Emitter::new(&read_nonce().unwrap_or_else(|| "unknown".into())));
        let lines = match message.payload() {
            Ok(payload) => emitter.lines(message.kind(), &payload),
            Err(e) => emitter.lines(kbench_console::Kind::Error, e.to_string().as_bytes()),
        };
        self.write_lines(&lines);
    }

    /// Writes lines and waits for them to leave: output just before a power-off is
    /// otherwise lost.
    fn write_lines(&mut self, lines: &[String]) {
        let Some(file) = self.out.as_mut() else {
            return;
        };
        for line in lines {
            let mut bytes = Vec::with_capacity(line.len() + 2);
            bytes.extend_from_slice(line.as_bytes());
            bytes.extend_from_slice(b"\r\n");
            // One write per line, so that printk is less likely to land inside it.
            let _ = file.write_all(&bytes);
        }
        let _ = file.flush();
        let _ = rustix::termios::tcdrain(&*file);
        let _ = file.sync_all();
    }
}

/// The /dev name (`vport0p1`) of the virtio-serial port called `name`, from
/// `<sys>/class/virtio-ports/*/name`.
fn virtio_port_named(sys: &std::path::Path, name: &str) -> Option<String> {
    let ports = std::fs::read_dir(sys.join("class/virtio-ports")).ok()?;
    ports.flatten().find_map(|entry| {
        let port_name = std::fs::read_to_string(entry.path().join("name")).ok()?;
        (port_name.trim() == name).then(|| entry.file_name().to_string_lossy().into_owned())
    })
}

fn power_off() -> ! {
    rustix::fs::sync();
    loop {
        let _ = rustix::system::reboot(rustix::system::RebootCommand::PowerOff);
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_says_what_to_run() {
        let r = parse_cmdline(
            "console=ttyS0 quiet panic=-1 kbench.session=ab12 kbench.suite=\"pipe:-l 2000;messaging:-g 1 -l 5\" kbench.runs=3",
        )
        .unwrap();
        assert_eq!(r.nonce, "ab12");
        assert_eq!(r.suite, ["pipe:-l 2000", "messaging:-g 1 -l 5"]);
        assert_eq!((r.runs, r.warmup), (3, 1));
        assert!(parse_cmdline("quiet")
            .unwrap_err()
            .contains("kbench.session"));
        assert!(parse_cmdline("kbench.session=x kbench.runs=many").is_err());
        let quick = parse_cmdline("kbench.session=x kbench.quick").unwrap();
        assert!(quick.suite.len() > 1);
    }

    #[test]
    fn the_command_line_is_split_as_the_kernel_splits_it() {
        // The words after init's `--` are this /init's too.
        let r = parse_cmdline("quiet -- kbench.session=x kbench.runs=2").unwrap();
        assert_eq!((r.nonce.as_str(), r.runs), ("x", 2));
        // A whole word quoted, as the kernel takes it.
        let r = parse_cmdline("\"kbench.session=x\" \"kbench.suite=pipe:-l 5\"").unwrap();
        assert_eq!(r.suite, ["pipe:-l 5"]);
        // A quote inside a value stays, as the kernel leaves it (it was dropped here
        // before, where the kernel's own parameters kept it).
        let r = parse_cmdline("kbench.session=x kbench.suite=pipe:\"-l 5\"").unwrap();
        assert_eq!(r.suite, ["pipe:\"-l 5\""]);
    }

    #[test]
    fn the_results_port_is_found_by_name() {
        let sys = tempfile::tempdir().unwrap();
        for (dev, name) in [
            ("vport0p0", "org.qemu.guest_agent.0"),
            ("vport0p1", RESULTS_PORT),
        ] {
            let dir = sys.path().join("class/virtio-ports").join(dev);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("name"), format!("{name}\n")).unwrap();
        }
        assert_eq!(
            virtio_port_named(sys.path(), RESULTS_PORT).as_deref(),
            Some("vport0p1")
        );
        assert_eq!(virtio_port_named(sys.path(), "org.other"), None);
        assert_eq!(
            virtio_port_named(&sys.path().join("absent"), RESULTS_PORT),
            None
        );
    }
}
