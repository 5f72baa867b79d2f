//! IPI accounting: `/proc/interrupts` read before and after a timed region, the deltas
//! on the CPUs involved split by kind, and the rate per operation (wake, iteration).
//!
//! This is the evidence of which path a run took: a cross-CPU wake onto an idle CPU on
//! a recent kernel shows function-call IPIs on the wakee CPU (the wakelist), a wake
//! preempting a busy CPU shows reschedule IPIs, a same-CPU wake shows none, and an x86
//! target idling in a polling state shows none either.
//!
//! The counts are system-wide per CPU: anything else running on those CPUs adds to them,
//! so rates slightly above the expected value are normal on a shared machine.
pub use kbench_record::ipi::{IpiAccounting, IpiCounts, IpiCpu, IpiRates};
use kbench_sys::{Interrupts, IpiKind, Sysroot};

/// One reading of `/proc/interrupts`; `None` inside when it cannot be read (then the
/// run simply has no IPI accounting).
pub struct IpiSnapshot(Option<Interrupts>);

impl IpiSnapshot {
    /// Reads `/proc/interrupts` under `root`. A file read and a parse: keep it out of the
    /// timed loop.
    pub fn take(root: &Sysroot) -> Self {
        IpiSnapshot(Interrupts::read(root))
    }

    /// The deltas from `self` to `later` on `cpus` (`(cpu, role)`), per `ops` operations.
    pub fn account(
        &self,
        later: &IpiSnapshot,
        region: Region<'_>,
        cpus: &[(u32, &str)],
    ) -> Option<IpiAccounting> {
        let delta = self.0.as_ref()?.delta(later.0.as_ref()?);
        let cpus = cpus
            .iter()
            .map(|&(cpu, role)| {
                let counts = IpiCounts {
                    reschedule: delta.on_cpu(IpiKind::Reschedule, cpu),
                    function_call: delta.on_cpu(IpiKind::FunctionCall, cpu),
                    tlb_shootdown: delta.on_cpu(IpiKind::TlbShootdown, cpu),
                    other: delta.on_cpu(IpiKind::Other, cpu),
                };
                IpiCpu {
                    cpu,
                    role: role.to_string(),
                    counts,
                    per_op: counts.per_op(region.ops),
                }
            })
            .collect();
        Some(IpiAccounting {
            label: region.label.to_string(),
            per: region.per.to_string(),
            ops: region.ops,
            cpus,
        })
    }
}

/// Names a timed region for [`IpiSnapshot::account`].
#[derive(Debug, Clone, Copy)]
pub struct Region<'a> {
    pub label: &'a str,
    pub per: &'a str,
    pub ops: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "           CPU0       CPU1\n\
        \x20 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n\
        RES:        100        200   Rescheduling interrupts\n\
        CAL:       1000       2000   Function call interrupts\n\
        TLB:         10         20   TLB shootdowns\n\
        IWI:          0          0   IRQ work interrupts\n";
    const AFTER: &str = "           CPU0       CPU1\n\
        \x20 24:          9          9  IO-APIC   5-edge      ACPI:Ged\n\
        RES:        101        210   Rescheduling interrupts\n\
        CAL:       1000       2990   Function call interrupts\n\
        TLB:         10         20   TLB shootdowns\n\
        IWI:          0          5   IRQ work interrupts\n";

    #[test]
    fn deltas_split_by_kind_and_divide_by_ops() {
        let before = IpiSnapshot(Some(Interrupts::parse(BEFORE)));
        let after = IpiSnapshot(Some(Interrupts::parse(AFTER)));
        let region = Region {
            label: "wakes",
            per: "wake",
            ops: 1000,
        };
        let acc = before
            .account(&after, region, &[(0, "waker"), (1, "wakee")])
            .unwrap();
        let wakee = acc.cpu(1).unwrap();
        assert_eq!(
            wakee.counts,
            IpiCounts {
                reschedule: 10,
                function_call: 990,
                tlb_shootdown: 0,
                other: 5
            }
        );
        assert!((wakee.per_op.function_call - 0.99).abs() < 1e-12);
        assert!((wakee.per_op.total - 1.005).abs() < 1e-12);
        assert_eq!(acc.cpu(0).unwrap().counts.total(), 1);
    }

    #[test]
    fn unreadable_interrupts_give_no_accounting() {
        let region = Region {
            label: "x",
            per: "wake",
            ops: 0,
        };
        assert!(IpiSnapshot(None)
            .account(&IpiSnapshot(None), region, &[(0, "waker")])
            .is_none());
        assert_eq!(IpiCounts::default().per_op(0).total, 0.0);
    }
}
