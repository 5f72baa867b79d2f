//! A qemu machine that boots kernels with kbench as the initramfs /init, one boot at a
//! time, each returned as a judged [`Boot`]: the runner's unit of a boot, which its
//! scheduler hands to a sink (the store) and its stop rule. One [`QemuExecutor`] per
//! side makes `vm-ab` and a bisection the one scheduler with ABBA order.
use crate::deb::{kernel_from_path, ImageArch, KernelImage};
use crate::init::InitError;
use crate::qemu::{
    self, AccelChoice, BootFiles, BootKernel, BootRun, Deadlines, QemuSetup, Watch, WatchStep,
    WATCH_INTERVAL,
};
use crate::stored::{boot_notice, BootTarget, HostView, JudgedBoot};
use kbench_record::export::config_hash;
use kbench_record::stored::SessionWithRuns;
use kbench_record::KernelSource;
use kbench_runner::{Executor, Failed, HookFailure, RunnerError, Unit};
use kbench_workloads::measure::unix_now_ns;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Why a machine cannot boot.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// The user's to mend: a kernel that is no kernel, a qemu that is not installed.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Init(#[from] InitError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl MachineError {
    /// Whether the user can mend it (exit status 2).
    pub fn is_usage(&self) -> bool {
        match self {
            MachineError::Usage(_) => true,
            MachineError::Init(e) => e.is_usage(),
            MachineError::Io(_) => false,
        }
    }
}

impl From<MachineError> for RunnerError {
    fn from(e: MachineError) -> RunnerError {
        match e {
            MachineError::Usage(message) => RunnerError::Usage(message),
            e if e.is_usage() => RunnerError::Usage(e.to_string()),
            e => RunnerError::Executor(e.into()),
        }
    }
}

/// What every boot of a machine asks of qemu, beside the kernel.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MachineConfig {
    pub setup: QemuSetup,
    pub deadlines: Deadlines,
    /// The host CPUs vCPU i is pinned to (cyclically), through QMP.
    pub pins: Option<Vec<u32>>,
    /// `kvm`, `tcg` or `auto`.
    pub accel: String,
    /// The static kbench to boot as /init; this one when `None`.
    pub init: Option<PathBuf>,
    /// The session kind of the boots: `vm-ab`, `bisect`.
    pub kind: String,
    /// The host's command line, kept with every boot's session: this process's, never
    /// a saved one.
    #[serde(skip)]
    pub command_line: String,
}

/// One kernel, ready to boot: its image written where qemu loads it, its label and its
/// own command-line words.
pub struct BootSide {
    pub label: String,
    pub image: KernelImage,
    pub arch: ImageArch,
    pub kernel_path: PathBuf,
    /// Its own command line words, after those of every side.
    pub own_words: Vec<String>,
    /// The hash of the kernel's config (its .deb's config-*), when known.
    pub config_sha256: Option<String>,
    /// Where the kernel came from, for its sessions (a bisection's commit).
    pub source: KernelSource,
}

impl BootSide {
    /// `image` (read from `path`) written into `work` as `vmlinuz-NAME`, under a label
    /// that is checked.
    pub fn new(
        image: KernelImage,
        label: String,
        path: &Path,
        own_words: &[String],
        work: &Path,
        name: &str,
    ) -> Result<BootSide, MachineError> {
        kbench_store::check_label(&label).map_err(|e| MachineError::Usage(e.to_string()))?;
        let Some(arch) = image.arch() else {
            return Err(MachineError::Usage(format!(
                "{}: neither an x86 bzImage nor an arm64 Image",
                path.display()
            )));
        };
        let kernel_path = work.join(format!("vmlinuz-{name}"));
        std::fs::write(&kernel_path, &image.kernel)?;
        Ok(BootSide {
            label,
            own_words: own_words.to_vec(),
            config_sha256: image.config.as_deref().map(config_hash),
            source: KernelSource::default(),
            image,
            arch,
            kernel_path,
        })
    }

    /// The qemu command of one boot of this side.
    pub fn qemu_command(
        &self,
        setup: &QemuSetup,
        accel: &str,
        initrd: &Path,
        nonce: &str,
        files: &BootFiles,
    ) -> Command {
        let kernel = BootKernel {
            arch: self.arch,
            image: &self.kernel_path,
            own_words: &self.own_words,
        };
        qemu::qemu_command(setup, accel, &kernel, initrd, nonce, files)
    }
}

