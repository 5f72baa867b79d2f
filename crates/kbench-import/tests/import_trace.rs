//! A kernel trace's wakes read into run records, on kbench-trace's captured traces; the
//! stored runs and the command's messages are tested in the binary's import_trace_cli.
use kbench_import::trace::{read_trace, TraceImportError, VARIANT, WORKLOAD};
use kbench_trace::{Selection, TraceFormat};

fn trace_fixture(name: &str) -> String {
    let path = format!(
        "{}/../kbench-trace/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn a_traces_wakes_are_run_records_of_their_phases() {
    let trace = read_trace(&trace_fixture("ftrace-x86.trace"), &Selection::all()).unwrap();
    assert_eq!(trace.format, TraceFormat::Ftrace);
    assert!(!trace.records.is_empty());
    for rec in &trace.records {
        assert_eq!(
            (rec.workload.as_str(), rec.variant.as_str()),
            (WORKLOAD, VARIANT)
        );
        assert!(rec.wake_phases.is_some());
        assert!(rec.params.contains_key("timestamp_resolution_ns"));
        assert!(!rec.metrics.is_empty());
    }
}

#[test]
fn a_trace_without_wakes_or_not_a_trace_gives_no_runs() {
    let no_wakes = "cpus=1\n  a-1 [000] 1.000001: cpu_idle: state=1 cpu_id=0\n";
    assert_eq!(
        read_trace(no_wakes, &Selection::all()),
        Err(TraceImportError::NoWake)
    );
    assert!(matches!(
        read_trace("Total time: 1.2 [sec]\n", &Selection::all()),
        Err(TraceImportError::Unreadable(_))
    ));
}
