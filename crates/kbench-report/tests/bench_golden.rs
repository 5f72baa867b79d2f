//! Golden tests: every run format renders fixed records byte for byte as perf would
//! (the expected texts are perf 6.1's layouts, docs/perf-compat.md §1.1-§4.3).
use kbench_record::{RunRecord, RusageDelta, TaskCpus};
use kbench_report::bench::{by_name, RunFormat};
use std::collections::BTreeMap;

fn record(workload: &str, total_ns: u64, ops: Option<u64>, header: &[&str]) -> RunRecord {
    RunRecord {
        workload: workload.into(),
        params: BTreeMap::new(),
        variant: "pingpong".into(),
        total_ns,
        ops,
        usecs_per_op: None,
        ops_per_sec: None,
        bytes_transferred: None,
        rusage: RusageDelta::default(),
        tasks: vec![TaskCpus {
            task: "worker 0".into(),
            cpus: vec![0, 1],
            sampled_migrations: 0,
            nr_migrations: None,
        }],
        cpus_used: vec![0, 1],
        start_unix_ns: 1,
        end_unix_ns: 2,
        header_lines: header.iter().map(|s| s.to_string()).collect(),
        ..RunRecord::default()
    }
}

fn pipe_record(total_ns: u64, loops: i64) -> RunRecord {
    let mut rec = record(
        "sched/pipe",
        total_ns,
        Some(u64::try_from(loops).unwrap_or(0)),
        &[&format!(
            "# Executed {loops} pipe operations between two processes"
        )],
    );
    rec.perf_signed_loops = Some(loops);
    rec
}

fn render(format: &str, rec: &RunRecord) -> String {
    let f: Box<dyn RunFormat> = by_name(format).expect("known format");
    let mut out = f.banner(&rec.workload).unwrap_or_default();
    out.push_str(&f.render(rec));
    out
}

#[test]
fn default_pipe_matches_perf_transcript() {
    let expected = concat!(
        "# Running 'sched/pipe' benchmark:\n",
        "# Executed 20000 pipe operations between two processes\n",
        "\n",
        "     Total time: 0.084 [sec]\n",
        "\n",
        "       4.246500 usecs/op\n",
        "         235488 ops/sec\n",
    );
    assert_eq!(
        render("default", &pipe_record(84_930_123, 20_000)),
        expected
    );
}

#[test]
fn default_pipe_zero_and_negative_loops_match_perf() {
    let zero = render("default", &pipe_record(12_345, 0));
    assert!(
        zero.ends_with("            inf usecs/op\n              0 ops/sec\n"),
        "{zero}"
    );
    let negative = render("default", &pipe_record(817_000, -5));
    assert!(negative.contains("# Executed -5 pipe operations"));
    assert!(
        negative.ends_with("   -163.400000 usecs/op\n          -6119 ops/sec\n"),
        "{negative}"
    );
}

#[test]
fn default_messaging_matches_perf_transcript() {
    let rec = record(
        "sched/messaging",
        54_999_999,
        None,
        &[
            "# 20 sender and receiver processes per group",
            "# 2 groups == 80 processes run",
        ],
    );
    let expected = concat!(
        "# Running 'sched/messaging' benchmark:\n",
        "# 20 sender and receiver processes per group\n",
        "# 2 groups == 80 processes run\n",
        "\n",
        "     Total time: 0.054 [sec]\n",
    );
    assert_eq!(render("default", &rec), expected);
}

#[test]
fn default_seccomp_matches_perf_layout() {
    let mut rec = record(
        "sched/seccomp-notify",
        2_769_629_000,
        Some(1_000_000),
        &["# Executed 1000000 system calls"],
    );
    rec.variant = "perf".into();
    let expected = concat!(
        "# Running 'sched/seccomp-notify' benchmark:\n",
        "# Executed 1000000 system calls\n",
        "\n",
        "     Total time: 2.769 [sec]\n",
        "\n",
        "       2.769629 usecs/op\n",
        "         361059 ops/sec\n",
    );
    assert_eq!(render("default", &rec), expected);
}

#[test]
fn simple_is_the_truncated_total_time_alone() {
    assert_eq!(
        render("simple", &pipe_record(83_999_999, 20_000)),
        "0.083\n"
    );
    assert_eq!(render("simple", &pipe_record(1_445_999_000, 1)), "1.445\n");
}

#[test]
fn json_is_one_line_carrying_the_whole_record() {
    let rec = pipe_record(84_930_123, 20_000).with_per_op(20_000);
    let text = render("json", &rec);
    assert_eq!(text.lines().count(), 1);
    let value: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(value["workload"], "sched/pipe");
    assert_eq!(value["variant"], "pingpong");
    assert_eq!(value["total_ns"], 84_930_123);
    assert_eq!(value["ops"], 20_000);
    assert!((value["usecs_per_op"].as_f64().unwrap() - 4.24650615).abs() < 1e-9);
    assert_eq!(value["tasks"][0]["cpus"], serde_json::json!([0, 1]));
    assert!(value.get("header_lines").is_none());
}

#[test]
fn sched_all_banner_is_printed_in_text_formats_only() {
    for (format, expect) in [("default", true), ("simple", true), ("json", false)] {
        let f = by_name(format).unwrap();
        assert_eq!(
            f.all_banner("sched/pipe").as_deref(),
            expect.then_some("# Running sched/pipe benchmark...\n"),
            "{format}"
        );
    }
}

#[test]
fn unknown_format_is_none() {
    assert!(by_name("bogus").is_none());
}
