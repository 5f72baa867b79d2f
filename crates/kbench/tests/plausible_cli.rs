//! `kbench plausible` and `compare --saving`: the arithmetic on runs whose values are
//! set exactly (a real export of real runs, its values rewritten, imported again), and
//! the command on real runs as they come.
mod common;
use common::{kbench_on, ok_on, one_line_error};

/// The export of `label` with every measured pipe run's usecs/op set to
/// `usecs[i % len]` and its context switches per op to `csw`.
fn with_values(export: &str, usecs: &[f64], csw: f64) -> String {
    let mut doc: serde_json::Value = serde_json::from_str(export).unwrap();
    let mut i = 0;
    for session in doc["sessions"].as_array_mut().unwrap() {
        for run in session["runs"].as_array_mut().unwrap() {
            if run["warmup"] == true || run["error"].is_string() {
                continue;
            }
            for value in run["values"].as_array_mut().unwrap() {
                match value["metric"].as_str() {
                    Some("usecs_per_op") => value["value"] = usecs[i % usecs.len()].into(),
                    Some("csw_per_op") => value["value"] = csw.into(),
                    _ => {}
                }
            }
            i += 1;
        }
    }
    doc.to_string()
}

#[test]
fn a_saving_is_set_against_the_change_it_could_make() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    ok_on(
        &db,
        &[
            "run",
            "pipe:-l 2000 --placement same-cpu",
            "--runs",
            "6",
            "--label",
            "real",
        ],
    );
    let export = ok_on(&db, &["export", "real"]);
    // Base: 2.000 us/op (±0.5%), new: 1.800 (-10%), 2 csw/op on both.
    let base = dir.path().join("base.json");
    let new = dir.path().join("new.json");
    std::fs::write(&base, with_values(&export, &[1.99, 2.0, 2.01], 2.0)).unwrap();
    std::fs::write(&new, with_values(&export, &[1.79, 1.8, 1.81], 2.0)).unwrap();
    ok_on(&db, &["import", base.to_str().unwrap(), "--label", "base"]);
    ok_on(&db, &["import", new.to_str().unwrap(), "--label", "new"]);

    let json: serde_json::Value = serde_json::from_str(&ok_on(
        &db,
        &[
            "plausible",
            "new",
            "--base",
            "base",
            "--saving",
            "csw=50",
            "--saving",
            "csw=200",
            "--saving",
            "irq=10",
            "--saving",
            "migration=10",
            "--format",
            "json",
        ],
    ))
    .unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{json}");
    let [small, large, irq, migration] = rows.as_slice() else {
        unreachable!()
    };
    assert_eq!(small["cost_per_op"].as_f64(), Some(1800.0));
    assert_eq!(small["events_per_op"].as_f64(), Some(2.0));
    // 2 csw/op × 50 ns over 1800 ns/op: at most 5.56% of an op, and -10% needs
    // 0.10 × 1800 / 2 = 90 ns per csw.
    let max = small["max_change_pct"].as_f64().unwrap();
    assert!((max - 100.0 * 2.0 * 50.0 / 1800.0).abs() < 1e-9, "{max}");
    let observed = small["observed"]["shift_pct"].as_f64().unwrap();
    assert!((observed + 10.0).abs() < 0.2, "{observed}");
    let needed = small["needed_per_event"].as_f64().unwrap();
    assert!(
        (needed - observed.abs() / 100.0 * 1800.0 / 2.0).abs() < 1e-6,
        "{needed}"
    );
    assert_eq!(small["explains"], "beyond", "{small}");
    // 200 ns per csw could make 22%: it could explain a 10% change.
    assert_eq!(large["explains"], "within", "{large}");
    // The real runs counted their IRQs (device and timer, from /proc/interrupts):
    // a tick or so per thousand ops, far too few for 10 ns each to matter.
    let irqs = irq["events_per_op"].as_f64().expect("IRQs per op");
    let irq_max = irq["max_change_pct"].as_f64().unwrap();
    assert!(
        (irq_max - 100.0 * irqs * 10.0 / 1800.0).abs() < 1e-9,
        "{irq}"
    );
    assert_eq!(irq["explains"], "beyond", "{irq}");
    // Runs without --counters count no migrations: no bound is made up.
    assert!(
        migration["events_per_op"].is_null() && migration["explains"].is_null(),
        "{migration}"
    );
    // A context switch's cost here: a same-CPU pipe op over its switches.
    let cost = &small["measured_cost"];
    assert_eq!(cost["amount"].as_f64(), Some(1800.0 / 2.0), "{cost}");
    assert_eq!(cost["upper_bound"], true);

    let text = ok_on(&db, &["compare", "base", "new", "--saving", "csw=50"]);
    assert!(text.contains("cannot explain it alone"), "{text}");
    assert!(text.contains("needs 90 ns saved per csw"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn bad_savings_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    for args in [
        &["plausible", "x", "--saving", "ipi"][..],
        &["plausible", "x", "--saving", "dma=3"],
        &["plausible", "x", "--saving", "csw=-4"],
        &["plausible", "nolabel", "--saving", "csw=4"],
        &["compare", "a", "b", "--saving", "csw=4", "--format", "json"],
    ] {
        let out = kbench_on(&db, args);
        one_line_error(&out, 2, args);
    }
}

#[test]
fn a_saving_reads_with_its_time_unit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    ok_on(&db, &["run", "pipe:-l 200", "--runs", "2", "--label", "x"]);
    let mut args = vec!["plausible", "x", "--format", "json"];
    for saving in [
        "irq=5ns",
        "irq=0.3us",
        "irq=0.3µs",
        "irq=0.3μs",
        "irq=1ms",
        "irq=5",
    ] {
        args.extend(["--saving", saving]);
    }
    let json: serde_json::Value = serde_json::from_str(&ok_on(&db, &args)).unwrap();
    let amounts: Vec<f64> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            assert_eq!(row["saving"]["unit"], "ns", "{row}");
            row["saving"]["amount"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(amounts, [5.0, 300.0, 300.0, 300.0, 1e6, 5.0], "{json}");
    // A unit it does not know is one line, exit 2.
    let bad = ["plausible", "x", "--saving", "irq=5s"];
    let err = one_line_error(&kbench_on(&db, &bad), 2, &bad);
    assert!(err.contains("--saving irq=5s"), "{err}");
}
