//! The environment snapshot stored with every session, and the differences between two.
use crate::cmdline::{isolcpus_cpus, kernel_param};
use crate::cpufreq::{policy_of, read_policies, BoostState};
use crate::cpuidle::CpuIdle;
use crate::cpuinfo::CpuInfo;
use crate::topology::{Arch, Topology};
use crate::virt::Virtualization;
use crate::{format_cpulist, parse_cpulist, CpuClass, Sysroot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything about the machine that can change a benchmark result, captured once per
/// session. Every field is optional or may be empty: VMs lack cpufreq, boards lack DMI,
/// minimal initramfs boots lack half of /proc. A stored snapshot without some of
/// these keys (an older version's) reads with them empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvSnapshot {
    /// `/proc/sys/kernel/hostname`: with the CPU models, which machine this is (a
    /// calibration of one machine's noise is never used for another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Which of several machines of one host name and CPU models this is
    /// ([`crate::machine_id::detect`], or the name `--machine-id` gave).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// `/proc/sys/kernel/osrelease` (`uname -r`).
    pub kernel_release: Option<String>,
    /// `/proc/sys/kernel/version` (`uname -v`: build number, preempt model, date).
    pub kernel_version: Option<String>,
    /// `/proc/cmdline`.
    pub cmdline: Option<String>,
    /// The architecture family.
    pub arch: Option<Arch>,
    /// Distinct CPU model / core names.
    pub cpu_models: Vec<String>,
    /// x86 microcode revisions seen in cpuinfo (distinct).
    pub microcode: Vec<String>,
    /// Online CPUs, cpulist form.
    pub online_cpus: Option<String>,
    /// Present CPUs, cpulist form.
    pub present_cpus: Option<String>,
    /// SMT state.
    pub smt: SmtState,
    /// cpufreq state per CPU (only CPUs with a policy).
    pub cpufreq: Vec<CpuFreqState>,
    /// Boost/turbo controls.
    pub boost: BoostState,
    /// Whether boost/turbo is on, from [`BoostState::enabled`].
    pub boost_enabled: Option<bool>,
    /// CPU isolation from the command line and sysfs.
    pub isolation: Isolation,
    /// cpuidle driver, governor and states.
    pub cpuidle: CpuIdle,
    /// Transparent huge pages: the selected `enabled` and `defrag` modes.
    pub thp_enabled: Option<String>,
    /// See `thp_enabled`.
    pub thp_defrag: Option<String>,
    /// `/proc/sys/kernel/randomize_va_space` (2 = full ASLR).
    pub aslr: Option<u32>,
    /// `/proc/loadavg`: 1, 5 and 15 minute averages.
    pub load_average: Option<[f64; 3]>,
    /// `/proc/loadavg`: runnable tasks (including the reader).
    pub runnable_tasks: Option<u32>,
    /// The hypervisor, if any.
    pub virtualization: Virtualization,
    /// The current clocksource.
    pub clocksource: Option<String>,
    /// The available clocksources.
    pub clocksources_available: Vec<String>,
    /// `/proc/sys/kernel/random/boot_id`: identifies the boot (the unit of replication).
    pub boot_id: Option<String>,
    /// CPU vulnerability mitigations (`/sys/devices/system/cpu/vulnerabilities/*`).
    pub mitigations: BTreeMap<String, String>,
    /// The CPU classes.
    pub classes: Vec<CpuClass>,
}

/// SMT (hyper-threading) state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmtState {
    /// `smt/control`: `on`, `off`, `forceoff`, `notsupported`, `notimplemented`.
    pub control: Option<String>,
    /// `smt/active`: whether any core runs two threads now.
    pub active: Option<bool>,
    /// Derived from the topology: some online CPU has an online sibling.
    pub siblings_online: bool,
}

/// cpufreq state of one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFreqState {
    /// The CPU.
    pub cpu: u32,
    /// `scaling_driver`.
    pub driver: Option<String>,
    /// `scaling_governor`.
    pub governor: Option<String>,
    /// `scaling_min_freq`, kHz.
    pub min_khz: Option<u64>,
    /// `scaling_max_freq`, kHz.
    pub max_khz: Option<u64>,
}

/// CPU isolation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Isolation {
    /// The `isolcpus=` parameter as given (flags included).
    pub isolcpus_param: Option<String>,
    /// The CPUs of `isolcpus=`.
    pub isolcpus: Vec<u32>,
    /// The `nohz_full=` parameter.
    pub nohz_full_param: Option<String>,
    /// The `rcu_nocbs=` parameter.
    pub rcu_nocbs_param: Option<String>,
    /// `/sys/devices/system/cpu/isolated`.
    pub isolated: Option<Vec<u32>>,
    /// `/sys/devices/system/cpu/nohz_full`.
    pub nohz_full: Option<Vec<u32>>,
}

