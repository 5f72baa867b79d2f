//! Booting kernels under qemu with kbench as the initramfs /init, one boot at a time,
//! each stored as a session: what `vm-ab` and `bisect` share. kbench-boot builds the
//! qemu command and judges the log; this starts qemu, watches it and stores the boot.
use crate::boots::{config_sha256, store_boot};
use crate::error::usage;
use crate::session;
use kbench_boot::cmdline::check_kernel_word;
use kbench_boot::deb::{kernel_from_path, Arch, KernelImage};
use kbench_boot::qemu::{
    self, AccelChoice, BootFiles, BootKernel, BootRun, Deadlines, QemuSetup, Step, Watch,
    WATCH_INTERVAL,
};
use kbench_boot::stored::{boot_notice, BootTarget, HostView};
use kbench_record::{Clock, KernelSource};
use kbench_store::Store;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The machine the kernels boot on, and how long a boot may take.
#[derive(Debug, clap::Args)]
pub struct MachineArgs {
    /// KVM, TCG, or KVM when this machine can run a guest with it.
    #[arg(long, default_value = "auto", value_parser = ["auto", "kvm", "tcg"])]
    pub accel: String,
    /// What the guest's clock measures: `wall` time, or `instructions` (TCG's icount
    /// at shift 0, sleep off: every time figure becomes the instructions the guest
    /// executed, repeatable from boot to boot whatever the host does; docs/vm-ab.md).
    #[arg(long, default_value = "wall", value_parser = clock_parser())]
    pub clock: Clock,
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
    /// An extra word for every kernel's command line (repeatable).
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
}

/// `--clock`'s two names, parsed into a [`Clock`].
fn clock_parser() -> impl clap::builder::TypedValueParser<Value = Clock> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new([Clock::Wall.as_str(), Clock::Instructions.as_str()])
        .try_map(|name| name.parse::<Clock>())
}

impl MachineArgs {
    /// What every boot asks of qemu: the suite's words, then these options' words and
    /// each side's own (`(option, words)`), every one checked.
    pub fn setup(
        &self,
        suite: &crate::guest::SuiteArgs,
        own_words: &[(&str, &[String])],
    ) -> anyhow::Result<QemuSetup> {
        let mut kernel_words = suite.kernel_words()?;
        let all = std::iter::once(("--kernel-arg", self.kernel_arg.as_slice()))
            .chain(own_words.iter().copied());
        for (option, words) in all {
            for word in words {
                check_kernel_word(word).or_else(|e| usage(format!("{option} {e}")))?;
            }
        }
        kernel_words.extend(self.kernel_arg.iter().cloned());
        if self.clock == Clock::Instructions && self.accel == "kvm" {
            return usage(
                "--clock instructions counts with TCG's icount, and KVM runs the guest on the host's CPU with a wall clock: give --accel tcg or auto",
            );
        }
        if self.clock == Clock::Instructions && self.pin_vcpus.is_some() {
            return usage(
                "--clock instructions runs every vCPU on one host thread (icount is single-threaded TCG): there are no vCPU threads to pin",
            );
        }
        Ok(QemuSetup {
            qemu: self.qemu.clone(),
            cpu: self.cpu.clone(),
            smp: self.smp,
            mem_mib: self.mem,
            qemu_args: self.qemu_arg.clone(),
            kernel_words,
            disk: None,
            clock: self.clock,
        })
    }

    /// The deadlines of a boot; every one at least a second.
    pub fn deadlines(&self) -> anyhow::Result<Deadlines> {
        if [
            self.begin_timeout_s,
            self.boot_timeout_s,
            self.exit_timeout_s,
        ]
        .contains(&0)
        {
            return usage(
                "--begin-timeout, --boot-timeout and --exit-timeout must be at least 1 s",
            );
        }
        Ok(Deadlines {
            begin: Duration::from_secs(self.begin_timeout_s),
            end: Duration::from_secs(self.boot_timeout_s),
            exit: Duration::from_secs(self.exit_timeout_s),
        })
    }

    /// The host CPUs of --pin-vcpus, checked.
    pub fn pins(&self) -> anyhow::Result<Option<Vec<u32>>> {
        match &self.pin_vcpus {
            Some(list) => Ok(Some(
                kbench_boot::qmp::parse_pin_list(list).or_else(|e| usage(e.to_string()))?,
            )),
            None => Ok(None),
        }
    }
}

/// The scratch disk's size: enough blocks that random 4 KiB reads rarely repeat.
const SCRATCH_DISK_BYTES: u64 = 16 << 20;

/// The scratch disk every vm-ab boot gets as `/dev/vda`, in `work`: made (filled with
/// data, so that reads reach the file) unless `dry_run`.
pub fn scratch_disk(work: &Path, dry_run: bool) -> anyhow::Result<PathBuf> {
    let path = work.join("scratch.img");
    if !dry_run {
        kbench_workloads::blkio::make_data_file(&path, SCRATCH_DISK_BYTES)
            .map_err(|e| anyhow::anyhow!("the scratch disk: {e}"))?;
    }
    Ok(path)
}

