//! The main job end to end on a temporary database: run, list, show, compare,
//! export, import, ab and exec, with real workloads and real SQLite.
mod common;
use common::{kbench_bin, kbench_command, one_line_error, perf_present, text, TempDb};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `workload metric` of every primary value, distinct; fails unless every run with
/// values has exactly one.
fn primary_metrics(db: &TempDb) -> Vec<String> {
    assert_eq!(
        db.count(
            "SELECT count(*) FROM runs r WHERE EXISTS (SELECT 1 FROM run_values v WHERE v.run_id = r.id)
             AND (SELECT count(*) FROM run_values v WHERE v.run_id = r.id AND v.is_primary = 1) != 1"
        ),
        0,
        "a run without exactly one primary value"
    );
    let conn = db.sqlite();
    let mut stmt = conn
        .prepare(
            "SELECT DISTINCT r.workload || ' ' || v.metric FROM run_values v
             JOIN runs r ON r.id = v.run_id WHERE v.is_primary = 1 ORDER BY 1",
        )
        .unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

fn row<'a>(report: &'a serde_json::Value, workload: &str, metric: &str) -> &'a serde_json::Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["workload"] == workload && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {workload} {metric} in {report}"))
}

#[test]
fn run_list_show_compare_export_import_round_trip() {
    let db = TempDb::new();
    let summary = db.ok(&[
        "run",
        "--label",
        "base",
        "--runs",
        "5",
        "--seed",
        "7",
        "messaging:-g 1 -l 10",
        "pipe:-l 1000",
    ]);
    assert!(summary.contains("seed 7"), "{summary}");
    assert!(summary.contains("messaging:-g 1 -l 10"));
    db.ok(&[
        "run",
        "--label",
        "new",
        "--runs",
        "5",
        "messaging:-g 1 -l 10",
        "pipe:-l 1000",
    ]);
    // 2 workloads x (5 measured + 1 warm-up) per label.
    assert_eq!(db.count("SELECT count(*) FROM runs"), 24);
    assert_eq!(db.count("SELECT count(*) FROM runs WHERE warmup = 1"), 4);
    assert_eq!(db.count("SELECT count(DISTINCT seed) FROM sessions"), 2);
    assert_eq!(db.count("SELECT count(*) FROM sessions WHERE environment LIKE '%kernel_release%' AND boot_id IS NOT NULL"), 2);
    // Each workload declared its metrics: one primary per run, perf's figure.
    assert_eq!(
        primary_metrics(&db),
        ["sched/messaging total_sec", "sched/pipe usecs_per_op"]
    );

    let list = db.ok(&["list"]);
    assert!(list.contains("base") && list.contains("new"), "{list}");
    let show = db.ok(&["show", "base"]);
    assert!(
        show.contains("sched/pipe") && show.contains("usecs_per_op"),
        "{show}"
    );

    let report = db.json(&[
        "compare", "base", "new", "--format", "json", "--delta", "50",
    ]);
    let pipe = row(&report, "sched/pipe", "usecs_per_op");
    assert_eq!(pipe["n_a"], 5);
    assert_eq!(pipe["n_b"], 5);
    for key in [
        "shift_pct",
        "ci_low_pct",
        "ci_high_pct",
        "p_value",
        "verdict",
        "diagnostics",
    ] {
        assert!(pipe.get(key).is_some(), "missing {key}");
    }
    assert!(report["environment_differences"].is_array());

    let text_report = db.ok(&["compare", "base", "new"]);
    assert!(
        text_report.lines().all(|l| l.chars().count() <= 80),
        "{text_report}"
    );
    assert!(
        text_report.contains("kbench compare base new"),
        "ends with how to reproduce"
    );
    for (format, names_pipe) in [("markdown", "| pipe |"), ("csv", ",sched/pipe,")] {
        assert!(db
            .ok(&["compare", "base", "new", "--format", format])
            .contains(names_pipe));
    }

    // Export and re-import: the same values under a new label.
    let export = db.ok(&["export", "base", "--format", "json"]);
    let file = db.path.with_file_name("base.json");
    std::fs::write(&file, &export).unwrap();
    db.ok(&["import", file.to_str().unwrap(), "--label", "copy"]);
    let same = db.json(&["compare", "base", "copy", "--format", "json"]);
    let r = row(&same, "sched/pipe", "usecs_per_op");
    assert_eq!(r["median_a"], r["median_b"]);
    assert_eq!(r["n_b"], 5);
    let csv = db.ok(&["export", "base", "--format", "csv"]);
    // A pipe run's values: usecs_per_op, csw_per_op, syscalls_per_op and four interrupt figures per op.
    assert_eq!(csv.lines().count(), 1 + 12 * 7, "header + 7 values per run");
}

