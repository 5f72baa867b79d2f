//! One logical CPU as sysfs and `/proc/cpuinfo` describe it, and the instruction set
//! family that decides how kbench reads them.
use crate::cpuinfo::CpuInfo;
use crate::Sysroot;
use serde::{Deserialize, Serialize};

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// The instruction set family, as far as it changes how kbench reads the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// x86 and x86-64.
    X86,
    /// arm64 (and arm32, which reports the same MIDR fields).
    Arm,
    /// RISC-V.
    Riscv,
    /// Anything else (ppc64, s390x...): classes fall back to model names.
    Other,
}

impl Arch {
    /// Guesses the architecture from what the machine files look like, so that a fixture
    /// tree of an arm64 board reads as arm64 on an x86 build host.
    pub fn detect(root: &Sysroot, cpuinfo: &CpuInfo) -> Arch {
        let any = |key: &str| cpuinfo.processors.iter().any(|p| p.get(key).is_some());
        if any("CPU implementer") || root.exists(&format!("{CPU_DIR}/cpu0/regs/identification")) {
            Arch::Arm
        } else if any("isa") || any("mvendorid") || any("uarch") {
            Arch::Riscv
        } else if any("vendor_id") || root.exists("/sys/devices/cpu_core") {
            Arch::X86
        } else if cpuinfo.processors.is_empty() && root.is_host() {
            Arch::from_build_target()
        } else {
            Arch::Other
        }
    }

    /// The architecture this binary was built for.
    pub fn from_build_target() -> Arch {
        match std::env::consts::ARCH {
            "x86" | "x86_64" => Arch::X86,
            "arm" | "aarch64" => Arch::Arm,
            "riscv64" | "riscv32" => Arch::Riscv,
            _ => Arch::Other,
        }
    }
}

/// One logical CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpu {
    /// The logical CPU number (N in `cpuN`).
    pub cpu: u32,
    /// Whether the CPU is online now.
    pub online: bool,
    /// `topology/physical_package_id` (the socket).
    pub package_id: Option<u32>,
    /// `topology/die_id`.
    pub die_id: Option<u32>,
    /// `topology/cluster_id` (an Arm cluster, or CPUs sharing an L2 on x86).
    pub cluster_id: Option<u32>,
    /// `topology/core_id`.
    pub core_id: Option<u32>,
    /// SMT siblings including this CPU (`topology/thread_siblings_list`).
    pub smt_siblings: Vec<u32>,
    /// CPUs sharing the last-level cache with this one (including it).
    pub llc_cpus: Vec<u32>,
    /// The level of that cache (2 on many Arm clusters, 3 on x86).
    pub llc_level: Option<u32>,
    /// Its size as the kernel prints it (`32768K`).
    pub llc_size: Option<String>,
    /// `cpuinfo_min_freq` of the CPU's cpufreq policy, in kHz.
    pub min_khz: Option<u64>,
    /// `cpuinfo_max_freq` of the CPU's cpufreq policy, in kHz.
    pub max_khz: Option<u64>,
    /// `cpu_capacity` (1024 = the most capable CPU of the system), where the kernel has it.
    pub capacity: Option<u32>,
    /// The name of the [`crate::CpuClass`] this CPU belongs to.
    pub class: String,
    /// The model name or core name from `/proc/cpuinfo` or the MIDR.
    pub model: Option<String>,
    /// The arm64 MIDR_EL1, in sysfs hex form.
    pub midr: Option<String>,
}
