//! kbench on arm64, in real arm64 kernels: the static aarch64 kbench (built by
//! `scripts/build-static.sh aarch64` with Debian's Rust) as the /init of Debian's 6.1
//! and 6.12 cloud-arm64 kernels, booted by `kbench vm-ab` under qemu-system-aarch64.
//! What the guest reports is its own: the CPU class from the real MIDR of the `-cpu`
//! given, IPIs per wake from arm64's /proc/interrupts rows, CPUs seen by getcpu, and
//! the virt machine named as emulated.
mod common;
use common::{
    assert_success, cached_file, existing_file_from_env, kbench_command, kernel_cache, runs,
    skip_or_fail,
};
use std::path::{Path, PathBuf};
use std::process::Output;

/// The aarch64 kbench scripts/test.sh builds and exports.
fn aarch64_kbench() -> Option<String> {
    existing_file_from_env("KBENCH_STATIC_BIN_AARCH64")
}

/// The cached arm64 kernels (scripts/fetch-kernels.sh arm64), or None with a SKIP line
/// when this machine has not got them: scripts/test.sh makes sure CI has.
fn arm64_kernels() -> Option<(PathBuf, PathBuf)> {
    let cache = kernel_cache().join("arm64");
    match (
        aarch64_kbench(),
        cached_file(&cache, "linux-image-6.1.0-", "_arm64.deb"),
        cached_file(&cache, "linux-image-6.12.", "_arm64.deb"),
        runs("qemu-system-aarch64"),
    ) {
        (Some(_), Some(a), Some(b), true) => Some((a, b)),
        _ => {
            skip_or_fail(&format!(
                "needs KBENCH_STATIC_BIN_AARCH64, arm64 kernels in {} and qemu-system-aarch64 (scripts/test.sh provides them)",
                cache.display()
            ));
            None
        }
    }
}

fn vm_ab(a: &Path, b: &Path, db: &Path, extra: &[&str]) -> Output {
    kbench_command()
        .args(["vm-ab", "--kernel-a"])
        .arg(a)
        .arg("--kernel-b")
        .arg(b)
        .arg("--init")
        .arg(aarch64_kbench().unwrap())
        .arg("--db")
        .arg(db)
        .args(extra)
        .output()
        .expect("run kbench")
}

/// Each session's guest environment, in boot order.
fn environments(db: &Path) -> Vec<(String, serde_json::Value)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT label, environment FROM sessions ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| {
            let (label, env) = r.unwrap();
            (label, serde_json::from_str(&env).unwrap())
        })
        .collect()
}

/// The measured values of `metric` across every session.
fn values(db: &Path, metric: &str) -> Vec<f64> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT v.value FROM run_values v JOIN runs r ON r.id = v.run_id
             WHERE v.metric = ?1 AND r.warmup = 0",
        )
        .unwrap();
    stmt.query_map([metric], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn two_arm64_kernels_two_boots_a_side_with_what_the_guest_saw() {
    let Some((a, b)) = arm64_kernels() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("arm64.db");
    let out = vm_ab(
        &a,
        &b,
        &db,
        &[
            "--boots",
            "2",
            "--cpu",
            "cortex-a57",
            "--suite",
            "pipe:-l 500 --placement cross-cpu",
            "--suite",
            "wakeup:--wakes 100",
            "--suite",
            "ipi:--iterations 500",
            "--runs",
            "2",
            "--format",
            "json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("TCG"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let (base, new) = (
        report["base"]["label"].as_str().unwrap().to_string(),
        report["new"]["label"].as_str().unwrap().to_string(),
    );
    assert!(
        base.starts_with("vm-6.1.0-") && base.ends_with("-cloud-arm64"),
        "{base}"
    );
    assert!(
        new.starts_with("vm-6.12.") && new.ends_with("-cloud-arm64"),
        "{new}"
    );
    let pipe = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "usecs_per_op")
        .unwrap_or_else(|| panic!("no pipe row: {report}"));
    assert_eq!(pipe["design"]["level"], "boot", "{pipe}");
    assert_eq!(
        (pipe["units_a"].as_u64(), pipe["units_b"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(report["config_differences"]["status"], "compared");

    let envs = environments(&db);
    let labels: Vec<&str> = envs.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, [&base, &new, &new, &base], "ABBA");
    for (label, env) in &envs {
        let release = label.trim_start_matches("vm-");
        assert_eq!(env["kernel_release"], release, "{env}");
        // The class comes from the real midr_el1 of the CPU qemu was told to be.
        assert_eq!(
            env["cpu_models"],
            serde_json::json!(["Cortex-A57"]),
            "{env}"
        );
        assert_eq!(env["virtualization"]["hypervisor"], "QEMU virt", "{env}");
        let getcpu_ns = env["vm_call_cost_ns"]["getcpu"].as_f64().unwrap_or(0.0);
        assert!(getcpu_ns > 0.0, "getcpu measured in the guest: {env}");
        eprintln!(
            "{label}: getcpu {getcpu_ns} ns, clock {} ns, {} ({})",
            env["vm_call_cost_ns"]["clock_monotonic"], env["vm_channel"], env["vm_uptime_s"]
        );
    }
    // arm64 names its IPIs "IPI1: Function call interrupts" and so on: a wake of the
    // idle wakee CPU took one function-call IPI there.
    let call_ipis = values(&db, "call_ipis_per_op");
    assert!(!call_ipis.is_empty());
    let mean = call_ipis.iter().sum::<f64>() / call_ipis.len() as f64;
    assert!(
        (0.5..2.0).contains(&mean),
        "call IPIs per wake: {call_ipis:?}"
    );
    // getcpu sampling saw the pipe's two tasks on two CPUs.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let placements: Vec<String> = conn
        .prepare(
            "SELECT json_extract(record, '$.placement.kind') FROM runs
             WHERE workload = 'sched/pipe' AND warmup = 0",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(placements.len(), 8, "{placements:?}");
    assert!(
        placements.iter().all(|p| p == "cross-cpu"),
        "{placements:?}"
    );
}

#[test]
fn the_cpu_class_follows_the_cpu_model_qemu_emulates() {
    let Some((a, b)) = arm64_kernels() else {
        return;
    };
    for (model, class) in [("cortex-a53", "Cortex-A53"), ("cortex-a72", "Cortex-A72")] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("cpu.db");
        let out = vm_ab(
            &a,
            &b,
            &db,
            &[
                "--boots",
                "1",
                "--cpu",
                model,
                "--suite",
                "pipe:-l 200 --placement same-cpu",
                "--runs",
                "1",
            ],
        );
        assert_success(&out, &[]);
        let envs = environments(&db);
        assert_eq!(envs.len(), 2);
        for (label, env) in envs {
            assert_eq!(
                env["cpu_models"],
                serde_json::json!([class]),
                "{label}: {env}"
            );
        }
    }
}
