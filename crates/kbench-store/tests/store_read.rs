//! Reading runs back: every run gets its own values (in metric order) whatever the
//! interleaving of labels and sessions, and the JSON columns come back as stored.
mod pg;

use kbench_record::stored_run;
use kbench_record::{Direction, MetricValue, RunRecord};
use kbench_store::{NewSession, RawJson, Store, StoredRun, Value};

fn value(metric: &str, v: f64, primary: bool) -> Value {
    Value {
        metric: metric.into(),
        value: v,
        unit: "u".into(),
        higher_is_better: false,
        primary,
    }
}

fn session(label: &str, started: u64) -> NewSession {
    NewSession {
        label: label.into(),
        kind: "run".into(),
        started_unix_ns: started,
        kbench_version: "test".into(),
        command_line: "test".into(),
        ..NewSession::default()
    }
}

#[test]
fn runs_of_interleaved_labels_keep_their_own_values() {
    let dir = tempfile::tempdir().unwrap();
    interleaved_labels_read_back(&dir.path().join("k.db"));
}

/// The same on PostgreSQL, which hands rows back as they were written: here, not in
/// the sessions' order, so kbench's own ordering is what is tested.
#[test]
fn on_postgres_runs_of_interleaved_labels_keep_their_own_values() {
    if let Some(url) = pg::fresh_database("interleaved_labels") {
        interleaved_labels_read_back(std::path::Path::new(&url));
    }
}

fn interleaved_labels_read_back(path: &std::path::Path) {
    let mut store = Store::open(path).unwrap();
    // Sessions started out of id order, runs inserted out of run order, across labels.
    let late = store.begin_session(&session("a", 20)).unwrap();
    let other = store.begin_session(&session("b", 5)).unwrap();
    let early = store.begin_session(&session("a", 10)).unwrap();
    for (i, (sid, index)) in [(late, 1), (other, 0), (early, 1), (late, 0), (early, 0)]
        .into_iter()
        .enumerate()
    {
        let run = StoredRun {
            workload: "w".into(),
            run_index: index,
            // Given in reverse metric order: read back sorted.
            values: vec![
                value("z_secondary", i as f64 + 0.5, false),
                value("a_primary", i as f64, true),
            ],
            ..StoredRun::default()
        };
        store.insert_run(sid, &run).unwrap();
    }
    let runs = store.runs("a").unwrap();
    let order: Vec<(i64, u32)> = runs
        .iter()
        .map(|r| (r.session_id, r.run.run_index))
        .collect();
    assert_eq!(order, [(early, 0), (early, 1), (late, 0), (late, 1)]);
    let for_analysis: Vec<(i64, u32)> = store
        .runs_for_analysis("a")
        .unwrap()
        .iter()
        .map(|r| (r.session_id, r.run.run_index))
        .collect();
    assert_eq!(for_analysis, order);
    let firsts: Vec<f64> = runs.iter().map(|r| r.run.values[0].value).collect();
    assert_eq!(firsts, [4.0, 2.0, 3.0, 0.0]);
    for r in &runs {
        let metrics: Vec<&str> = r.run.values.iter().map(|v| v.metric.as_str()).collect();
        assert_eq!(metrics, ["a_primary", "z_secondary"]);
        assert_eq!(r.run.values[1].value, r.run.values[0].value + 0.5);
        assert!(r.run.values[0].primary && !r.run.values[1].primary);
        assert_eq!(r.label, "a");
    }
    assert_eq!(store.runs("b").unwrap()[0].run.values[0].value, 1.0);
    assert!(store.runs("none").unwrap().is_empty());
}

/// A label's values are read by the ranges of its runs' ids where there are a few,
/// and by label where its runs interleave another's (as `ab` writes them) in more:
/// either way each run gets its own values and no other run's.
#[test]
fn values_read_by_id_ranges_or_by_label_are_each_runs_own() {
    let dir = tempfile::tempdir().unwrap();
    values_of_interleaved_runs_read_back(&dir.path().join("k.db"));
    if let Some(url) = pg::fresh_database("values_by_ranges") {
        values_of_interleaved_runs_read_back(std::path::Path::new(&url));
    }
}

fn values_of_interleaved_runs_read_back(path: &std::path::Path) {
    let mut store = Store::open(path).unwrap();
    let few = store.begin_session(&session("few", 1)).unwrap();
    let many = store.begin_session(&session("many", 2)).unwrap();
    let other = store.begin_session(&session("other", 3)).unwrap();
    // "few": three stretches of ids; "many": forty runs alternating with "other"'s.
    let mut order = Vec::new();
    for stretch in 0..3 {
        order.extend([few; 4]);
        order.push(other);
        order.extend([many, other].repeat(if stretch == 0 { 40 } else { 0 }));
    }
    let mut index = std::collections::HashMap::new();
    for sid in order {
        let run_index = index.entry(sid).or_insert(0u32);
        let run = StoredRun {
            workload: "w".into(),
            run_index: *run_index,
            values: vec![value(
                "m",
                (sid * 1000) as f64 + f64::from(*run_index),
                true,
            )],
            ..StoredRun::default()
        };
        *run_index += 1;
        store.insert_run(sid, &run).unwrap();
    }
    for (label, sid, n) in [("few", few, 12), ("many", many, 40), ("other", other, 43)] {
        for runs in [
            store.runs(label).unwrap(),
            store.runs_for_analysis(label).unwrap(),
        ] {
            let values: Vec<f64> = runs
                .iter()
                .map(|r| {
                    assert_eq!(r.run.values.len(), 1, "{label}");
                    r.run.values[0].value
                })
                .collect();
            let expected: Vec<f64> = (0..n).map(|i| (sid * 1000 + i) as f64).collect();
            assert_eq!(values, expected, "{label}");
        }
    }
}

#[test]
fn json_columns_round_trip_and_the_record_parses() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    let mut record = RunRecord {
        workload: "sched/pipe".into(),
        variant: "symmetric".into(),
        total_ns: 2_000,
        perf_signed_loops: Some(-5),
        ..RunRecord::default()
    };
    record.metrics = vec![MetricValue::primary(
        "usecs_per_op",
        1.5,
        "us/op",
        Direction::LowerIsBetter,
    )];
    let stored = stored_run(&record, 0, false, None, "0".into());
    let id = store.begin_session(&session("j", 1)).unwrap();
    store.insert_run(id, &stored).unwrap();
    let back = &store.runs("j").unwrap()[0];
    assert_eq!(back.run.record, stored.record);
    assert_eq!(back.run.rusage, stored.rusage);
    assert_eq!(back.record(), Some(record));
    assert!(back.run.values[0].primary);
    // An export holds the JSON itself, not a string of it.
    let exported = serde_json::to_value(&back.run).unwrap();
    assert_eq!(exported["record"]["perf_signed_loops"], -5);
    assert_eq!(exported["rusage"]["user_us"], 0);
    let again: StoredRun = serde_json::from_value(exported).unwrap();
    assert_eq!(again.record, back.run.record);
    assert_eq!(
        RawJson::from_value(&serde_json::json!({"a": 1})).map(|r| r.as_str().to_string()),
        Some(r#"{"a":1}"#.to_string())
    );
}