/// A bzImage, an arm64 Image or a Debian linux-image-*.deb, read.
pub fn read_kernel(path: &Path) -> Result<KernelImage, MachineError> {
    kernel_from_path(path).map_err(|e| MachineError::Usage(format!("{}: {e}", path.display())))
}

/// The initramfs every boot of a machine loads, in its work directory.
pub const INITRAMFS_FILE: &str = "initramfs.cpio";

/// What boots share once the accelerator is chosen: the setup, the initramfs with
/// kbench as /init, the deadlines and pins, and the work directory of the logs.
pub struct QemuMachine {
    config: MachineConfig,
    pub accel: AccelChoice,
    initrd: PathBuf,
    work: PathBuf,
    /// This host's machine id, for guests that have none of their own.
    host_machine_id: Option<String>,
    /// Boots so far, which name each boot's files and nonce.
    boots: Cell<u32>,
}

impl QemuMachine {
    /// Writes the initramfs into `work` and chooses the accelerator (for `auto`, by
    /// booting `probe`'s kernel under KVM to its early panic), saying which and why.
    /// The guest loads the modules of `sides`' kernels (vm-ab's scratch disk's driver).
    pub fn start(
        config: MachineConfig,
        probe: &BootSide,
        sides: &[&BootSide],
        work: &Path,
    ) -> Result<QemuMachine, MachineError> {
        // Uncompressed: qemu loads it from the host at no cost, and a TCG guest spends
        // a fifth of its way to /init inflating a gzip one (2.26 s of guest time
        // against 1.81 s, counted, for the 6.12 cloud kernel).
        let initrd = work.join(INITRAMFS_FILE);
        let kernels: Vec<&KernelImage> = sides.iter().map(|s| &s.image).collect();
        let image = crate::init::static_init_image(config.init.as_deref(), &kernels)?;
        std::fs::write(&initrd, image.to_cpio())?;
        let accel = choose_accel(&config.accel, &config.setup, probe, work)?;
        errln!("kbench: {}", accel.reason);
        if let Some(notice) = boot_notice(Some(&accel.accel), config.setup.clock) {
            errln!("kbench: {notice}");
        }
        Ok(QemuMachine {
            config,
            accel,
            initrd,
            work: work.to_path_buf(),
            host_machine_id: kbench_sys::machine_id::detect(&kbench_sys::Sysroot::from_env()),
            boots: Cell::new(0),
        })
    }

    /// Where a boot of `side` is stored, and what its log must show.
    fn target<'s>(&'s self, side: &'s BootSide) -> BootTarget<'s> {
        BootTarget {
            label: &side.label,
            expected_release: &side.image.release,
            accel: Some(&self.accel.accel),
            kind: &self.config.kind,
            shared_log: false,
            kernel_config_sha256: side.config_sha256.as_deref(),
            command_line: &self.config.command_line,
            kernel: &side.source,
            clock: self.config.setup.clock,
        }
    }

    /// What the reader of this machine's figures should know first: what a TCG
    /// guest's timings measure, or what a counted clock counts.
    pub fn notice(&self) -> Option<&'static str> {
        boot_notice(Some(&self.accel.accel), self.config.setup.clock)
    }

    /// Boots `side` once and judges its log: its session and runs, or a failed
    /// session saying why.
    pub fn boot(&self, side: &BootSide) -> Result<Boot, MachineError> {
        let boot = self.boots.get();
        self.boots.set(boot + 1);
        let nonce = nonce(boot);
        let files = BootFiles::in_dir(&self.work, boot, self.config.pins.is_some());
        let setup = &self.config.setup;
        let cmd = side.qemu_command(setup, &self.accel.accel, &self.initrd, &nonce, &files);
        let qemu_started = Instant::now();
        let run = boot_once(
            cmd,
            &files,
            &nonce,
            self.config.deadlines,
            self.config.pins.as_deref(),
        )?;
        let qemu_wall_s = qemu_started.elapsed().as_secs_f64();
        for note in &run.notes {
            errln!("kbench: boot {}: {note}", boot + 1);
        }
        errln!(
            "kbench: boot {}: qemu ran {qemu_wall_s:.1} s, start to exit",
            boot + 1
        );
        let target = self.target(side);
        let host = HostView {
            failure: run.failure,
            vcpu_pins: run.pins,
            accel_reason: Some(self.accel.reason.clone()),
            qemu_wall_s: Some(qemu_wall_s),
            machine_id: self.host_machine_id.clone(),
        };
        let log = files.read_log();
        let judged = JudgedBoot::judge(&target, &nonce, &log, &host, unix_now_ns());
        Ok(Boot {
            judged,
            console_log: log,
            kernel_config: side.image.config.clone(),
            kernel_config_sha256: side.config_sha256.clone(),
            stored_before: false,
        })
    }
}

