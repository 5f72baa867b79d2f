//! `kbench vm-ab --kernel-a IMG --kernel-b IMG --boots N`: two kernels booted
//! alternately (ABBA) under qemu with kbench as the initramfs /init, each boot one
//! session, then the verdict with boots as the units.
use crate::error::usage;
use crate::guest::RESULTS_PORT;
use crate::session::{self, DbArgs};
use kbench_boot::deb::{kernel_from_path, Arch, KernelImage};
use kbench_store::{NewSession, Store, StoredRun};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct VmAbArgs {
    /// Kernel A: a bzImage, or a Debian linux-image-*.deb.
    #[arg(long, value_name = "IMG")]
    pub kernel_a: PathBuf,
    /// Kernel B, likewise.
    #[arg(long, value_name = "IMG")]
    pub kernel_b: PathBuf,
    /// Label of kernel A's boots [default: vm-<release>].
    #[arg(long)]
    pub label_a: Option<String>,
    /// Label of kernel B's boots [default: vm-<release>].
    #[arg(long)]
    pub label_b: Option<String>,
    /// Boots per kernel, in ABBA order (at most 1000).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub boots: u32,
    #[command(flatten)]
    pub guest: crate::guest::SuiteArgs,
    /// KVM, TCG, or KVM when this machine can run a guest with it.
    #[arg(long, default_value = "auto", value_parser = ["auto", "kvm", "tcg"])]
    pub accel: String,
    /// Virtual CPUs.
    #[arg(long, default_value_t = 2)]
    pub smp: u32,
    /// qemu's CPU model (`cortex-a53`, `cortex-a72`, `Skylake-Client`) [default: `host`
    /// under KVM, else `max`].
    #[arg(long, value_name = "MODEL")]
    pub cpu: Option<String>,
    /// Guest memory, MiB.
    #[arg(long, default_value_t = 1024)]
    pub mem: u32,
    /// An extra word for the kernel command line (repeatable).
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    pub kernel_arg: Vec<String>,
    /// An extra qemu argument (repeatable).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub qemu_arg: Vec<String>,
    /// The kbench to boot as /init: a static build (scripts/build-static.sh) [default:
    /// this one, if it is static].
    #[arg(long, value_name = "PATH")]
    pub init: Option<PathBuf>,
    /// The qemu binary [default: qemu-system-x86_64 or qemu-system-aarch64, as the
    /// kernels are].
    #[arg(long)]
    pub qemu: Option<String>,
    /// Pin vCPU i to the i-th host CPU of LIST (cyclically), through QMP.
    #[arg(long, value_name = "LIST")]
    pub pin_vcpus: Option<String>,
    /// A boot with no BEGIN from kbench after this many seconds is stopped and
    /// recorded as failed (the kernel or /init never came up).
    #[arg(long = "begin-timeout", value_name = "SECS", default_value_t = 300)]
    pub begin_timeout_s: u64,
    /// A boot with no END after this many seconds is stopped and recorded as failed.
    #[arg(long = "boot-timeout", value_name = "SECS", default_value_t = 900)]
    pub boot_timeout_s: u64,
    /// A guest that has sent END but not powered off after this many seconds is
    /// stopped; its results are kept.
    #[arg(long = "exit-timeout", value_name = "SECS", default_value_t = 60)]
    pub exit_timeout_s: u64,
    /// Print the qemu commands and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub verdict: crate::verdict::VerdictArgs,
    /// Output format of the verdict.
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json", "csv"])]
    pub format: String,
    #[command(flatten)]
    pub db: DbArgs,
}

/// The notice a TCG run carries, in the output and in its sessions.
const TCG_NOTICE: &str = "qemu ran under TCG (emulation): its timings measure the emulator, not the kernel; use the verdicts to check that both kernels work, not which is faster";

/// One kernel of the A/B, ready to boot.
struct Side {
    label: String,
    image: KernelImage,
    arch: Arch,
    kernel_path: PathBuf,
}

/// Where one boot's output goes.
struct BootFiles {
    /// The serial console: printk, and the results when the guest has no virtio port.
    console: PathBuf,
    /// The virtio-serial results port.
    results: PathBuf,
    /// qemu's QMP socket, when vCPUs are pinned.
    qmp: Option<PathBuf>,
}

