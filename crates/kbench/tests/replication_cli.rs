//! Sessions as units of replication, on this machine: A/A pairs of sequential
//! `kbench run --quick` sessions must not claim a change, and a real effect from
//! outside (a CPU hog beside one session) must still be found with one session a side
//! once `kbench calibrate` has measured this machine's session-to-session noise.
//!
//! Before sessions were units, three such A/A pairs claimed 8, 4 and 6 of 32 rows.
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

fn kbench(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kbench"))
        .args(args)
        .env("KBENCH_DB", db)
        .stdin(Stdio::null())
        .output()
        .expect("run kbench")
}

fn ok(db: &Path, args: &[&str]) -> String {
    let out = kbench(db, args);
    assert!(
        out.status.success(),
        "kbench {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(db: &Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(db, args)).expect("JSON")
}

/// Runs per workload in each session: the quick suite, fewer runs, so that the
/// eleven sessions below take a few minutes.
const RUNS: &str = "10";

fn session(db: &Path, label: &str) {
    ok(db, &["run", "--quick", "--runs", RUNS, "--label", label]);
}

/// The rows that `keep` accepts and that claim a change.
fn claims(report: &serde_json::Value, keep: impl Fn(&serde_json::Value) -> bool) -> Vec<String> {
    claiming_rows(report, keep).iter().map(describe).collect()
}

fn claiming_rows(
    report: &serde_json::Value,
    keep: impl Fn(&serde_json::Value) -> bool,
) -> Vec<serde_json::Value> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| keep(r))
        .filter(|r| {
            matches!(
                r["verdict"].as_str(),
                Some("regression" | "improvement" | "changed")
            )
        })
        .cloned()
        .collect()
}

fn describe(r: &serde_json::Value) -> String {
    format!(
        "{} {} {} {} {:.2}%",
        r["workload"],
        r["metric"],
        r["kind"],
        r["verdict"],
        r["shift_pct"].as_f64().unwrap_or(0.0)
    )
}

/// Claims counted once per measured series: the pooled p99 and p99.9 of one series
/// are read from the same few tail samples, so one slow stretch of a session moves
/// both, and that is one false finding, not two.
fn findings(report: &serde_json::Value) -> Vec<String> {
    let mut found: Vec<String> = claiming_rows(report, |_| true)
        .iter()
        .map(|r| format!("{} {} {}", r["workload"], r["params"], r["metric"]))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// A busy loop on CPU 1 for as long as it lives.
struct Hog(Child);

impl Hog {
    fn on_cpu_1() -> Hog {
        Hog(Command::new("taskset")
            .args(["-c", "1", "sh", "-c", "while :; do :; done"])
            .spawn()
            .expect("taskset (util-linux)"))
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    (dir, db)
}

#[test]
fn aa_sessions_claim_nothing_and_a_hog_is_found_after_calibrate() {
    let (_dir, db) = temp_db();
    // Without a calibration one session a side makes no claim, and says why.
    session(&db, "first");
    session(&db, "second");
    let uncalibrated = json(&db, &["compare", "first", "second", "--format", "json"]);
    assert!(
        claims(&uncalibrated, |_| true).is_empty(),
        "{:?}",
        claims(&uncalibrated, |_| true)
    );
    let primary = uncalibrated["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "primary")
        .unwrap();
    assert_eq!(primary["verdict"], "inconclusive", "{primary}");
    assert!(
        primary["diagnostics"]
            .to_string()
            .contains("no_replication"),
        "{primary}"
    );
    let text = ok(&db, &["compare", "first", "second"]);
    assert!(text.contains("kbench calibrate"), "{text}");

    // Ten sessions: this VM's IPI round trip moves by up to ±10% over minutes (24
    // sessions of it ranged 12.7-17.7 us), which five 15-second sessions can miss.
    ok(
        &db,
        &[
            "calibrate",
            "--quick",
            "--runs",
            RUNS,
            "--sessions",
            "10",
            "--seed",
            "7",
        ],
    );
    let shown = ok(&db, &["calibrate", "--show"]);
    assert!(
        shown.contains("sched/pipe") && shown.contains("usecs_per_op"),
        "{shown}"
    );
    assert!(shown.lines().all(|l| l.chars().count() <= 80), "{shown}");

    let (mut all_claims, mut primary_claims, mut series_found, mut rows) =
        (Vec::new(), Vec::new(), 0, 0);
    for pair in 1..=3 {
        let (a, b) = (format!("aa{pair}a"), format!("aa{pair}b"));
        session(&db, &a);
        session(&db, &b);
        let report = json(&db, &["compare", &a, &b, "--format", "json"]);
        assert!(
            report["calibration"].is_object(),
            "calibration not used: {report}"
        );
        let found = claims(&report, |_| true);
        eprintln!(
            "A/A pair {pair}: {} rows, claims {found:?}",
            report["rows"].as_array().unwrap().len()
        );
        rows += report["rows"].as_array().unwrap().len();
        series_found += findings(&report).len();
        all_claims.extend(found);
        primary_claims.extend(claims(&report, |r| r["role"] == "primary"));
    }
    // No headline figure may claim a change between identical sessions. Over the
    // hundred-odd rows of three pairs, one secondary series claiming is within what a
    // 5% test per row, Benjamini-Hochberg within a report and a ten-session
    // calibration allow; a miscalibrated noise model makes many (8, 4 and 6 claims a
    // pair before sessions were units).
    assert!(primary_claims.is_empty(), "A/A claims: {primary_claims:?}");
    assert!(
        series_found <= 1,
        "A/A claims in {rows} rows, {series_found} series: {all_claims:?}"
    );

    // The same suite beside a CPU hog on CPU 1, the wakee's and IPI target's CPU: it
    // no longer idles, so wakes skip the idle exit and the IPI round trip has no peer
    // running to interrupt. Measured here: wake p50 -60%, IPI round trip -99%.
    {
        let _hog = Hog::on_cpu_1();
        session(&db, "hogged");
    }
    let report = json(&db, &["compare", "aa3b", "hogged", "--format", "json"]);
    let primary = |workload: &str| -> serde_json::Value {
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["workload"] == workload && r["role"] == "primary" && r["cpu_classes"].is_null()
            })
            .unwrap_or_else(|| panic!("no {workload} row: {report}"))
            .clone()
    };
    // Found means a claimed difference. The effect is large (-60% on an idle machine,
    // -44% once beside CI's other tests), but the delta raised from one calibrated
    // session a side is 36% here, so an interval reaching inside it is "changed".
    let wakeup = primary("sched/wakeup");
    assert!(
        matches!(wakeup["verdict"].as_str(), Some("improvement" | "changed")),
        "{wakeup}"
    );
    assert!(
        wakeup["diagnostics"].to_string().contains("borrowed_noise"),
        "{wakeup}"
    );
    let ipi = primary("ipi/ipi");
    assert!(
        matches!(ipi["verdict"].as_str(), Some("improvement" | "changed")),
        "{ipi}"
    );
    // Without the calibration the same data makes no claim.
    let bare = json(
        &db,
        &[
            "compare",
            "aa3b",
            "hogged",
            "--no-calibration",
            "--format",
            "json",
        ],
    );
    assert!(
        claims(&bare, |_| true).is_empty(),
        "{:?}",
        claims(&bare, |_| true)
    );
}
