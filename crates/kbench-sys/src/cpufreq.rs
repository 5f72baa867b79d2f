//! cpufreq policies, boost/turbo state (`/sys/devices/system/cpu/cpufreq`).
use crate::Sysroot;
use serde::{Deserialize, Serialize};

const CPUFREQ_DIR: &str = "/sys/devices/system/cpu/cpufreq";

/// One cpufreq policy: a set of CPUs that share a clock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpufreqPolicy {
    /// The directory under which the policy lives, e.g. `/sys/devices/system/cpu/cpufreq/policy4`.
    pub dir: String,
    /// The CPUs sharing this policy (`related_cpus`, online or not).
    pub cpus: Vec<u32>,
    /// `scaling_driver` (`intel_pstate`, `cpufreq-dt`, `acpi-cpufreq`...).
    pub driver: Option<String>,
    /// `scaling_governor`.
    pub governor: Option<String>,
    /// `scaling_available_governors`, split.
    pub available_governors: Vec<String>,
    /// `scaling_min_freq` in kHz: the current lower limit.
    pub scaling_min_khz: Option<u64>,
    /// `scaling_max_freq` in kHz: the current upper limit.
    pub scaling_max_khz: Option<u64>,
    /// `cpuinfo_min_freq` in kHz: the hardware minimum.
    pub cpuinfo_min_khz: Option<u64>,
    /// `cpuinfo_max_freq` in kHz: the hardware maximum (with boost where the driver counts it).
    pub cpuinfo_max_khz: Option<u64>,
    /// The per-policy `boost` file of newer kernels (amd-pstate, acpi-cpufreq since 6.11).
    pub boost: Option<bool>,
}

/// Reads every cpufreq policy. Policies are found under `cpufreq/policyN`; for older kernels
/// that only have `cpuN/cpufreq`, each such directory becomes a one-CPU policy.
pub fn read_policies(root: &Sysroot) -> Vec<CpufreqPolicy> {
    let mut policies: Vec<CpufreqPolicy> = root
        .numbered_entries(CPUFREQ_DIR, "policy")
        .into_iter()
        .map(|n| read_policy(root, &format!("{CPUFREQ_DIR}/policy{n}"), n))
        .collect();
    if policies.is_empty() {
        for cpu in root.numbered_entries("/sys/devices/system/cpu", "cpu") {
            let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
            if root.exists(&dir) {
                policies.push(read_policy(root, &dir, cpu));
            }
        }
    }
    policies
}

fn read_policy(root: &Sysroot, dir: &str, first_cpu: u32) -> CpufreqPolicy {
    let file = |name: &str| format!("{dir}/{name}");
    let cpus = root
        .read_cpulist(&file("related_cpus"))
        .or_else(|| root.read_cpulist(&file("affected_cpus")))
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| vec![first_cpu]);
    CpufreqPolicy {
        dir: dir.to_string(),
        cpus,
        driver: root.read_value(&file("scaling_driver")),
        governor: root.read_value(&file("scaling_governor")),
        available_governors: root
            .read(&file("scaling_available_governors"))
            .map(|s| s.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
        scaling_min_khz: root.read_parse(&file("scaling_min_freq")),
        scaling_max_khz: root.read_parse(&file("scaling_max_freq")),
        cpuinfo_min_khz: root.read_parse(&file("cpuinfo_min_freq")),
        cpuinfo_max_khz: root.read_parse(&file("cpuinfo_max_freq")),
        boost: read_bool(root, &file("boost")),
    }
}

/// The policy that covers a CPU.
pub fn policy_of(policies: &[CpufreqPolicy], cpu: u32) -> Option<&CpufreqPolicy> {
    policies.iter().find(|p| p.cpus.contains(&cpu))
}

/// Reads a `0`/`1` sysfs flag.
pub(crate) fn read_bool(root: &Sysroot, abs: &str) -> Option<bool> {
    match root.read_trimmed(abs)?.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// Frequency boost (Intel Turbo Boost, AMD Core Performance Boost, Arm boost OPPs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoostState {
    /// `cpufreq/boost` (acpi-cpufreq, cpufreq-dt with boost OPPs, amd-pstate passive).
    pub cpufreq_boost: Option<bool>,
    /// `intel_pstate/no_turbo` (1 = turbo off).
    pub intel_no_turbo: Option<bool>,
    /// `intel_pstate/status` (`active`, `passive`, `off`).
    pub intel_pstate_status: Option<String>,
    /// True if any per-policy `boost` file says 1.
    pub policy_boost_any: Option<bool>,
}

impl BoostState {
    /// Reads the boost controls (all optional).
    pub fn read(root: &Sysroot, policies: &[CpufreqPolicy]) -> BoostState {
        let per_policy: Vec<bool> = policies.iter().filter_map(|p| p.boost).collect();
        BoostState {
            cpufreq_boost: read_bool(root, &format!("{CPUFREQ_DIR}/boost")),
            intel_no_turbo: read_bool(root, "/sys/devices/system/cpu/intel_pstate/no_turbo"),
            intel_pstate_status: root.read_value("/sys/devices/system/cpu/intel_pstate/status"),
            policy_boost_any: (!per_policy.is_empty()).then(|| per_policy.iter().any(|b| *b)),
        }
    }

    /// Whether boost/turbo is on: `Some(true)` if any control says so, `None` if the
    /// machine exposes no control at all.
    pub fn enabled(&self) -> Option<bool> {
        let signals = [
            self.cpufreq_boost,
            self.intel_no_turbo.map(|no| !no),
            self.policy_boost_any,
        ];
        let known: Vec<bool> = signals.into_iter().flatten().collect();
        (!known.is_empty()).then(|| known.iter().any(|b| *b))
    }
}
