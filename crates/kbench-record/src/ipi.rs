//! IPI accounting as a run record carries it: the `/proc/interrupts` deltas of a timed
//! region on the CPUs involved, split by kind, the other interrupts beside them (device
//! IRQs, the local timer), and the rates per operation. Reading `/proc/interrupts` is
//! the workloads' business (`kbench_workloads::ipiaccount`).
use serde::{Deserialize, Serialize};

/// IPIs received by one CPU, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpiCounts {
    pub reschedule: u64,
    pub function_call: u64,
    pub tlb_shootdown: u64,
    pub other: u64,
}

impl IpiCounts {
    pub fn total(&self) -> u64 {
        self.reschedule + self.function_call + self.tlb_shootdown + self.other
    }

    /// Each count divided by `ops` (0 when there were no ops).
    pub fn per_op(&self, ops: u64) -> IpiRates {
        let rate = |n: u64| if ops == 0 { 0.0 } else { n as f64 / ops as f64 };
        IpiRates {
            reschedule: rate(self.reschedule),
            function_call: rate(self.function_call),
            tlb_shootdown: rate(self.tlb_shootdown),
            other: rate(self.other),
            total: rate(self.total()),
        }
    }
}

/// IPIs per operation, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IpiRates {
    pub reschedule: f64,
    pub function_call: f64,
    pub tlb_shootdown: f64,
    pub other: f64,
    pub total: f64,
}

impl IpiRates {
    fn plus(self, other: IpiRates) -> IpiRates {
        IpiRates {
            reschedule: self.reschedule + other.reschedule,
            function_call: self.function_call + other.function_call,
            tlb_shootdown: self.tlb_shootdown + other.tlb_shootdown,
            other: self.other + other.other,
            total: self.total + other.total,
        }
    }
}

/// The interrupts one CPU received that are not IPIs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrqCounts {
    /// Numbered rows: disks, network, serial, the PMU on arm64 (the local timer apart).
    pub device: u64,
    /// The per-CPU timer tick (x86 `LOC`, arm64 `arch_timer`).
    pub local_timer: u64,
    /// Architecture rows that are neither (NMI, PMI, thermal, hypervisor callbacks).
    pub other: u64,
}

impl IrqCounts {
    /// Each count divided by `ops` (0 when there were no ops).
    pub fn per_op(&self, ops: u64) -> IrqRates {
        let rate = |n: u64| if ops == 0 { 0.0 } else { n as f64 / ops as f64 };
        IrqRates {
            device: rate(self.device),
            local_timer: rate(self.local_timer),
            other: rate(self.other),
        }
    }
}

/// Non-IPI interrupts per operation, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IrqRates {
    pub device: f64,
    pub local_timer: f64,
    pub other: f64,
}

impl IrqRates {
    fn plus(self, other: IrqRates) -> IrqRates {
        IrqRates {
            device: self.device + other.device,
            local_timer: self.local_timer + other.local_timer,
            other: self.other + other.other,
        }
    }
}

/// One CPU of the run and what it received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpiCpu {
    pub cpu: u32,
    /// What the run used it for: `waker`, `wakee`, `waker+wakee`, `sender`, `target`.
    pub role: String,
    pub counts: IpiCounts,
    pub per_op: IpiRates,
    /// The other interrupts it received; absent in records made before kbench read them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irqs: Option<IrqCounts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irqs_per_op: Option<IrqRates>,
}

/// The IPI deltas of one timed region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpiAccounting {
    /// Which region: `wakes`, `peer_spinning`, `baseline_no_peer`.
    pub label: String,
    /// What one operation is (`wake`, `round_trip`, `iteration`): the rates' denominator.
    pub per: String,
    /// Operations in the region, invalid samples included (they sent IPIs too).
    pub ops: u64,
    pub cpus: Vec<IpiCpu>,
}

impl IpiAccounting {
    /// The entry of `cpu`, if it was involved.
    pub fn cpu(&self, cpu: u32) -> Option<&IpiCpu> {
        self.cpus.iter().find(|c| c.cpu == cpu)
    }

    /// IPIs per operation summed over the CPUs of the region: what the whole run
    /// received per operation, wherever its tasks ran.
    pub fn ipis_per_op_summed(&self) -> IpiRates {
        self.cpus
            .iter()
            .fold(IpiRates::default(), |sum, c| sum.plus(c.per_op))
    }

    /// Non-IPI interrupts per operation summed over the CPUs of the region; `None`
    /// when the record predates them.
    pub fn irqs_per_op_summed(&self) -> Option<IrqRates> {
        self.cpus
            .iter()
            .try_fold(IrqRates::default(), |sum, c| Some(sum.plus(c.irqs_per_op?)))
    }
}

/// Where an interrupt a run raised came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InterruptSourceKind {
    /// A device's interrupt line, by the action `/proc/interrupts` names
    /// (`virtio1-req.0`, `nvme0q3`, `ahci[0000:00:1f.2]`).
    DeviceIrq,
    /// A softirq vector of `/proc/softirqs` (`NET_RX`, `BLOCK`).
    Softirq,
}

/// One source of the interrupts over a run's timed region, counted on every CPU
/// (a device's completion lands where its vector is routed, not where the task ran),
/// with its rate per operation. Only the sources that moved are recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptSource {
    pub kind: InterruptSourceKind,
    pub name: String,
    pub count: u64,
    pub per_op: f64,
}
