//! `kbench env` end to end on the fixture trees of kbench-sys.
mod common;
use assert_cmd::Command;
use common::{json_ok, kbench_assert};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kbench-sys/fixtures")
        .join(name)
}

/// kbench that reads the machine a test names, not one `$KBENCH_SYSROOT` names.
fn kbench_without_sysroot() -> Command {
    let mut cmd = kbench_assert();
    cmd.env_remove("KBENCH_SYSROOT");
    cmd
}

fn env_json(name: &str) -> serde_json::Value {
    let out = kbench_without_sysroot()
        .args(["env", "--json", "--sysroot"])
        .arg(fixture(name))
        .output()
        .unwrap();
    json_ok(&out, &[])
}

/// (name, cpulist) of each class in the JSON output.
fn json_classes(json: &serde_json::Value) -> Vec<(String, String)> {
    json["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["cpulist"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn json_on_the_big_little_fixture() {
    let json = env_json("rk3399");
    let cpus = json["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 6);
    assert_eq!(cpus[0]["cpu"], 0);
    assert_eq!(cpus[0]["online"], true);
    assert_eq!(cpus[0]["class"], "Cortex-A53");
    assert_eq!(cpus[0]["capacity"], 381);
    assert_eq!(cpus[5]["class"], "Cortex-A72");
    assert_eq!(cpus[5]["capacity"], 1024);
    assert_eq!(
        json_classes(&json),
        vec![
            ("Cortex-A53".into(), "0-3".into()),
            ("Cortex-A72".into(), "4-5".into())
        ]
    );
    assert_eq!(json["classes"][1]["cpus"], serde_json::json!([4, 5]));
    assert_eq!(json["snapshot"]["kernel_release"], "6.6.32-rockchip64");
    let governor = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["item"] == "governor")
        .unwrap();
    assert_eq!(governor["status"], "warn");
}

#[test]
fn json_on_every_fixture() {
    let expected: &[(&str, &[(&str, &str)])] = &[
        (
            "sd888",
            &[
                ("Cortex-A55", "0-3"),
                ("Cortex-A78", "4-6"),
                ("Cortex-X1", "7"),
            ],
        ),
        ("i7-12700", &[("E-core", "16-19"), ("P-core", "0-15")]),
        ("visionfive2", &[("sifive,u74-mc", "0-3")]),
        (
            "xeon-2s",
            &[("Intel(R) Xeon(R) Silver 4210R CPU @ 2.40GHz", "0-39")],
        ),
        ("vm2", &[("Intel Xeon Processor (Cascadelake)", "0-1")]),
    ];
    for (name, classes) in expected {
        let want: Vec<(String, String)> = classes
            .iter()
            .map(|(n, l)| (n.to_string(), l.to_string()))
            .collect();
        assert_eq!(json_classes(&env_json(name)), want, "{name}");
    }
}

#[test]
fn text_shows_classes_and_the_checklist() {
    kbench_without_sysroot()
        .args(["env", "--sysroot"])
        .arg(fixture("vm2"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Intel Xeon Processor (Cascadelake)",
        ))
        .stdout(predicate::str::contains("WARN virtualization"))
        .stdout(predicate::str::contains("WARN clocksource"))
        .stdout(predicate::str::contains(
            "fix (--tune): echo tsc | sudo tee ",
        ))
        .stdout(predicate::str::contains("Noise checklist"));
}

#[test]
fn text_lines_fit_in_80_columns_except_fix_commands() {
    let out = kbench_without_sysroot()
        .args(["env", "--sysroot"])
        .arg(fixture("i7-12700"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("fix")) {
        assert!(line.len() <= 80, "too wide: {line}");
    }
}

#[test]
fn sysroot_from_the_environment() {
    let out = kbench_assert()
        .args(["env", "--json"])
        .env("KBENCH_SYSROOT", fixture("sd888"))
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["classes"][2]["name"], "Cortex-X1");
}

#[test]
fn bad_sysroot_is_one_line_and_exit_2() {
    let assert = kbench_without_sysroot()
        .args(["env", "--sysroot", "/nonexistent/kbench-root"])
        .assert()
        .code(2)
        .stdout("");
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("/nonexistent/kbench-root: not a directory"),
        "{stderr}"
    );

    let empty = tempfile::tempdir().unwrap();
    kbench_without_sysroot()
        .args(["env", "--sysroot"])
        .arg(empty.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a machine root"));
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn tree_bytes(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                let rel = entry.path().strip_prefix(root).unwrap().to_path_buf();
                out.push((rel, std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn tune_and_reset_round_trip_byte_for_byte() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let state = work.path().join("state/tune.json");
    copy_tree(&fixture("i7-12700"), &root);
    let before = tree_bytes(&root);

    kbench_without_sysroot()
        .args(["env", "--tune", "--sysroot"])
        .arg(&root)
        .arg("--state")
        .arg(&state)
        .assert()
        .success()
        .stdout(predicate::str::contains("intel_pstate/no_turbo: 0 -> 1"))
        .stdout(predicate::str::contains(
            "scaling_governor: powersave -> performance",
        ));
    assert!(state.exists());
    assert_ne!(tree_bytes(&root), before);

    let json = env_json_at(&root);
    assert_eq!(json["snapshot"]["boost_enabled"], false);

    kbench_without_sysroot()
        .args(["env", "--reset", "--sysroot"])
        .arg(&root)
        .arg("--state")
        .arg(&state)
        .assert()
        .success()
        .stdout(predicate::str::contains("restored"));
    assert!(!state.exists());
    assert_eq!(tree_bytes(&root), before);

    kbench_without_sysroot()
        .args(["env", "--reset", "--sysroot"])
        .arg(&root)
        .arg("--state")
        .arg(&state)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to reset"));
}

fn env_json_at(root: &Path) -> serde_json::Value {
    let out = kbench_without_sysroot()
        .args(["env", "--json", "--sysroot"])
        .arg(root)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn real_machine_text_and_json() {
    kbench_without_sysroot()
        .arg("env")
        .assert()
        .success()
        .stdout(predicate::str::contains("Noise checklist"));
    let out = kbench_without_sysroot()
        .args(["env", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!json["cpus"].as_array().unwrap().is_empty());
    assert!(!json["classes"].as_array().unwrap().is_empty());
}

#[test]
fn tune_and_reset_conflict() {
    kbench_without_sysroot()
        .args(["env", "--tune", "--reset"])
        .assert()
        .code(2);
}
