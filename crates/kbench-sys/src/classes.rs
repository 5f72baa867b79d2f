//! CPU classes: groups of CPUs of the same kind (Cortex-A53 vs Cortex-A72, P-core vs
//! E-core), which `--cpus class:NAME` selects and every run record names.
//!
//! Sources, most specific first:
//! 1. x86 hybrid: `/sys/devices/cpu_core/cpus`, `cpu_atom/cpus` (and `cpu_lowpower/cpus`);
//! 2. arm64: the MIDR (`cpuN/regs/identification/midr_el1` or the cpuinfo fields);
//! 3. riscv: `uarch`, else `mvendorid`/`marchid` in cpuinfo;
//! 4. anything else: the cpuinfo model name.
//!
//! CPUs of one kind but different `cpu_capacity` (a "prime" Cortex-X clocked higher than
//! its siblings, say) form separate classes, because capacity is what the scheduler sees.
use crate::cpu::{Arch, Cpu};
use crate::cpufreq::{policy_of, CpufreqPolicy};
use crate::cpuinfo::CpuInfo;
use crate::{format_cpulist, Sysroot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a class name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClassSource {
    /// x86 hybrid PMU CPU lists (`cpu_core`, `cpu_atom`).
    Hybrid,
    /// The arm64 Main ID Register.
    Midr,
    /// RISC-V `uarch` / `mvendorid` / `marchid`.
    Riscv,
    /// The cpuinfo model name.
    Model,
    /// Inferred for an offline CPU from its capacity or cpufreq policy.
    Inferred,
    /// Nothing known.
    Unknown,
}

/// A set of CPUs of the same kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuClass {
    /// The class name (`Cortex-A53`, `P-core`, `sifive,u74-mc`, `AMD EPYC`).
    pub name: String,
    /// Its CPUs, online or not, sorted.
    pub cpus: Vec<u32>,
    /// The `cpu_capacity` of its CPUs (1024 = most capable), where the kernel has it.
    pub capacity: Option<u32>,
    /// The highest `cpuinfo_max_freq` among its CPUs, in kHz.
    pub max_khz: Option<u64>,
    /// The coarse performance tier used to order classes without capacities (see
    /// [`crate::midr::CoreInfo::tier`]; P-core 2, E-core 1).
    pub tier: u8,
    /// Where the name came from.
    pub source: ClassSource,
}

impl CpuClass {
    /// The CPUs in kernel cpulist form (`0-3`).
    pub fn cpulist(&self) -> String {
        format_cpulist(&self.cpus)
    }
}

/// What one CPU is, before grouping.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kind {
    name: String,
    tier: u8,
    source: ClassSource,
}

/// Assigns every CPU a class (sets `Cpu::class`) and returns the classes, least capable
/// first.
pub(crate) fn classify(
    root: &Sysroot,
    arch: Arch,
    cpuinfo: &CpuInfo,
    policies: &[CpufreqPolicy],
    cpus: &mut [Cpu],
) -> Vec<CpuClass> {
    let hybrid = read_hybrid_lists(root);
    let single_model = single_model_name(cpuinfo);
    let mut kinds: Vec<Option<Kind>> = cpus
        .iter()
        .map(|cpu| kind_of(cpu, arch, cpuinfo, &hybrid, single_model.as_deref()))
        .collect();
    infer_missing_kinds(cpus, policies, &mut kinds);
    let classes = group_into_classes(cpus, &kinds);
    for cpu in cpus.iter_mut() {
        if let Some(class) = classes.iter().find(|c| c.cpus.contains(&cpu.cpu)) {
            cpu.class = class.name.clone();
        }
    }
    classes
}

/// The x86 hybrid PMU lists: (class name, tier, CPUs).
fn read_hybrid_lists(root: &Sysroot) -> Vec<(&'static str, u8, Vec<u32>)> {
    [
        ("cpu_core", "P-core", 2),
        ("cpu_atom", "E-core", 1),
        ("cpu_lowpower", "LP-E-core", 0),
    ]
    .into_iter()
    .filter_map(|(pmu, name, tier)| {
        let cpus = root.read_cpulist(&format!("/sys/devices/{pmu}/cpus"))?;
        Some((name, tier, cpus))
    })
    .collect()
}

/// The model name when every processor block agrees on one (used for CPUs that are offline
/// and so missing from cpuinfo).
fn single_model_name(cpuinfo: &CpuInfo) -> Option<String> {
    let names = cpuinfo.model_names();
    (names.len() == 1).then(|| names[0].clone())
}

