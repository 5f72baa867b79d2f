//! `/proc` and `/sys` files as kbench-sys reads them (`kbench env`, the environment
//! snapshot of every session, `--sysroot` fixture trees).
use kbench_sys::cmdline::{isolcpus_cpus, kernel_param, params};
use kbench_sys::cpuidle::CpuIdle;
use kbench_sys::cpuinfo::CpuInfo;
use kbench_sys::cpulist::MAX_CPU_ID;
use kbench_sys::kconfig::{differences, ConfigValue, KernelConfig};
use kbench_sys::{format_cpulist, parse_cpulist, Interrupts, IpiKind, IrqKind, Sysroot};
use std::path::Path;

/// A cpulist such as `/sys/devices/system/cpu/online`: what it accepts is sorted,
/// without duplicates, within range, and reads back the same once formatted.
pub fn sys_cpulist(data: &[u8]) {
    let text = crate::lossy_text(data);
    let Ok(cpus) = parse_cpulist(&text) else {
        return;
    };
    assert!(
        cpus.windows(2).all(|w| w[0] < w[1]),
        "not sorted and unique"
    );
    assert!(cpus.iter().all(|&c| c < MAX_CPU_ID), "CPU out of range");
    let formatted = format_cpulist(&cpus);
    assert_eq!(parse_cpulist(&formatted).ok(), Some(cpus), "{formatted}");
}

/// `/proc/cpuinfo`, and every reading kbench takes from its blocks.
pub fn sys_cpuinfo(data: &[u8]) {
    let info = CpuInfo::parse(&crate::lossy_text(data));
    for processor in &info.processors {
        let _ = (processor.model_name(), processor.midr(), processor.flags());
        let _ = processor.get_number("cpu family");
    }
}

/// `/proc/interrupts`: two readings (cut at the first NUL; one reading twice when
/// there is none) and their delta, with every total kbench takes of it. A reading's
/// delta against itself is zero (when its rows are unique, as the kernel's are).
pub fn sys_interrupts(data: &[u8]) {
    let (before, after) = match data.iter().position(|&b| b == 0) {
        Some(nul) => (&data[..nul], &data[nul + 1..]),
        None => (data, data),
    };
    let before = Interrupts::parse(&crate::lossy_text(before));
    let after = Interrupts::parse(&crate::lossy_text(after));
    let delta = before.delta(&after);
    for row in &delta.rows {
        assert_eq!(row.counts.len(), delta.cpus.len(), "row {}", row.name);
    }
    read_totals(&delta);
    if rows_are_unique(&after) {
        let still = after.delta(&after);
        assert_eq!(still.total_ipis(), 0, "a reading moved against itself");
    }
    for row in &after.rows {
        let _ = (row.total(), row.irq_kind(), after.count(&row.name, 0));
    }
}

/// Whether no two rows share a name and description, as in every real
/// `/proc/interrupts`: a delta matches rows by those, so with twins it pairs a row
/// with its twin's first reading.
fn rows_are_unique(readings: &Interrupts) -> bool {
    let mut keys: Vec<(&str, &str)> = readings
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.description.as_str()))
        .collect();
    keys.sort_unstable();
    keys.windows(2).all(|w| w[0] != w[1])
}

fn read_totals(delta: &kbench_sys::InterruptsDelta) {
    let kinds = [
        IpiKind::Reschedule,
        IpiKind::FunctionCall,
        IpiKind::TlbShootdown,
        IpiKind::Other,
        IpiKind::NotIpi,
    ];
    let _ = delta.total_ipis();
    for cpu in delta.cpus.iter().take(4) {
        for kind in kinds {
            let _ = (delta.total(kind), delta.on_cpu(kind, *cpu));
        }
        for kind in [IrqKind::LocalTimer, IrqKind::Device, IrqKind::Other] {
            let _ = delta.irqs_on_cpu(kind, *cpu);
        }
    }
    if let Some(row) = delta.rows.first() {
        let _ = delta.row_total(&row.name);
    }
}

