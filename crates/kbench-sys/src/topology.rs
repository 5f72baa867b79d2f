//! Per-CPU topology from sysfs: ids, SMT siblings, last-level cache, frequency range,
//! capacity, and the CPU class each CPU belongs to.
use crate::classes::{classify, CpuClass};
pub use crate::cpu::{Arch, Cpu};
use crate::cpufreq::{policy_of, read_policies, CpufreqPolicy};
use crate::cpuinfo::CpuInfo;
use crate::midr::Midr;
use crate::{format_cpulist, SysError, Sysroot};
use serde::{Deserialize, Serialize};

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// The CPUs of the machine and their classes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// The architecture family.
    pub arch: Arch,
    /// Every CPU that exists (present or with a `cpuN` directory), by number.
    pub cpus: Vec<Cpu>,
    /// The CPU classes, ordered from least to most capable: `classes[0]` is `class:little`,
    /// the last one is `class:big`.
    pub classes: Vec<CpuClass>,
}

impl Topology {
    /// Reads the topology under `root`. Fails only when no CPU at all can be found (no
    /// `cpuN` directory, no `present` list and no processor in `/proc/cpuinfo`).
    pub fn read(root: &Sysroot) -> Result<Topology, SysError> {
        let cpuinfo = CpuInfo::read(root);
        let policies = read_policies(root);
        let arch = Arch::detect(root, &cpuinfo);
        let ids = cpu_ids(root, &cpuinfo);
        if ids.is_empty() {
            return Err(SysError::Sysroot {
                path: root.root().to_path_buf(),
                reason:
                    "no CPUs found (no sys/devices/system/cpu/cpuN, present list or /proc/cpuinfo)"
                        .to_string(),
            });
        }
        let online = root.read_cpulist(&format!("{CPU_DIR}/online"));
        let mut cpus: Vec<Cpu> = ids
            .iter()
            .map(|&id| read_cpu(root, id, online.as_deref(), &cpuinfo, &policies))
            .collect();
        let classes = classify(root, arch, &cpuinfo, &policies, &mut cpus);
        Ok(Topology {
            arch,
            cpus,
            classes,
        })
    }