#[test]
fn different_parameters_are_never_pooled_and_say_so() {
    let db = TempDb::new();
    db.ok(&[
        "run",
        "--label",
        "a",
        "--runs",
        "3",
        "--warmup",
        "0",
        "pipe:-l 1000",
    ]);
    db.ok(&[
        "run",
        "--label",
        "b",
        "--runs",
        "3",
        "--warmup",
        "0",
        "pipe:-l 2000",
    ]);
    db.ok(&[
        "run",
        "--label",
        "c",
        "--runs",
        "3",
        "--warmup",
        "0",
        "pipe:-l 1000 --pingpong",
    ]);
    let ab = db.json(&["compare", "a", "b", "--format", "json"]);
    assert!(ab["rows"].as_array().unwrap().is_empty());
    assert_eq!(ab["not_compared"][0]["kind"], "params_differ", "{ab}");
    assert_eq!(
        ab["not_compared"][0]["differences"],
        serde_json::json!([["loop", "1000", "2000"]])
    );
    let said = db.ok(&["compare", "a", "b"]);
    assert!(
        said.contains("parameters differ") && said.contains("loop 1000 in a, 2000 in b"),
        "{said}"
    );
    let ac = db.json(&["compare", "a", "c", "--format", "json"]);
    assert_eq!(ac["not_compared"][0]["kind"], "variants_differ", "{ac}");
    assert!(db.ok(&["compare", "a", "c"]).contains("variants differ"));
}

#[test]
fn ab_detects_a_large_known_difference_and_not_a_false_one() {
    let db = TempDb::new();
    let report = db.json(&[
        "ab",
        "--runs",
        "8",
        "--format",
        "json",
        "--label-a",
        "l10",
        "--label-b",
        "l40",
        "messaging:-g 1 -l 10",
        "messaging:-g 1 -l 40",
    ]);
    let total = row(&report, "ab", "total_sec");
    assert_eq!(total["verdict"], "regression", "{total}");
    assert!(total["shift_pct"].as_f64().unwrap() > 50.0);

    let same = db.json(&[
        "ab",
        "--runs",
        "8",
        "--format",
        "json",
        "--delta",
        "50",
        "--label-a",
        "x",
        "--label-b",
        "y",
        "messaging:-g 1 -l 20",
        "messaging:-g 1 -l 20",
    ]);
    let verdict = row(&same, "ab", "total_sec")["verdict"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        verdict != "regression" && verdict != "improvement",
        "identical commands judged {verdict}"
    );
    // ABBA: the run order alternates A B, B A, ...
    let conn = db.sqlite();
    let mut stmt = conn
        .prepare("SELECT s.label FROM runs r JOIN sessions s ON s.id = r.session_id WHERE s.label IN ('x','y') AND r.warmup = 0 ORDER BY r.start_unix_ns")
        .unwrap();
    let order: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(&order[..4], ["x", "y", "y", "x"]);
}

