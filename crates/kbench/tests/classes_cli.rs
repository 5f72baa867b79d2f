//! Mixed CPU classes in a comparison: crafted runs of an RK3399 (2 x Cortex-A72 +
//! 4 x Cortex-A53) stored in a real database through `kbench import`, then compared.
mod common;
use common::{assert_success, kbench, kbench_on};

/// The environment snapshot kbench records, read from the RK3399 fixture tree.
fn rk3399_snapshot() -> serde_json::Value {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../kbench-sys/fixtures/rk3399");
    let out = kbench(&["env", "--json", "--sysroot", fixture]);
    assert!(out.status.success());
    let env: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    env["snapshot"].clone()
}

/// A kbench export of one session whose run `i` ran on `cpus(i)` and took `value(i)`.
fn export(label: &str, boot: &str, runs: &[(f64, &str)]) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = runs
        .iter()
        .enumerate()
        .map(|(i, (value, cpus))| {
            serde_json::json!({
                "workload": "sched/pipe",
                "params": {"loop": 100000, "threaded": false},
                "variant": "symmetric",
                "run_index": i,
                "warmup": false,
                "exit_status": 0,
                "cpus_used": cpus,
                "values": [{"metric": "usecs_per_op", "value": value, "unit": "us/op", "higher_is_better": false}],
            })
        })
        .collect();
    serde_json::json!({
        "format": "kbench-export",
        "version": 1,
        "label": label,
        "sessions": [{
            "session": {
                "label": label, "kind": "run", "boot_id": boot, "started_unix_ns": 1,
                "kbench_version": "test", "command_line": "crafted", "seed": 1,
                "environment": rk3399_snapshot(), "source": null,
            },
            "ended_unix_ns": 2,
            "runs": runs,
            "summaries": [],
        }],
    })
}

/// Small deterministic noise around `center`.
fn around(center: f64, i: usize) -> f64 {
    center * (1.0 + 0.004 * (((i * 7919) % 11) as f64 - 5.0) / 5.0)
}

#[test]
fn mixed_classes_split_the_rows_and_explain_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let base: Vec<(f64, &str)> = (0..8).map(|i| (around(10.0, i), "4-5")).collect();
    // Runs 3 and 7 of NEW landed on the little cores: 2.5x slower.
    let new: Vec<(f64, &str)> = (0..8)
        .map(|i| {
            if i == 2 || i == 6 {
                (around(25.0, i), "0-1")
            } else {
                (around(10.05, i), "4-5")
            }
        })
        .collect();
    for (label, boot, runs) in [("base", "boot-a", &base), ("new", "boot-b", &new)] {
        let file = dir.path().join(format!("{label}.json"));
        std::fs::write(&file, export(label, boot, runs).to_string()).unwrap();
        let out = kbench_on(&db, &["import", file.to_str().unwrap(), "--label", label]);
        assert_success(&out, &[]);
    }
    let out = kbench_on(&db, &["compare", "base", "new", "--format", "json"]);
    assert_success(&out, &[]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = report["rows"].as_array().unwrap();
    let pooled = rows
        .iter()
        .find(|r| r.get("cpu_classes").is_none())
        .expect("pooled row");
    let diagnostics = pooled["diagnostics"].as_array().unwrap();
    let mix = diagnostics
        .iter()
        .find(|d| d["kind"] == "class_mix")
        .unwrap_or_else(|| panic!("no class_mix in {pooled}"));
    assert_eq!(mix["base"].as_array().unwrap().len(), 1, "{mix}");
    assert_eq!(mix["base"][0]["class"], "Cortex-A72");
    let little = mix["new"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == "Cortex-A53")
        .unwrap_or_else(|| panic!("{mix}"));
    assert_eq!(little["runs"], serde_json::json!([3, 7]));
    assert_eq!(little["cpus"], serde_json::json!([0, 1]));
    assert!(
        diagnostics.iter().any(|d| d["kind"] == "modes_are_classes"),
        "{pooled}"
    );
    // The per-class row compares like with like: big cores only, 6 runs against 8.
    let big = rows
        .iter()
        .find(|r| r["cpu_classes"] == "Cortex-A72")
        .unwrap_or_else(|| panic!("no Cortex-A72 row in {report}"));
    assert_eq!(big["n_a"], 8);
    assert_eq!(big["n_b"], 6);
    assert!(big["shift_pct"].as_f64().unwrap().abs() < 2.0, "{big}");
    // The little-core runs exist on one side only: no row of their own.
    assert!(!rows.iter().any(|r| r["cpu_classes"] == "Cortex-A53"));

    let full = kbench_on(&db, &["compare", "base", "new", "--full"]);
    let full = String::from_utf8_lossy(&full.stdout);
    assert!(full.contains("on Cortex-A72 only"), "{full}");
    assert!(full.lines().all(|l| l.chars().count() <= 80), "{full}");
    let text = kbench_on(&db, &["compare", "base", "new"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("\n    on Cortex-A72 "), "{text}");
    assert!(text.contains("different CPU classes"), "{text}");
    assert!(text.contains("base: all runs on Cortex-A72"), "{text}");
    assert!(text.contains("runs 3,7 on Cortex-A53 (CPUs 0-1)"), "{text}");
    assert!(text.contains("modes are its CPU classes"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn run_accepts_a_cpu_class() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let out = kbench_on(
        &db,
        &[
            "run",
            "--label",
            "big",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--cpus",
            "class:big",
            "pipe:-l 200",
        ],
    );
    assert_success(&out, &[]);
    let out = kbench_on(
        &db,
        &[
            "run",
            "--label",
            "x",
            "--runs",
            "1",
            "--cpus",
            "class:NoSuchCore",
            "pipe:-l 200",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NoSuchCore"));
}