/// One boot, judged: the runner's unit of a boot.
#[derive(Debug, Clone)]
pub struct Boot {
    pub judged: JudgedBoot,
    /// Its console log, kept with its session.
    pub console_log: String,
    /// The booted kernel's config text, kept once per hash.
    pub kernel_config: Option<String>,
    pub kernel_config_sha256: Option<String>,
    /// A boot a resumed bisection found stored already: nothing to store again.
    pub stored_before: bool,
}

impl Boot {
    /// A boot stored before, as a resumed bisection replays it: one with no measured
    /// run counts as failed, as the bisection counted it when it was made.
    pub fn stored(whole: SessionWithRuns) -> Boot {
        let failure = (!whole.runs.iter().any(|r| r.is_measured()))
            .then(|| "stored as a failed boot".to_string());
        Boot {
            judged: JudgedBoot {
                session: whole.session,
                runs: whole.runs,
                failure,
            },
            console_log: String::new(),
            kernel_config: None,
            kernel_config_sha256: whole.kernel_config_hash,
            stored_before: true,
        }
    }

    /// The session and its runs, as a decision reads them.
    pub fn session_with_runs(&self) -> SessionWithRuns {
        SessionWithRuns {
            session: self.judged.session.clone(),
            ended_unix_ns: None,
            runs: self.judged.runs.clone(),
            summaries: Vec::new(),
            kernel_config_hash: self.kernel_config_sha256.clone(),
        }
    }
}

impl Unit for Boot {
    type Measured = SessionWithRuns;
    type Kept = Boot;

    fn judged(&self) -> Result<SessionWithRuns, Failed> {
        match &self.judged.failure {
            None => Ok(self.session_with_runs()),
            Some(reason) => Err(Failed {
                message: reason.clone(),
                exit_status: 1,
            }),
        }
    }

    fn kept(self) -> Boot {
        self
    }
}

/// Boots one side on a machine, once per call.
pub struct QemuExecutor<'a> {
    pub machine: &'a QemuMachine,
    pub side: &'a BootSide,
}

impl Executor<Boot> for QemuExecutor<'_> {
    fn run(&mut self, _index: u32, _warmup: bool) -> Result<Boot, RunnerError> {
        Ok(self.machine.boot(self.side)?)
    }

    fn hook_failure_run(&self, failure: &HookFailure, _index: u32) -> Boot {
        // Boots have no hooks; were one given, its failure is a failed boot.
        let host = HostView {
            failure: Some(failure.message.clone()),
            ..HostView::default()
        };
        let target = self.machine.target(self.side);
        Boot {
            judged: JudgedBoot::judge(&target, "", "", &host, unix_now_ns()),
            console_log: String::new(),
            kernel_config: None,
            kernel_config_sha256: self.side.config_sha256.clone(),
            stored_before: false,
        }
    }
}

/// `kvm` or `tcg` as asked; for `auto`, KVM when `side`'s kernel boots under it to its
/// early panic ([`qemu`] says why a probe).
fn choose_accel(
    asked: &str,
    setup: &QemuSetup,
    side: &BootSide,
    work: &Path,
) -> Result<AccelChoice, MachineError> {
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
    format!("{:x}{:x}b{boot}", unix_now_ns(), std::process::id())
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
) -> Result<BootRun, MachineError> {
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
        match crate::qmp::pin_vcpus(socket, cpus, Duration::from_secs(10), &mut qemu_gone) {
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
            WatchStep::Wait => std::thread::sleep(WATCH_INTERVAL),
            WatchStep::Stop { failure, note } => {
                run.notes.extend(note);
                kbench_runner::child::stop(&mut child);
                run.failure = failure;
                return Ok(run);
            }
        }
    }
}

/// Starts qemu so that the kernel kills it when kbench dies, however kbench dies.
fn spawn_dying_with_kbench(cmd: &mut Command) -> Result<std::process::Child, MachineError> {
    kbench_runner::child::die_with_kbench(cmd);
    cmd.spawn().map_err(|e| {
        MachineError::Usage(format!(
            "cannot start {} ({e}): install qemu (qemu-system-x86, qemu-system-arm) or pass --qemu",
            cmd.get_program().to_string_lossy()
        ))
    })
}
