//! `/proc/interrupts` parsing, IPI classification and deltas.
use kbench_sys::interrupts::classify_row;
use kbench_sys::{Interrupts, IpiKind, Sysroot};
use std::path::Path;

fn reading(name: &str) -> Interrupts {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/interrupts")
        .join(name);
    Interrupts::parse(&std::fs::read_to_string(path).unwrap())
}

#[test]
fn arm64_rows_and_kinds() {
    let r = reading("arm64-rk3399-before.txt");
    assert_eq!(r.cpus, vec![0, 1, 2, 3, 4, 5]);
    let ipi0 = r.row("IPI0").unwrap();
    assert_eq!(ipi0.description, "Rescheduling interrupts");
    assert_eq!(ipi0.kind, IpiKind::Reschedule);
    assert_eq!(r.row("IPI1").unwrap().kind, IpiKind::FunctionCall);
    assert_eq!(r.row("IPI4").unwrap().kind, IpiKind::Other);
    assert_eq!(r.row("11").unwrap().kind, IpiKind::NotIpi);
    assert_eq!(
        r.row("11").unwrap().description,
        "GICv3 27 Level arch_timer"
    );
    assert_eq!(r.row("Err").unwrap().counts, vec![0]);
    assert_eq!(r.count("IPI0", 4), Some(80211));
}

#[test]
fn arm64_delta_counts_the_ping_pong() {
    let delta = reading("arm64-rk3399-before.txt").delta(&reading("arm64-rk3399-after.txt"));
    assert_eq!(delta.total(IpiKind::Reschedule), 1006);
    assert_eq!(delta.on_cpu(IpiKind::Reschedule, 1), 500);
    assert_eq!(delta.on_cpu(IpiKind::Reschedule, 4), 500);
    assert_eq!(delta.total(IpiKind::FunctionCall), 30);
    assert_eq!(delta.total(IpiKind::TlbShootdown), 0);
    assert_eq!(delta.total(IpiKind::Other), 2);
    assert_eq!(delta.total_ipis(), 1038);
    assert_eq!(delta.row_total("11"), Some(1340));
}

#[test]
fn x86_rows_and_delta() {
    let before = reading("x86-vm2-before.txt");
    assert_eq!(before.row("RES").unwrap().kind, IpiKind::Reschedule);
    assert_eq!(before.row("CAL").unwrap().kind, IpiKind::FunctionCall);
    assert_eq!(before.row("TLB").unwrap().kind, IpiKind::TlbShootdown);
    assert_eq!(before.row("IWI").unwrap().kind, IpiKind::Other);
    assert_eq!(before.row("LOC").unwrap().kind, IpiKind::NotIpi);
    assert_eq!(before.row("NMI").unwrap().kind, IpiKind::NotIpi);
    assert_eq!(
        before.row("25").unwrap().description,
        "PCI-MSI 49153-edge virtio0-req.0"
    );
    let delta = before.delta(&reading("x86-vm2-after.txt"));
    assert_eq!(delta.total(IpiKind::Reschedule), 1999);
    assert_eq!(delta.on_cpu(IpiKind::FunctionCall, 1), 7);
    assert_eq!(delta.total(IpiKind::TlbShootdown), 5);
    assert_eq!(delta.row_total("LOC"), Some(2001));
    assert_eq!(delta.row_total("25"), Some(4));
}

#[test]
fn other_naming_schemes() {
    assert_eq!(
        classify_row("IPI3", "Single function call interrupts"),
        IpiKind::FunctionCall
    );
    assert_eq!(
        classify_row("IPI6", "CPU backtrace interrupts"),
        IpiKind::Other
    );
    assert_eq!(
        classify_row("IPI2", "CPU stop (for crash dump) interrupts"),
        IpiKind::Other
    );
    assert_eq!(classify_row("PLT", "Platform interrupts"), IpiKind::NotIpi);
}

#[test]
fn hotplug_between_readings_keeps_common_cpus() {
    let before = Interrupts::parse("   CPU0 CPU1 CPU2\nRES: 1 2 3 Rescheduling interrupts\n");
    let after = Interrupts::parse("   CPU0 CPU2\nRES: 5 9 Rescheduling interrupts\n");
    let delta = before.delta(&after);
    assert_eq!(delta.cpus, vec![0, 2]);
    assert_eq!(delta.rows[0].counts, vec![4, 6]);
}

#[test]
fn garbage_does_not_panic() {
    for text in [
        "",
        "\n\n",
        "CPU0\n:::\nX: a b c\n",
        "  CPU0 CPU1\nRES: 18446744073709551615 0 x\nRES",
    ] {
        let r = Interrupts::parse(text);
        let _ = r.delta(&r);
    }
}

