//! IPI accounting: `/proc/interrupts` read before and after a timed region, the deltas
//! on the CPUs involved split by kind, and the rate per operation (wake, iteration).
//!
//! This is the evidence of which path a run took: a cross-CPU wake onto an idle CPU on
//! a recent kernel shows function-call IPIs on the wakee CPU (the wakelist), a wake
//! preempting a busy CPU shows reschedule IPIs, a same-CPU wake shows none, and an x86
//! target idling in a polling state shows none either.
//!
//! Beside the IPIs, each CPU's other interrupts are counted the same way: device IRQs,
//! the local timer tick, and the other architecture rows.
//!
//! The counts are system-wide per CPU: anything else running on those CPUs adds to them,
//! so rates slightly above the expected value are normal on a shared machine.
pub use kbench_record::ipi::{IpiAccounting, IpiCounts, IpiCpu, IpiRates, IrqCounts};
use kbench_record::{InterruptSource, InterruptSourceKind, TaskCpus};
use kbench_sys::{Interrupts, IpiKind, IrqKind, Softirqs, Sysroot};

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
        region: IpiRegion<'_>,
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
                let irqs = IrqCounts {
                    device: delta.irqs_on_cpu(IrqKind::Device, cpu),
                    local_timer: delta.irqs_on_cpu(IrqKind::LocalTimer, cpu),
                    other: delta.irqs_on_cpu(IrqKind::Other, cpu),
                };
                IpiCpu {
                    cpu,
                    role: role.to_string(),
                    counts,
                    per_op: counts.per_op(region.ops),
                    irqs: Some(irqs),
                    irqs_per_op: Some(irqs.per_op(region.ops)),
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

/// The CPUs a run's tasks were seen on, each with the role of the tasks seen there
/// (`worker 0+worker 1` for a CPU both used): the CPUs whose interrupts are the run's.
/// `short_names` names the tasks in order; a task past their end is named `task N`.
pub fn cpus_of_tasks(tasks: &[TaskCpus], short_names: &[&str]) -> Vec<(u32, String)> {
    let mut cpus: Vec<u32> = tasks.iter().flat_map(|t| t.cpus.iter().copied()).collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus.into_iter()
        .map(|cpu| {
            let roles: Vec<String> = tasks
                .iter()
                .enumerate()
                .filter(|(_, t)| t.cpus.contains(&cpu))
                .map(|(i, _)| match short_names.get(i) {
                    Some(name) => name.to_string(),
                    None => format!("task {i}"),
                })
                .collect();
            (cpu, roles.join("+"))
        })
        .collect()
}

/// The same CPUs, with one role for all: a workload of many alike tasks (messaging).
pub fn cpus_with_role(cpus_used: &[u32], role: &str) -> Vec<(u32, String)> {
    cpus_used
        .iter()
        .map(|&cpu| (cpu, role.to_string()))
        .collect()
}

/// `/proc/interrupts` read before and after a timed region, accounted once the run
/// says which CPUs its tasks used.
pub struct IpiWindow {
    before: IpiSnapshot,
    root: Sysroot,
}

impl IpiWindow {
    /// Reads the "before" snapshot; do it just before the clock starts.
    pub fn open() -> IpiWindow {
        let root = Sysroot::from_env();
        IpiWindow {
            before: IpiSnapshot::take(&root),
            root,
        }
    }

    /// Reads the "after" snapshot; do it just after the clock stops.
    pub fn close(self) -> ClosedIpiWindow {
        ClosedIpiWindow {
            after: IpiSnapshot::take(&self.root),
            before: self.before,
        }
    }
}

/// Both snapshots of an [`IpiWindow`].
pub struct ClosedIpiWindow {
    before: IpiSnapshot,
    after: IpiSnapshot,
}

impl ClosedIpiWindow {
    /// The accounting of `cpus` (with their roles) per `ops` operations of `per`, as
    /// the region `timed_region`.
    pub fn account(&self, per: &str, ops: u64, cpus: &[(u32, String)]) -> Option<IpiAccounting> {
        let roles: Vec<(u32, &str)> = cpus.iter().map(|(c, r)| (*c, r.as_str())).collect();
        let region = IpiRegion {
            label: "timed_region",
            per,
            ops,
        };
        self.before.account(&self.after, region, &roles)
    }

    /// The device interrupt lines that moved over the window, counted on every CPU,
    /// per `ops` operations, busiest first.
    pub fn device_sources(&self, ops: u64) -> Vec<InterruptSource> {
        let (Some(before), Some(after)) = (&self.before.0, &self.after.0) else {
            return Vec::new();
        };
        let delta = before.delta(after);
        let moved = delta
            .rows
            .iter()
            .filter(|row| row.irq_kind() == Some(IrqKind::Device))
            .map(|row| (device_name(&row.name, &row.description), row.total()));
        sources(InterruptSourceKind::DeviceIrq, moved, ops)
    }
}

/// A device row's name as people know it: its action (`virtio1-req.0`, `nvme0q3`), the
/// last word of the description, with the IRQ number when there is none.
fn device_name(irq: &str, description: &str) -> String {
    match description.split_whitespace().last() {
        Some(action) => action.to_string(),
        None => format!("IRQ {irq}"),
    }
}

/// The sources among `counts` that moved, per `ops` operations, busiest first.
fn sources(
    kind: InterruptSourceKind,
    counts: impl Iterator<Item = (String, u64)>,
    ops: u64,
) -> Vec<InterruptSource> {
    let mut moved: Vec<InterruptSource> = counts
        .filter(|(_, count)| *count > 0)
        .map(|(name, count)| InterruptSource {
            kind,
            name,
            count,
            per_op: if ops == 0 {
                0.0
            } else {
                count as f64 / ops as f64
            },
        })
        .collect();
    moved.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    moved
}

/// `/proc/softirqs` read before and after a timed region (blkio, netrr): which
/// softirq vectors the operations raised, on every CPU.
pub struct SoftirqWindow {
    root: Sysroot,
    before: Option<Softirqs>,
}

impl SoftirqWindow {
    /// Reads the "before" counts; do it just before the clock starts.
    pub fn open() -> SoftirqWindow {
        let root = Sysroot::from_env();
        SoftirqWindow {
            before: Softirqs::read(&root),
            root,
        }
    }

    /// Reads the "after" counts: the vectors that moved, per `ops` operations.
    pub fn close(self, ops: u64) -> Vec<InterruptSource> {
        let (Some(before), Some(after)) = (self.before, Softirqs::read(&self.root)) else {
            return Vec::new();
        };
        sources(
            InterruptSourceKind::Softirq,
            before.delta(&after).into_iter(),
            ops,
        )
    }
}

/// Names a timed region for [`IpiSnapshot::account`].
#[derive(Debug, Clone, Copy)]
pub struct IpiRegion<'a> {
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
        let region = IpiRegion {
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
    fn the_device_lines_that_moved_are_named_by_their_action_busiest_first() {
        let disk = |n: u64| {
            format!("  37:          0 {n:>10} PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n")
        };
        let window = ClosedIpiWindow {
            before: IpiSnapshot(Some(Interrupts::parse(&format!("{BEFORE}{}", disk(100))))),
            after: IpiSnapshot(Some(Interrupts::parse(&format!("{AFTER}{}", disk(2100))))),
        };
        let sources = window.device_sources(2000);
        let named: Vec<(&str, u64, f64)> = sources
            .iter()
            .map(|s| (s.name.as_str(), s.count, s.per_op))
            .collect();
        assert_eq!(
            named,
            [("virtio1-req.0", 2000, 1.0), ("ACPI:Ged", 17, 0.0085)]
        );
        assert!(sources
            .iter()
            .all(|s| s.kind == InterruptSourceKind::DeviceIrq));
        let unread = ClosedIpiWindow {
            before: IpiSnapshot(None),
            after: IpiSnapshot(Some(Interrupts::parse(AFTER))),
        };
        assert!(unread.device_sources(10).is_empty());
    }

    #[test]
    fn device_irqs_and_the_tick_are_counted_beside_the_ipis() {
        let before = IpiSnapshot(Some(Interrupts::parse(BEFORE)));
        let after = IpiSnapshot(Some(Interrupts::parse(&format!(
            "{AFTER}LOC:        500        900   Local timer interrupts\n"
        ))));
        let before_with_tick = IpiSnapshot(Some(Interrupts::parse(&format!(
            "{BEFORE}LOC:        400        100   Local timer interrupts\n"
        ))));
        let region = IpiRegion {
            label: "timed_region",
            per: "loop",
            ops: 200,
        };
        let acc = before_with_tick
            .account(&after, region, &[(0, "worker 0"), (1, "worker 1")])
            .unwrap();
        let irqs: Vec<IrqCounts> = acc.cpus.iter().map(|c| c.irqs.unwrap()).collect();
        assert_eq!(
            irqs,
            [
                IrqCounts {
                    device: 8,
                    local_timer: 100,
                    other: 0
                },
                IrqCounts {
                    device: 9,
                    local_timer: 800,
                    other: 0
                }
            ]
        );
        let summed = acc.irqs_per_op_summed().unwrap();
        assert!((summed.device - 17.0 / 200.0).abs() < 1e-12);
        assert!((summed.local_timer - 4.5).abs() < 1e-12);
        // A row missing from the first reading is not counted at all.
        let no_tick = before.account(&after, region, &[(1, "x")]).unwrap();
        assert_eq!(no_tick.cpus[0].irqs.unwrap().local_timer, 0);
    }

    #[test]
    fn the_cpus_of_a_run_are_its_tasks_cpus_with_their_roles() {
        let task = |cpus: &[u32]| TaskCpus {
            task: String::new(),
            cpus: cpus.to_vec(),
            sampled_migrations: 0,
            nr_migrations: None,
        };
        let tasks = [task(&[2, 0]), task(&[0, 3]), task(&[5])];
        assert_eq!(
            cpus_of_tasks(&tasks, &["supervisor", "target"]),
            [
                (0, "supervisor+target".to_string()),
                (2, "supervisor".to_string()),
                (3, "target".to_string()),
                (5, "task 2".to_string())
            ]
        );
        assert_eq!(
            cpus_with_role(&[1, 4], "workers"),
            [(1, "workers".to_string()), (4, "workers".to_string())]
        );
    }

    #[test]
    fn unreadable_interrupts_give_no_accounting() {
        let region = IpiRegion {
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
