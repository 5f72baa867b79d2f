//! qemu for a boot of `kbench vm-ab`: its command line, the accelerator and why, and
//! the watch over one boot's output with its deadlines. Starting and stopping the
//! process is the caller's, with its rules for children (one that dies with kbench).
use crate::deb::ImageArch;
use kbench_console::{Kind, RESULTS_PORT};
use kbench_record::Clock;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What every boot of an A/B asks of qemu.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QemuSetup {
    /// The qemu binary, when not the one of the kernels' architecture.
    pub qemu: Option<String>,
    /// qemu's CPU model, when not the default for the accelerator.
    pub cpu: Option<String>,
    pub smp: u32,
    pub mem_mib: u32,
    /// Extra qemu arguments, last on its command line.
    pub qemu_args: Vec<String>,
    /// Words for the kernel command line after kbench's session nonce: what to run,
    /// then the user's.
    pub kernel_words: Vec<String>,
    /// A raw disk image attached as the guest's first virtio-blk disk (`/dev/vda`),
    /// on which `blkio` completes on a device interrupt.
    pub disk: Option<PathBuf>,
    /// What the guest's clock measures: wall time, or (TCG's icount) instructions.
    pub clock: Clock,
}

/// icount's shift for a counted boot: each guest instruction is 2^0 = 1 ns of guest
/// time, so a guest's ns are instructions. A fixed shift keeps the host out of it
/// (`auto` would follow the host's speed).
pub const ICOUNT_SHIFT: u32 = 0;

/// The qemu words of a counted clock: icount at [`ICOUNT_SHIFT`], and with every vCPU
/// idle the clock jumps to the next timer instead of waiting in real time.
fn icount_args() -> [String; 2] {
    ["-icount".into(), format!("shift={ICOUNT_SHIFT},sleep=off")]
}

/// Where one boot's output goes.
#[derive(Debug, Clone)]
pub struct BootFiles {
    /// The serial console: printk, and the results when the guest has no virtio port.
    pub console: PathBuf,
    /// The virtio-serial results port.
    pub results: PathBuf,
    /// qemu's QMP socket, when vCPUs are pinned.
    pub qmp: Option<PathBuf>,
}

/// Where the virtio port's lines start in a stored log.
const RESULTS_HEADER: &str = "=== kbench: virtio-serial port org.kbench.results ===";

impl BootFiles {
    pub fn in_dir(dir: &Path, boot: u32, pinning: bool) -> BootFiles {
        BootFiles {
            console: dir.join(format!("boot{boot}.console")),
            results: dir.join(format!("boot{boot}.results")),
            qmp: pinning.then(|| dir.join(format!("boot{boot}.qmp"))),
        }
    }

    /// Both channels as one log: the framed lines are found wherever they are, and a
    /// panic on the console explains results that stop early.
    pub fn read_log(&self) -> String {
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

fn console_arg(arch: ImageArch) -> &'static str {
    match arch {
        ImageArch::X86_64 => "console=ttyS0",
        ImageArch::Arm64 => "console=ttyAMA0",
    }
}

/// One side's kernel as qemu boots it.
#[derive(Debug, Clone, Copy)]
pub struct BootKernel<'a> {
    pub arch: ImageArch,
    /// The image file qemu loads (`-kernel`).
    pub image: &'a Path,
    /// The side's own command line words (`--kernel-arg-a`, `-b`), last: where a word
    /// is given twice the kernel keeps the last, so the side's own wins.
    pub own_words: &'a [String],
}

fn kernel_cmdline(setup: &QemuSetup, kernel: &BootKernel<'_>, nonce: &str) -> String {
    let mut cmdline = format!(
        "{} quiet panic=-1 kbench.session={nonce}",
        console_arg(kernel.arch)
    );
    for word in setup.kernel_words.iter().chain(kernel.own_words) {
        cmdline.push(' ');
        cmdline.push_str(word);
    }
    cmdline
}

/// The CPU a counted x86 guest gets unless told: TCG's most capable, without
/// `cmpxchg16b`. qemu 7.2 under icount sometimes leaves EFLAGS holding the low bits of
/// RAX after SLUB's `this_cpu_cmpxchg16b` in `kmem_cache_alloc`, and the kernel dies
/// of a double fault 1.4 s into its boot (one boot in 10-25 here); without the
/// instruction the kernel takes its own emulation of it, and no boot of 50 died
/// (docs/vm-ab.md, "Counted boots").
pub const COUNTED_X86_CPU: &str = "max,cx16=off";