impl BootFiles {
    fn in_dir(dir: &Path, boot: u32, pinning: bool) -> BootFiles {
        BootFiles {
            console: dir.join(format!("boot{boot}.console")),
            results: dir.join(format!("boot{boot}.results")),
            qmp: pinning.then(|| dir.join(format!("boot{boot}.qmp"))),
        }
    }

    /// Both channels as one log: the framed lines are found wherever they are, and a
    /// panic on the console explains results that stop early.
    fn read_log(&self) -> String {
        let read =
            |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
        let results = read(&self.results);
        let console = read(&self.console);
        if results.is_empty() {
            console
        } else {
            format!("{console}\n{RESULTS_HEADER}\n{results}")
        }
    }
}

/// Where the virtio port's lines start in a stored log.
const RESULTS_HEADER: &str = "=== kbench: virtio-serial port org.kbench.results ===";

/// The deadlines of one boot.
#[derive(Debug, Clone, Copy)]
struct Deadlines {
    begin: Duration,
    end: Duration,
    exit: Duration,
}

/// How qemu ended, as the host saw it.
#[derive(Debug, Default)]
struct BootRun {
    /// Why the host gave up on the boot, or qemu died: the boot failed.
    failure: Option<String>,
    /// Said of the boot without failing it (a guest that did not power off).
    notes: Vec<String>,
    pins: Vec<crate::qmp::VcpuPin>,
}

pub fn run(args: VmAbArgs) -> anyhow::Result<i32> {
    // The suite's words are checked before anything boots.
    args.guest.kernel_words()?;
    if [
        args.begin_timeout_s,
        args.boot_timeout_s,
        args.exit_timeout_s,
    ]
    .contains(&0)
    {
        return usage("--begin-timeout, --boot-timeout and --exit-timeout must be at least 1 s");
    }
    let options = args.verdict.options()?;
    let work = tempfile::tempdir()?;
    let sides = [
        side(&args.kernel_a, args.label_a.as_deref(), work.path(), "a")?,
        side(&args.kernel_b, args.label_b.as_deref(), work.path(), "b")?,
    ];
    if sides[0].label == sides[1].label {
        return usage("the two kernels need different labels (--label-a, --label-b)");
    }
    if sides[0].arch != sides[1].arch {
        return usage(format!(
            "kernel A is {} and kernel B {}: an A/B boots one machine",
            sides[0].arch.as_str(),
            sides[1].arch.as_str()
        ));
    }
    let pins = match &args.pin_vcpus {
        Some(list) => Some(crate::qmp::parse_pin_list(list).or_else(usage)?),
        None => None,
    };
    let initrd = work.path().join("initramfs.cpio.gz");
    std::fs::write(&initrd, initramfs(args.init.as_deref())?)?;
    if args.dry_run {
        let accel = accel_without_probe(&args.accel, sides[0].arch);
        if args.accel == "auto" && accel == "kvm" {
            errln!("kbench: --accel auto first boots kernel A under KVM to its early panic, and uses TCG if that fails; these commands assume it works");
        }
        for (boot, s) in order(args.boots) {
            let files = BootFiles::in_dir(Path::new("."), boot, pins.is_some());
            let cmd = qemu_command(
                &args,
                &accel,
                &sides[s],
                &initrd,
                &format!("DRYRUN{boot}"),
                &files,
            )?;
            outln!("{}", shell_words(&cmd));
        }
        return Ok(0);
    }
    let choice = choose_accel(&args, &sides[0], work.path())?;
    errln!("kbench: {}", choice.reason);
    let accel = choice.accel.clone();
    if accel == "tcg" {
        errln!("kbench: {TCG_NOTICE}");
    }
    let deadlines = Deadlines {
        begin: Duration::from_secs(args.begin_timeout_s),
        end: Duration::from_secs(args.boot_timeout_s),
        exit: Duration::from_secs(args.exit_timeout_s),
    };
    let mut store = args.db.open()?;
    let mut failed = 0;
    for (boot, s) in order(args.boots) {
        let nonce = nonce(boot);
        let files = BootFiles::in_dir(work.path(), boot, pins.is_some());
        let cmd = qemu_command(&args, &accel, &sides[s], &initrd, &nonce, &files)?;
        errln!(
            "kbench: boot {} of {} ({})",
            boot + 1,
            2 * args.boots,
            sides[s].label
        );
        let qemu_started = Instant::now();
        let run = boot_once(cmd, &files, &nonce, deadlines, pins.as_deref())?;
        let qemu_wall_s = qemu_started.elapsed().as_secs_f64();
        for note in &run.notes {
            errln!("kbench: boot {}: {note}", boot + 1);
        }
        errln!(
            "kbench: boot {}: qemu ran {qemu_wall_s:.1} s, start to exit",
            boot + 1
        );
        let target = BootTarget {
            label: &sides[s].label,
            expected_release: &sides[s].image.release,
            accel: Some(&accel),
            kind: "vm-ab",
            shared_log: false,
            kernel_config: sides[s].image.config.as_deref(),
        };
        let host = HostView {
            failure: run.failure,
            vcpu_pins: (!run.pins.is_empty()).then(|| serde_json::json!(run.pins)),
            accel_reason: Some(choice.reason.clone()),
            qemu_wall_s: Some(qemu_wall_s),
        };
        if !store_boot(&mut store, &target, &nonce, &files.read_log(), &host)? {
            failed += 1;
        }
    }
    let report = kbench_analysis::compare_labels(&store, &sides[0].label, &sides[1].label, options)
        .map_err(crate::analysis_error)?;
    if args.format == "text" && accel == "tcg" {
        outln!("{TCG_NOTICE}\n");
    }
    crate::verdict::print_reports(
        std::slice::from_ref(&report),
        &args.format,
        kbench_report::compare::Layout::Compact,
    )?;
    Ok(i32::from(failed > 0))
}