fn kind_of(
    cpu: &Cpu,
    arch: Arch,
    cpuinfo: &CpuInfo,
    hybrid: &[(&'static str, u8, Vec<u32>)],
    single_model: Option<&str>,
) -> Option<Kind> {
    let kind = |name: String, tier: u8, source: ClassSource| Some(Kind { name, tier, source });
    if let Some((name, tier, _)) = hybrid.iter().find(|(_, _, list)| list.contains(&cpu.cpu)) {
        return kind(name.to_string(), *tier, ClassSource::Hybrid);
    }
    if let Some(midr) = cpu.midr.as_deref().and_then(crate::midr::Midr::parse) {
        return kind(midr.core_name(), midr.tier(), ClassSource::Midr);
    }
    let block = cpuinfo.processor(cpu.cpu);
    if arch == Arch::Riscv {
        if let Some(name) = block.and_then(riscv_core_name) {
            return kind(name, 0, ClassSource::Riscv);
        }
    }
    let model = block
        .and_then(|b| b.model_name())
        .or(single_model.map(String::from));
    model.and_then(|name| kind(name, 0, ClassSource::Model))
}

/// `uarch` when the kernel prints it (6.2+), else the vendor and architecture ids.
fn riscv_core_name(block: &crate::cpuinfo::ProcessorInfo) -> Option<String> {
    if let Some(uarch) = block.get("uarch") {
        return Some(uarch.to_string());
    }
    let vendor = block.get("mvendorid")?;
    let arch = block.get("marchid").unwrap_or("0x0");
    Some(format!("riscv {vendor}/{arch}"))
}

/// Offline CPUs are missing from cpuinfo (and on arm64 lose their `regs` directory): give
/// them the kind of an identified CPU in the same cpufreq policy, else of one with the same
/// `cpu_capacity` (which stays readable while offline).
fn infer_missing_kinds(cpus: &[Cpu], policies: &[CpufreqPolicy], kinds: &mut [Option<Kind>]) {
    for i in 0..cpus.len() {
        if kinds[i].is_some() {
            continue;
        }
        let same_policy = policy_of(policies, cpus[i].cpu)
            .map(|p| p.cpus.clone())
            .unwrap_or_default();
        let donor = (0..cpus.len())
            .filter(|&j| kinds[j].is_some())
            .find(|&j| same_policy.contains(&cpus[j].cpu))
            .or_else(|| {
                (0..cpus.len())
                    .filter(|&j| kinds[j].is_some())
                    .find(|&j| cpus[i].capacity.is_some() && cpus[j].capacity == cpus[i].capacity)
            });
        kinds[i] = Some(match donor {
            Some(j) => Kind {
                source: ClassSource::Inferred,
                ..kinds[j].clone().expect("donor has a kind")
            },
            None => Kind {
                name: "unknown".to_string(),
                tier: 0,
                source: ClassSource::Unknown,
            },
        });
    }
}

/// Groups CPUs by kind and capacity. A kind seen with several capacities is split into one
/// class per capacity, named `NAME@CAPACITY`; a CPU without a capacity joins the kind's only
/// capacity group when there is just one.
fn group_into_classes(cpus: &[Cpu], kinds: &[Option<Kind>]) -> Vec<CpuClass> {
    let mut capacities_by_name: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (cpu, kind) in cpus.iter().zip(kinds) {
        let entry = capacities_by_name.entry(kind_name(kind)).or_default();
        if let Some(cap) = cpu.capacity {
            if !entry.contains(&cap) {
                entry.push(cap);
            }
        }
    }
    let mut classes: Vec<CpuClass> = Vec::new();
    for (cpu, kind) in cpus.iter().zip(kinds) {
        let base = kind_name(kind);
        let caps = &capacities_by_name[&base];
        let (name, capacity) = match (caps.len(), cpu.capacity) {
            (0, _) => (base.clone(), None),
            (1, _) => (base.clone(), Some(caps[0])),
            (_, Some(cap)) => (format!("{base}@{cap}"), Some(cap)),
            (_, None) => (base.clone(), None),
        };
        match classes.iter_mut().find(|c| c.name == name) {
            Some(class) => {
                class.cpus.push(cpu.cpu);
                class.max_khz = class.max_khz.max(cpu.max_khz);
                if class.source == ClassSource::Inferred {
                    class.source = kind.as_ref().map_or(ClassSource::Unknown, |k| k.source);
                }
            }
            None => classes.push(CpuClass {
                name,
                cpus: vec![cpu.cpu],
                capacity,
                max_khz: cpu.max_khz,
                tier: kind.as_ref().map_or(0, |k| k.tier),
                source: kind.as_ref().map_or(ClassSource::Unknown, |k| k.source),
            }),
        }
    }
    classes.sort_by_key(|c| (c.capacity, c.tier, c.max_khz, c.cpus[0]));
    classes
}

fn kind_name(kind: &Option<Kind>) -> String {
    kind.as_ref()
        .map_or_else(|| "unknown".to_string(), |k| k.name.clone())
}
