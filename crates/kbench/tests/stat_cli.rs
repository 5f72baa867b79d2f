//! End-to-end tests of `kbench stat`.

mod common;
use common::{json_ok, kbench_assert};
use predicates::prelude::*;
use std::io::Write;
use tempfile::NamedTempFile;

fn file_with(lines: &[String]) -> NamedTempFile {
    let mut f = NamedTempFile::new().expect("temp file");
    for line in lines {
        writeln!(f, "{line}").expect("write");
    }
    f
}

/// `n` values around `centre`, spread ±2 % in a fixed pattern (interleaved, no drift).
fn values(n: usize, centre: f64) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                "{:.6}",
                centre * (1.0 + 0.02 * (((i * 7) % 11) as f64 / 10.0 - 0.5))
            )
        })
        .collect()
}

fn json_of(a: &NamedTempFile, b: &NamedTempFile, extra: &[&str]) -> serde_json::Value {
    let output = kbench_assert()
        .arg("stat")
        .arg(a.path())
        .arg(b.path())
        .arg("--json")
        .args(extra)
        .output()
        .unwrap();
    json_ok(&output, &[])
}

#[test]
fn json_has_the_documented_keys() {
    let a = file_with(&values(20, 100.0));
    let b = file_with(&values(20, 110.0));
    let json = json_of(&a, &b, &[]);
    for key in [
        "n_a",
        "n_b",
        "median_a",
        "median_b",
        "shift_pct",
        "ci_low_pct",
        "ci_high_pct",
        "p_value",
        "verdict",
        "runs_needed",
        "outliers_a",
        "outliers_b",
        "bimodal_a",
        "bimodal_b",
        "drift_a",
        "drift_b",
        "method",
    ] {
        assert!(json.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(json["n_a"], 20);
    assert_eq!(json["verdict"], "regression");
    assert!(json["shift_pct"].as_f64().unwrap() > 9.0);
    assert!(json["runs_needed"].is_null());
    assert!(json["outliers_a"].as_array().unwrap().is_empty());
}

#[test]
fn higher_is_better_flips_the_sense() {
    let a = file_with(&values(20, 100.0));
    let b = file_with(&values(20, 110.0));
    assert_eq!(
        json_of(&a, &b, &["--higher-is-better"])["verdict"],
        "improvement"
    );
}

#[test]
fn comments_and_blank_lines_are_ignored_and_outliers_indexed() {
    let mut lines = vec!["# run times in ms".to_string(), String::new()];
    lines.extend(values(12, 50.0));
    lines.push("500.0  # a spike".to_string());
    let a = file_with(&lines);
    let b = file_with(&values(12, 50.0));
    let json = json_of(&a, &b, &[]);
    assert_eq!(json["n_a"], 13);
    assert_eq!(json["outliers_a"], serde_json::json!([12]));
}

#[test]
fn single_runs_are_insufficient() {
    let a = file_with(&["1.0".to_string()]);
    let b = file_with(&["2.0".to_string()]);
    assert_eq!(json_of(&a, &b, &[])["verdict"], "insufficient");
}

#[test]
fn text_output_fits_80_columns_and_states_the_verdict() {
    let a = file_with(&values(10, 1.0));
    let b = file_with(&values(10, 1.0));
    let output = kbench_assert()
        .arg("stat")
        .arg(a.path())
        .arg(b.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("verdict: "), "{text}");
    assert!(text.contains("method: "), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line:?}");
    }
}

#[test]
fn a_bad_line_is_a_usage_error_naming_file_and_line() {
    let a = file_with(&["1.0".to_string(), "2.0".to_string(), "fast".to_string()]);
    let b = file_with(&values(5, 1.0));
    let name = a.path().display().to_string();
    kbench_assert()
        .arg("stat")
        .arg(a.path())
        .arg(b.path())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(format!("{name}:3")).and(predicate::str::contains("fast")),
        );
}

#[test]
fn nan_and_missing_files_are_usage_errors() {
    let a = file_with(&["1.0".to_string(), "nan".to_string()]);
    let b = file_with(&values(5, 1.0));
    kbench_assert()
        .arg("stat")
        .arg(a.path())
        .arg(b.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(":2"));
    kbench_assert()
        .arg("stat")
        .arg("/nonexistent/a.txt")
        .arg(b.path())
        .assert()
        .code(2);
    kbench_assert()
        .arg("stat")
        .arg(b.path())
        .arg(b.path())
        .args(["--delta", "-1"])
        .assert()
        .code(2);
}

#[test]
fn fail_on_regression_sets_the_exit_status() {
    let a = file_with(&values(20, 100.0));
    let b = file_with(&values(20, 110.0));
    kbench_assert()
        .arg("stat")
        .arg(a.path())
        .arg(b.path())
        .arg("--fail-on-regression")
        .assert()
        .code(1);
    kbench_assert()
        .arg("stat")
        .arg(b.path())
        .arg(a.path())
        .arg("--fail-on-regression")
        .assert()
        .code(0);
}

#[test]
fn delta_changes_the_verdict() {
    let a = file_with(&values(30, 100.0));
    let b = file_with(&values(30, 102.0));
    assert_eq!(json_of(&a, &b, &["--delta", "5"])["verdict"], "equivalent");
    assert_eq!(
        json_of(&a, &b, &["--delta", "0.5"])["verdict"],
        "regression"
    );
}