/// A kernel image read, written where qemu can load it, and labelled.
fn side(path: &Path, label: Option<&str>, work: &Path, name: &str) -> anyhow::Result<Side> {
    let image = kernel_from_path(path).or_else(|e| usage(format!("{}: {e}", path.display())))?;
    let label = match label {
        Some(l) => l.to_string(),
        None if !image.release.is_empty() => format!("vm-{}", image.release),
        None => format!("vm-{name}"),
    };
    session::check_label(&label)?;
    let Some(arch) = image.arch() else {
        return usage(format!(
            "{}: neither an x86 bzImage nor an arm64 Image",
            path.display()
        ));
    };
    let kernel_path = work.join(format!("vmlinuz-{name}"));
    std::fs::write(&kernel_path, &image.kernel)?;
    Ok(Side {
        label,
        image,
        arch,
        kernel_path,
    })
}

/// `init` (else this kbench) as /init; a dynamically linked one could not start there.
fn initramfs(init: Option<&Path>) -> anyhow::Result<Vec<u8>> {
    let (path, exe) = crate::cmd::initramfs::init_binary(init)?;
    if kbench_boot::elf::needs_interpreter(&exe) != Some(false) {
        return usage(format!(
            "{} is not a static executable, so it cannot run as /init: build one with scripts/build-static.sh and pass it as --init",
            path.display()
        ));
    }
    Ok(kbench_boot::initramfs::Initramfs::with_init(exe).to_gzip())
}

/// How long kernel A may take under KVM to reach its early panic before `--accel auto`
/// decides this machine's KVM cannot run it: a working KVM gets there in about a
/// second, TCG in three or four.
const KVM_PROBE_DEADLINE: Duration = Duration::from_secs(10);

/// The accelerator, and why.
struct AccelChoice {
    accel: String,
    reason: String,
}

