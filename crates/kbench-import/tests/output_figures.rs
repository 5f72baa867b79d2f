//! A command's output read as one run's figures (`kbench exec`, `kbench ab`): every
//! format of the import table, on captured output.
mod common;

use common::{fixture, primary_names};
use kbench_import::{read_output_figures, OutputError, OutputFigures};

fn figures(name: &str) -> OutputFigures {
    read_output_figures(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn primary(f: &OutputFigures) -> &str {
    let primaries = primary_names(&f.values);
    assert_eq!(primaries.len(), 1, "{primaries:?}");
    primaries[0]
}

#[test]
fn each_tool_gives_its_declared_primary() {
    for (name, format, expected) in [
        ("perf_bench_pipe.txt", "perf-bench", "usecs_per_op"),
        ("perf_bench_messaging.txt", "perf-bench", "total_sec"),
        ("perf_bench_simple.txt", "perf-bench", "total_sec"),
        ("hackbench_process.txt", "hackbench", "total_sec"),
        ("cyclictest_live.txt", "cyclictest", "latency_max_us"),
        ("kbench_record_messaging.txt", "kbench-record", "total_sec"),
        ("perf_stat_events.txt", "perf-stat", "time_elapsed_sec"),
    ] {
        let f = figures(name);
        assert_eq!((f.source_format, primary(&f)), (format, expected), "{name}");
    }
}

#[test]
fn perf_stat_gives_its_counters_for_a_single_run_and_the_means_of_r_n() {
    // A single run is no importable summary, but it is one run's figures.
    let single = figures("perf_stat_single_run.txt");
    let names: Vec<&str> = single.values.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        ["context-switches", "task-clock", "time_elapsed_sec"]
    );
    let task_clock = single
        .values
        .iter()
        .find(|v| v.name == "task-clock")
        .unwrap();
    assert_eq!(
        (task_clock.value, task_clock.unit.as_str()),
        (39.96, "msec")
    );
    assert_eq!(single.values[2].value, 0.077915986);
    let means = figures("perf_stat_events.txt");
    let imported = kbench_import::parse_file_text("x", &fixture("perf_stat_events.txt")).unwrap();
    for s in &imported.summaries {
        let v = means.values.iter().find(|v| v.name == s.metric).unwrap();
        assert_eq!((v.value, v.is_primary()), (s.mean, s.primary));
    }
}

#[test]
fn output_with_several_results_or_none_says_why() {
    for name in [
        "perf_bench_sched_all.txt",
        "perf_bench_pipe_loop.txt",
        "hackbench_loop.txt",
        "kbench_record_pipe_loop.txt",
        "cyclictest_quiet_loop.txt",
    ] {
        match read_output_figures(&fixture(name)) {
            Err(OutputError::Unreadable { message, .. }) => {
                assert!(
                    message.contains("results where one run's figures"),
                    "{name}: {message}"
                )
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    let err = read_output_figures("make: Nothing to be done for 'all'.\n").unwrap_err();
    assert!(matches!(err, OutputError::NotRecognised { .. }), "{err}");
    assert!(err.to_string().contains("perf-bench"), "{err}");
    let err = read_output_figures("Time: 0.1\nTime: x\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "looks like hackbench output but cannot be read: line 2: the hackbench time \"x\" is not a number of seconds"
    );
}
