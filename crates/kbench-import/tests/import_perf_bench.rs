//! The perf bench text reader, on captured perf 6.1 output, the transcripts of
//! docs/perf-compat.md §8, malformed files, and output captured from /usr/bin/perf now.
mod common;

use common::fixture;
use kbench_import::{parse_file_text, perf_bench, ImportedRun};
use serde_json::json;
use std::process::Command;

fn runs_of(text: &str) -> Vec<ImportedRun> {
    let imported = parse_file_text("test.txt", text).expect("parses");
    assert_eq!(imported.source_format, "perf-bench");
    assert!(imported.summaries.is_empty());
    imported.runs
}

fn error_of(text: &str) -> (usize, String) {
    let err = perf_bench::parse("bad.txt", text).expect_err("must be rejected");
    assert_eq!(err.path, "bad.txt");
    (err.line, err.message)
}

#[test]
fn default_pipe_output_gives_every_figure_and_the_loop_parameters() {
    let runs = runs_of(&fixture("perf_bench_pipe.txt"));
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.workload, "sched/pipe");
    assert_eq!(run.params["loop"], json!(20000));
    assert_eq!(run.params["threaded"], json!(false));
    assert_eq!(run.variant, "perf-unknown-version");
    assert_eq!(run.value("total_sec").unwrap(), 0.117);
    assert_eq!(run.value("usecs_per_op").unwrap(), 5.85225);
    assert_eq!(run.value("ops_per_sec").unwrap(), 170874.0);
    assert_eq!((run.line, run.exit_status), (1, None));
    // The reader declares what it read: usecs/op is the figure, ops/sec a throughput.
    let declared: Vec<(&str, &str, bool, bool)> = run
        .values
        .iter()
        .map(|v| {
            (
                v.name.as_str(),
                v.unit.as_str(),
                v.is_primary(),
                v.higher_is_better(),
            )
        })
        .collect();
    assert_eq!(
        declared,
        [
            ("ops_per_sec", "ops/s", false, true),
            ("total_sec", "s", false, false),
            ("usecs_per_op", "us/op", true, false),
        ]
    );
}

#[test]
fn threaded_pipe_output_sets_threaded() {
    let runs = runs_of(&fixture("perf_bench_pipe_threads.txt"));
    assert_eq!(runs[0].params["threaded"], json!(true));
    assert_eq!(runs[0].value("usecs_per_op").unwrap(), 5.42105);
}

#[test]
fn messaging_output_gives_groups_and_mode_and_the_perf_variant() {
    let runs = runs_of(&fixture("perf_bench_messaging.txt"));
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].workload, "sched/messaging");
    assert_eq!(runs[0].params["group"], json!(2));
    assert_eq!(runs[0].params["thread"], json!(false));
    // The messaging loop never changed between perf versions.
    assert_eq!(runs[0].variant, "perf");
    assert_eq!(runs[0].values.len(), 1);
    assert_eq!(runs[0].value("total_sec").unwrap(), 0.084);
    assert!(
        runs[0].values[0].is_primary(),
        "the total time is messaging's figure"
    );

    let threads = runs_of(&fixture("perf_bench_messaging_threads.txt"));
    assert_eq!(threads[0].params["thread"], json!(true));
    assert_eq!(threads[0].value("total_sec").unwrap(), 0.034);
}

#[test]
fn simple_format_runs_have_unknown_workload_one_per_line() {
    let one = runs_of(&fixture("perf_bench_simple.txt"));
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].workload, "unknown");
    assert_eq!(one[0].variant, "perf-unknown-version");
    assert!(one[0].params.is_empty());
    assert_eq!(one[0].value("total_sec").unwrap(), 0.107);

    let looped = runs_of(&fixture("perf_bench_simple_loop.txt"));
    let totals: Vec<f64> = looped
        .iter()
        .map(|r| r.value("total_sec").unwrap())
        .collect();
    assert_eq!(totals, [0.032, 0.029, 0.029]);
    let lines: Vec<usize> = looped.iter().map(|r| r.line).collect();
    assert_eq!(lines, [1, 2, 3]);
}