/// The CPU a counted arm64 guest gets unless told: TCG's most capable, with qemu's
/// own pointer-authentication algorithm instead of the architected QARMA, which TCG
/// emulates slowly: a boot took 5.6 s instead of minutes here.
pub const COUNTED_ARM64_CPU: &str = "max,pauth-impdef=on";
/// The qemu binary and machine of an architecture, and its CPU: `cpu`, else under KVM
/// the host's, else the most capable one TCG emulates ([`COUNTED_X86_CPU`] counted).
fn machine_args<'a>(
    arch: ImageArch,
    accel: &str,
    cpu: Option<&'a str>,
    clock: Clock,
) -> (&'static str, Vec<&'a str>) {
    let kvm = accel == "kvm";
    let tcg_cpu = match (arch, clock) {
        (ImageArch::X86_64, Clock::Instructions) => COUNTED_X86_CPU,
        (ImageArch::Arm64, Clock::Instructions) => COUNTED_ARM64_CPU,
        _ => "max",
    };
    let cpu = cpu.unwrap_or(if kvm { "host" } else { tcg_cpu });
    match arch {
        ImageArch::X86_64 => ("qemu-system-x86_64", vec!["-cpu", cpu]),
        ImageArch::Arm64 => (
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

/// The qemu command of one boot: `kernel` with `initrd`, its console and results
/// ports in `files`, and `nonce` on its command line.
pub fn qemu_command(
    setup: &QemuSetup,
    accel: &str,
    kernel: &BootKernel<'_>,
    initrd: &Path,
    nonce: &str,
    files: &BootFiles,
) -> Command {
    let (default_qemu, machine) =
        machine_args(kernel.arch, accel, setup.cpu.as_deref(), setup.clock);
    let mut cmd = Command::new(setup.qemu.as_deref().unwrap_or(default_qemu));
    cmd.args(["-accel", accel])
        .args(machine)
        .args([
            "-smp",
            &setup.smp.to_string(),
            "-m",
            &setup.mem_mib.to_string(),
        ])
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
    if let Some(disk) = &setup.disk {
        // qemu's option syntax doubles a comma inside a value.
        let path = disk.display().to_string().replace(',', ",,");
        cmd.arg("-drive")
            .arg(format!("file={path},if=virtio,format=raw"));
    }
    if setup.clock == Clock::Instructions {
        cmd.args(icount_args());
        // A guest that counts its time has no timing jitter to gather entropy from:
        // an arm64 kernel without a hardware RNG then waits minutes at boot.
        cmd.args(["-device", "virtio-rng-pci"]);
    }
    if let Some(qmp) = &files.qmp {
        cmd.arg("-qmp")
            .arg(format!("unix:{},server=on,wait=off", qmp.display()));
    }
    cmd.arg("-kernel")
        .arg(kernel.image)
        .arg("-initrd")
        .arg(initrd)
        .arg("-append")
        .arg(kernel_cmdline(setup, kernel, nonce))
        .args(&setup.qemu_args);
    cmd
}

/// How long kernel A may take under KVM to reach its early panic before `--accel auto`
/// decides this machine's KVM cannot run it: a working KVM gets there in about a
/// second, TCG in three or four.
pub const KVM_PROBE_DEADLINE: Duration = Duration::from_secs(10);

/// The accelerator, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccelChoice {
    pub accel: String,
    pub reason: String,
}

/// `kvm` or `tcg` as asked; for `auto`, TCG where KVM cannot run the kernels at all,
/// else `None`: a /dev/kvm that answers is not enough, since a nested KVM can create
/// a VM whose kernel then never prints a line (this project's CI machines), so the
/// caller probes with [`kvm_probe_command`] and decides with [`accel_after_probe`].
pub fn accel_without_probe_needed(
    asked: &str,
    arch: ImageArch,
    clock: Clock,
) -> Option<AccelChoice> {
    if clock == Clock::Instructions {
        return Some(AccelChoice {
            accel: "tcg".into(),
            reason: "--clock instructions: the guest's clock counts instructions under TCG's icount, so TCG".into(),
        });
    }
    if asked != "auto" {
        return Some(AccelChoice {
            accel: asked.to_string(),
            reason: format!("--accel {asked}, as asked"),
        });
    }
    if !runs_natively(arch) {
        return Some(tcg(format!(
            "the kernels are {} and this machine {}",
            arch.as_str(),
            std::env::consts::ARCH
        )));
    }
    if !Path::new("/dev/kvm").exists() {
        return Some(tcg("no /dev/kvm".into()));
    }
    None
}

fn tcg(why: String) -> AccelChoice {
    AccelChoice {
        accel: "tcg".into(),
        reason: format!("--accel auto: {why}, so TCG"),
    }
}

/// A boot of the kernel itself under KVM, without an initramfs, to the panic it
/// reaches when it finds no root; its console goes to `log`.
pub fn kvm_probe_command(setup: &QemuSetup, arch: ImageArch, kernel: &Path, log: &Path) -> Command {
    let (default_qemu, machine) = machine_args(arch, "kvm", setup.cpu.as_deref(), Clock::Wall);
    let mut cmd = Command::new(setup.qemu.as_deref().unwrap_or(default_qemu));
    cmd.args(["-accel", "kvm"])
        .args(machine)
        .args([
            "-smp", "1", "-m", "256", "-display", "none", "-monitor", "none",
        ])
        .args(["-no-reboot", "-serial"])
        .arg(format!("file:{}", log.display()))
        .arg("-kernel")
        .arg(kernel)
        .arg("-append")
        .arg(format!("{} panic=-1", console_arg(arch)))
        .args(&setup.qemu_args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// KVM when the probe reached the early panic: `exited` is qemu's status, `None` when
/// it was stopped at [`KVM_PROBE_DEADLINE`]; `console` what it printed.
pub fn accel_after_probe(
    exited: Option<ExitStatus>,
    console: &str,
    elapsed: Duration,
) -> AccelChoice {
    let panicked = !kbench_console::parse(console, "").panics.is_empty();
    match exited {
        Some(_) if panicked => AccelChoice {
            accel: "kvm".into(),
            reason: format!(
                "--accel auto: KVM booted kernel A to its early panic in {:.1} s, so KVM",
                elapsed.as_secs_f64()
            ),
        },
        Some(status) => tcg(format!(
            "qemu under KVM exited ({status}) before kernel A reached its early panic"
        )),
        None => tcg(format!(
            "kernel A did not reach its early panic under KVM within {} s",
            KVM_PROBE_DEADLINE.as_secs()
        )),
    }
}

/// Whether KVM could run a kernel of `arch` here at all.
fn runs_natively(arch: ImageArch) -> bool {
    matches!(
        (arch, std::env::consts::ARCH),
        (ImageArch::X86_64, "x86_64") | (ImageArch::Arm64, "aarch64")
    )
}

/// What `--dry-run` shows for `auto`, which runs no probe.
pub fn accel_for_dry_run(asked: &str, arch: ImageArch, clock: Clock) -> String {
    if clock == Clock::Instructions {
        return "tcg".into();
    }
    match asked {
        "auto" if runs_natively(arch) && Path::new("/dev/kvm").exists() => "kvm".into(),
        "auto" => "tcg".into(),
        other => other.into(),
    }
}

/// The deadlines of one boot.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Deadlines {
    /// From qemu's start to kbench's BEGIN.
    pub begin: Duration,
    /// From qemu's start to kbench's END.
    pub end: Duration,
    /// From END to qemu's exit.
    pub exit: Duration,
}

/// How qemu ended, as the host saw it.
#[derive(Debug, Default)]
pub struct BootRun {
    /// Why the host gave up on the boot, or qemu died: the boot failed.
    pub failure: Option<String>,
    /// Said of the boot without failing it (a guest that did not power off).
    pub notes: Vec<String>,
    pub pins: Vec<crate::qmp::VcpuPin>,
}

/// How often the host looks at qemu and at the boot's output.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(100);

/// What the watch says after a look at a running qemu.
#[derive(Debug, PartialEq, Eq)]
pub enum WatchStep {
    /// Look again after [`WATCH_INTERVAL`].
    Wait,
    /// Stop qemu: the boot failed with `failure`, or it is done with a `note`.
    Stop {
        failure: Option<String>,
        note: Option<String>,
    },
}

/// What the boot's output has shown so far. Each look reads only what the two files
/// gained since the last, up to their last complete line.
#[derive(Debug)]
pub struct Watch {
    started: Instant,
    begun: bool,
    ended_at: Option<Instant>,
    read_to: [u64; 2],
}

impl Watch {
    /// A watch over a qemu started now.
    pub fn start() -> Watch {
        Watch {
            started: Instant::now(),
            begun: false,
            ended_at: None,
            read_to: [0; 2],
        }
    }

    /// Reads what the boot wrote since the last look, and says whether a deadline
    /// passed: no BEGIN, no END, or no exit after END.
    pub fn look(&mut self, files: &BootFiles, nonce: &str, deadlines: Deadlines) -> WatchStep {
        self.read(files, nonce);
        let stop = |failure, note| WatchStep::Stop { failure, note };
        match self.ended_at {
            Some(ended) if ended.elapsed() >= deadlines.exit => stop(
                None,
                Some(format!(
                    "the guest sent END but did not power off within {} s; stopped, results kept",
                    deadlines.exit.as_secs()
                )),
            ),
            Some(_) => WatchStep::Wait,
            None if !self.begun && self.started.elapsed() >= deadlines.begin => stop(
                Some(format!(
                    "no BEGIN from kbench within {} s of qemu's start",
                    deadlines.begin.as_secs()
                )),
                None,
            ),
            None if self.started.elapsed() >= deadlines.end => stop(
                Some(format!(
                    "no END from kbench within {} s of qemu's start",
                    deadlines.end.as_secs()
                )),
                None,
            ),
            None => WatchStep::Wait,
        }
    }

    fn read(&mut self, files: &BootFiles, nonce: &str) {
        if self.ended_at.is_some() {
            return;
        }
        for (i, path) in [&files.console, &files.results].into_iter().enumerate() {
            let fresh = read_new_lines(path, &mut self.read_to[i]);
            for kind in kbench_console::line_kinds(&fresh, nonce) {
                match kind {
                    Kind::Begin => self.begun = true,
                    Kind::End => self.ended_at = Some(Instant::now()),
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
pub fn qemu_exit_failure(status: ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        return Some(format!("qemu was killed by signal {signal}"));
    }
    (!status.success()).then(|| format!("qemu failed ({status})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sides_own_words_come_last_on_its_command_line() {
        let setup = QemuSetup {
            qemu: None,
            cpu: None,
            smp: 2,
            mem_mib: 512,
            qemu_args: Vec::new(),
            kernel_words: vec!["kbench.runs=3".into(), "pti=off".into()],
            disk: None,
            clock: Clock::Wall,
        };
        let own = vec!["pti=on".to_string()];
        let kernel = BootKernel {
            arch: ImageArch::X86_64,
            image: Path::new("vmlinuz"),
            own_words: &own,
        };
        assert_eq!(
            kernel_cmdline(&setup, &kernel, "n1"),
            "console=ttyS0 quiet panic=-1 kbench.session=n1 kbench.runs=3 pti=off pti=on"
        );
        let neither = BootKernel {
            own_words: &[],
            ..kernel
        };
        assert!(kernel_cmdline(&setup, &neither, "n1").ends_with("kbench.runs=3 pti=off"));
    }

    /// The words of a command, for asserting on.
    fn words(cmd: &Command) -> Vec<String> {
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_counted_clock_is_icount_at_a_fixed_shift_under_tcg_with_an_rng() {
        let mut setup = QemuSetup {
            qemu: None,
            cpu: None,
            smp: 2,
            mem_mib: 512,
            qemu_args: Vec::new(),
            kernel_words: Vec::new(),
            disk: None,
            clock: Clock::Instructions,
        };
        let files = BootFiles::in_dir(Path::new("/tmp"), 0, false);
        let words_of = |setup: &QemuSetup, arch: ImageArch| {
            let kernel = BootKernel {
                arch,
                image: Path::new("Image"),
                own_words: &[],
            };
            let cmd = qemu_command(setup, "tcg", &kernel, Path::new("i"), "n", &files);
            words(&cmd)
        };
        let has = |words: &[String], pair: [&str; 2]| words.windows(2).any(|w| w == pair);
        let arm64 = words_of(&setup, ImageArch::Arm64);
        assert!(has(&arm64, ["-icount", "shift=0,sleep=off"]), "{arm64:?}");
        assert!(has(&arm64, ["-device", "virtio-rng-pci"]), "{arm64:?}");
        assert!(has(&arm64, ["-cpu", COUNTED_ARM64_CPU]), "{arm64:?}");
        // An x86 guest counts on a CPU without cmpxchg16b, unless one is named.
        let x86 = words_of(&setup, ImageArch::X86_64);
        assert!(has(&x86, ["-cpu", COUNTED_X86_CPU]), "{x86:?}");
        setup.cpu = Some("Skylake-Client".into());
        let named = words_of(&setup, ImageArch::X86_64);
        assert!(has(&named, ["-cpu", "Skylake-Client"]), "{named:?}");
        // Whatever was asked, a counted clock is TCG's.
        for asked in ["auto", "kvm", "tcg"] {
            let choice = accel_without_probe_needed(asked, ImageArch::X86_64, Clock::Instructions);
            assert_eq!(choice.map(|c| c.accel).as_deref(), Some("tcg"));
            let dry = accel_for_dry_run(asked, ImageArch::X86_64, Clock::Instructions);
            assert_eq!(dry, "tcg");
        }
        setup.cpu = None;
        setup.clock = Clock::Wall;
        let timed = words_of(&setup, ImageArch::X86_64);
        assert!(!timed
            .iter()
            .any(|w| w == "-icount" || w == "virtio-rng-pci"));
        assert!(has(&timed, ["-cpu", "max"]), "{timed:?}");
    }
}