/// `kvm` or `tcg` as asked; for `auto`, KVM when kernel A boots under it. A /dev/kvm
/// that answers is not enough: a nested KVM can create a VM whose kernel then never
/// prints a line (this project's CI machines), so the probe is a boot of the kernel
/// itself, without an initramfs, to the panic it reaches when it finds no root.
fn choose_accel(args: &VmAbArgs, side: &Side, work: &Path) -> anyhow::Result<AccelChoice> {
    let asked = |accel: &str| AccelChoice {
        accel: accel.to_string(),
        reason: format!("--accel {accel}, as asked"),
    };
    match args.accel.as_str() {
        "auto" => {}
        other => return Ok(asked(other)),
    }
    let tcg = |why: String| AccelChoice {
        accel: "tcg".into(),
        reason: format!("--accel auto: {why}, so TCG"),
    };
    if !runs_natively(side.arch) {
        return Ok(tcg(format!(
            "the kernels are {} and this machine {}",
            side.arch.as_str(),
            std::env::consts::ARCH
        )));
    }
    if !Path::new("/dev/kvm").exists() {
        return Ok(tcg("no /dev/kvm".into()));
    }
    let log = work.join("kvm-probe.console");
    let (default_qemu, machine) = machine_args(side.arch, "kvm", args.cpu.as_deref());
    let mut cmd = Command::new(args.qemu.as_deref().unwrap_or(default_qemu));
    cmd.args(["-accel", "kvm"])
        .args(machine)
        .args([
            "-smp", "1", "-m", "256", "-display", "none", "-monitor", "none",
        ])
        .args(["-no-reboot", "-serial"])
        .arg(format!("file:{}", log.display()))
        .arg("-kernel")
        .arg(&side.kernel_path)
        .arg("-append")
        .arg(format!("{} panic=-1", console_arg(side.arch)))
        .args(&args.qemu_arg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = spawn_dying_with_kbench(&mut cmd)?;
    let exited = crate::runner::child::wait_with_timeout(&mut child, KVM_PROBE_DEADLINE)?;
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
    let panicked = !kbench_console::parse(&text, "").panics.is_empty();
    Ok(match exited {
        Some(_) if panicked => AccelChoice {
            accel: "kvm".into(),
            reason: format!(
                "--accel auto: KVM booted kernel A to its early panic in {:.1} s, so KVM",
                started.elapsed().as_secs_f64()
            ),
        },
        Some(status) => tcg(format!(
            "qemu under KVM exited ({status}) before kernel A reached its early panic"
        )),
        None => tcg(format!(
            "kernel A did not reach its early panic under KVM within {} s",
            KVM_PROBE_DEADLINE.as_secs()
        )),
    })
}

/// Whether KVM could run a kernel of `arch` here at all.
fn runs_natively(arch: Arch) -> bool {
    matches!(
        (arch, std::env::consts::ARCH),
        (Arch::X86_64, "x86_64") | (Arch::Arm64, "aarch64")
    )
}

/// What `--dry-run` shows for `auto`, which runs no probe.
fn accel_without_probe(asked: &str, arch: Arch) -> String {
    match asked {
        "auto" if runs_natively(arch) && Path::new("/dev/kvm").exists() => "kvm".into(),
        "auto" => "tcg".into(),
        other => other.into(),
    }
}

/// (boot number, side) in ABBA order: A B, B A, A B, ...
fn order(boots: u32) -> Vec<(u32, usize)> {
    kbench_console::lava::abba(boots)
        .into_iter()
        .enumerate()
        .map(|(i, side)| (i as u32, usize::from(side == kbench_console::lava::Side::B)))
        .collect()
}

/// A nonce no other boot shares: the log must prove it is of this boot.
fn nonce(boot: u32) -> String {
    format!(
        "{:x}{:x}b{boot}",
        session::unix_now_ns(),
        std::process::id()
    )
}

fn console_arg(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "console=ttyS0",
        Arch::Arm64 => "console=ttyAMA0",
    }
}

fn kernel_cmdline(args: &VmAbArgs, arch: Arch, nonce: &str) -> anyhow::Result<String> {
    let mut cmdline = format!(
        "{} quiet panic=-1 kbench.session={nonce}",
        console_arg(arch)
    );
    for word in args.guest.kernel_words()? {
        cmdline.push(' ');
        cmdline.push_str(&word);
    }
    for word in &args.kernel_arg {
        cmdline.push(' ');
        cmdline.push_str(word);
    }
    Ok(cmdline)
}

/// The qemu binary and machine of an architecture, and its CPU: `cpu`, else under KVM
/// the host's, else the most capable one TCG emulates.
fn machine_args<'a>(arch: Arch, accel: &str, cpu: Option<&'a str>) -> (&'static str, Vec<&'a str>) {
    let kvm = accel == "kvm";
    let cpu = cpu.unwrap_or(if kvm { "host" } else { "max" });
    match arch {
        Arch::X86_64 => ("qemu-system-x86_64", vec!["-cpu", cpu]),
        Arch::Arm64 => (
            "qemu-system-aarch64",
            vec![
                "-M",
                if kvm { "virt,gic-version=host" } else { "virt" },
                "-cpu",
                cpu,
            ],
        ),
    }
}