#[test]
fn ab_of_shell_commands_and_fail_on() {
    let db = TempDb::new();
    let out = db.kbench(&[
        "ab",
        "--runs",
        "6",
        "--label-a",
        "fast",
        "--label-b",
        "slow",
        "sleep 0.01",
        "sleep 0.05",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verdict = text(&out.stdout);
    assert!(
        verdict
            .lines()
            .any(|l| l.starts_with("  ab ") && l.ends_with("regression")),
        "{verdict}"
    );
    let fail = db.kbench(&["compare", "fast", "slow", "--fail-on", "regression"]);
    assert_eq!(fail.status.code(), Some(1));
    let fine = db.kbench(&["compare", "slow", "fast", "--fail-on", "regression"]);
    assert_eq!(fine.status.code(), Some(0));
}

#[test]
fn exec_records_failures_and_never_averages_them_in() {
    let db = TempDb::new();
    let script = "test -e \"$0.flag\" && exit 3; touch \"$0.flag\"; exit 0";
    let marker = db.path.with_file_name("marker");
    let out = db.kbench(&[
        "exec",
        "--label",
        "x",
        "--runs",
        "3",
        "--",
        "sh",
        "-c",
        script,
        marker.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "a failed run makes exec fail");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("run 2 exited with status 3")
            && stdout.contains("run 3 exited with status 3"),
        "{stdout}"
    );
    assert_eq!(
        db.count("SELECT count(*) FROM runs WHERE exit_status = 3"),
        2
    );
    assert_eq!(
        db.count("SELECT count(*) FROM run_values WHERE metric = 'wall_sec'"),
        3
    );
    assert_eq!(primary_metrics(&db), ["command wall_sec"]);
    let show = db.ok(&["show", "x"]);
    assert!(
        show.lines()
            .any(|l| l.contains("wall_sec") && l.trim_end().ends_with('s') && l.contains(" 1 ")),
        "{show}"
    );
}

fn capture(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(out.status.success());
    // perf stat writes its table on stderr.
    text(&out.stdout) + &text(&out.stderr)
}

#[test]
fn imports_real_perf_output_and_compares_it() {
    if !perf_present() {
        return;
    }
    let db = TempDb::new();
    let mut bench = String::new();
    for _ in 0..3 {
        bench.push_str(&capture(
            "/usr/bin/perf",
            &["bench", "sched", "pipe", "-l", "2000"],
        ));
    }
    let file = db.path.with_file_name("perf-bench.txt");
    std::fs::write(&file, &bench).unwrap();
    db.ok(&["import", file.to_str().unwrap(), "--label", "perf-a"]);
    db.ok(&["import", file.to_str().unwrap(), "--label", "perf-b"]);
    let report = db.json(&["compare", "perf-a", "perf-b", "--format", "json"]);
    let r = row(&report, "sched/pipe", "usecs_per_op");
    assert_eq!(r["n_a"], 3);
    assert_eq!(r["median_a"], r["median_b"]);

    let stat = capture(
        "/usr/bin/perf",
        &[
            "stat",
            "-r",
            "3",
            "--",
            "/usr/bin/perf",
            "bench",
            "sched",
            "messaging",
            "-g",
            "1",
            "-l",
            "5",
        ],
    );
    let stat_file = db.path.with_file_name("perf-stat.txt");
    std::fs::write(&stat_file, &stat).unwrap();
    db.ok(&["import", stat_file.to_str().unwrap(), "--label", "stat-a"]);
    db.ok(&["import", stat_file.to_str().unwrap(), "--label", "stat-b"]);
    let report = db.json(&["compare", "stat-a", "stat-b", "--format", "json"]);
    let rows = report["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{report}");
    assert!(
        rows.iter().all(|r| r["kind"]["type"] == "summary"),
        "{report}"
    );
    assert!(
        rows.iter()
            .any(|r| r["metric"].as_str().unwrap().contains("time_elapsed")),
        "{report}"
    );
}

#[test]
fn malformed_input_is_one_line_exit_2_and_imports_nothing() {
    let db = TempDb::new();
    let bad = db.path.with_file_name("bad.txt");
    std::fs::write(
        &bad,
        "# Running 'sched/pipe' benchmark:\n# Executed 100 pipe operations between two processes\n\n     Total time: zero [sec]\n",
    )
    .unwrap();
    let out = db.kbench(&["import", bad.to_str().unwrap(), "--label", "bad"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(":4"), "names the line: {stderr}");
    assert!(!db.ok(&["list"]).contains("bad"));

    let not_db = db.path.with_file_name("not.db");
    std::fs::write(
        &not_db,
        "this is not SQLite, just text that is long enough to look like a header",
    )
    .unwrap();
    let out = kbench_command()
        .args(["list", "--db", not_db.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).lines().count(),
        1,
        "{}",
        text(&out.stderr)
    );

    for args in [
        &["compare", "nosuch", "other"][..],
        &["run", "--label", "x", "bogus-workload"],
        &["run", "--label", "x", "pipe:-l abc"],
        &["run", "--label", "bad label!", "pipe"],
        &["run", "--label", "x", "--runs", "0", "pipe"],
        &["compare", "a", "b", "--delta", "-1"],
        &["import", "/nonexistent/file", "--label", "x"],
        &["show", "nosuch"],
        &["run", "--label", "x", "--cpus", "99-100", "pipe"],
    ] {
        let out = db.kbench(args);
        let stderr = one_line_error(&out, 2, args);
        assert!(!stderr.contains("panicked"));
    }
}

#[test]
fn two_concurrent_writers_share_one_database() {
    let db = TempDb::new();
    let spawn = |label: &str| {
        kbench_command()
            .args([
                "run",
                "--label",
                label,
                "--runs",
                "15",
                "--warmup",
                "0",
                "pipe:-l 300",
                "messaging:-g 1 -l 2",
            ])
            .env("KBENCH_DB", &db.path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (first, second) = (spawn("one"), spawn("two"));
    for child in [first, second] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    assert_eq!(db.count("SELECT count(*) FROM runs"), 60);
    assert_eq!(db.count("SELECT count(*) FROM sessions"), 2);
}

#[test]
fn pinned_runs_record_the_pinning_and_the_cpus_used() {
    let db = TempDb::new();
    db.ok(&[
        "run",
        "--label",
        "pinned",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--cpus",
        "1",
        "pipe:-l 500",
    ]);
    let conn = db.sqlite();
    let (pinned, used): (String, String) = conn
        .query_row("SELECT pinned_cpus, cpus_used FROM runs LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(pinned, "1");
    assert_eq!(used, "1");
}

#[test]
fn a_run_past_its_timeout_is_stopped_recorded_and_leaves_no_process() {
    let db = TempDb::new();
    let out = db.kbench(&[
        "run",
        "--label",
        "slow",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--run-timeout",
        "1",
        "pipe:-l 100000000",
    ]);
    assert_eq!(out.status.code(), Some(1), "a failed run makes run fail");
    assert!(
        text(&out.stderr).contains("timed out after 1 s"),
        "{}",
        text(&out.stderr)
    );
    // Failures do not count toward --runs: it tried three times, then gave up.
    assert_eq!(
        db.count("SELECT count(*) FROM runs WHERE error LIKE '%timed out after 1 s%' AND workload = 'sched/pipe'"),
        3
    );
    let leftovers = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("cmdline")).ok())
        .filter(|cmd| cmd.contains("100000000") && cmd.contains("kbench"))
        .count();
    assert_eq!(leftovers, 0, "the stopped run left processes behind");
}

#[test]
fn latency_workloads_are_run_stored_and_compared_by_percentile() {
    let db = TempDb::new();
    db.ok(&[
        "run",
        "--label",
        "ipi",
        "--runs",
        "2",
        "--warmup",
        "0",
        "ipi:--iterations 2000 --warmup 100",
    ]);
    assert_eq!(
        db.count("SELECT count(*) FROM run_values WHERE metric = 'ipi_round_trip_p50_ns'"),
        2
    );
    assert_eq!(primary_metrics(&db), ["ipi/ipi ipi_round_trip_p50_ns"]);
    let report = db.json(&[
        "ab",
        "--runs",
        "5",
        "--warmup",
        "0",
        "--format",
        "json",
        "--label-a",
        "plain",
        "--label-b",
        "delayed",
        "wakeup:--wakes 400 --warmup 20 --gap-us 200",
        "wakeup:--wakes 400 --warmup 20 --gap-us 200 --inject-delay-us 200",
    ]);
    let per_run = row(&report, "ab", "wake_latency_p50_ns");
    assert_eq!(per_run["n_a"], 5);
    let pooled = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["kind"]["type"] == "pooled_percentile"
                && r["metric"] == "wake_latency"
                && r["kind"]["quantile"] == 0.5
        })
        .unwrap_or_else(|| panic!("no pooled p50 row in {report}"));
    assert_eq!(pooled["verdict"], "regression", "{pooled}");
    assert_eq!(pooled["n_a"], 5, "runs are the replicates: {pooled}");
    let pooled_samples = pooled["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "pooled")
        .unwrap_or_else(|| panic!("{pooled}"));
    assert!(
        pooled_samples["samples_a"].as_u64().unwrap() >= 1000,
        "every wake of every run: {pooled}"
    );
    let moved_ns = pooled["median_b"].as_f64().unwrap() - pooled["median_a"].as_f64().unwrap();
    assert!(
        (150_000.0..400_000.0).contains(&moved_ns),
        "a 200 us delay moved p50 by {moved_ns} ns"
    );
    assert!(row(&report, "ab", "call_ipis_per_op")["n_a"] == 5);
    // ab keeps the workload's own record, and what each side ran beside it.
    assert_eq!(
        db.count(
            "SELECT count(*) FROM runs WHERE workload = 'ab' AND variant = 'ab'
             AND json_type(record, '$.series') = 'array'
             AND json_extract(ab_side, '$.workload') = 'sched/wakeup'
             AND json_extract(ab_side, '$.variant') = 'idle-futex'"
        ),
        10
    );
    assert_eq!(
        db.count("SELECT count(*) FROM runs WHERE json_extract(ab_side, '$.side') = 'b' AND json_extract(ab_side, '$.params.\"inject-delay-us\"') = 200"),
        5
    );
    assert_eq!(
        primary_metrics(&db),
        ["ab wake_latency_p50_ns", "ipi/ipi ipi_round_trip_p50_ns"]
    );
}

#[test]
fn precision_mode_stops_when_the_median_is_known_well_enough() {
    let db = TempDb::new();
    let out = db.ok(&[
        "run",
        "--label",
        "p",
        "--warmup",
        "0",
        "--precision",
        "60",
        "--max-time",
        "60",
        "messaging:-g 1 -l 5",
    ]);
    let runs = db.count("SELECT count(*) FROM runs");
    // At least the minimum of 5 runs, and far fewer than a minute's worth.
    assert!((5..200).contains(&runs), "{runs} runs");
    let line = out.lines().find(|l| l.starts_with("messaging")).unwrap();
    let precision: f64 = line.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert!(precision <= 60.0, "reported precision {precision} in {out}");
    // A time limit that cannot be met stops the run and still reports what it reached.
    let out = db.ok(&[
        "run",
        "--label",
        "q",
        "--warmup",
        "0",
        "--precision",
        "0.001",
        "--max-time",
        "2",
        "messaging:-g 1 -l 5",
    ]);
    assert!(out.contains("messaging:-g 1 -l 5"), "{out}");
    assert!(db.count("SELECT count(*) FROM runs r JOIN sessions s ON s.id = r.session_id WHERE s.label = 'q'") >= 5);
}

/// Runs `program args` as the unprivileged user nobody, when this test runs as root.
fn run_as_nobody(program: &str, args: &[&str]) -> Option<Output> {
    let setpriv = Path::new("/usr/bin/setpriv");
    if !setpriv.exists() || !rustix::process::geteuid().is_root() {
        eprintln!("SKIP: needs root and setpriv to act as an unprivileged user");
        return None;
    }
    let drop_privileges = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    Some(
        Command::new(setpriv)
            .args(drop_privileges)
            .arg(program)
            .args(args)
            .output()
            .unwrap(),
    )
}

fn as_nobody(args: &[&str]) -> Option<Output> {
    run_as_nobody(kbench_bin(), args)
}

fn as_nobody_shell(script: &str) -> Option<Output> {
    run_as_nobody("bash", &["-c", script])
}

#[test]
fn a_read_only_database_still_serves_reports_and_refuses_writes_in_one_line() {
    let db = TempDb::new();
    db.ok(&[
        "run",
        "--label",
        "a",
        "--runs",
        "2",
        "--warmup",
        "0",
        "pipe:-l 200",
    ]);
    db.ok(&[
        "run",
        "--label",
        "a2",
        "--runs",
        "2",
        "--warmup",
        "0",
        "pipe:-l 200",
    ]);
    let path = db.path.to_str().unwrap().to_string();
    // The temporary directory is root's and private: open it for reading only.
    let dir = db.path.parent().unwrap();
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap()
    };
    mode(dir, 0o755);
    mode(&db.path, 0o644);
    let Some(list) = as_nobody(&["list", "--db", &path]) else {
        return;
    };
    assert!(list.status.success(), "{}", text(&list.stderr));
    assert!(text(&list.stdout).contains('a'));
    // A sequential look is answered; only its record is left out, and that is said.
    let look = as_nobody(&["compare", "a", "a2", "--sequential", "--db", &path]).unwrap();
    assert!(look.status.success(), "{}", text(&look.stderr));
    assert!(text(&look.stdout).contains("Sequential: a (A) against a2 (B)"));
    assert!(
        text(&look.stderr).contains("read-only: this look is not recorded"),
        "{}",
        text(&look.stderr)
    );
    let run = as_nobody(&[
        "run",
        "--label",
        "b",
        "--runs",
        "1",
        "pipe:-l 200",
        "--db",
        &path,
    ])
    .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(
        text(&run.stderr).lines().count(),
        1,
        "{}",
        text(&run.stderr)
    );
    assert!(text(&run.stderr).contains("read-only"));
}

#[test]
fn too_low_a_process_limit_is_refused_before_any_fork() {
    let script = format!(
        "ulimit -u 8; exec {} bench sched messaging -g 1 -l 1",
        kbench_bin()
    );
    let Some(out) = as_nobody_shell(&script) else {
        return;
    };
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("RLIMIT_NPROC is 8"),
        "{}",
        text(&out.stderr)
    );
}

/// The `runs` column of `kbench list` for `label`.
fn listed_runs(list: &str, label: &str) -> u64 {
    let line = list
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label))
        .unwrap_or_else(|| panic!("no {label} in {list}"));
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