/// One kernel, ready to boot: its image written where qemu loads it, its label and its
/// own command-line words.
pub struct BootSide {
    pub label: String,
    pub image: KernelImage,
    pub arch: Arch,
    pub kernel_path: PathBuf,
    /// Its own command line words, after those of every side.
    pub own_words: Vec<String>,
    /// The hash of the kernel's config (its .deb's config-*), when known.
    pub config_sha256: Option<String>,
    /// Where the kernel came from, for its sessions (a bisection's commit).
    pub source: KernelSource,
}

impl BootSide {
    /// `image` (read from `path`) written into `work` as `vmlinuz-NAME`, labelled.
    pub fn new(
        image: KernelImage,
        label: String,
        path: &Path,
        own_words: &[String],
        work: &Path,
        name: &str,
    ) -> anyhow::Result<BootSide> {
        session::check_label(&label)?;
        let Some(arch) = image.arch() else {
            return usage(format!(
                "{}: neither an x86 bzImage nor an arm64 Image",
                path.display()
            ));
        };
        let kernel_path = work.join(format!("vmlinuz-{name}"));
        std::fs::write(&kernel_path, &image.kernel)?;
        Ok(BootSide {
            label,
            own_words: own_words.to_vec(),
            config_sha256: config_sha256(image.config.as_deref()),
            source: KernelSource::default(),
            image,
            arch,
            kernel_path,
        })
    }
}

/// A bzImage, an arm64 Image or a Debian linux-image-*.deb, read.
pub fn read_kernel(path: &Path) -> anyhow::Result<KernelImage> {
    kernel_from_path(path).or_else(|e| usage(format!("{}: {e}", path.display())))
}

/// The qemu command of one boot of `side`.
pub fn qemu_command(
    setup: &QemuSetup,
    accel: &str,
    side: &BootSide,
    initrd: &Path,
    nonce: &str,
    files: &BootFiles,
) -> Command {
    let kernel = BootKernel {
        arch: side.arch,
        image: &side.kernel_path,
        own_words: &side.own_words,
    };
    qemu::qemu_command(setup, accel, &kernel, initrd, nonce, files)
}

/// The initramfs every boot of a machine loads, in its work directory.
pub const INITRAMFS_FILE: &str = "initramfs.cpio";

/// What boots share once the accelerator is chosen: the setup, the initramfs with
/// kbench as /init, the deadlines and pins, and the work directory of the logs.
pub struct Machine {
    pub setup: QemuSetup,
    pub accel: AccelChoice,
    initrd: PathBuf,
    deadlines: Deadlines,
    pins: Option<Vec<u32>>,
    work: PathBuf,
    /// The host's command line, kept with every boot's session.
    command_line: String,
    /// The session kind of the boots: `vm-ab`, `bisect`.
    kind: &'static str,
    /// This host's machine id, for guests that have none of their own.
    host_machine_id: Option<String>,
}

impl Machine {
    /// Writes the initramfs into `work` and chooses the accelerator (for `auto`, by
    /// booting `probe`'s kernel under KVM to its early panic), saying which and why.
    /// The guest loads the modules of `sides`' kernels (vm-ab's scratch disk's driver).
    pub fn start(
        args: &MachineArgs,
        setup: QemuSetup,
        probe: &BootSide,
        sides: &[&BootSide],
        work: &Path,
        kind: &'static str,
    ) -> anyhow::Result<Machine> {
        let deadlines = args.deadlines()?;
        let pins = args.pins()?;
        // Uncompressed: qemu loads it from the host at no cost, and a TCG guest spends
        // a fifth of its way to /init inflating a gzip one (2.26 s of guest time
        // against 1.81 s, counted, for the 6.12 cloud kernel).
        let initrd = work.join(INITRAMFS_FILE);
        let kernels: Vec<&KernelImage> = sides.iter().map(|s| &s.image).collect();
        let image = kbench_boot::init::static_init_image(args.init.as_deref(), &kernels)?;
        std::fs::write(&initrd, image.to_cpio())?;
        let accel = choose_accel(&args.accel, &setup, probe, work)?;
        errln!("kbench: {}", accel.reason);
        if let Some(notice) = boot_notice(Some(&accel.accel), setup.clock) {
            errln!("kbench: {notice}");
        }
        Ok(Machine {
            setup,
            accel,
            initrd,
            deadlines,
            pins,
            work: work.to_path_buf(),
            command_line: session::command_line(),
            kind,
            host_machine_id: kbench_sys::machine_id::detect(&kbench_sys::Sysroot::from_env()),
        })
    }

