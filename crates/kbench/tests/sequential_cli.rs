//! Sequential decisions end to end, on real runs: `ab --until-decided` stops within a
//! few blocks for a fourfold difference in work and claims nothing between two runs of
//! one spec; `compare --sequential` looks at stored sessions and says how many more.
mod common;
use common::{assert_success, json_on, kbench_on, ok_on, one_line_error, TempDb};

fn decision(row: &serde_json::Value) -> &str {
    row["look"]["decision"]["kind"].as_str().unwrap_or_default()
}

fn only_row(report: &serde_json::Value) -> &serde_json::Value {
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{report}");
    &rows[0]
}

#[test]
fn ab_until_decided_stops_early_for_a_real_difference() {
    let temp = TempDb::new();
    let args = [
        "ab",
        "--until-decided",
        "--max-runs",
        "30",
        "messaging:-g 1 -l 10",
        "messaging:-g 1 -l 40",
        "--format",
        "json",
    ];
    let out = kbench_on(&temp.path, &args);
    assert_success(&out, &args);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let row = only_row(&report);
    assert_eq!(decision(row), "regression", "{row}");
    // Each look, said on stderr: open until the last.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let looks: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(" a side: total_sec: "))
        .collect();
    let (last, open) = looks.split_last().expect("a look after each block");
    assert!(open.iter().all(|l| l.ends_with(": open")), "{stderr}");
    assert!(
        last.ends_with("against ±1%: decided, regression"),
        "{stderr}"
    );
    let n = row["look"]["n_a"].as_u64().unwrap();
    assert!(n < 30, "decided before the bound: {row}");
    let (low, _) = interval(row);
    assert!(low > 1.0, "the whole interval is beyond δ: {row}");
    // The stored runs say the same later, from `compare --sequential`.
    let labels: Vec<String> = ["base", "new"]
        .iter()
        .map(|side| report[side].as_str().unwrap().to_string())
        .collect();
    let again = json_on(
        &temp.path,
        &[
            "compare",
            &labels[0],
            &labels[1],
            "--sequential",
            "--max-units",
            "30",
            "--format",
            "json",
        ],
    );
    assert_eq!(only_row(&again)["look"], row["look"]);
    // The design and every look are recorded with the labels: a plain compare later
    // gives the sequential verdict the runs stopped on, not the fixed design's.
    let later = json_on(
        &temp.path,
        &["compare", &labels[0], &labels[1], "--format", "json"],
    );
    assert_eq!(only_row(&later)["look"], row["look"]);
    let recorded = &later["recorded"];
    assert_eq!(recorded["design"]["by"], "ab", "{recorded}");
    assert_eq!(recorded["design"]["max_units_per_side"], 30, "{recorded}");
    let recorded_looks = recorded["looks"].as_array().expect("looks");
    assert_eq!(
        recorded_looks.len(),
        looks.len(),
        "one per look said: {recorded}"
    );
    let last_recorded = &recorded_looks.last().unwrap()["rows"][0];
    assert_eq!(last_recorded["outcome"], "regression", "{recorded}");
    assert_eq!(last_recorded["n_a"], n, "{recorded}");
    let text = ok_on(&temp.path, &["compare", &labels[0], &labels[1]]);
    assert!(text.contains("Design recorded by kbench ab at "), "{text}");
    assert!(text.contains("decided: regression"), "{text}");
    // Another δ after seeing the data is refused; a format only the fixed design has
    // says where the verdict is.
    let other_delta = [
        "compare",
        &labels[0],
        &labels[1],
        "--sequential",
        "--delta",
        "5",
    ];
    one_line_error(&kbench_on(&temp.path, &other_delta), 2, &other_delta);
    let other_alpha = [
        "compare",
        &labels[0],
        &labels[1],
        "--sequential",
        "--alpha",
        "0.2",
    ];
    one_line_error(&kbench_on(&temp.path, &other_alpha), 2, &other_alpha);
    let markdown = ["compare", &labels[0], &labels[1], "--format", "markdown"];
    let out = kbench_on(&temp.path, &markdown);
    assert_success(&out, &markdown);
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(note.contains("--sequential` gives their verdict"), "{note}");
    // A second interleaved session of the same labels makes them paired sessions to a
    // fresh eye; under the recorded design, whose first look had runs as units, the
    // units stay runs: one sequence of looks for one α, not a second at another level.
    let second = [
        "ab",
        "messaging:-g 1 -l 10",
        "messaging:-g 1 -l 40",
        "--runs",
        "3",
        "--label-a",
        &labels[0],
        "--label-b",
        &labels[1],
    ];
    assert_success(&kbench_on(&temp.path, &second), &second);
    let grown = json_on(
        &temp.path,
        &[
            "compare",
            &labels[0],
            &labels[1],
            "--sequential",
            "--format",
            "json",
        ],
    );
    assert_eq!(only_row(&grown)["level"], "run", "{grown}");
    let first_look = &grown["recorded"]["looks"][0]["rows"][0];
    assert_eq!(first_look["unit_level"], "run", "{grown}");
}