#[test]
fn real_proc_interrupts_delta() {
    let root = Sysroot::host();
    let Some(before) = Interrupts::read(&root) else {
        return; // no procfs: nothing to check
    };
    std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(20)))
        .join()
        .unwrap();
    let after = Interrupts::read(&root).unwrap();
    assert!(!before.cpus.is_empty());
    let delta = before.delta(&after);
    assert_eq!(delta.cpus, before.cpus);
    assert!(delta.rows.len() >= before.rows.len().saturating_sub(2));
}

#[test]
fn irq_rows_split_into_device_local_timer_and_other() {
    use kbench_sys::interrupts::classify_irq;
    use kbench_sys::IrqKind;
    let x86 = reading("x86-vm2-before.txt");
    let kind = |r: &Interrupts, name: &str| r.row(name).unwrap().irq_kind();
    assert_eq!(kind(&x86, "LOC"), Some(IrqKind::LocalTimer));
    // IRQ 0 is the legacy PIT ("timer"), a device line, not the per-CPU tick.
    assert_eq!(kind(&x86, "0"), Some(IrqKind::Device));
    assert_eq!(kind(&x86, "25"), Some(IrqKind::Device));
    assert_eq!(kind(&x86, "NMI"), Some(IrqKind::Other));
    assert_eq!(kind(&x86, "HYP"), Some(IrqKind::Other));
    // IPIs are counted as IPIs only, and system-wide totals not per CPU.
    assert_eq!(kind(&x86, "RES"), None);
    assert_eq!(kind(&x86, "IWI"), None);
    assert_eq!(kind(&x86, "ERR"), None);
    assert_eq!(kind(&x86, "MIS"), None);
    let arm64 = reading("arm64-rk3399-before.txt");
    assert_eq!(kind(&arm64, "11"), Some(IrqKind::LocalTimer));
    assert_eq!(kind(&arm64, "45"), Some(IrqKind::Device));
    assert_eq!(kind(&arm64, "IPI4"), None);
    assert_eq!(kind(&arm64, "Err"), None);
    assert_eq!(
        classify_irq("5", "SiFive PLIC 5 Edge riscv-timer"),
        Some(IrqKind::LocalTimer)
    );
}

#[test]
fn irq_deltas_per_cpu() {
    use kbench_sys::IrqKind;
    let x86 = reading("x86-vm2-before.txt").delta(&reading("x86-vm2-after.txt"));
    assert_eq!(x86.irqs_on_cpu(IrqKind::Device, 0), 4);
    assert_eq!(x86.irqs_on_cpu(IrqKind::Device, 1), 0);
    assert_eq!(x86.irqs_on_cpu(IrqKind::LocalTimer, 0), 1000);
    assert_eq!(x86.irqs_on_cpu(IrqKind::LocalTimer, 1), 1001);
    assert_eq!(x86.irqs_on_cpu(IrqKind::Other, 0), 2);
    assert_eq!(x86.irqs_on_cpu(IrqKind::Other, 1), 2);
    assert_eq!(x86.irqs_on_cpu(IrqKind::LocalTimer, 7), 0);
    let arm64 = reading("arm64-rk3399-before.txt").delta(&reading("arm64-rk3399-after.txt"));
    let ticks: Vec<u64> = (0..6)
        .map(|cpu| arm64.irqs_on_cpu(IrqKind::LocalTimer, cpu))
        .collect();
    assert_eq!(ticks, [250, 120, 100, 90, 400, 380]);
    assert_eq!(arm64.irqs_on_cpu(IrqKind::Device, 0), 4);
    assert_eq!(arm64.irqs_on_cpu(IrqKind::Other, 0), 0);
}

#[test]
fn totals_of_counts_near_u64_max_saturate_instead_of_panicking() {
    // fuzz/regressions/sys_interrupts/counts-near-u64-max: no kernel counts this high,
    // but a sysroot's file may say so.
    let max = u64::MAX;
    let text = format!("  CPU0 CPU1\n RES: {max} {max}   Rescheduling interrupts\n");
    let reading = Interrupts::parse(&text);
    assert_eq!(reading.row("RES").unwrap().total(), max);
    let from_zero = Interrupts::parse(&text.replace(&max.to_string(), "0")).delta(&reading);
    assert_eq!(from_zero.total(IpiKind::Reschedule), max);
    assert_eq!(from_zero.total_ipis(), max);
    assert_eq!(from_zero.row_total("RES"), Some(max));
}

#[test]
fn a_delta_pairs_cpus_by_number_whatever_their_columns() {
    let before = Interrupts::parse("CPU0 CPU2 CPU3\n RES: 1 2 3 Rescheduling interrupts\n");
    let after = Interrupts::parse("CPU3 CPU0 CPU1\n RES: 30 10 99 Rescheduling interrupts\n");
    let delta = before.delta(&after);
    assert_eq!(delta.cpus, vec![0, 3]);
    assert_eq!(delta.rows[0].counts, vec![9, 27]);
}