/// A kernel config's text: every value it reads prints back as itself, and a config
/// differs from itself nowhere.
pub fn sys_kconfig(data: &[u8]) {
    let config = KernelConfig::parse(&crate::lossy_text(data));
    for (name, value) in config.set_options() {
        let printed = value.to_string();
        assert_eq!(
            ConfigValue::parse(&printed).as_ref(),
            Some(value),
            "{name}={printed}"
        );
    }
    assert!(differences(&config, &config).is_empty());
    let empty = KernelConfig::default();
    assert_eq!(differences(&config, &empty).len(), config.set_count());
}

/// `/proc/cmdline`: the parameters kbench looks for, and `isolcpus=` read as CPUs.
pub fn sys_cmdline(data: &[u8]) {
    let cmdline = crate::lossy_text(data);
    for name in ["isolcpus", "nohz_full", "rcu_nocbs", "quiet"] {
        if let Some(value) = kernel_param(&cmdline, name) {
            let _ = isolcpus_cpus(&value);
        }
    }
    if let Some(first) = params(&cmdline).next() {
        assert!(
            kernel_param(&cmdline, first.name).is_some()
                || (first.name == "--" && first.value.is_none()),
            "{first:?}"
        );
    }
    let _ = isolcpus_cpus(&cmdline);
}

/// The files of the cpuidle tree the bytes fill, in order, cut at NULs: the driver, the
/// governor, then per state its name, desc, latency, residency and `disable` of each
/// CPU. Every one missing from the bytes is absent from the tree.
const CPUIDLE_FILES: &[&str] = &[
    "cpuidle/current_driver",
    "cpuidle/current_governor_ro",
    "cpu0/cpuidle/state0/name",
    "cpu0/cpuidle/state0/desc",
    "cpu0/cpuidle/state0/latency",
    "cpu0/cpuidle/state0/residency",
    "cpu0/cpuidle/state0/disable",
    "cpu1/cpuidle/state0/disable",
    "cpu0/cpuidle/state1/name",
    "cpu0/cpuidle/state1/desc",
    "cpu0/cpuidle/state1/latency",
    "cpu0/cpuidle/state1/residency",
    "cpu0/cpuidle/state1/disable",
    "cpu1/cpuidle/state1/disable",
];

thread_local! {
    /// One sysroot per thread, its files rewritten for every input: a directory tree
    /// per input would cost more than the parse.
    static CPUIDLE_ROOT: tempfile::TempDir = cpuidle_root();
}

/// The directories of [`CPUIDLE_FILES`], all there whatever the input, so that what
/// is read depends on the input alone and not on the inputs before it.
fn cpuidle_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary sysroot");
    for file in CPUIDLE_FILES {
        let path = dir.path().join(CPU_DIR).join(file);
        let parent = path.parent().expect("a file in a directory");
        std::fs::create_dir_all(parent).expect("a sysroot directory");
    }
    dir
}

const CPU_DIR: &str = "sys/devices/system/cpu";

/// The cpuidle tree of a sysroot, its files written from the bytes. cpuidle has no
/// parser of its own, only trimmed values and numbers read file by file, so the real
/// reader is fuzzed through the files it reads.
pub fn sys_cpuidle(data: &[u8]) {
    CPUIDLE_ROOT.with(|dir| {
        let cpu_dir = dir.path().join(CPU_DIR);
        fill_cpuidle_tree(&cpu_dir, data);
        let idle = CpuIdle::read(&Sysroot::new(dir.path()));
        for state in &idle.states {
            assert!(
                !state.name.is_empty(),
                "state{} without a name",
                state.index
            );
            assert!(state.disabled_cpus.iter().all(|&c| c <= 1), "{state:?}");
        }
        let _ = idle.deepest_latency_us();
    });
}

/// Writes the [`CPUIDLE_FILES`] the bytes hold, and removes the others left by the last
/// input.
fn fill_cpuidle_tree(cpu_dir: &Path, data: &[u8]) {
    let mut contents = data.split(|&b| b == 0);
    for file in CPUIDLE_FILES {
        let path = cpu_dir.join(file);
        match contents.next() {
            Some(content) => std::fs::write(&path, content).expect("a sysroot file"),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}