    /// The CPU with this number.
    pub fn cpu(&self, id: u32) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.cpu == id)
    }

    /// The numbers of the online CPUs.
    pub fn online_cpus(&self) -> Vec<u32> {
        self.cpus
            .iter()
            .filter(|c| c.online)
            .map(|c| c.cpu)
            .collect()
    }

    /// The numbers of all CPUs, online or not.
    pub fn all_cpus(&self) -> Vec<u32> {
        self.cpus.iter().map(|c| c.cpu).collect()
    }

    /// The class with this name (case-insensitive).
    pub fn class(&self, name: &str) -> Option<&CpuClass> {
        self.classes
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The class a CPU belongs to.
    pub fn class_of(&self, cpu: u32) -> Option<&CpuClass> {
        self.classes.iter().find(|c| c.cpus.contains(&cpu))
    }

    /// A partner for `cpu` among `allowed`, for two tasks that must run on two CPUs:
    /// the first that is not its SMT sibling (a sibling shares the core, a different
    /// and much cheaper path) and of its class (another class is another speed), then
    /// the first not a sibling, then any other. `None` when `allowed` has no other CPU.
    pub fn partner(&self, cpu: u32, allowed: &[u32]) -> Option<u32> {
        let (siblings, class) = match self.cpu(cpu) {
            Some(c) => (c.smt_siblings.as_slice(), c.class.as_str()),
            None => (&[][..], ""),
        };
        let rank = |other: u32| {
            let sibling = siblings.contains(&other);
            let other_class = self.cpu(other).map_or("", |c| c.class.as_str()) != class;
            (sibling, other_class)
        };
        allowed
            .iter()
            .copied()
            .filter(|&c| c != cpu)
            .min_by_key(|&c| rank(c))
    }

    /// The most capable class (`class:big`).
    pub fn big_class(&self) -> Option<&CpuClass> {
        self.classes.last()
    }

    /// The least capable class (`class:little`).
    pub fn little_class(&self) -> Option<&CpuClass> {
        self.classes.first()
    }

    /// True when the machine has more than one CPU class (big.LITTLE, P/E cores).
    pub fn is_heterogeneous(&self) -> bool {
        self.classes.len() > 1
    }

    /// One line per class: `Cortex-A53  0-3  capacity 381`, for logs and tests.
    pub fn summary(&self) -> String {
        self.classes
            .iter()
            .map(|c| {
                let cap = c.capacity.map_or("-".to_string(), |v| v.to_string());
                format!("{} {} {}", c.name, format_cpulist(&c.cpus), cap)
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// All CPU numbers: `cpuN` directories, the `present` and `possible`-but-listed CPUs, and,
/// when sysfs is absent, the processors of `/proc/cpuinfo`.
fn cpu_ids(root: &Sysroot, cpuinfo: &CpuInfo) -> Vec<u32> {
    let mut ids = root.numbered_entries(CPU_DIR, "cpu");
    ids.extend(
        root.read_cpulist(&format!("{CPU_DIR}/present"))
            .unwrap_or_default(),
    );
    if ids.is_empty() {
        ids.extend(cpuinfo.processors.iter().filter_map(|p| p.cpu));
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn read_cpu(
    root: &Sysroot,
    id: u32,
    online: Option<&[u32]>,
    cpuinfo: &CpuInfo,
    policies: &[CpufreqPolicy],
) -> Cpu {
    let dir = format!("{CPU_DIR}/cpu{id}");
    let topo = |name: &str| format!("{dir}/topology/{name}");
    let (llc_cpus, llc_level, llc_size) = read_llc(root, &dir);
    let policy = policy_of(policies, id);
    let midr = root
        .read(&format!("{dir}/regs/identification/midr_el1"))
        .and_then(|t| Midr::parse(&t))
        .or_else(|| cpuinfo.processor(id).and_then(|p| p.midr()));
    Cpu {
        cpu: id,
        online: is_online(root, id, online),
        package_id: read_id(root, &topo("physical_package_id")),
        die_id: read_id(root, &topo("die_id")),
        cluster_id: read_id(root, &topo("cluster_id")),
        core_id: read_id(root, &topo("core_id")),
        smt_siblings: root
            .read_cpulist(&topo("thread_siblings_list"))
            .or_else(|| root.read_cpulist(&topo("core_cpus_list")))
            .unwrap_or_default(),
        llc_cpus,
        llc_level,
        llc_size,
        min_khz: policy.and_then(|p| p.cpuinfo_min_khz),
        max_khz: policy.and_then(|p| p.cpuinfo_max_khz),
        capacity: root.read_parse(&format!("{dir}/cpu_capacity")),
        class: String::new(),
        model: midr
            .map(|m| m.core_name())
            .or_else(|| cpuinfo.processor(id).and_then(|p| p.model_name())),
        midr: midr.map(|m| m.to_hex()),
    }
}

/// Online if the CPU's own `online` file says 1; else per the global `online` list; else
/// assumed online (x86 CPU 0 has no `online` file and cannot go offline).
fn is_online(root: &Sysroot, id: u32, online: Option<&[u32]>) -> bool {
    if let Some(flag) = crate::cpufreq::read_bool(root, &format!("{CPU_DIR}/cpu{id}/online")) {
        return flag;
    }
    online.is_none_or(|list| list.contains(&id))
}

/// A topology id; the kernel prints -1 (and x86 65535 for `cluster_id`) for "not known".
fn read_id(root: &Sysroot, abs: &str) -> Option<u32> {
    let value: i64 = root.read_parse(abs)?;
    (0..65535).contains(&value).then_some(value as u32)
}

/// The highest-level data or unified cache: (its CPUs, level, size).
fn read_llc(root: &Sysroot, cpu_dir: &str) -> (Vec<u32>, Option<u32>, Option<String>) {
    let cache_dir = format!("{cpu_dir}/cache");
    let best = root
        .numbered_entries(&cache_dir, "index")
        .into_iter()
        .map(|k| format!("{cache_dir}/index{k}"))
        .filter(|dir| root.read_trimmed(&format!("{dir}/type")).as_deref() != Some("Instruction"))
        .filter_map(|dir| Some((root.read_parse::<u32>(&format!("{dir}/level"))?, dir)))
        .max_by_key(|(level, _)| *level);
    match best {
        Some((level, dir)) => (
            root.read_cpulist(&format!("{dir}/shared_cpu_list"))
                .unwrap_or_default(),
            Some(level),
            root.read_value(&format!("{dir}/size")),
        ),
        None => (Vec::new(), None, None),
    }
}
