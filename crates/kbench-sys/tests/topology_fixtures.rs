//! Every fixture tree parses to the expected CPU classes, and `--cpus` specs resolve on them.
mod common;
use common::{fixture, fixture_copy};
use kbench_sys::classes::ClassSource;
use kbench_sys::{format_cpulist, Arch, Topology};

/// (name, cpulist, capacity) of each class, least capable first.
fn classes(topology: &Topology) -> Vec<(String, String, Option<u32>)> {
    topology
        .classes
        .iter()
        .map(|c| (c.name.clone(), format_cpulist(&c.cpus), c.capacity))
        .collect()
}

fn expect(name: &str, arch: Arch, want: &[(&str, &str, Option<u32>)]) -> Topology {
    let topology = Topology::read(&fixture(name)).unwrap();
    assert_eq!(topology.arch, arch, "{name}");
    let want: Vec<(String, String, Option<u32>)> = want
        .iter()
        .map(|(n, l, c)| (n.to_string(), l.to_string(), *c))
        .collect();
    assert_eq!(classes(&topology), want, "{name}");
    for cpu in &topology.cpus {
        assert_eq!(topology.class_of(cpu.cpu).unwrap().name, cpu.class);
    }
    topology
}

#[test]
fn rk3399_big_little() {
    let t = expect(
        "rk3399",
        Arch::Arm,
        &[
            ("Cortex-A53", "0-3", Some(381)),
            ("Cortex-A72", "4-5", Some(1024)),
        ],
    );
    let cpu4 = t.cpu(4).unwrap();
    assert_eq!(cpu4.midr.as_deref(), Some("0x00000000410fd082"));
    assert_eq!(cpu4.llc_cpus, vec![4, 5]);
    assert_eq!(cpu4.llc_level, Some(2));
    assert_eq!(cpu4.max_khz, Some(1_800_000));
    assert_eq!(cpu4.cluster_id, Some(1));
    assert_eq!(cpu4.die_id, None, "-1 means unknown");
    assert_eq!(t.classes[0].source, ClassSource::Midr);
    assert_eq!(t.resolve_cpus("class:big").unwrap(), vec![4, 5]);
    assert_eq!(t.resolve_cpus("class:little").unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(t.resolve_cpus("class:a53").unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(t.resolve_cpus("class:Cortex-A72").unwrap(), vec![4, 5]);
}

#[test]
fn sd888_three_clusters_from_cpuinfo() {
    let t = expect(
        "sd888",
        Arch::Arm,
        &[
            ("Cortex-A55", "0-3", Some(343)),
            ("Cortex-A78", "4-6", Some(871)),
            ("Cortex-X1", "7", Some(1024)),
        ],
    );
    assert_eq!(t.resolve_cpus("class:big").unwrap(), vec![7]);
    assert_eq!(t.cpu(0).unwrap().llc_cpus, (0..8).collect::<Vec<_>>());
}

#[test]
fn intel_hybrid() {
    let t = expect(
        "i7-12700",
        Arch::X86,
        &[("E-core", "16-19", None), ("P-core", "0-15", None)],
    );
    assert_eq!(t.cpu(3).unwrap().smt_siblings, vec![2, 3]);
    assert_eq!(t.cpu(17).unwrap().smt_siblings, vec![17]);
    assert_eq!(
        t.resolve_cpus("class:big").unwrap(),
        (0..16).collect::<Vec<_>>()
    );
    assert_eq!(
        t.resolve_cpus("class:e-core").unwrap(),
        vec![16, 17, 18, 19]
    );
}

#[test]
fn riscv_board() {
    let t = expect(
        "visionfive2",
        Arch::Riscv,
        &[("sifive,u74-mc", "0-3", Some(1024))],
    );
    assert_eq!(t.classes[0].source, ClassSource::Riscv);
}

#[test]
fn smt_server() {
    let t = expect(
        "xeon-2s",
        Arch::X86,
        &[("Intel(R) Xeon(R) Silver 4210R CPU @ 2.40GHz", "0-39", None)],
    );
    let cpu25 = t.cpu(25).unwrap();
    assert_eq!(cpu25.package_id, Some(0));
    assert_eq!(cpu25.smt_siblings, vec![5, 25]);
    assert_eq!(format_cpulist(&t.cpu(12).unwrap().llc_cpus), "10-19,30-39");
}

#[test]
fn small_vm() {
    let t = expect(
        "vm2",
        Arch::X86,
        &[("Intel Xeon Processor (Cascadelake)", "0-1", None)],
    );
    assert_eq!(t.cpu(1).unwrap().max_khz, None, "no cpufreq in the VM");
}

#[test]
fn cpus_spec_errors_are_clear() {
    let t = Topology::read(&fixture("rk3399")).unwrap();
    let err = |spec: &str| t.resolve_cpus(spec).unwrap_err().to_string();
    assert_eq!(err("9"), "CPU 9 does not exist on this machine (CPUs: 0-5)");
    assert!(err("class:huge")
        .starts_with("unknown CPU class 'huge' (this machine has: Cortex-A53, Cortex-A72"));
    assert!(err("1-x").starts_with("invalid CPU list '1-x'"));
    assert_eq!(t.resolve_cpus("all").unwrap(), (0..6).collect::<Vec<_>>());
    assert_eq!(t.resolve_cpus("0,4").unwrap(), vec![0, 4]);
}

/// The motivating thread's reviewer hot-plugged the little cores off: offline CPUs lose
/// their topology and MIDR but keep their class (from cpu_capacity / the cpufreq policy).
#[test]
fn offline_cpus_keep_their_class() {
    let (_dir, root) = fixture_copy("rk3399");
    let cpu_dir = root.path("/sys/devices/system/cpu");
    std::fs::write(cpu_dir.join("online"), "0-1,4-5\n").unwrap();
    for cpu in [2, 3] {
        let dir = cpu_dir.join(format!("cpu{cpu}"));
        std::fs::write(dir.join("online"), "0\n").unwrap();
        for sub in ["topology", "regs", "cache", "cpuidle"] {
            let _ = std::fs::remove_dir_all(dir.join(sub));
        }
    }
    let t = Topology::read(&root).unwrap();
    assert_eq!(t.online_cpus(), vec![0, 1, 4, 5]);
    assert_eq!(t.cpu(3).unwrap().class, "Cortex-A53");
    assert_eq!(t.class("Cortex-A53").unwrap().cpus, vec![0, 1, 2, 3]);
    assert_eq!(
        t.resolve_cpus("3").unwrap_err().to_string(),
        "CPU 3 is offline (online: 0-1,4-5)"
    );
    assert_eq!(t.resolve_cpus("class:little").unwrap(), vec![0, 1]);
}

#[test]
fn empty_root_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let root = kbench_sys::Sysroot::new(dir.path());
    assert!(root.validate().is_err());
    assert!(Topology::read(&root).is_err());
    let snapshot = kbench_sys::EnvSnapshot::capture(&root);
    assert!(snapshot.classes.is_empty());
}

#[test]
fn the_real_machine_parses() {
    let root = kbench_sys::Sysroot::host();
    root.validate().unwrap();
    let t = Topology::read(&root).unwrap();
    assert!(!t.online_cpus().is_empty());
    assert!(!t.classes.is_empty());
    let every_cpu: usize = t.classes.iter().map(|c| c.cpus.len()).sum();
    assert_eq!(every_cpu, t.cpus.len(), "every CPU in exactly one class");
    let snapshot = kbench_sys::EnvSnapshot::capture(&root);
    assert!(snapshot.kernel_release.is_some());
    assert!(snapshot.boot_id.is_some());
    eprintln!("real machine: {}", t.summary());
}

#[test]
fn partners_are_not_siblings_and_of_the_same_class() {
    let big_little = Topology::read(&fixture("rk3399")).unwrap();
    let all = big_little.all_cpus();
    assert_eq!(
        big_little.partner(0, &all),
        Some(1),
        "a little CPU pairs with a little one"
    );
    assert_eq!(
        big_little.partner(4, &all),
        Some(5),
        "a big CPU pairs with a big one"
    );
    // Asked for one CPU of each class (`--cpus 0,4`): the other class it is.
    assert_eq!(big_little.partner(0, &[0, 4]), Some(4));
    assert_eq!(big_little.partner(0, &[0]), None);
    let smt = Topology::read(&fixture("xeon-2s")).unwrap();
    // CPU 20 is CPU 0's sibling: skipped although allowed first.
    assert_eq!(smt.partner(0, &[0, 20, 1]), Some(1));
    assert_eq!(
        smt.partner(0, &[0, 20]),
        Some(20),
        "a sibling rather than nothing"
    );
}