#[test]
fn concatenated_default_runs_are_read_in_order_with_their_start_lines() {
    let runs = runs_of(&fixture("perf_bench_pipe_loop.txt"));
    let lines: Vec<usize> = runs.iter().map(|r| r.line).collect();
    assert_eq!(lines, [1, 8, 15]);
    let usecs: Vec<f64> = runs
        .iter()
        .map(|r| r.value("usecs_per_op").unwrap())
        .collect();
    assert_eq!(usecs, [5.782, 7.7086, 8.176]);
    assert!(runs.iter().all(|r| r.params["loop"] == json!(5000)));
}

#[test]
fn sched_all_output_names_each_benchmark() {
    let runs = runs_of(&fixture("perf_bench_sched_all.txt"));
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].workload, "sched/messaging");
    assert_eq!(runs[0].params["group"], json!(10));
    assert_eq!(runs[0].value("total_sec").unwrap(), 1.144);
    assert_eq!(runs[1].workload, "sched/pipe");
    assert_eq!(runs[1].params["loop"], json!(1_000_000));
    assert_eq!(runs[1].value("ops_per_sec").unwrap(), 132275.0);
    assert_eq!((runs[0].line, runs[1].line), (1, 7));
}

#[test]
fn sched_all_in_simple_format_pairs_each_header_with_its_time() {
    let runs = runs_of(&fixture("perf_bench_sched_all_simple.txt"));
    let got: Vec<(&str, f64)> = runs
        .iter()
        .map(|r| (r.workload.as_str(), r.value("total_sec").unwrap()))
        .collect();
    assert_eq!(got, [("sched/messaging", 0.861), ("sched/pipe", 6.955)]);
    assert!(runs.iter().all(|r| r.params.is_empty()));
}

#[test]
fn seccomp_notify_output_from_the_spec_is_read() {
    // docs/perf-compat.md §4.3 (perf >= 6.6; not runnable with the installed 6.1).
    let text = "# Running 'sched/seccomp-notify' benchmark:\n\
                # Executed 1000000 system calls\n\n     Total time: 2.769 [sec]\n\n\
                \x20      2.769629 usecs/op\n         361059 ops/sec\n";
    let runs = runs_of(text);
    assert_eq!(runs[0].workload, "sched/seccomp-notify");
    assert_eq!(runs[0].params["loop"], json!(1_000_000));
    assert_eq!(runs[0].variant, "perf");
    assert_eq!(runs[0].value("usecs_per_op").unwrap(), 2.769629);
}

#[test]
fn zero_loops_drop_the_infinite_per_op_figure() {
    // docs/perf-compat.md §8, `perf bench sched pipe -l 0`.
    let text = "# Running 'sched/pipe' benchmark:\n\
                # Executed 0 pipe operations between two processes\n\n\
                \x20    Total time: 0.000 [sec]\n\n            inf usecs/op\n              0 ops/sec\n";
    let runs = runs_of(text);
    assert_eq!(runs[0].params["loop"], json!(0));
    assert!(runs[0].value("usecs_per_op").is_none());
    assert_eq!(runs[0].value("ops_per_sec").unwrap(), 0.0);
}

#[test]
fn negative_loop_counts_are_kept_as_perf_printed_them() {
    let text = "# Running 'sched/pipe' benchmark:\n\
                # Executed -5 pipe operations between two processes\n\n\
                \x20    Total time: 0.000 [sec]\n\n    -163.400000 usecs/op\n          -6119 ops/sec\n";
    let runs = runs_of(text);
    assert_eq!(runs[0].params["loop"], json!(-5));
    assert_eq!(runs[0].value("ops_per_sec").unwrap(), -6119.0);
}

#[test]
fn version_hints_resolve_the_pipe_variant() {
    let pipe = fixture("perf_bench_pipe.txt");
    let old = runs_of(&format!("perf version 6.1.187\n{pipe}"));
    assert_eq!(old[0].variant, "pingpong");
    let new = runs_of(&format!("perf version 6.15.2\n{pipe}"));
    assert_eq!(new[0].variant, "symmetric");
    let hinted = runs_of(&format!("# kbench-variant: symmetric\n{pipe}"));
    assert_eq!(hinted[0].variant, "symmetric");
    // A hint applies to the runs after it only.
    let both = runs_of(&format!("{pipe}perf version 6.1.187\n{pipe}"));
    assert_eq!(both[0].variant, "perf-unknown-version");
    assert_eq!(both[1].variant, "pingpong");
}