#[test]
fn list_show_and_compare_count_the_same_measured_runs() {
    let db = TempDb::new();
    // Two measured runs, a warm-up, a failed run and one that exited 1.
    let run = |i: usize, extra: serde_json::Value| {
        let mut run = serde_json::json!({
            "workload": "sched/pipe", "params": {"loop": 1000}, "variant": "symmetric",
            "run_index": i, "warmup": false, "exit_status": 0,
            "values": [{"metric": "usecs_per_op", "value": 4.0 + i as f64 / 10.0,
                        "unit": "us/op", "higher_is_better": false, "primary": true}],
        });
        run.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        run
    };
    let runs = vec![
        run(0, serde_json::json!({"warmup": true})),
        run(1, serde_json::json!({})),
        run(
            2,
            serde_json::json!({"variant": "", "exit_status": 1, "values": [],
                                  "error": "pipe:-l 1000 timed out after 1 s and was stopped"}),
        ),
        run(3, serde_json::json!({"exit_status": 1})),
        run(4, serde_json::json!({})),
    ];
    let export = serde_json::json!({
        "format": "kbench-export", "version": 2, "label": "m",
        "sessions": [{
            "session": {"label": "m", "kind": "run", "boot_id": "b", "started_unix_ns": 1,
                        "kbench_version": "test", "command_line": "crafted", "seed": 1,
                        "environment": null, "source": null},
            "ended_unix_ns": 2, "runs": runs, "summaries": [],
        }],
    });
    let file = db.path.with_file_name("m.json");
    std::fs::write(&file, export.to_string()).unwrap();
    for label in ["m", "m2"] {
        db.ok(&["import", file.to_str().unwrap(), "--label", label]);
    }

    assert_eq!(listed_runs(&db.ok(&["list"]), "m"), 2);
    let show = db.ok(&["show", "m"]);
    assert!(
        show.contains("2 runs"),
        "the session counts measured runs: {show}"
    );
    let usecs = show
        .lines()
        .find(|l| l.trim_start().starts_with("usecs_per_op"))
        .unwrap_or_else(|| panic!("{show}"));
    assert_eq!(usecs.split_whitespace().nth(1), Some("2"), "{show}");
    assert!(
        show.contains("sched/pipe: 2 failed run(s)"),
        "the failed run and the non-zero exit: {show}"
    );
    let report = db.json(&["compare", "m", "m2", "--format", "json"]);
    assert_eq!(
        (
            report["base"]["runs"].as_u64(),
            report["new"]["runs"].as_u64()
        ),
        (Some(2), Some(2))
    );
    assert_eq!(row(&report, "sched/pipe", "usecs_per_op")["n_a"], 2);
}

