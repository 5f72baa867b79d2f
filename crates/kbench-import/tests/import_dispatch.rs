//! Format detection by `parse_file_text`, and its robustness on arbitrary input.
mod common;

use common::fixture;
use kbench_import::{parse_file_text, read_output_figures};
use proptest::prelude::*;

#[test]
fn every_captured_fixture_is_detected_as_its_format() {
    let rejected = ["perf_stat_csv.txt", "perf_stat_single_run.txt", "README.md"];
    let mut checked = 0;
    for entry in std::fs::read_dir(common::fixture_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if rejected.contains(&name.as_str()) {
            continue;
        }
        let expected = match name.split('_').next().unwrap() {
            "hyperfine" => "hyperfine",
            "hackbench" => "hackbench",
            "cyclictest" => "cyclictest",
            "kbench" => "kbench-record",
            "perf" if name.starts_with("perf_stat") => "perf-stat",
            _ => "perf-bench",
        };
        let imported =
            parse_file_text(&name, &fixture(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(imported.source_format, expected, "{name}");
        checked += 1;
    }
    assert!(checked >= 23, "only {checked} fixtures");
}

#[test]
fn unknown_content_names_the_formats_tried_and_its_first_line() {
    let err = parse_file_text("notes.txt", "\n\nhello world\n").expect_err("unknown");
    assert_eq!((err.path.as_str(), err.line), ("notes.txt", 3));
    assert!(
        err.message.contains("not a known format"),
        "{}",
        err.message
    );
    assert!(
        err.message
            .contains("kbench-record, hyperfine, perf-stat, perf-bench, hackbench, cyclictest"),
        "{}",
        err.message
    );
    assert_eq!(
        err.to_string(),
        "notes.txt:3: not a known format (tried: kbench-record, hyperfine, perf-stat, perf-bench, hackbench, cyclictest)"
    );
}

#[test]
fn empty_files_and_other_json_are_not_known_formats() {
    for text in ["", "\n  \n", "{\"runs\": []}", "[1, 2]"] {
        let err = parse_file_text("x", text).expect_err(text);
        assert!(
            err.message.contains("not a known format"),
            "{text:?}: {}",
            err.message
        );
        assert_eq!(err.line, 1);
    }
}

#[test]
fn a_byte_order_mark_is_ignored() {
    let text = format!("\u{feff}{}", fixture("perf_bench_simple.txt"));
    assert_eq!(parse_file_text("bom.txt", &text).unwrap().runs.len(), 1);
}

/// Fragments of every format, so random files often get deep into the readers.
const PIECES: &[&str] = &[
    "# Running 'sched/pipe' benchmark:",
    "# Running sched/messaging benchmark...",
    "# Running 'sched/seccomp-notify' benchmark:",
    "# Executed 20000 pipe operations between two processes",
    "# Executed 5 system calls",
    "# 20 sender and receiver threads per group",
    "# 2 groups == 80 threads run",
    "     Total time: 0.084 [sec]",
    "     Total time: [sec]",
    "       4.246500 usecs/op",
    "            inf usecs/op",
    "           -nan usecs/op",
    "         235488 ops/sec",
    "0.083",
    "",
    "perf version 6.15.1",
    "# kbench-variant: pingpong",
    " Performance counter stats for 'true' (3 runs):",
    " Performance counter stats for 'true':",
    "   18.79 msec task-clock   #  0.893 CPUs utilized  ( +-  0.92% )",
    "   1,234      context-switches    ( +- 99,99% )",
    "   <not supported>      cycles",
    "   0.02105 +- 0.00104 seconds time elapsed  ( +-  4.92% )",
    "   ( +-",
    "18.72,msec,task-clock,2.02%,18724055,100.00,0.916,CPUs utilized",
    "{\"results\": [{\"command\": \"x\", \"times\": [0.1], \"exit_codes\": [0]}]}",
    "{\"results\": [",
    "\u{202f}1\u{a0}",
    "Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)",
    "Running in threaded mode with 2 groups using",
    "Each sender will pass 100 messages of 100 bytes",
    "Time: 0.069",
    "Time: -1",
    "# /dev/cpu_dma_latency set to 0us",
    "policy: fifo: loadavg: 0.48 1.72 3.25 3/84 22765",
    "T: 0 (22764) P:80 I:1000 C:   1000 Min:      3 Act:    5 Avg:    6 Max:      20",
    "T: 1 (    0) P:80 I:1500 C:      0 Min:1000000 Act:    0 Avg:    0 Max:       0",
    "\u{1b}[4Apolicy: fifo: loadavg: 0.48 1.72 3.25 1/84 22765",
    "{\"workload\":\"sched/pipe\",\"metrics\":[]}",
];

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_file_text("random", &text);
    }

    #[test]
    fn random_arrangements_of_real_lines_never_panic_and_stay_sane(
        picks in proptest::collection::vec((0..PIECES.len(), 0usize..3), 0..40)
    ) {
        let text: String = picks
            .iter()
            .map(|&(i, cut)| {
                // Sometimes cut a line short, the way a truncated file ends.
                let piece = PIECES[i];
                let end = piece.char_indices().nth(piece.chars().count() / (cut + 1)).map_or(piece.len(), |(b, _)| b);
                let piece = if cut == 0 { piece } else { &piece[..end] };
                format!("{piece}\n")
            })
            .collect();
        let line_count = text.lines().count().max(1);
        match parse_file_text("mix", &text) {
            Ok(imported) => {
                prop_assert!(!imported.runs.is_empty() || !imported.summaries.is_empty());
                for run in &imported.runs {
                    prop_assert!(run.values.iter().all(|v| v.value.is_finite()));
                    prop_assert!((1..=line_count).contains(&run.line));
                }
                for s in &imported.summaries {
                    prop_assert!(s.mean.is_finite() && s.std_error.is_finite() && s.std_error >= 0.0);
                }
            }
            Err(err) => prop_assert!((1..=line_count + 1).contains(&err.line), "{err}"),
        }
        // Read as a command's output, the same text gives one run's figures or says why not.
        if let Ok(figures) = read_output_figures(&text) {
            prop_assert_eq!(figures.values.iter().filter(|v| v.is_primary()).count(), 1);
            prop_assert!(figures.values.iter().all(|v| v.value.is_finite()));
        }
    }
}