fn qemu_command(
    args: &VmAbArgs,
    accel: &str,
    side: &Side,
    initrd: &Path,
    nonce: &str,
    files: &BootFiles,
) -> anyhow::Result<Command> {
    let (default_qemu, machine) = machine_args(side.arch, accel, args.cpu.as_deref());
    let mut cmd = Command::new(args.qemu.as_deref().unwrap_or(default_qemu));
    cmd.args(["-accel", accel])
        .args(machine)
        .args(["-smp", &args.smp.to_string(), "-m", &args.mem.to_string()])
        .args(["-display", "none", "-monitor", "none", "-no-reboot"])
        .arg("-serial")
        .arg(format!("file:{}", files.console.display()))
        // The results port: a kernel with virtio-serial built in writes there, away
        // from printk; one without it ignores the device and uses the console.
        .args(["-device", "virtio-serial,id=kbench-serial"])
        .arg("-chardev")
        .arg(format!(
            "file,id=kbench-results,path={}",
            files.results.display()
        ))
        .arg("-device")
        .arg(format!(
            "virtserialport,bus=kbench-serial.0,chardev=kbench-results,name={RESULTS_PORT}"
        ));
    if let Some(qmp) = &files.qmp {
        cmd.arg("-qmp")
            .arg(format!("unix:{},server=on,wait=off", qmp.display()));
    }
    cmd.arg("-kernel")
        .arg(&side.kernel_path)
        .arg("-initrd")
        .arg(initrd)
        .arg("-append")
        .arg(kernel_cmdline(args, side.arch, nonce)?)
        .args(&args.qemu_arg);
    Ok(cmd)
}

fn shell_words(cmd: &Command) -> String {
    let words: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    crate::runner::child::shell_join(&words)
}

/// Starts qemu so that it dies with kbench, pins its vCPUs if asked, and watches the
/// boot's output until qemu exits or a deadline passes: no BEGIN, no END, or no exit
/// after END.
fn boot_once(
    mut cmd: Command,
    files: &BootFiles,
    nonce: &str,
    deadlines: Deadlines,
    pins: Option<&[u32]>,
) -> anyhow::Result<BootRun> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let started = Instant::now();
    let mut child = spawn_dying_with_kbench(&mut cmd)?;
    let mut run = BootRun::default();
    if let (Some(cpus), Some(socket)) = (pins, &files.qmp) {
        let mut qemu_gone =
            || match child.try_wait() {
                Ok(Some(status)) => Some(qemu_exit_failure(status).unwrap_or_else(|| {
                    format!("qemu exited ({status}) before its QMP socket was up")
                })),
                _ => None,
            };
        match crate::qmp::pin_vcpus(socket, cpus, Duration::from_secs(10), &mut qemu_gone) {
            Ok(done) => run.pins = done,
            Err(e) => {
                crate::runner::child::stop(&mut child);
                run.failure = Some(format!("--pin-vcpus: {e:#}"));
                return Ok(run);
            }
        }
    }
    let mut watch = Watch::default();
    loop {
        if let Some(status) = child.try_wait()? {
            run.failure = qemu_exit_failure(status);
            return Ok(run);
        }
        watch.look(files, nonce);
        let stalled = match watch.ended_at {
            Some(ended) if ended.elapsed() >= deadlines.exit => {
                run.notes.push(format!(
                    "the guest sent END but did not power off within {} s; stopped, results kept",
                    deadlines.exit.as_secs()
                ));
                None
            }
            Some(_) => {
                sleep_a_little();
                continue;
            }
            None if !watch.begun && started.elapsed() >= deadlines.begin => Some(format!(
                "no BEGIN from kbench within {} s of qemu's start",
                deadlines.begin.as_secs()
            )),
            None if started.elapsed() >= deadlines.end => Some(format!(
                "no END from kbench within {} s of qemu's start",
                deadlines.end.as_secs()
            )),
            None => {
                sleep_a_little();
                continue;
            }
        };
        crate::runner::child::stop(&mut child);
        run.failure = stalled;
        return Ok(run);
    }
}

/// Starts qemu so that the kernel kills it when kbench dies, however kbench dies.
fn spawn_dying_with_kbench(cmd: &mut Command) -> anyhow::Result<std::process::Child> {
    crate::runner::child::die_with_kbench(cmd);
    cmd.spawn().or_else(|e| {
        usage(format!(
            "cannot start {} ({e}): install qemu (qemu-system-x86, qemu-system-arm) or pass --qemu",
            cmd.get_program().to_string_lossy()
        ))
    })
}