fn interval(row: &serde_json::Value) -> (f64, f64) {
    let iv = &row["look"]["interval_pct"];
    (iv[0].as_f64().unwrap(), iv[1].as_f64().unwrap())
}

/// One spec on both sides: equivalent within a generous δ, or at the bound, never a
/// claim. δ 20% is wide beside these runs' spread, so the interval usually settles
/// inside it long before the bound.
#[test]
fn ab_until_decided_of_one_spec_claims_nothing() {
    let temp = TempDb::new();
    let report = json_on(
        &temp.path,
        &[
            "ab",
            "--until-decided",
            "--delta",
            "20",
            "--max-runs",
            "30",
            "messaging:-g 1 -l 10",
            "messaging:-g 1 -l 10",
            "--format",
            "json",
        ],
    );
    let row = only_row(&report);
    assert!(matches!(decision(row), "equivalent" | "undecided"), "{row}");
    let text = ok_on(
        &temp.path,
        &[
            "compare",
            report["base"].as_str().unwrap(),
            report["new"].as_str().unwrap(),
            "--sequential",
            "--delta",
            "20",
            "--max-units",
            "30",
        ],
    );
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(
        text.contains("no change larger than δ") || text.contains("undecided at the bound"),
        "{text}"
    );
}

#[test]
fn compare_sequential_says_how_many_more_sessions_and_from_what() {
    let temp = TempDb::new();
    let db = &temp.path;
    let session = |label: &str| {
        ok_on(
            db,
            &["run", "--runs", "3", "--label", label, "pipe:-l 2000"],
        );
    };
    session("x");
    session("y");
    // One session a side, no calibration: no estimate of the noise at all.
    let one = json_on(
        db,
        &["compare", "x", "y", "--sequential", "--format", "json"],
    );
    let row = only_row(&one);
    assert_eq!(decision(row), "continue", "{row}");
    assert_eq!(row["level"], "session", "{row}");
    assert_eq!(
        row["look"]["decision"]["more_per_side"]["kind"], "unknown",
        "{row}"
    );
    let text = ok_on(db, &["compare", "x", "y", "--sequential"]);
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("how many more sessions is unknown"),
        "{text}"
    );
    session("x");
    session("y");
    // Two a side: a number, with where it comes from.
    let two = json_on(
        db,
        &["compare", "x", "y", "--sequential", "--format", "json"],
    );
    let more = &only_row(&two)["look"]["decision"]["more_per_side"];
    assert!(
        matches!(more["kind"].as_str(), Some("about" | "beyond_practical")),
        "{more}"
    );
    assert_eq!(more["from"], "this_comparison", "{more}");
    // The first look recorded the design; a look at the same units again added
    // nothing, the look at new sessions did.
    let recorded = &two["recorded"];
    assert_eq!(recorded["design"]["by"], "compare", "{recorded}");
    assert_eq!(recorded["design"]["max_units_per_side"], 20, "{recorded}");
    let units: Vec<u64> = recorded["looks"]
        .as_array()
        .expect("looks")
        .iter()
        .map(|l| l["rows"][0]["n_a"].as_u64().unwrap())
        .collect();
    assert_eq!(units, [1, 2], "{recorded}");
    // The design is fixed: another bound now is refused.
    let other_bound = ["compare", "x", "y", "--sequential", "--max-units", "30"];
    one_line_error(&kbench_on(db, &other_bound), 2, &other_bound);
}

#[test]
fn sequential_options_are_checked() {
    let temp = TempDb::new();
    let db = &temp.path;
    ok_on(db, &["run", "--runs", "1", "--label", "x", "pipe:-l 100"]);
    for bad in [
        &["compare", "x", "y", "z", "--sequential"][..],
        &["compare", "x", "y", "--max-units", "5"],
        &["compare", "x", "y", "--sequential", "--max-units", "1"],
        &["compare", "x", "nowhere", "--sequential"],
        &["compare", "x", "x", "--sequential"],
        &["ab", "pipe:-l 10", "pipe:-l 20", "--max-runs", "5"],
        &[
            "ab",
            "pipe:-l 10",
            "pipe:-l 20",
            "--until-decided",
            "--runs",
            "5",
        ],
        &[
            "ab",
            "pipe:-l 10",
            "pipe:-l 20",
            "--until-decided",
            "--max-time",
            "0",
        ],
    ] {
        let out = kbench_on(db, bad);
        one_line_error(&out, 2, bad);
    }
    // A refused bound left no session behind.
    let listed = ok_on(db, &["list"]);
    assert!(!listed.contains("ab-"), "{listed}");
}
