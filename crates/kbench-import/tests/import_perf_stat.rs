//! The perf stat -r reader, on captured perf 6.1 output (C, en_US and de_DE locales),
//! malformed files, and output captured from /usr/bin/perf now.
mod common;

use common::fixture;
use kbench_import::{parse_file_text, perf_stat, ImportedSummary};
use std::process::Command;

fn summaries_of(text: &str) -> Vec<ImportedSummary> {
    let imported = parse_file_text("stat.txt", text).expect("parses");
    assert_eq!(imported.source_format, "perf-stat");
    assert!(
        imported.runs.is_empty(),
        "the measured command's output is not read"
    );
    imported.summaries
}

fn find<'a>(summaries: &'a [ImportedSummary], metric: &str) -> &'a ImportedSummary {
    summaries
        .iter()
        .find(|s| s.metric == metric)
        .unwrap_or_else(|| panic!("no {metric} in {summaries:#?}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn messaging_summary_gives_mean_standard_error_and_n_per_event() {
    let s = summaries_of(&fixture("perf_stat_messaging.txt"));
    let metrics: Vec<&str> = s.iter().map(|s| s.metric.as_str()).collect();
    assert_eq!(
        metrics,
        [
            "task-clock",
            "context-switches",
            "cpu-migrations",
            "page-faults",
            "time_elapsed_sec"
        ],
        "<not supported> rows are skipped"
    );
    assert!(s
        .iter()
        .all(|s| s.workload == "perf bench sched messaging -g 1 -l 10" && s.n == 5));

    let clock = find(&s, "task-clock");
    assert_eq!(
        (clock.unit.as_str(), clock.mean, clock.line),
        ("msec", 48.05, 29)
    );
    assert!(close(clock.std_error, 48.05 * 2.46 / 100.0));

    let switches = find(&s, "context-switches");
    assert_eq!((switches.unit.as_str(), switches.mean), ("", 1504.0));
    assert!(close(switches.std_error, 1504.0 * 0.1543));

    let elapsed = find(&s, "time_elapsed_sec");
    assert_eq!(
        (elapsed.unit.as_str(), elapsed.mean, elapsed.std_error),
        ("s", 0.04865, 0.00316)
    );
    // The elapsed time is the block's figure; the counters are secondary.
    assert!(elapsed.primary && !elapsed.higher_is_better);
    assert!(!clock.primary && !switches.primary);
}

#[test]
fn chosen_events_are_read() {
    let s = summaries_of(&fixture("perf_stat_events.txt"));
    assert_eq!(s.len(), 3);
    assert_eq!(s[0].workload, "perf bench sched pipe -l 2000");
    assert_eq!(find(&s, "context-switches").mean, 4004.0);
    assert_eq!(find(&s, "time_elapsed_sec").std_error, 0.00104);
}

#[test]
fn thousands_separators_of_en_us_are_dropped() {
    let s = summaries_of(&fixture("perf_stat_en_US.txt"));
    assert_eq!(find(&s, "context-switches").mean, 100_010.0);
    assert_eq!(find(&s, "page-faults").mean, 1062.0);
    assert_eq!(find(&s, "task-clock").mean, 320.54);
    assert_eq!(find(&s, "time_elapsed_sec").mean, 0.33059);
}

#[test]
fn de_de_decimal_commas_and_dot_grouping_are_read() {
    let s = summaries_of(&fixture("perf_stat_de_DE.txt"));
    assert_eq!(find(&s, "task-clock").mean, 308.59);
    assert!(close(find(&s, "task-clock").std_error, 308.59 * 0.042));
    assert_eq!(find(&s, "context-switches").mean, 100_003.0);
    assert_eq!(find(&s, "page-faults").mean, 1063.0);
    // perf omits `( +- X% )` when it is zero.
    let migrations = find(&s, "cpu-migrations");
    assert_eq!((migrations.mean, migrations.std_error), (0.0, 0.0));
    let elapsed = find(&s, "time_elapsed_sec");
    assert_eq!((elapsed.mean, elapsed.std_error), (0.3479, 0.0201));
}

#[test]
fn unsupported_counters_are_skipped() {
    let s = summaries_of(&fixture("perf_stat_unsupported.txt"));
    let metrics: Vec<&str> = s.iter().map(|s| s.metric.as_str()).collect();
    assert_eq!(metrics, ["context-switches", "time_elapsed_sec"]);
    assert_eq!((s[0].workload.as_str(), s[0].n), ("true", 3));
}

#[test]
fn concatenated_blocks_are_all_read() {
    let text = fixture("perf_stat_events.txt") + &fixture("perf_stat_unsupported.txt");
    let s = summaries_of(&text);
    assert_eq!(s.len(), 5);
    assert_eq!(s[4].workload, "true");
}

#[test]
fn csv_output_is_rejected_with_the_reason() {
    let err = parse_file_text("csv.txt", &fixture("perf_stat_csv.txt")).expect_err("rejected");
    assert_eq!(err.line, 4);
    assert!(err.message.contains("CSV"), "{}", err.message);
}

#[test]
fn a_single_run_is_rejected_because_it_has_no_standard_error() {
    let err = perf_stat::parse("one.txt", &fixture("perf_stat_single_run.txt")).expect_err("x");
    assert_eq!(err.line, 9);
    assert!(err.message.contains("-r N"), "{}", err.message);
}

#[test]
fn a_block_without_its_elapsed_line_is_rejected_at_its_header() {
    let full = fixture("perf_stat_events.txt");
    let cut: String = full.lines().take(40).map(|l| format!("{l}\n")).collect();
    let err = perf_stat::parse("cut.txt", &cut).expect_err("truncated");
    assert_eq!(err.line, 37);
    assert!(err.message.contains("time elapsed"), "{}", err.message);
    // A second header before the first block ended: the same mistake, found earlier.
    let next = fixture("perf_stat_unsupported.txt");
    let err = perf_stat::parse("cut.txt", &(cut.clone() + &next)).expect_err("truncated");
    assert_eq!(err.line, 40 + 2);
    assert!(err.message.contains("line 37"), "{}", err.message);
}

#[test]
fn malformed_rows_are_reported_on_their_line() {
    let text = fixture("perf_stat_events.txt").replace("4004 ", "40x4 ");
    let err = perf_stat::parse("bad.txt", &text).expect_err("bad number");
    assert_eq!(err.line, 40);
    assert!(err.message.contains("40x4"), "{}", err.message);

    let text = fixture("perf_stat_events.txt").replace("0.02105 +- ", "0.02105 ~ ");
    assert_eq!(
        perf_stat::parse("bad.txt", &text).expect_err("bad").line,
        42
    );

    let text = fixture("perf_stat_events.txt").replace("(5 runs)", "(five runs)");
    assert_eq!(
        perf_stat::parse("bad.txt", &text).expect_err("bad").line,
        37
    );
}

#[test]
fn fresh_perf_stat_output_is_read() {
    if !std::path::Path::new("/usr/bin/perf").exists() {
        eprintln!("skipping: /usr/bin/perf is not installed");
        return;
    }
    let out = Command::new("/usr/bin/perf")
        .args(["stat", "-r", "2", "-e", "task-clock,context-switches", "--"])
        .args([
            "/usr/bin/perf",
            "bench",
            "-f",
            "simple",
            "sched",
            "pipe",
            "-l",
            "100",
        ])
        .output()
        .expect("perf runs");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap();
    let s = summaries_of(&text);
    assert_eq!(
        s[0].workload,
        "/usr/bin/perf bench -f simple sched pipe -l 100"
    );
    assert!(s.iter().all(|s| s.n == 2 && s.std_error >= 0.0));
    assert!(find(&s, "context-switches").mean > 0.0);
    assert!(find(&s, "time_elapsed_sec").mean > 0.0);
}
