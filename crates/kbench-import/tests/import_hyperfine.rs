//! The hyperfine JSON reader, on exports captured with hyperfine 1.15, a newer-style
//! export with per-run fields, and malformed files.
mod common;

use common::{fixture, primary_names};
use kbench_import::{hyperfine, parse_file_text, ImportedRun};
use serde_json::json;

fn runs_of(text: &str) -> Vec<ImportedRun> {
    let imported = parse_file_text("hf.json", text).expect("parses");
    assert_eq!(imported.source_format, "hyperfine");
    assert!(imported.summaries.is_empty());
    imported.runs
}

#[test]
fn each_time_is_one_run_of_its_command() {
    let runs = runs_of(&fixture("hyperfine_basic.json"));
    assert_eq!(runs.len(), 5);
    let command = "perf bench -f simple sched pipe -l 2000";
    for run in &runs {
        assert_eq!(run.workload, "command");
        assert_eq!(run.variant, "hyperfine");
        assert_eq!(run.params.len(), 1);
        assert_eq!(run.params["command"], json!(command));
        assert_eq!(run.exit_status, Some(0));
        assert_eq!(run.line, 3, "the line of the result object");
        // hyperfine 1.15 writes user/system as means only: not per-run values.
        assert_eq!(
            run.values
                .iter()
                .map(|v| v.name.as_str())
                .collect::<Vec<_>>(),
            ["wall_sec"]
        );
        assert!(run.values[0].is_primary() && !run.values[0].higher_is_better());
    }
    let export: serde_json::Value = serde_json::from_str(&fixture("hyperfine_basic.json")).unwrap();
    let times: Vec<f64> = serde_json::from_value(export["results"][0]["times"].clone()).unwrap();
    let walls: Vec<f64> = runs.iter().map(|r| r.value("wall_sec").unwrap()).collect();
    assert_eq!(walls, times);
}

#[test]
fn parameters_join_the_command_in_params() {
    let runs = runs_of(&fixture("hyperfine_params.json"));
    assert_eq!(runs.len(), 6);
    assert_eq!(runs[0].params["loops"], json!("1000"));
    assert_eq!(runs[5].params["loops"], json!("2000"));
    assert_eq!(
        runs[5].params["command"],
        json!("perf bench -f simple sched pipe -l 2000")
    );
    assert_eq!((runs[0].line, runs[5].line), (3, 26));
}

#[test]
fn exit_codes_become_exit_statuses() {
    let runs = runs_of(&fixture("hyperfine_failing.json"));
    let statuses: Vec<Option<i32>> = runs.iter().map(|r| r.exit_status).collect();
    assert_eq!(
        statuses,
        [Some(3), Some(3), Some(3), Some(0), Some(0), Some(0)]
    );
    assert_eq!(runs[0].params["command"], json!("sh -c \"exit 3\""));
}

/// Shaped like newer hyperfine exports (per-run `user`, `system`, `memory_usage_byte`);
/// written by hand, since the installed hyperfine 1.15 writes only means.
const PER_RUN_EXPORT: &str = r#"{
  "results": [
    {
      "command": "sleep 0.01",
      "mean": 0.0125, "stddev": 0.0005, "median": 0.0125, "min": 0.012, "max": 0.013,
      "user": [0.001, 0.002],
      "system": [0.0005, 0.0007],
      "times": [0.012, 0.013],
      "memory_usage_byte": [1048576, 2097152],
      "exit_codes": [0, null]
    }
  ]
}"#;

#[test]
fn per_run_cpu_times_and_memory_are_read_when_present() {
    let runs = runs_of(PER_RUN_EXPORT);
    assert_eq!(runs[1].value("wall_sec").unwrap(), 0.013);
    assert_eq!(runs[1].value("user_sec").unwrap(), 0.002);
    assert_eq!(runs[1].value("sys_sec").unwrap(), 0.0007);
    assert_eq!(runs[1].value("max_rss_bytes").unwrap(), 2_097_152.0);
    let primaries = primary_names(&runs[1].values);
    assert_eq!(primaries, ["wall_sec"]);
    let rss = runs[1].values.iter().find(|v| v.name == "max_rss_bytes");
    assert_eq!(rss.map(|v| v.unit.as_str()), Some("B"));
    assert_eq!(runs[0].exit_status, Some(0));
    assert_eq!(runs[1].exit_status, None, "null: killed by a signal");
}

#[test]
fn a_truncated_file_reports_the_line_serde_json_stops_at() {
    let full = fixture("hyperfine_basic.json");
    let cut: String = full.lines().take(12).map(|l| format!("{l}\n")).collect();
    let err = parse_file_text("cut.json", &cut).expect_err("truncated");
    assert_eq!(err.line, 13, "EOF after line 12's newline");
    assert!(
        err.message.contains("invalid hyperfine JSON"),
        "{}",
        err.message
    );
    assert!(
        !err.message.contains(" at line "),
        "the line is not repeated: {}",
        err.message
    );
}

#[test]
fn inconsistent_series_are_rejected_at_their_result() {
    let text = PER_RUN_EXPORT.replace("[0, null]", "[0]");
    let err = hyperfine::parse("x.json", &text).expect_err("one exit code for two times");
    assert_eq!(err.line, 3);
    assert!(err.message.contains("exit codes"), "{}", err.message);

    let text = PER_RUN_EXPORT.replace("[0.001, 0.002]", "[0.001]");
    assert!(hyperfine::parse("x.json", &text).is_err());
}

#[test]
fn wrong_types_and_empty_exports_are_rejected() {
    let err = hyperfine::parse("x.json", "{\n  \"results\": [{\"command\": 1}]\n}").expect_err("x");
    assert_eq!(err.line, 2);
    assert!(hyperfine::parse("x.json", r#"{"results": []}"#).is_err());
    let no_times = r#"{"results": [{"command": "true", "times": [], "exit_codes": []}]}"#;
    assert!(hyperfine::parse("x.json", no_times).is_err());
}