    /// What the reader of this machine's figures should know first: what a TCG
    /// guest's timings measure, or what a counted clock counts.
    pub fn notice(&self) -> Option<&'static str> {
        boot_notice(Some(&self.accel.accel), self.setup.clock)
    }

    /// Boots `side` once (the `boot`-th boot of this machine, which names its files),
    /// and stores it: its session and runs, or a failed session saying why. True when
    /// the boot succeeded.
    pub fn boot(&self, side: &BootSide, boot: u32, store: &mut Store) -> anyhow::Result<bool> {
        let nonce = nonce(boot);
        let files = BootFiles::in_dir(&self.work, boot, self.pins.is_some());
        let cmd = qemu_command(
            &self.setup,
            &self.accel.accel,
            side,
            &self.initrd,
            &nonce,
            &files,
        );
        let qemu_started = Instant::now();
        let run = boot_once(cmd, &files, &nonce, self.deadlines, self.pins.as_deref())?;
        let qemu_wall_s = qemu_started.elapsed().as_secs_f64();
        for note in &run.notes {
            errln!("kbench: boot {}: {note}", boot + 1);
        }
        errln!(
            "kbench: boot {}: qemu ran {qemu_wall_s:.1} s, start to exit",
            boot + 1
        );
        let target = BootTarget {
            label: &side.label,
            expected_release: &side.image.release,
            accel: Some(&self.accel.accel),
            kind: self.kind,
            shared_log: false,
            kernel_config_sha256: side.config_sha256.as_deref(),
            command_line: &self.command_line,
            kernel: &side.source,
            clock: self.setup.clock,
        };
        let host = HostView {
            failure: run.failure,
            vcpu_pins: run.pins,
            accel_reason: Some(self.accel.reason.clone()),
            qemu_wall_s: Some(qemu_wall_s),
            machine_id: self.host_machine_id.clone(),
        };
        store_boot(
            store,
            &target,
            side.image.config.as_deref(),
            &nonce,
            &files.read_log(),
            &host,
        )
    }
}

/// `kvm` or `tcg` as asked; for `auto`, KVM when `side`'s kernel boots under it to its
/// early panic (kbench-boot's `qemu` says why a probe).
fn choose_accel(
    asked: &str,
    setup: &QemuSetup,
    side: &BootSide,
    work: &Path,
) -> anyhow::Result<AccelChoice> {
    if let Some(choice) = qemu::accel_without_probe_needed(asked, side.arch, setup.clock) {
        return Ok(choice);
    }
    let log = work.join("kvm-probe.console");
    let mut cmd = qemu::kvm_probe_command(setup, side.arch, &side.kernel_path, &log);
    let started = Instant::now();
    let mut child = spawn_dying_with_kbench(&mut cmd)?;
    let exited = kbench_runner::child::wait_with_timeout(&mut child, qemu::KVM_PROBE_DEADLINE)?;
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
    Ok(qemu::accel_after_probe(exited, &text, started.elapsed()))
}

/// A nonce no other boot shares: the log must prove it is of this boot.
fn nonce(boot: u32) -> String {
    format!(
        "{:x}{:x}b{boot}",
        session::unix_now_ns(),
        std::process::id()
    )
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
    let mut watch = Watch::start();
    let mut child = spawn_dying_with_kbench(&mut cmd)?;
    let mut run = BootRun::default();
    if let (Some(cpus), Some(socket)) = (pins, &files.qmp) {
        let mut qemu_gone =
            || match child.try_wait() {
                Ok(Some(status)) => Some(qemu::qemu_exit_failure(status).unwrap_or_else(|| {
                    format!("qemu exited ({status}) before its QMP socket was up")
                })),
                _ => None,
            };
        match kbench_boot::qmp::pin_vcpus(socket, cpus, Duration::from_secs(10), &mut qemu_gone) {
            Ok(done) => run.pins = done,
            Err(e) => {
                kbench_runner::child::stop(&mut child);
                run.failure = Some(format!("--pin-vcpus: {e}"));
                return Ok(run);
            }
        }
    }
    loop {
        if let Some(status) = child.try_wait()? {
            run.failure = qemu::qemu_exit_failure(status);
            return Ok(run);
        }
        match watch.look(files, nonce, deadlines) {
            Step::Wait => std::thread::sleep(WATCH_INTERVAL),
            Step::Stop { failure, note } => {
                run.notes.extend(note);
                kbench_runner::child::stop(&mut child);
                run.failure = failure;
                return Ok(run);
            }
        }
    }
}

/// Starts qemu so that the kernel kills it when kbench dies, however kbench dies.
fn spawn_dying_with_kbench(cmd: &mut Command) -> anyhow::Result<std::process::Child> {
    kbench_runner::child::die_with_kbench(cmd);
    cmd.spawn().or_else(|e| {
        usage(format!(
            "cannot start {} ({e}): install qemu (qemu-system-x86, qemu-system-arm) or pass --qemu",
            cmd.get_program().to_string_lossy()
        ))
    })
}