/// How often the host looks at qemu and at the boot's output.
const WATCH_INTERVAL: Duration = Duration::from_millis(100);

fn sleep_a_little() {
    std::thread::sleep(WATCH_INTERVAL);
}

/// What the boot's output has shown so far. Each look reads only what the two files
/// gained since the last, up to their last complete line.
#[derive(Default)]
struct Watch {
    begun: bool,
    ended_at: Option<Instant>,
    read_to: [u64; 2],
}

impl Watch {
    fn look(&mut self, files: &BootFiles, nonce: &str) {
        if self.ended_at.is_some() {
            return;
        }
        for (i, path) in [&files.console, &files.results].into_iter().enumerate() {
            let fresh = read_new_lines(path, &mut self.read_to[i]);
            for kind in kbench_console::line_kinds(&fresh, nonce) {
                match kind {
                    kbench_console::Kind::Begin => self.begun = true,
                    kbench_console::Kind::End => self.ended_at = Some(Instant::now()),
                    _ => {}
                }
            }
        }
    }
}

/// The complete lines `path` gained after byte `*from`, which moves past them.
fn read_new_lines(path: &Path, from: &mut u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let mut fresh = Vec::new();
    if file.seek(SeekFrom::Start(*from)).is_err() || file.read_to_end(&mut fresh).is_err() {
        return String::new();
    }
    let complete = fresh.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    fresh.truncate(complete);
    *from += complete as u64;
    String::from_utf8_lossy(&fresh).into_owned()
}

/// A qemu that died of a signal or failed says so; a clean exit (power-off, or the
/// reboot `-no-reboot` turns into an exit after a panic) is judged by the log.
fn qemu_exit_failure(status: std::process::ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        return Some(format!("qemu was killed by signal {signal}"));
    }
    (!status.success()).then(|| format!("qemu failed ({status})"))
}

/// What the host saw of a boot beyond its log.
#[derive(Debug, Default)]
pub struct HostView {
    /// Why the host gave up on the boot, or qemu died.
    pub failure: Option<String>,
    /// The vCPU threads pinned and where, for the record.
    pub vcpu_pins: Option<serde_json::Value>,
    /// Why qemu ran under the accelerator it did (`--accel auto`'s probe).
    pub accel_reason: Option<String>,
    /// Seconds from qemu's start to its exit, as the host timed them.
    pub qemu_wall_s: Option<f64>,
}

/// Where the sessions of booted kernels are stored, and what their logs must show.
pub struct BootTarget<'a> {
    pub label: &'a str,
    /// The kernel release the boot must report; empty when unknown.
    pub expected_release: &'a str,
    /// qemu's accelerator, for a boot kbench started itself.
    pub accel: Option<&'a str>,
    /// The session kind: `vm-ab`, `console`.
    pub kind: &'a str,
    /// The log holds other boots too (a board's capture of several): their lines are
    /// no reason to refuse this one's.
    pub shared_log: bool,
    /// The booted kernel's configuration (config-* of its .deb), when known.
    pub kernel_config: Option<&'a str>,
}

/// Stores one boot: its session with the guest's environment and runs when its log is
/// intact and of this boot, else a failed session with the reason; the console log is
/// kept with it either way, all in one transaction. True when it succeeded.
pub fn store_boot(
    store: &mut Store,
    target: &BootTarget<'_>,
    nonce: &str,
    log: &str,
    host: &HostView,
) -> anyhow::Result<bool> {
    let report = GuestReport::read(log, nonce);
    let failure = report.failure(target, host);
    let mut session = boot_session(&report, target, host);
    // A failed boot (one that replayed another's output, or died) is a boot of its
    // own, and the complete log of the guest's session may come later.
    if failure.is_some() {
        session.uuid = None;
    }
    if let Some(uuid) = session.uuid.clone() {
        let stored_under = store.label_of_uuid(&uuid).map_err(session::store_error)?;
        match stored_under {
            Some(label) if label == target.label => {
                return Err(crate::error::UsageError(format!(
                    "the boot session {uuid} of {label} is stored already (the same console \
                     log twice?): storing it again would count its runs twice"
                ))
                .into());
            }
            // Under another label it is a copy: an identity of its own.
            Some(_) => session.uuid = None,
            None => {}
        }
    }
    let runs = match &failure {
        None => report.runs,
        Some(reason) => {
            errln!("kbench: boot of {} failed: {reason}", target.label);
            vec![StoredRun {
                workload: "boot".into(),
                error: Some(reason.clone()),
                exit_status: Some(1),
                ..StoredRun::default()
            }]
        }
    };
    store
        .insert_boot(&kbench_store::NewBoot {
            session: &session,
            console_log: log,
            kernel_config: target.kernel_config,
            runs: &runs,
            ended_unix_ns: session::unix_now_ns(),
        })
        .map_err(session::store_error)?;
    Ok(failure.is_none())
}