#[test]
fn importing_the_same_thing_twice_or_nothing_is_refused() {
    let db = TempDb::new();
    db.ok(&[
        "run",
        "--label",
        "a",
        "--runs",
        "2",
        "--warmup",
        "0",
        "pipe:-l 200",
    ]);
    let export = db.ok(&["export", "a"]);
    let file = db.path.with_file_name("a.json");
    std::fs::write(&file, &export).unwrap();
    db.ok(&["import", file.to_str().unwrap(), "--label", "b"]);
    let again = db.kbench(&["import", file.to_str().unwrap(), "--label", "b"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("twice"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(
        db.count("SELECT count(*) FROM sessions WHERE label = 'b'"),
        1
    );

    let perf_text = "# Running 'sched/pipe' benchmark:\n# Executed 100 pipe operations between two processes\n\n     Total time: 0.004 [sec]\n\n      40.000000 usecs/op\n          25000 ops/sec\n";
    let perf_file = db.path.with_file_name("perf.txt");
    std::fs::write(&perf_file, perf_text).unwrap();
    db.ok(&["import", perf_file.to_str().unwrap(), "--label", "p"]);
    let copy = db.path.with_file_name("copy-of-perf.txt");
    std::fs::copy(&perf_file, &copy).unwrap();
    assert_eq!(
        db.kbench(&["import", copy.to_str().unwrap(), "--label", "p"])
            .status
            .code(),
        Some(2)
    );

    let empty = db.path.with_file_name("empty.json");
    std::fs::write(
        &empty,
        r#"{"format":"kbench-export","version":1,"label":"x","sessions":[]}"#,
    )
    .unwrap();
    assert_eq!(
        db.kbench(&["import", empty.to_str().unwrap(), "--label", "e"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn pinned_and_unpinned_runs_are_never_pooled() {
    let db = TempDb::new();
    db.ok(&[
        "run",
        "--label",
        "a",
        "--runs",
        "3",
        "--warmup",
        "0",
        "pipe:-l 500",
    ]);
    db.ok(&[
        "run",
        "--label",
        "a",
        "--runs",
        "3",
        "--warmup",
        "0",
        "--cpus",
        "0",
        "pipe:-l 500",
    ]);
    db.ok(&[
        "run",
        "--label",
        "b",
        "--runs",
        "3",
        "--warmup",
        "0",
        "pipe:-l 500",
    ]);
    let report = db.json(&["compare", "a", "b", "--format", "json"]);
    assert_eq!(row(&report, "sched/pipe", "usecs_per_op")["n_a"], 3);
    assert_eq!(
        report["not_compared"][0]["differences"],
        serde_json::json!([["pinned", "0", "-"]]),
        "{report}"
    );
    assert!(db.ok(&["compare", "a", "b"]).contains("pinned 0 in a"));
}

#[test]
fn ab_never_pools_an_earlier_ab_and_fails_when_a_side_produced_nothing() {
    let db = TempDb::new();
    let labels = [
        "--label-a",
        "x",
        "--label-b",
        "y",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--format",
        "json",
    ];
    let mut first = labels.to_vec();
    first.extend(["pipe:-l 300", "pipe:-l 300"]);
    db.ok(&[&["ab"][..], &first].concat());
    let mut second = labels.to_vec();
    second.extend(["pipe:-l 600", "pipe:-l 600 --pingpong"]);
    let report = db.json(&[&["ab"][..], &second].concat());
    let usecs: Vec<&serde_json::Value> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "usecs_per_op")
        .collect();
    // One row per ab pair, each with its own two runs a side: nothing pooled across.
    assert_eq!(usecs.len(), 2, "{report}");
    assert!(
        usecs.iter().all(|r| r["n_a"] == 2 && r["n_b"] == 2),
        "{report}"
    );
    assert_ne!(usecs[0]["params"], usecs[1]["params"]);

    let out = db.kbench(&[
        "ab",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--label-a",
        "t",
        "--label-b",
        "f",
        "true",
        "false",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("f: every one of its 2 runs failed"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(db.kbench(&["compare", "t", "t"]).status.code(), Some(2));
}

/// The metric names of every run's values, per run in run order, primary first.
fn run_metrics(db: &TempDb) -> Vec<Vec<String>> {
    let conn = db.sqlite();
    let mut stmt = conn
        .prepare(
            "SELECT group_concat(metric, ' ') FROM (SELECT v.run_id, v.metric FROM run_values v
             ORDER BY v.run_id, v.is_primary DESC, v.metric) GROUP BY run_id ORDER BY run_id",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|r| r.unwrap().split(' ').map(str::to_string).collect())
        .collect();
    rows
}

fn values_of(db: &TempDb, metric: &str) -> Vec<f64> {
    let conn = db.sqlite();
    let mut stmt = conn
        .prepare("SELECT value FROM run_values WHERE metric = ?1 ORDER BY run_id")
        .unwrap();
    let rows = stmt
        .query_map([metric], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows
}

const MEASURED: [&str; 4] = ["max_rss_kib", "sys_sec", "user_sec", "wall_sec"];

#[test]
fn exec_stores_the_figures_perf_bench_prints_beside_what_it_measures() {
    if !perf_present() {
        return;
    }
    let db = TempDb::new();
    let out = db.ok(&[
        "exec", "--label", "x", "--runs", "3", "--", "perf", "bench", "sched", "pipe", "-l", "2000",
    ]);
    assert_eq!(primary_metrics(&db), ["command usecs_per_op"]);
    let mut expected = vec!["usecs_per_op", "ops_per_sec", "total_sec"];
    expected.extend(MEASURED);
    let expected: Vec<&str> = [&expected[..1], &{
        let mut rest = expected[1..].to_vec();
        rest.sort();
        rest
    }]
    .concat();
    assert_eq!(run_metrics(&db), vec![expected; 3]);
    // perf's own figures agree with each other: usecs/op is the total over the loops.
    for (usecs, total) in values_of(&db, "usecs_per_op")
        .iter()
        .zip(values_of(&db, "total_sec"))
    {
        assert!(
            (usecs * 2000.0 / 1e6 - total).abs() <= 0.0015,
            "{usecs} {total}"
        );
    }
    // The summary lists the parsed figures beside the measured ones, primary first.
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("metric"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(rows[0], "usecs_per_op", "{out}");
    for name in [
        "ops_per_sec",
        "total_sec",
        "wall_sec",
        "user_sec",
        "sys_sec",
        "max_rss_kib",
    ] {
        assert!(rows.contains(&name), "{name} missing: {out}");
    }
    assert!(out.contains("perf-bench output"), "{out}");
}

#[test]
fn metric_picks_the_primary_and_no_parse_keeps_wall_time() {
    if !perf_present() {
        return;
    }
    let db = TempDb::new();
    let pipe = ["--", "perf", "bench", "sched", "pipe", "-l", "1000"];
    fn exec<'a>(label: &'a str, options: &[&'a str], pipe: &[&'a str]) -> Vec<&'a str> {
        [
            &["exec", "--label", label, "--runs", "2"][..],
            options,
            pipe,
        ]
        .concat()
    }
    db.ok(&exec("ops", &["--metric", "ops_per_sec"], &pipe));
    db.ok(&exec("plain", &["--no-parse"], &pipe));
    db.ok(&exec("cpu", &["--metric", "sys_sec"], &pipe));
    assert_eq!(
        primary_metrics(&db),
        ["command ops_per_sec", "command sys_sec", "command wall_sec"]
    );
    assert_eq!(
        db.count(
            "SELECT count(*) FROM run_values v JOIN runs r ON r.id = v.run_id
             JOIN sessions s ON s.id = r.session_id WHERE s.label = 'plain'"
        ),
        2 * 4,
        "--no-parse stores only what kbench measured"
    );
    let out = db.kbench(&exec("bad", &["--metric", "nope"], &pipe));
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--metric nope")
            && stderr.contains("usecs_per_op, ")
            && stderr.contains("wall_sec"),
        "{stderr}"
    );
    let out = db.kbench(&[
        "exec",
        "--label",
        "bad",
        "--metric",
        "usecs_per_op",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("it printed nothing"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn ab_of_two_perf_bench_commands_compares_usecs_per_op() {
    if !perf_present() {
        return;
    }
    let db = TempDb::new();
    let cmd = "perf bench sched pipe -l 2000";
    let report = db.json(&["ab", "--runs", "3", "--format", "json", cmd, cmd]);
    let usecs = row(&report, "ab", "usecs_per_op");
    assert_eq!(usecs["role"], "primary", "{report}");
    assert_eq!(
        (usecs["n_a"].as_u64(), usecs["n_b"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(row(&report, "ab", "wall_sec")["role"], "secondary");
    assert_eq!(primary_metrics(&db), ["ab usecs_per_op"]);
}

#[test]
fn unread_output_keeps_wall_time_primary_and_says_so_once() {
    let db = TempDb::new();
    let out = db.kbench(&["exec", "--label", "x", "--runs", "3", "--", "echo", "hello"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.matches("figures not read").count(), 1, "{stderr}");
    assert!(
        stderr.contains("not the output of a known tool"),
        "{stderr}"
    );
    assert_eq!(primary_metrics(&db), ["command wall_sec"]);
    // A figure named like a measured one is the output's own, under another name.
    let hyperfine = r#"{"results": [{"command": "x", "times": [0.5], "exit_codes": [0]}]}"#;
    db.ok(&[
        "exec", "--label", "h", "--runs", "1", "--", "echo", hyperfine,
    ]);
    assert_eq!(values_of(&db, "output_wall_sec"), [0.5]);
    assert_eq!(values_of(&db, "wall_sec").len(), 4);
    assert_eq!(
        primary_metrics(&db),
        ["command output_wall_sec", "command wall_sec"]
    );
}

#[test]
fn exec_reads_kbench_perf_stat_hackbench_and_cyclictest_output() {
    let db = TempDb::new();
    let kbench = kbench_bin();
    let json = [kbench, "bench", "--json", "sched", "pipe", "-l", "1000"];
    db.ok(&[&["exec", "--label", "json", "--runs", "1", "--"][..], &json].concat());
    let perf_format = [kbench, "bench", "sched", "messaging", "-g", "1", "-l", "5"];
    db.ok(&[
        &["exec", "--label", "text", "--runs", "1", "--"][..],
        &perf_format,
    ]
    .concat());
    let mut expected = vec!["command total_sec", "command usecs_per_op"];
    assert!(
        values_of(&db, "csw_per_op").len() == 1,
        "the record's own metrics"
    );
    if perf_present() {
        // perf stat writes its counters on stderr; stdout is empty here.
        let stat = [
            "perf",
            "stat",
            "-e",
            "task-clock,context-switches",
            "--",
            "true",
        ];
        db.ok(&[&["exec", "--label", "stat", "--runs", "1", "--"][..], &stat].concat());
        expected.push("command time_elapsed_sec");
        assert_eq!(values_of(&db, "task-clock").len(), 1);
    }
    if Path::new("/usr/bin/hackbench").exists() {
        let hb = ["hackbench", "-g", "1", "-l", "20"];
        db.ok(&[&["exec", "--label", "hb", "--runs", "1", "--"][..], &hb].concat());
    } else {
        eprintln!("SKIP: hackbench (rt-tests) is not installed");
    }
    let root = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    };
    if root && Path::new("/usr/bin/cyclictest").exists() {
        let ct = [
            "cyclictest",
            "-q",
            "-p",
            "80",
            "-t",
            "1",
            "-i",
            "500",
            "-l",
            "50",
        ];
        db.ok(&[&["exec", "--label", "ct", "--runs", "1", "--"][..], &ct].concat());
        expected.insert(0, "command latency_max_us");
        assert_eq!(values_of(&db, "thread0_latency_avg_us").len(), 1);
    } else {
        eprintln!("SKIP: cyclictest needs rt-tests and root");
    }
    expected.sort();
    assert_eq!(primary_metrics(&db), expected);
}

/// A script for hooks: appends its word to `log`.
fn append(log: &Path, word: &str) -> String {
    format!("echo {word} >> '{}'", log.display())
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn exec_hooks_run_in_order_untimed_around_every_run() {
    let db = TempDb::new();
    let log = db.path.with_file_name("log");
    db.ok(&[
        "exec",
        "--label",
        "x",
        "--runs",
        "3",
        "--warmup",
        "1",
        "--setup",
        &append(&log, "setup"),
        "--prepare",
        &append(&log, "prepare"),
        "--cleanup",
        &append(&log, "cleanup"),
        "--",
        "sh",
        "-c",
        &append(&log, "run"),
    ]);
    let mut expected = vec!["setup"];
    for _ in 0..4 {
        expected.extend(["prepare", "run"]);
    }
    expected.push("cleanup");
    assert_eq!(lines(&log), expected);
    assert_eq!(db.count("SELECT count(*) FROM runs WHERE error IS NULL"), 4);
}

#[test]
fn a_failing_prepare_hook_stops_exec_is_recorded_and_the_cleanup_still_runs() {
    let db = TempDb::new();
    let log = db.path.with_file_name("log");
    let count = db.path.with_file_name("count");
    // The third prepare fails.
    let prepare = format!(
        "echo . >> '{0}'; test $(wc -l < '{0}') -lt 3",
        count.display()
    );
    let out = db.kbench(&[
        "exec",
        "--label",
        "x",
        "--runs",
        "5",
        "--prepare",
        &prepare,
        "--cleanup",
        &append(&log, "cleanup"),
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let message = format!("prepare hook '{prepare}' exited with status 1");
    assert!(
        stderr.lines().any(|l| l == format!("kbench: {message}")),
        "{stderr}"
    );
    assert_eq!(lines(&count).len(), 3, "no prepare after the failed one");
    assert_eq!(lines(&log), ["cleanup"]);
    assert_eq!(db.count("SELECT count(*) FROM runs WHERE error IS NULL"), 2);
    let conn = db.sqlite();
    let (error, status): (String, i64) = conn
        .query_row(
            "SELECT error, exit_status FROM runs WHERE error IS NOT NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((error.as_str(), status), (message.as_str(), 1));
    let show = db.ok(&["show", "x"]);
    assert!(
        show.contains(&format!(
            "1 failed run(s), recorded and not counted (first: {message})"
        )),
        "{show}"
    );
}

#[test]
fn a_failing_setup_runs_nothing_and_no_cleanup() {
    let db = TempDb::new();
    let log = db.path.with_file_name("log");
    let out = db.kbench(&[
        "exec",
        "--label",
        "x",
        "--setup",
        "exit 4",
        "--prepare",
        &append(&log, "prepare"),
        "--cleanup",
        &append(&log, "cleanup"),
        "--",
        "sh",
        "-c",
        &append(&log, "run"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("setup hook 'exit 4' exited with status 4"));
    assert!(lines(&log).is_empty(), "{:?}", lines(&log));
    assert_eq!(
        db.count("SELECT count(*) FROM runs WHERE exit_status = 4 AND error LIKE 'setup hook%'"),
        1
    );
}

#[test]
fn ab_hooks_run_per_side_and_a_failing_one_stops_the_ab_keeping_its_runs() {
    let db = TempDb::new();
    let log = db.path.with_file_name("log");
    let prepared = db.path.with_file_name("prepared");
    let ab = |extra: &[&str]| -> Output {
        let base = [
            "ab",
            "--runs",
            "2",
            "--warmup",
            "1",
            "--label-a",
            "a",
            "--label-b",
            "b",
        ];
        db.kbench(&[&base[..], extra, &["true", "true"]].concat())
    };
    let (setup, cleanup) = (append(&log, "setup"), append(&log, "cleanup"));
    let hooks = ["--setup", &setup, "--cleanup", &cleanup];
    let out = ab(&[&hooks[..], &["--prepare", &append(&prepared, "p")]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(lines(&log), ["setup", "setup", "cleanup", "cleanup"]);
    assert_eq!(
        lines(&prepared).len(),
        2 * (2 + 1),
        "every run, warm-ups included"
    );

    // B's prepare fails before its warm-up: A's warm-up is kept, nothing after it runs.
    std::fs::remove_file(&log).unwrap();
    let db = TempDb::new();
    let base = ["ab", "--runs", "2", "--label-a", "a", "--label-b", "b"];
    let out = db.kbench(&[&base[..], &hooks, &["--prepare-b", "false", "true", "true"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "kbench: side B (b): prepare hook 'false' exited with status 1; the A/B stopped"
        ),
        "{stderr}"
    );
    assert_eq!(lines(&log), ["setup", "setup", "cleanup", "cleanup"]);
    assert_eq!(
        db.count("SELECT count(*) FROM runs WHERE error IS NULL AND warmup = 1"),
        1
    );
    assert_eq!(
        db.count(
            "SELECT count(*) FROM runs WHERE error = 'prepare hook ''false'' exited with status 1'"
        ),
        1
    );
    assert!(
        text(&out.stdout).contains("b: every one of its 1 runs failed: prepare hook 'false'"),
        "{}",
        text(&out.stdout)
    );

    let both = db.kbench(
        &[
            &base[..],
            &["--prepare", "true", "--prepare-a", "true", "x", "y"],
        ]
        .concat(),
    );
    assert_eq!(both.status.code(), Some(2));
}
