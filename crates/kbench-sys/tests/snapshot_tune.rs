//! Environment snapshots, their differences, the checklist, and tune/reset on fixture copies.
mod common;
use common::{fixture, fixture_copy, snapshot_tree};
use kbench_sys::checklist::{checklist, CheckStatus};
use kbench_sys::{tune, EnvSnapshot};

#[test]
fn snapshot_of_each_fixture() {
    let rk = EnvSnapshot::capture(&fixture("rk3399"));
    assert_eq!(rk.kernel_release.as_deref(), Some("6.6.32-rockchip64"));
    assert_eq!(rk.cpu_models, vec!["Cortex-A53", "Cortex-A72"]);
    assert_eq!(rk.cpufreq.len(), 6);
    assert_eq!(rk.cpuidle.driver.as_deref(), Some("psci_idle"));
    assert_eq!(rk.cpuidle.states.len(), 3);
    assert_eq!(rk.clocksource.as_deref(), Some("arch_sys_counter"));
    assert_eq!(rk.virtualization.hypervisor, None);
    assert_eq!(rk.thp_enabled.as_deref(), Some("madvise"));

    let xeon = EnvSnapshot::capture(&fixture("xeon-2s"));
    assert_eq!(xeon.isolation.isolcpus.len(), 20);
    assert_eq!(xeon.isolation.nohz_full.as_ref().map(Vec::len), Some(20));
    assert!(xeon.smt.siblings_online);
    assert_eq!(xeon.boost_enabled, Some(true));
    assert_eq!(xeon.microcode, vec!["0x5003604"]);

    let vm = EnvSnapshot::capture(&fixture("vm2"));
    assert_eq!(vm.virtualization.hypervisor.as_deref(), Some("KVM"));
    assert!(vm.cpufreq.is_empty());
    assert_eq!(vm.aslr, Some(0));
    assert_eq!(vm.load_average, Some([1.52, 0.80, 0.31]));
    assert_eq!(vm.runnable_tasks, Some(3));
}

#[test]
fn qemus_arm64_virt_machine_is_named_from_its_device_tree() {
    let (_dir, root) = fixture_copy("rk3399");
    let dt = root.path("/proc/device-tree");
    std::fs::create_dir_all(&dt).unwrap();
    std::fs::write(dt.join("compatible"), b"linux,dummy-virt\0").unwrap();
    let vm = EnvSnapshot::capture(&root);
    assert_eq!(vm.virtualization.hypervisor.as_deref(), Some("QEMU virt"));
    assert!(vm.virtualization.evidence[0].contains("dummy-virt"));
    let warned = checklist(&vm, &root)
        .into_iter()
        .any(|c| c.item == "virtualization" && c.status == CheckStatus::Warn);
    assert!(warned);
    // A board's own compatible string is no hypervisor.
    std::fs::write(dt.join("compatible"), b"radxa,rockpi4b\0rockchip,rk3399\0").unwrap();
    assert_eq!(EnvSnapshot::capture(&root).virtualization.hypervisor, None);
}

#[test]
fn differences_group_per_cpu_values() {
    let a = EnvSnapshot::capture(&fixture("rk3399"));
    let mut b = a.clone();
    for state in b.cpufreq.iter_mut().filter(|s| s.cpu >= 4) {
        state.governor = Some("performance".to_string());
    }
    b.load_average = Some([9.0, 9.0, 9.0]);
    b.boot_id = Some("other".to_string());
    let diffs = EnvSnapshot::differences(&a, &b);
    let keys: Vec<&str> = diffs.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(keys, vec!["boot_id", "cpufreq.governor"]);
    assert_eq!(diffs[1].1, "schedutil");
    assert_eq!(diffs[1].2, "performance (4-5), schedutil (0-3)");
    assert!(EnvSnapshot::differences(&a, &a).is_empty());

    let vm = EnvSnapshot::capture(&fixture("vm2"));
    let diffs = EnvSnapshot::differences(&a, &vm);
    assert!(diffs
        .iter()
        .any(|(k, _, b)| k == "cpufreq.governor" && b == "(absent)"));
}

#[test]
fn snapshot_round_trips_through_json() {
    let snapshot = EnvSnapshot::capture(&fixture("i7-12700"));
    let json = serde_json::to_string(&snapshot).unwrap();
    let back: EnvSnapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(back, snapshot);
}

fn statuses(name: &str) -> Vec<(String, CheckStatus)> {
    let root = fixture(name);
    checklist(&EnvSnapshot::capture(&root), &root)
        .into_iter()
        .map(|c| (c.item, c.status))
        .collect()
}