/// What one boot's log holds of kbench's messages.
struct GuestReport {
    parsed: kbench_console::Parsed,
    begin: Option<serde_json::Value>,
    end: Option<serde_json::Value>,
    runs: Vec<StoredRun>,
    guest_error: Option<String>,
}

impl GuestReport {
    fn read(log: &str, nonce: &str) -> GuestReport {
        let parsed = kbench_console::parse(log, nonce);
        let payloads = |kind: kbench_console::Kind| {
            parsed
                .messages
                .iter()
                .filter(move |m| m.kind == kind)
                .map(|m| m.payload.as_slice())
        };
        let json = |kind| {
            payloads(kind)
                .next()
                .and_then(|p| serde_json::from_slice::<serde_json::Value>(p).ok())
        };
        GuestReport {
            begin: json(kbench_console::Kind::Begin),
            end: json(kbench_console::Kind::End),
            runs: payloads(kbench_console::Kind::Record)
                .filter_map(|p| serde_json::from_slice(p).ok())
                .collect(),
            guest_error: payloads(kbench_console::Kind::Error)
                .next()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
            parsed,
        }
    }

    /// A field of BEGIN, when BEGIN arrived and has it.
    fn begin_field(&self, key: &str) -> Option<&serde_json::Value> {
        self.begin.as_ref()?.get(key).filter(|v| !v.is_null())
    }

    /// Why this boot's results cannot be used, with how far it got, if they cannot.
    fn failure(&self, target: &BootTarget<'_>, host: &HostView) -> Option<String> {
        let foreign: &[String] = if target.shared_log {
            &[]
        } else {
            &self.parsed.other_nonces
        };
        let reported = Reported {
            runs: self.runs.len(),
            planned: self.begin_field("planned_runs").and_then(|v| v.as_u64()),
        };
        boot_failure(
            &self.parsed,
            foreign,
            host.failure.as_deref(),
            self.begin.is_some(),
            self.guest_error.clone(),
            self.begin_field("kernel_release").and_then(|v| v.as_str()),
            target.expected_release,
        )
        .or_else(|| config_mismatch(self.begin.as_ref(), target.kernel_config))
        .map(|reason| reported.explain(reason))
    }
}

/// The boot's session: the guest's own, under the target's label, with what the guest
/// and the host said of the boot added to its environment.
fn boot_session(report: &GuestReport, target: &BootTarget<'_>, host: &HostView) -> NewSession {
    let mut session = report
        .begin_field("session")
        .and_then(|s| serde_json::from_value::<NewSession>(s.clone()).ok())
        .unwrap_or_else(|| NewSession {
            kbench_version: env!("CARGO_PKG_VERSION").to_string(),
            started_unix_ns: session::unix_now_ns(),
            ..NewSession::default()
        });
    session.label = target.label.to_string();
    session.kind = target.kind.into();
    session.command_line = session::command_line();
    if let Some(env) = session.environment.as_mut().and_then(|e| e.as_object_mut()) {
        add_boot_environment(env, report, target, host);
    }
    session
}

