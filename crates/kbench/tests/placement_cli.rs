//! `--placement` of pipe and seccomp-notify end to end: real workers pinned by the
//! real kernel, their CPUs seen by getcpu, the records stored and compared.
mod common;
use common::{assert_success, bench_record, kbench, kbench_bin, usable_cpus};
use serde_json::Value;

fn task_cpus(rec: &Value) -> Vec<Vec<u64>> {
    rec["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["cpus"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn same_cpu_runs_both_tasks_on_one_cpu() {
    for args in [
        &["sched", "pipe", "-l", "5000", "--placement", "same-cpu"][..],
        &[
            "sched",
            "pipe",
            "-T",
            "-l",
            "5000",
            "--placement",
            "same-cpu",
        ],
        &[
            "sched",
            "seccomp-notify",
            "-l",
            "5000",
            "--placement",
            "same-cpu",
        ],
    ] {
        let rec = bench_record(args);
        let cpus = task_cpus(&rec);
        assert_eq!(cpus.len(), 2, "{args:?}");
        assert!(
            cpus[0].len() == 1 && cpus[0] == cpus[1],
            "{args:?}: {cpus:?}"
        );
        assert_eq!(rec["placement"]["kind"], "same-cpu", "{args:?}");
        assert_eq!(rec["placement"]["colocated_share"], 1.0, "{args:?}");
        assert_eq!(rec["params"]["placement"], "same-cpu", "{args:?}");
    }
}

#[test]
fn cross_cpu_runs_each_task_on_its_own_cpu() {
    if usable_cpus() < 2 {
        eprintln!("SKIP: one usable CPU");
        return;
    }
    for args in [
        &["sched", "pipe", "-l", "5000", "--placement", "cross-cpu"][..],
        &[
            "sched",
            "pipe",
            "-T",
            "-l",
            "5000",
            "--placement",
            "cross-cpu",
        ],
        &[
            "sched",
            "seccomp-notify",
            "-l",
            "5000",
            "--placement",
            "cross-cpu",
        ],
    ] {
        let rec = bench_record(args);
        let cpus = task_cpus(&rec);
        assert!(
            cpus.iter().all(|c| c.len() == 1) && cpus[0] != cpus[1],
            "{args:?}: {cpus:?}"
        );
        assert_eq!(rec["placement"]["kind"], "cross-cpu", "{args:?}");
        assert_eq!(rec["placement"]["colocated_share"], 0.0, "{args:?}");
    }
}

#[test]
fn free_placement_keeps_perfs_parameters_and_still_records_where_it_ran() {
    let rec = bench_record(&["sched", "pipe", "-l", "5000"]);
    assert!(
        rec["params"].get("placement").is_none(),
        "{}",
        rec["params"]
    );
    let kind = rec["placement"]["kind"].as_str().unwrap();
    assert!(["same-cpu", "cross-cpu", "mixed"].contains(&kind), "{kind}");
    let share = rec["placement"]["colocated_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&share));
}

#[test]
fn bad_placements_are_refused() {
    let out = kbench(&["bench", "sched", "pipe", "--placement", "both"]);
    assert_eq!(
        out.status.code(),
        Some(129),
        "perf's exit for a bad option value"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown placement 'both'"), "{stderr}");
    // Two CPUs asked for where one is allowed: one line, exit 2.
    let out = kbench(&[
        "bench",
        "--cpus",
        "0",
        "sched",
        "pipe",
        "--placement",
        "cross-cpu",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("needs two usable CPUs"), "{stderr}");
}

#[test]
fn placements_are_stored_and_never_pooled_with_free_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let db = db.to_str().unwrap();
    for label in ["a", "b", "c"] {
        let out = kbench(&[
            "run",
            "pipe:-l 2000 --placement same-cpu",
            "pipe:-l 2000",
            "--runs",
            "3",
            "--label",
            label,
            "--db",
            db,
        ]);
        assert_success(&out, &[]);
    }
    let out = kbench(&["compare", "a", "b", "--db", db, "--format", "json"]);
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pipe_rows: Vec<&str> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "usecs_per_op" && r.get("placement").is_none())
        .map(|r| r["params"].as_str().unwrap())
        .collect();
    assert_eq!(pipe_rows.len(), 2, "{pipe_rows:?}");
    assert!(pipe_rows.iter().any(|p| p.contains("placement=same-cpu")));
    assert!(pipe_rows.iter().any(|p| !p.contains("placement")));
    let text = kbench(&["compare", "a", "b", "--db", db]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("pipe same-cpu"), "{text}");

    // Several labels against one base: a column each, in every format.
    let out = kbench(&["compare", "a", "b", "c", "--db", db]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("kbench compare: a -> b, c\n"), "{text}");
    // The table's heading names the base and each label, a column each.
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["a", "b", "c"]),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let json = kbench(&["compare", "a", "b", "c", "--db", db, "--format", "json"]);
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    let news: Vec<&str> = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["new"]["label"].as_str().unwrap())
        .collect();
    assert_eq!(news, ["b", "c"]);
    // The rows are worked out on every CPU, and the labels read at once: on one CPU
    // the report is the same.
    let first_cpu = kbench_workloads::cpus::allowed_cpus().unwrap()[0].to_string();
    let one_cpu = std::process::Command::new("taskset")
        .args(["-c", &first_cpu, kbench_bin()])
        .args(["compare", "a", "b", "c", "--db", db, "--format", "json"])
        .output()
        .expect("taskset (util-linux)");
    assert_success(&one_cpu, &[]);
    assert_eq!(
        serde_json::from_slice::<Value>(&one_cpu.stdout).unwrap(),
        json
    );
    let csv = kbench(&["compare", "a", "b", "c", "--db", db, "--format", "csv"]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(csv.lines().skip(1).any(|l| l.starts_with("a,b,")));
    assert!(csv.lines().skip(1).any(|l| l.starts_with("a,c,")));
    let md = kbench(&["compare", "a", "b", "c", "--db", db, "--format", "markdown"]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("| benchmark | metric | a | b | c |"));
    // A label named twice is a usage error.
    let twice = kbench(&["compare", "a", "b", "b", "--db", db]);
    assert_eq!(twice.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&twice.stderr).lines().count(), 1);
}
