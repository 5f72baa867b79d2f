//! cpuidle driver, governor and idle states (`/sys/devices/system/cpu/cpuidle`, `cpuN/cpuidle`).
use crate::Sysroot;
use serde::{Deserialize, Serialize};

/// The idle configuration of the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuIdle {
    /// `cpuidle/current_driver` (`intel_idle`, `psci_idle`, `haltpoll`, `none`...).
    pub driver: Option<String>,
    /// `cpuidle/current_governor` (or `current_governor_ro`): `menu`, `teo`, `ladder`...
    pub governor: Option<String>,
    /// The states of the first CPU that has any (states are per CPU but almost always
    /// identical within a CPU class), with which CPUs have each one disabled.
    pub states: Vec<IdleState>,
}

/// One idle state (`cpuN/cpuidle/stateK`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleState {
    /// K in `stateK`.
    pub index: u32,
    /// `name` (`POLL`, `C1E`, `WFI`, `cpu-sleep`).
    pub name: String,
    /// `desc`.
    pub desc: Option<String>,
    /// `latency`: exit latency in microseconds.
    pub latency_us: Option<u64>,
    /// `residency`: target residency in microseconds.
    pub residency_us: Option<u64>,
    /// CPUs on which `disable` is 1 for this state.
    pub disabled_cpus: Vec<u32>,
}

impl CpuIdle {
    /// Reads the idle configuration; all fields stay empty where cpuidle is absent.
    pub fn read(root: &Sysroot) -> CpuIdle {
        let base = "/sys/devices/system/cpu/cpuidle";
        let cpus = root.numbered_entries("/sys/devices/system/cpu", "cpu");
        let states = cpus
            .iter()
            .find(|cpu| !state_indices(root, **cpu).is_empty())
            .map(|first| read_states(root, *first, &cpus))
            .unwrap_or_default();
        CpuIdle {
            driver: root.read_value(&format!("{base}/current_driver")),
            governor: root
                .read_value(&format!("{base}/current_governor"))
                .or_else(|| root.read_value(&format!("{base}/current_governor_ro"))),
            states,
        }
    }

    /// The largest exit latency among states enabled on at least one CPU.
    pub fn deepest_latency_us(&self) -> Option<u64> {
        self.states.iter().filter_map(|s| s.latency_us).max()
    }
}

fn state_indices(root: &Sysroot, cpu: u32) -> Vec<u32> {
    root.numbered_entries(
        &format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle"),
        "state",
    )
}

fn read_states(root: &Sysroot, first: u32, cpus: &[u32]) -> Vec<IdleState> {
    state_indices(root, first)
        .into_iter()
        .map(|k| {
            let dir = format!("/sys/devices/system/cpu/cpu{first}/cpuidle/state{k}");
            IdleState {
                index: k,
                name: root
                    .read_value(&format!("{dir}/name"))
                    .unwrap_or_else(|| format!("state{k}")),
                desc: root.read_value(&format!("{dir}/desc")),
                latency_us: root.read_parse(&format!("{dir}/latency")),
                residency_us: root.read_parse(&format!("{dir}/residency")),
                disabled_cpus: cpus
                    .iter()
                    .copied()
                    .filter(|cpu| {
                        let file =
                            format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{k}/disable");
                        crate::cpufreq::read_bool(root, &file) == Some(true)
                    })
                    .collect(),
            }
        })
        .collect()
}
