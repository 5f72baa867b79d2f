//! The qemu machine's options, and the sides it boots: kbench-boot's machine boots
//! them (`vm-ab`, `bisect`), each boot a unit of the runner's scheduler.
use crate::error::usage;
use crate::session;
use kbench_boot::cmdline::check_kernel_word;
use kbench_boot::deb::KernelImage;
use kbench_boot::machine::MachineConfig;
use kbench_boot::qemu::{Deadlines, QemuSetup};
use kbench_record::Clock;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The machine the kernels boot on, and how long a boot may take.
#[derive(Debug, clap::Args)]
pub struct QemuArgs {
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

impl QemuArgs {
    /// What every boot asks of qemu: the suite's words, then these options' words and
    /// each side's own (`(option, words)`), every one checked.
    pub fn setup(
        &self,
        suite: &crate::guest::GuestSuiteArgs,
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

    /// What every boot of a machine of `kind` (`vm-ab`, `bisect`) shares, checked.
    pub fn config(&self, setup: QemuSetup, kind: &'static str) -> anyhow::Result<MachineConfig> {
        Ok(MachineConfig {
            setup,
            deadlines: self.deadlines()?,
            pins: self.pins()?,
            accel: self.accel.clone(),
            init: self.init.clone(),
            kind: kind.to_string(),
            command_line: session::command_line(),
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

/// A bzImage, an arm64 Image or a Debian linux-image-*.deb, read.
pub fn read_kernel(path: &Path) -> anyhow::Result<KernelImage> {
    Ok(kbench_boot::machine::read_kernel(path)?)
}
