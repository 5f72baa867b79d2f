//! The hackbench reader, on captured rt-tests 2.4 output, malformed files, and output of
//! /usr/bin/hackbench now.
mod common;

use common::{fixture, installed_output, primary_names};
use kbench_import::{hackbench, parse_file_text, ImportedRun};
use serde_json::json;

fn runs_of(text: &str) -> Vec<ImportedRun> {
    let imported = parse_file_text("test.txt", text).expect("parses");
    assert_eq!(imported.source_format, "hackbench");
    imported.runs
}

fn error_of(text: &str) -> (usize, String) {
    let err = hackbench::parse("bad.txt", text).expect_err("must be rejected");
    (err.line, err.message)
}

#[test]
fn process_mode_gives_the_time_and_every_parameter() {
    let runs = runs_of(&fixture("hackbench_process.txt"));
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(
        (run.workload.as_str(), run.variant.as_str()),
        ("hackbench", "hackbench")
    );
    assert_eq!(
        run.params,
        [
            ("datasize", json!(100)),
            ("fds", json!(40)),
            ("groups", json!(2)),
            ("loops", json!(200)),
            ("threaded", json!(false)),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into()
    );
    assert_eq!(run.value("total_sec"), Some(0.151));
    let primary = primary_names(&run.values);
    assert_eq!(primary, ["total_sec"]);
    assert!(!run.values[0].higher_is_better());
}

#[test]
fn threaded_mode_and_a_loop_of_runs() {
    let threads = runs_of(&fixture("hackbench_threads.txt"));
    assert_eq!(threads[0].params["threaded"], json!(true));
    assert_eq!(threads[0].params["fds"], json!(10));
    let runs = runs_of(&fixture("hackbench_loop.txt"));
    let lines: Vec<usize> = runs.iter().map(|r| r.line).collect();
    assert_eq!(lines, [1, 4, 7]);
    assert!(runs.iter().all(|r| r.params["groups"] == json!(1)));
}

#[test]
fn the_original_hackbench_prints_only_its_time() {
    let runs = runs_of("Time: 0.123\n");
    assert_eq!(runs.len(), 1);
    assert!(runs[0].params.is_empty());
    assert_eq!(runs[0].value("total_sec"), Some(0.123));
}

#[test]
fn malformed_output_names_its_line() {
    let (line, message) = error_of("Each sender will pass 100 messages of 100 bytes\nTime: soon\n");
    assert_eq!(line, 2);
    assert!(message.contains("\"soon\""), "{message}");
    let (line, message) = error_of("Time: 0.1\nRunning in process mode with 2 groups using 40 file descriptors each (== 80 tasks)\n");
    assert_eq!(line, 2);
    assert!(message.contains("no `Time:`"), "{message}");
    let (line, message) = error_of("Time: 0.1\nsegfault\n");
    assert_eq!(line, 2);
    assert!(message.contains("unrecognized"), "{message}");
    let (line, message) =
        error_of("Running in odd mode with 2 groups using 40 file descriptors each\nTime: 1.0\n");
    assert_eq!(line, 1);
    assert!(message.contains("malformed"), "{message}");
}

#[test]
fn reads_what_the_installed_hackbench_prints_now() {
    let Some(text) = installed_output("hackbench", &["-g", "1", "-l", "20"]) else {
        return;
    };
    let runs = runs_of(&text);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].params["groups"], json!(1));
    assert_eq!(runs[0].params["loops"], json!(20));
    assert!(runs[0].value("total_sec").is_some_and(|t| t >= 0.0));
}
