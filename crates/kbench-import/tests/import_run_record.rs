//! The reader of kbench's own run records (`kbench bench --json`), on captured records.
mod common;

use common::{fixture, primary_names};
use kbench_import::{parse_file_text, run_record};
use kbench_record::RunRecord;

#[test]
fn each_record_is_a_run_with_the_metrics_it_declares() {
    let text = fixture("kbench_record_pipe_loop.txt");
    let imported = parse_file_text("runs.jsonl", &text).unwrap();
    assert_eq!(imported.source_format, "kbench-record");
    assert_eq!(imported.runs.len(), 2);
    for (run, line) in imported.runs.iter().zip(text.lines()) {
        let record: RunRecord = serde_json::from_str(line).unwrap();
        assert_eq!(run.workload, record.workload);
        assert_eq!(run.params, record.params);
        assert_eq!(run.variant, record.variant);
        for m in &record.metrics {
            let read = run.values.iter().find(|v| v.name == m.name).unwrap();
            assert_eq!(read, m);
        }
        assert_eq!(run.values.len(), record.metrics.len());
    }
    assert_eq!(imported.runs[1].line, 2);
    let messaging = parse_file_text("m.json", &fixture("kbench_record_messaging.txt")).unwrap();
    let primary = primary_names(&messaging.runs[0].values);
    assert_eq!(primary, ["total_sec"]);
}

#[test]
fn a_broken_record_names_its_line() {
    let good = fixture("kbench_record_messaging.txt");
    let text = format!("{}{{\"workload\": 3}}\n", good);
    let err = run_record::parse("runs.jsonl", &text).expect_err("bad second line");
    assert_eq!(err.line, 2);
    assert!(
        err.message.starts_with("not a kbench run record"),
        "{}",
        err.message
    );
    let no_primary = good.replace("\"primary\"", "\"secondary\"");
    let err = run_record::parse("runs.jsonl", &no_primary).expect_err("no primary");
    assert!(err.message.contains("0 primary metrics"), "{}", err.message);
}