impl Isolation {
    /// All CPUs isolated one way or another (isolcpus, sysfs isolated, nohz_full).
    pub fn isolated_cpus(&self) -> Vec<u32> {
        let mut all = self.isolcpus.clone();
        all.extend(self.isolated.iter().flatten());
        all.extend(self.nohz_full.iter().flatten());
        all.sort_unstable();
        all.dedup();
        all
    }
}

impl EnvSnapshot {
    /// Captures the environment under `root`. Never fails; what cannot be read stays empty.
    pub fn capture(root: &Sysroot) -> EnvSnapshot {
        let cpuinfo = CpuInfo::read(root);
        let topology = Topology::read(root).ok();
        let policies = read_policies(root);
        let boost = BoostState::read(root, &policies);
        let cmdline = root.read_value("/proc/cmdline");
        let (load_average, runnable_tasks) = read_loadavg(root);
        let cpufreq = topology
            .iter()
            .flat_map(|t| t.cpus.iter())
            .filter_map(|cpu| {
                let p = policy_of(&policies, cpu.cpu)?;
                Some(CpuFreqState {
                    cpu: cpu.cpu,
                    driver: p.driver.clone(),
                    governor: p.governor.clone(),
                    min_khz: p.scaling_min_khz,
                    max_khz: p.scaling_max_khz,
                })
            })
            .collect();
        EnvSnapshot {
            hostname: root.read_value("/proc/sys/kernel/hostname"),
            machine_id: crate::machine_id::detect(root),
            kernel_release: root.read_value("/proc/sys/kernel/osrelease"),
            kernel_version: root.read_value("/proc/sys/kernel/version"),
            arch: topology.as_ref().map(|t| t.arch),
            cpu_models: cpu_models(&cpuinfo, topology.as_ref()),
            microcode: distinct(cpuinfo.processors.iter().filter_map(|p| p.get("microcode"))),
            online_cpus: root
                .read_value("/sys/devices/system/cpu/online")
                .or_else(|| topology.as_ref().map(|t| format_cpulist(&t.online_cpus()))),
            present_cpus: root.read_value("/sys/devices/system/cpu/present"),
            smt: read_smt(root, topology.as_ref()),
            cpufreq,
            boost_enabled: boost.enabled(),
            boost,
            isolation: read_isolation(root, cmdline.as_deref().unwrap_or("")),
            cpuidle: CpuIdle::read(root),
            thp_enabled: read_bracketed(root, "/sys/kernel/mm/transparent_hugepage/enabled"),
            thp_defrag: read_bracketed(root, "/sys/kernel/mm/transparent_hugepage/defrag"),
            aslr: root.read_parse("/proc/sys/kernel/randomize_va_space"),
            load_average,
            runnable_tasks,
            virtualization: Virtualization::detect(root, &cpuinfo),
            clocksource: root
                .read_value("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            clocksources_available: root
                .read("/sys/devices/system/clocksource/clocksource0/available_clocksource")
                .map(|s| s.split_whitespace().map(String::from).collect())
                .unwrap_or_default(),
            boot_id: root.read_value("/proc/sys/kernel/random/boot_id"),
            mitigations: read_mitigations(root),
            classes: topology.map(|t| t.classes).unwrap_or_default(),
            cmdline,
        }
    }

    /// The snapshot as flat `key → value` strings, the form [`EnvSnapshot::differences`]
    /// compares. Per-CPU values are grouped into `value (cpulist)` so that a governor change
    /// on 128 CPUs is one line, not 128.
    pub fn flatten(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let serde_json::Value::Object(map) = value {
            for (key, v) in map {
                if key == "cpufreq" || key == "classes" {
                    continue;
                }
                flatten_into(&key, &v, &mut out);
            }
        }
        self.flatten_cpufreq(&mut out);
        for class in &self.classes {
            let cap = class.capacity.map_or("-".to_string(), |c| c.to_string());
            out.insert(
                format!("classes.{}", class.name),
                format!("{} capacity {cap}", class.cpulist()),
            );
        }
        out
    }

    fn flatten_cpufreq(&self, out: &mut BTreeMap<String, String>) {
        type Field = fn(&CpuFreqState) -> Option<String>;
        let fields: [(&str, Field); 4] = [
            ("driver", |s| s.driver.clone()),
            ("governor", |s| s.governor.clone()),
            ("min_khz", |s| s.min_khz.map(|v| v.to_string())),
            ("max_khz", |s| s.max_khz.map(|v| v.to_string())),
        ];
        for (name, get) in fields {
            let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
            for state in &self.cpufreq {
                if let Some(v) = get(state) {
                    groups.entry(v).or_default().push(state.cpu);
                }
            }
            if groups.is_empty() {
                continue;
            }
            let text = if groups.len() == 1 {
                groups.into_keys().next().unwrap_or_default()
            } else {
                groups
                    .iter()
                    .map(|(v, cpus)| format!("{v} ({})", format_cpulist(cpus)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.insert(format!("cpufreq.{name}"), text);
        }
    }

    /// The keys whose values differ between two snapshots, as `(key, a, b)`, with
    /// `(absent)` for a key only one side has. Keys that change on their own between any two
    /// captures are left out: [`EnvSnapshot::VOLATILE_KEYS`] (load average, runnable tasks).
    /// `boot_id` is kept: it tells whether two sessions share a boot.
    pub fn differences(a: &EnvSnapshot, b: &EnvSnapshot) -> Vec<(String, String, String)> {
        let fa = a.flatten();
        let fb = b.flatten();
        let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
        keys.sort();
        keys.dedup();
        let absent = "(absent)".to_string();
        keys.into_iter()
            .filter(|k| !Self::VOLATILE_KEYS.iter().any(|v| k.starts_with(v)))
            .filter_map(|k| {
                let va = fa.get(k).unwrap_or(&absent);
                let vb = fb.get(k).unwrap_or(&absent);
                (va != vb).then(|| (k.clone(), va.clone(), vb.clone()))
            })
            .collect()
    }

    /// Key prefixes that [`EnvSnapshot::differences`] ignores.
    pub const VOLATILE_KEYS: &'static [&'static str] = &["load_average", "runnable_tasks"];
}

/// Flattens a JSON value into dotted keys; arrays of scalars become one comma-joined value.
fn flatten_into(prefix: &str, value: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    use serde_json::Value;
    match value {
        Value::Null => {}
        Value::Object(map) => {
            for (k, v) in map {
                flatten_into(&format!("{prefix}.{k}"), v, out);
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let joined: Vec<String> = items.iter().map(scalar_text).collect();
            out.insert(prefix.to_string(), joined.join(","));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten_into(&format!("{prefix}.{i}"), item, out);
            }
        }
        scalar => {
            out.insert(prefix.to_string(), scalar_text(scalar));
        }
    }
}

fn scalar_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.iter().any(|o| o == item) {
            out.push(item.to_string());
        }
    }
    out
}

/// Model names from cpuinfo; on arm64, whose cpuinfo has none, the core names.
fn cpu_models(cpuinfo: &CpuInfo, topology: Option<&Topology>) -> Vec<String> {
    let names = cpuinfo.model_names();
    if !names.is_empty() {
        return names;
    }
    let models = topology
        .iter()
        .flat_map(|t| t.cpus.iter())
        .filter_map(|c| c.model.as_deref());
    distinct(models)
}

fn read_loadavg(root: &Sysroot) -> (Option<[f64; 3]>, Option<u32>) {
    let Some(text) = root.read("/proc/loadavg") else {
        return (None, None);
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let load = |i: usize| words.get(i).and_then(|w| w.parse::<f64>().ok());
    let averages = match (load(0), load(1), load(2)) {
        (Some(a), Some(b), Some(c)) => Some([a, b, c]),
        _ => None,
    };
    let runnable = words
        .get(3)
        .and_then(|w| w.split_once('/'))
        .and_then(|(r, _)| r.parse().ok());
    (averages, runnable)
}

fn read_smt(root: &Sysroot, topology: Option<&Topology>) -> SmtState {
    let siblings_online = topology.is_some_and(|t| {
        t.cpus.iter().filter(|c| c.online).any(|c| {
            c.smt_siblings
                .iter()
                .any(|&s| s != c.cpu && t.cpu(s).is_some_and(|sib| sib.online))
        })
    });
    SmtState {
        control: root.read_value("/sys/devices/system/cpu/smt/control"),
        active: crate::cpufreq::read_bool(root, "/sys/devices/system/cpu/smt/active"),
        siblings_online,
    }
}

fn read_isolation(root: &Sysroot, cmdline: &str) -> Isolation {
    let isolcpus_param = kernel_param(cmdline, "isolcpus");
    Isolation {
        isolcpus: isolcpus_param
            .as_deref()
            .and_then(isolcpus_cpus)
            .unwrap_or_default(),
        isolcpus_param,
        nohz_full_param: kernel_param(cmdline, "nohz_full"),
        rcu_nocbs_param: kernel_param(cmdline, "rcu_nocbs"),
        isolated: root
            .read("/sys/devices/system/cpu/isolated")
            .and_then(|t| parse_cpulist(&t).ok()),
        nohz_full: root
            .read("/sys/devices/system/cpu/nohz_full")
            .and_then(|t| parse_cpulist(t.trim().trim_start_matches("(null)")).ok()),
    }
}

/// The `[selected]` word of a sysfs choice file (`always [madvise] never`).
fn read_bracketed(root: &Sysroot, abs: &str) -> Option<String> {
    let text = root.read(abs)?;
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

fn read_mitigations(root: &Sysroot) -> BTreeMap<String, String> {
    let dir = "/sys/devices/system/cpu/vulnerabilities";
    root.list_dir(dir)
        .into_iter()
        .filter_map(|name| {
            let value = root.read_value(&format!("{dir}/{name}"))?;
            Some((name, value))
        })
        .collect()
}