#[test]
fn checklist_verdicts() {
    use CheckStatus::*;
    let get = |list: &[(String, CheckStatus)], item: &str| {
        list.iter().find(|(i, _)| i == item).map(|(_, s)| *s)
    };
    let xeon = statuses("xeon-2s");
    assert_eq!(get(&xeon, "governor"), Some(Pass));
    assert_eq!(get(&xeon, "boost"), Some(Warn));
    assert_eq!(get(&xeon, "smt"), Some(Warn));
    assert_eq!(get(&xeon, "isolation"), Some(Pass));
    assert_eq!(get(&xeon, "nohz_full"), Some(Warn));
    let vm = statuses("vm2");
    assert_eq!(get(&vm, "governor"), Some(Info));
    assert_eq!(get(&vm, "virtualization"), Some(Warn));
    assert_eq!(get(&vm, "clocksource"), Some(Warn));
    assert_eq!(get(&vm, "aslr"), Some(Warn));
    assert_eq!(get(&vm, "load"), Some(Warn));
    let rk = statuses("rk3399");
    assert_eq!(get(&rk, "governor"), Some(Warn));
    assert_eq!(get(&rk, "isolation"), Some(Warn));
    assert_eq!(get(&rk, "virtualization"), Some(Pass));
}

#[test]
fn fix_commands_name_the_files_of_the_root() {
    let root = fixture("i7-12700");
    let checks = checklist(&EnvSnapshot::capture(&root), &root);
    let boost = checks.iter().find(|c| c.item == "boost").unwrap();
    let expected = format!(
        "echo 1 | sudo tee {}",
        root.path("/sys/devices/system/cpu/intel_pstate/no_turbo")
            .display()
    );
    assert_eq!(boost.fix.as_deref(), Some(expected.as_str()));
    assert!(boost.tunable);
}

#[test]
fn tune_then_reset_restores_every_byte() {
    for name in [
        "rk3399",
        "sd888",
        "i7-12700",
        "visionfive2",
        "xeon-2s",
        "vm2",
    ] {
        let (dir, root) = fixture_copy(name);
        let state = dir.path().join("state/tune.json");
        let before = snapshot_tree(dir.path());
        let report = tune::apply(&root, &state).unwrap();
        assert!(report.failed.is_empty(), "{name}: {:?}", report.failed);
        assert!(
            tune::plan(&root).is_empty(),
            "{name}: tune leaves nothing to do"
        );
        let tuned = EnvSnapshot::capture(&root);
        let checks = checklist(&tuned, &root);
        let still_warning: Vec<_> = checks.iter().filter(|c| c.tunable).collect();
        assert!(still_warning.is_empty(), "{name}: {still_warning:?}");
        // A second tune must not overwrite the recorded originals.
        tune::apply(&root, &state).unwrap();
        let reset = tune::reset(&root, &state).unwrap();
        assert_eq!(reset.done.len(), report.done.len(), "{name}");
        assert!(!state.exists(), "{name}: state file removed after reset");
        let _ = std::fs::remove_dir(dir.path().join("state"));
        assert_eq!(
            snapshot_tree(dir.path()),
            before,
            "{name}: reset restores byte for byte"
        );
    }
}

#[test]
fn tune_changes_what_the_checklist_warns_about() {
    let (dir, root) = fixture_copy("i7-12700");
    let state = dir.path().join("tune.json");
    let report = tune::apply(&root, &state).unwrap();
    assert_eq!(report.done.len(), 21, "20 governors and no_turbo");
    let snapshot = EnvSnapshot::capture(&root);
    assert_eq!(snapshot.boost_enabled, Some(false));
    assert!(snapshot
        .cpufreq
        .iter()
        .all(|s| s.governor.as_deref() == Some("performance")));
}

#[test]
fn reset_without_state_is_a_clear_error() {
    let (dir, root) = fixture_copy("vm2");
    let err = tune::reset(&root, &dir.path().join("none.json")).unwrap_err();
    assert!(err
        .to_string()
        .starts_with("nothing to reset: no tune state file at"));
}

#[test]
fn state_of_another_root_is_refused() {
    let (dir, root) = fixture_copy("vm2");
    let state = dir.path().join("tune.json");
    tune::apply(&root, &state).unwrap();
    let other = fixture("vm2");
    let err = tune::reset(&other, &state).unwrap_err().to_string();
    assert!(err.contains("belongs to sysroot"), "{err}");
    tune::reset(&root, &state).unwrap();
}

#[test]
fn sched_stats_of_this_thread() {
    let pid = std::process::id();
    let stats = kbench_sys::SchedStats::read(&kbench_sys::Sysroot::host(), pid, pid);
    if let Some(stats) = stats {
        assert!(stats.nr_switches.is_some());
        assert!(kbench_sys::nr_migrations(pid, pid).is_some());
    }
    assert_eq!(kbench_sys::SchedStats::read(&fixture("vm2"), 1, 1), None);
}
