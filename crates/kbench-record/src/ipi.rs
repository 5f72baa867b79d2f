//! IPI accounting as a run record carries it: the `/proc/interrupts` deltas of a timed
//! region on the CPUs involved, split by kind, and the rates per operation. Reading
//! `/proc/interrupts` is the workloads' business (`kbench_workloads::ipiaccount`).
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

/// One CPU of the run and what it received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpiCpu {
    pub cpu: u32,
    /// What the run used it for: `waker`, `wakee`, `waker+wakee`, `sender`, `target`.
    pub role: String,
    pub counts: IpiCounts,
    pub per_op: IpiRates,
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
}
