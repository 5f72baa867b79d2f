//! The cyclictest reader, on captured rt-tests 2.4 output (quiet and live), malformed
//! files, and output of /usr/bin/cyclictest now (it needs root for its RT priority).
mod common;

use common::{fixture, installed_output, primary_names};
use kbench_import::{cyclictest, parse_file_text, ImportedRun};
use serde_json::json;

fn runs_of(text: &str) -> Vec<ImportedRun> {
    let imported = parse_file_text("test.txt", text).expect("parses");
    assert_eq!(imported.source_format, "cyclictest");
    imported.runs
}

/// (thread, Min, Avg, Max) of the last `T:` line of each thread, read independently of
/// the reader: the figures it must report.
fn final_lines(text: &str) -> Vec<(u32, f64, f64, f64)> {
    let mut last = std::collections::BTreeMap::new();
    for line in text
        .lines()
        .filter_map(|l| l.split_once("T:").map(|(_, rest)| rest))
    {
        let words: Vec<&str> = line.split_whitespace().collect();
        let after = |key: &str| -> f64 {
            let at = words.iter().position(|w| w.starts_with(key)).unwrap();
            let glued = &words[at][key.len()..];
            if glued.is_empty() {
                words[at + 1]
            } else {
                glued
            }
            .parse()
            .unwrap()
        };
        let thread: u32 = words[0].parse().unwrap();
        last.insert(
            thread,
            (thread, after("Min:"), after("Avg:"), after("Max:")),
        );
    }
    last.into_values().collect()
}

fn assert_figures(run: &ImportedRun, expected: &[(u32, f64, f64, f64)]) {
    for &(t, min, avg, max) in expected {
        assert_eq!(run.value(&format!("thread{t}_latency_min_us")), Some(min));
        assert_eq!(run.value(&format!("thread{t}_latency_avg_us")), Some(avg));
        assert_eq!(run.value(&format!("thread{t}_latency_max_us")), Some(max));
    }
    let worst = expected.iter().map(|e| e.3).fold(f64::MIN, f64::max);
    assert_eq!(run.value(cyclictest::MAX_LATENCY_METRIC), Some(worst));
    let primary = primary_names(&run.values);
    assert_eq!(primary, [cyclictest::MAX_LATENCY_METRIC]);
    assert_eq!(run.values.len(), 1 + 3 * expected.len());
}

#[test]
fn quiet_mode_gives_each_threads_latencies_and_the_worst() {
    let text = fixture("cyclictest_quiet.txt");
    let runs = runs_of(&text);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].params["threads"], json!(2));
    assert_eq!(runs[0].line, 2);
    assert_figures(&runs[0], &final_lines(&text));
}

#[test]
fn live_mode_is_read_at_its_last_redraw() {
    let text = fixture("cyclictest_live.txt");
    let runs = runs_of(&text);
    assert_eq!(runs.len(), 1, "the redraws are one run");
    assert_figures(&runs[0], &final_lines(&text));
    // The first redraw's placeholder (`C: 0`, `Min:1000000`) is never a figure.
    assert!(runs[0].values.iter().all(|v| v.value < 1_000_000.0));
}

#[test]
fn a_loop_of_quiet_runs_gives_one_run_each() {
    let text = fixture("cyclictest_quiet_loop.txt");
    let runs = runs_of(&text);
    assert_eq!(runs.len(), 2);
    let mut halves = text.split("# /dev").filter(|h| !h.trim().is_empty());
    for run in &runs {
        assert_figures(run, &final_lines(halves.next().unwrap()));
    }
}

#[test]
fn a_thread_without_a_cycle_measured_nothing() {
    let text = "T: 0 (    0) P:80 I:1000 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0\n";
    let err = cyclictest::parse("bad.txt", text).expect_err("no cycle");
    assert_eq!(err.line, 1);
    assert!(err.message.contains("completed cycle"), "{}", err.message);
    let err = cyclictest::parse(
        "bad.txt",
        "T: 0 (1) P:80 I:1000 C: 5 Min: 3 Act: 4 Avg: x Max: 9\n",
    )
    .expect_err("bad");
    assert!(err.message.contains("`Avg:`"), "{}", err.message);
    let err = cyclictest::parse(
        "bad.txt",
        "T: 0 (1) P:80 I:1000 C: 5 Min: 3 Avg: 4 Max: 9\nHistogram\n",
    )
    .expect_err("bad");
    assert_eq!(err.line, 2);
}

/// Whether this process runs as root (/proc/self belongs to its effective user).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[test]
fn reads_what_the_installed_cyclictest_prints_now() {
    if !is_root() {
        eprintln!("SKIP: cyclictest needs root for its RT priority");
        return;
    }
    let args = ["-q", "-m", "-p", "80", "-t", "2", "-i", "500", "-l", "100"];
    let Some(text) = installed_output("cyclictest", &args) else {
        return;
    };
    let runs = runs_of(&text);
    assert_eq!(runs.len(), 1);
    assert_figures(&runs[0], &final_lines(&text));
}