#[test]
fn crlf_line_endings_are_accepted() {
    let text = fixture("perf_bench_pipe.txt").replace('\n', "\r\n");
    assert_eq!(runs_of(&text)[0].value("ops_per_sec").unwrap(), 170874.0);
}

#[test]
fn an_unparsable_total_time_is_reported_on_its_line() {
    let text = fixture("perf_bench_messaging.txt").replace("0.084", "0.0x4");
    let (line, message) = error_of(&text);
    assert_eq!(line, 5);
    assert!(
        message.contains("Total time") && message.contains("0.0x4"),
        "{message}"
    );
}

#[test]
fn a_pipe_run_cut_after_its_total_is_rejected() {
    let full = fixture("perf_bench_pipe.txt");
    let cut: String = full.lines().take(5).map(|l| format!("{l}\n")).collect();
    let (line, message) = error_of(&cut);
    assert_eq!(line, 4, "blames the Total time line");
    assert!(message.contains("usecs/op"), "{message}");

    // The same inside a loop: the next header ends the short run.
    let (line, _) = error_of(&format!("{cut}{full}"));
    assert_eq!(line, 4);
}

#[test]
fn a_header_without_a_result_is_rejected() {
    let (line, message) = error_of("# Running 'sched/messaging' benchmark:\n");
    assert_eq!(line, 1);
    assert!(message.contains("no `Total time:`"), "{message}");
}

#[test]
fn unknown_lines_and_misplaced_lines_are_rejected_with_their_line() {
    let text = format!("{}oops\n", fixture("perf_bench_pipe.txt"));
    assert_eq!(error_of(&text).0, 8);

    let (line, message) = error_of("       4.246500 usecs/op\n");
    assert_eq!(line, 1);
    assert!(message.contains("without a `Total time:`"), "{message}");

    let mixed = "# Running 'sched/pipe' benchmark:\n# 2 groups == 80 processes run\n";
    assert_eq!(error_of(mixed).0, 2);

    let bad_kind = "# Running 'sched/pipe' benchmark:\n\
                    # Executed 10 pipe operations between two fibers\n";
    assert_eq!(error_of(bad_kind).0, 2);
}

#[test]
fn a_file_without_results_is_rejected() {
    assert!(perf_bench::parse("e.txt", "").is_err());
    assert!(perf_bench::parse("e.txt", "\n# just a comment\n").is_err());
}

/// Runs /usr/bin/perf, or says why not; the tests using it then pass vacuously.
fn perf_output(args: &[&str]) -> Option<String> {
    if !std::path::Path::new("/usr/bin/perf").exists() {
        eprintln!("skipping: /usr/bin/perf is not installed");
        return None;
    }
    let out = Command::new("/usr/bin/perf")
        .args(args)
        .output()
        .expect("perf runs");
    assert!(out.status.success(), "perf {args:?}: {out:?}");
    Some(String::from_utf8(out.stdout).expect("utf-8"))
}

#[test]
fn fresh_perf_output_is_read() {
    let Some(pipe) = perf_output(&["bench", "sched", "pipe", "-l", "200"]) else {
        return;
    };
    let runs = runs_of(&pipe);
    assert_eq!(runs[0].workload, "sched/pipe");
    assert_eq!(runs[0].params["loop"], json!(200));
    assert!(runs[0].value("ops_per_sec").unwrap() > 0.0);

    let messaging = perf_output(&["bench", "sched", "messaging", "-t", "-g", "1", "-l", "5"]);
    let runs = runs_of(&messaging.expect("perf present"));
    assert_eq!(runs[0].params["thread"], json!(true));
    assert_eq!(runs[0].params["group"], json!(1));

    let simple = perf_output(&["bench", "-f", "simple", "sched", "pipe", "-l", "200"]);
    let runs = runs_of(&simple.expect("perf present"));
    assert_eq!(runs[0].workload, "unknown");
    assert!(runs[0].value("total_sec").unwrap() >= 0.0);
}