fn add_boot_environment(
    env: &mut serde_json::Map<String, serde_json::Value>,
    report: &GuestReport,
    target: &BootTarget<'_>,
    host: &HostView,
) {
    // Every boot has its own nonce: it proves the log's origin, and is no difference
    // between the kernels' environments.
    if let Some(cmdline) = env.get("cmdline").and_then(|c| c.as_str()) {
        let kept: Vec<&str> = cmdline
            .split(' ')
            .filter(|w| !w.starts_with("kbench.session="))
            .collect();
        env.insert("cmdline".into(), kept.join(" ").into());
    }
    // What the guest said of itself beyond the snapshot: its compiler line (which
    // /proc/version has), the governor it set, its channel and probe costs.
    for (from, to) in [
        ("proc_version", "proc_version"),
        ("governor", "vm_governor"),
        ("channel", "vm_channel"),
        ("call_cost_ns", "vm_call_cost_ns"),
        ("kernel_config_sha256", "vm_kernel_config_sha256"),
    ] {
        if let Some(value) = report.begin_field(from) {
            env.insert(to.into(), value.clone());
        }
    }
    // BEGIN has the uptime at /init, END the rest.
    let uptimes = report
        .end
        .as_ref()
        .or(report.begin.as_ref())
        .and_then(|m| m.get("uptime_s"))
        .filter(|v| !v.is_null());
    if let Some(uptimes) = uptimes {
        env.insert("vm_uptime_s".into(), uptimes.clone());
    }
    let host_said = [
        ("vm_accel", target.accel.map(serde_json::Value::from)),
        ("vm_vcpu_pins", host.vcpu_pins.clone()),
        ("vm_accel_reason", host.accel_reason.clone().map(Into::into)),
        ("vm_qemu_wall_s", host.qemu_wall_s.map(Into::into)),
        (
            "vm_notice",
            (target.accel == Some("tcg")).then(|| TCG_NOTICE.into()),
        ),
    ];
    for (key, value) in host_said {
        if let Some(value) = value {
            env.insert(key.into(), value);
        }
    }
}

/// Why a boot's results cannot be used, if they cannot.
fn boot_failure(
    parsed: &kbench_console::Parsed,
    foreign_nonces: &[String],
    host_failure: Option<&str>,
    begun: bool,
    guest_error: Option<String>,
    release: Option<&str>,
    expected_release: &str,
) -> Option<String> {
    if !foreign_nonces.is_empty() {
        return Some(format!(
            "the console log is of another boot (nonce {})",
            foreign_nonces.join(", ")
        ));
    }
    // What the guest's log says first; then what the host saw, which a panicked
    // kernel that hangs (panic=0) also needs: that the host gave up on it.
    let from_log = match (parsed.panics.first(), guest_error) {
        (Some(panic), _) => Some(format!("the kernel died: {panic}")),
        (None, Some(error)) => Some(format!("kbench in the guest: {error}")),
        (None, None) => None,
    };
    match (from_log, host_failure) {
        (Some(log), Some(host)) => return Some(format!("{log}; {host}")),
        (Some(log), None) => return Some(log),
        (None, Some(host)) => return Some(host.to_string()),
        (None, None) => {}
    }
    if !begun {
        return Some("no BEGIN record: kbench never reported from the guest".into());
    }
    if let Some(release) = release {
        if !expected_release.is_empty() && release != expected_release {
            return Some(format!("booted kernel {release}, not {expected_release}"));
        }
    }
    if !parsed.complete {
        return Some(format!(
            "incomplete results: {} message(s) lost, {} bad line(s), END {}",
            parsed.lost_messages,
            parsed.bad_lines,
            if parsed.ended { "seen" } else { "missing" }
        ));
    }
    None
}

/// A guest whose /proc/config.gz is not the config the host was given booted another
/// kernel than the one meant (or the wrong config was given).
fn config_mismatch(begin: Option<&serde_json::Value>, given: Option<&str>) -> Option<String> {
    let guest = begin?["kernel_config_sha256"].as_str()?;
    let given = kbench_store::config_hash(given?);
    (guest != given).then(|| {
        format!("the guest's /proc/config.gz (sha256 {guest}) is not the kernel config given (sha256 {given})")
    })
}

/// How far a boot got, for the reason it failed.
struct Reported {
    runs: usize,
    planned: Option<u64>,
}

impl Reported {
    fn explain(&self, reason: String) -> String {
        match self.planned {
            Some(planned) => format!("{reason} ({} of {planned} runs reported)", self.runs),
            None => reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boots_alternate_abba() {
        let sides: Vec<usize> = order(3).into_iter().map(|(_, s)| s).collect();
        assert_eq!(sides, [0, 1, 1, 0, 0, 1]);
        let boots: Vec<u32> = order(2).into_iter().map(|(b, _)| b).collect();
        assert_eq!(boots, [0, 1, 2, 3]);
    }
}
