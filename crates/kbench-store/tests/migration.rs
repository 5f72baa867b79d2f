//! A database written by kbench before schema version 2 (strings that carried meaning)
//! opens migrated: typed failures, ab sides, import sources, pipe's signed loops out
//! of the parameters, and legacy primary metrics, with every count in agreement.
use kbench_store::schema::MIGRATIONS;
use kbench_store::{ImportSource, Store};
use rusqlite::{params, Connection};

/// A version 1 database with what kbench 0.1 wrote for a run, ab, exec and import.
fn version_1_database(path: &std::path::Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(MIGRATIONS[0]).unwrap();
    conn.execute_batch("PRAGMA user_version = 1").unwrap();
    let session = |label: &str, kind: &str, source: Option<&str>| -> i64 {
        conn.execute(
            "INSERT INTO sessions (label, kind, boot_id, started_unix_ns, kbench_version,
                                   command_line, source)
             VALUES (?1, ?2, 'boot', 1, '0.1.0', 'kbench run', ?3)",
            params![label, kind, source],
        )
        .unwrap();
        conn.last_insert_rowid()
    };
    let run = |session: i64,
               workload: &str,
               params: &str,
               variant: &str,
               index: i64,
               warmup: bool,
               exit: Option<i64>,
               record: Option<&str>,
               values: &[(&str, f64)]| {
        conn.execute(
            "INSERT INTO runs (session_id, workload, params, variant, run_index, warmup,
                               exit_status, record)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![session, workload, params, variant, index, warmup, exit, record],
        )
        .unwrap();
        let id = conn.last_insert_rowid();
        for (metric, value) in values {
            conn.execute(
                "INSERT INTO run_values (run_id, metric, value, unit) VALUES (?1, ?2, ?3, '')",
                params![id, metric, value],
            )
            .unwrap();
        }
    };
    let pipe_params = r#"{"loop":1000,"signed_loops":1000,"threaded":false}"#;
    let pipe_record = r#"{"workload":"sched/pipe","params":{"loop":1000,"signed_loops":1000,"threaded":false},"variant":"symmetric","total_ns":4000000,"ops":1000,"usecs_per_op":4.0000000000000001,"ops_per_sec":250000.0,"bytes_transferred":null,"rusage":{"self_voluntary_csw":0,"self_involuntary_csw":0,"children_voluntary_csw":0,"children_involuntary_csw":0,"user_us":0,"sys_us":0},"tasks":[],"cpus_used":[0],"start_unix_ns":1,"end_unix_ns":2}"#;
    let per_op = [("csw_per_op", 2.0), ("usecs_per_op", 4.0)];
    let s = session("base", "run", None);
    run(
        s,
        "sched/pipe",
        pipe_params,
        "symmetric",
        0,
        true,
        Some(0),
        Some(pipe_record),
        &per_op,
    );
    run(
        s,
        "sched/pipe",
        pipe_params,
        "symmetric",
        1,
        false,
        Some(0),
        Some(pipe_record),
        &per_op,
    );
    run(
        s,
        "sched/pipe",
        pipe_params,
        "symmetric",
        2,
        false,
        Some(0),
        Some(pipe_record),
        &per_op,
    );
    let failed =
        r#"{"error":"pipe:-l 1000 timed out after 1 s and was stopped","spec":"pipe:-l 1000"}"#;
    run(
        s,
        "sched/pipe",
        "{}",
        "failed",
        3,
        false,
        Some(1),
        Some(failed),
        &[],
    );

    let ab = session("ab-a", "ab", None);
    let ab_params = r#"{"a":"wakeup:--wakes 10","b":"wakeup:--wakes 10 --inject-delay-us 5"}"#;
    let wake_record = r#"{"workload":"sched/wakeup","params":{"wakes":10},"variant":"idle-futex","total_ns":1,"ops":10,"usecs_per_op":null,"ops_per_sec":null,"bytes_transferred":null,"rusage":{"self_voluntary_csw":0,"self_involuntary_csw":0,"children_voluntary_csw":0,"children_involuntary_csw":0,"user_us":0,"sys_us":0},"tasks":[],"cpus_used":[0,1],"start_unix_ns":1,"end_unix_ns":2,"series":[{"name":"wake_latency","unit":"ns","count":10,"min":1000,"max":1200,"mean":1100.0,"stddev":50.0,"percentiles":{"p50":1100,"p90":null,"p99":null,"p99.9":null},"buckets":[[1000,4],[1100,3],[1200,3]]}]}"#;
    let ab_record = format!(
        r#"{{"side":"a","workload":"sched/wakeup","params":{{"wakes":10}},"variant":"idle-futex","record":{wake_record}}}"#
    );
    run(
        ab,
        "ab",
        ab_params,
        "ab",
        0,
        false,
        Some(0),
        Some(&ab_record),
        &[("wake_latency_p50_ns", 1100.0)],
    );
    let ab_failed = r#"{"side":"a","workload":"sched/wakeup","params":{},"variant":"failed","record":{"error":"wakeup failed","spec":"wakeup"}}"#;
    run(
        ab,
        "ab",
        ab_params,
        "failed",
        1,
        false,
        Some(1),
        Some(ab_failed),
        &[],
    );

    let exec = session("exec", "exec", None);
    let command = r#"{"command":"make"}"#;
    let wall = [
        ("max_rss_kib", 10.0),
        ("sys_sec", 0.1),
        ("user_sec", 0.2),
        ("wall_sec", 1.0),
    ];
    run(
        exec,
        "command",
        command,
        "exec",
        0,
        false,
        Some(0),
        None,
        &wall,
    );
    run(
        exec,
        "command",
        command,
        "exec",
        1,
        false,
        Some(2),
        None,
        &wall,
    );

    let imported = session(
        "imported",
        "import",
        Some("my (odd) dir/perf.txt (perf-bench, content 0123456789abcdef)"),
    );
    run(
        imported,
        "sched/pipe",
        r#"{"loop":20000}"#,
        "pingpong",
        0,
        false,
        None,
        None,
        &[
            ("ops_per_sec", 1.0),
            ("total_sec", 0.1),
            ("usecs_per_op", 5.0),
        ],
    );
    conn.execute(
        "INSERT INTO summaries (session_id, workload, metric, unit, mean, std_error, n)
         VALUES (?1, 'perf bench sched pipe', 'time_elapsed_sec', 's', 0.02, 0.001, 5),
                (?1, 'perf bench sched pipe', 'task-clock', 'msec', 18.0, 0.1, 5)",
        params![imported],
    )
    .unwrap();
}

#[test]
fn a_version_1_database_opens_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    version_1_database(&path);
    let store = Store::open(&path).unwrap();

    let base = store.runs("base").unwrap();
    let failed = &base[3].run;
    assert_eq!(failed.variant, "");
    assert_eq!(
        failed.error.as_deref(),
        Some("pipe:-l 1000 timed out after 1 s and was stopped")
    );
    assert!(failed.record.is_none() && !failed.is_measured());
    let measured: Vec<_> = base.iter().filter(|r| r.is_measured()).collect();
    assert_eq!(measured.len(), 2);
    let pipe = measured[0];
    assert!(!pipe.run.params.contains_key("signed_loops"));
    let record = pipe.record().expect("the record reads as a RunRecord");
    assert_eq!(record.perf_signed_loops, Some(1000));
    assert!(!record.params.contains_key("signed_loops"));
    assert_eq!(record.usecs_per_op, Some(4.0));
    let primary: Vec<&str> = pipe
        .run
        .values
        .iter()
        .filter(|v| v.primary)
        .map(|v| v.metric.as_str())
        .collect();
    assert_eq!(primary, ["usecs_per_op"]);

    // An older ab session gets an interleave group (paired with its neighbour by id).
    let ab_session = &store.sessions("ab-a").unwrap()[0];
    assert_eq!(
        ab_session.interleave_group,
        Some(format!(
            "legacy-ab-{}-{}",
            ab_session.boot_id.as_deref().unwrap_or("unknown"),
            ab_session.id
        ))
    );
    assert_eq!(store.sessions("base").unwrap()[0].interleave_group, None);
    let ab = store.runs("ab-a").unwrap();
    let side = ab[0].run.ab_side.as_ref().expect("an ab side");
    assert_eq!(
        (
            side.side.as_str(),
            side.workload.as_str(),
            side.variant.as_str()
        ),
        ("a", "sched/wakeup", "idle-futex")
    );
    assert_eq!(side.params["wakes"], 10);
    assert_eq!(
        (ab[0].run.workload.as_str(), ab[0].run.variant.as_str()),
        ("ab", "ab")
    );
    let series = ab[0].record().expect("the workload's own record").series;
    assert_eq!(series[0].buckets, [[1000, 4], [1100, 3], [1200, 3]]);
    assert!(ab[0].run.values[0].primary);
    let ab_failed = &ab[1].run;
    assert_eq!(ab_failed.error.as_deref(), Some("wakeup failed"));
    assert_eq!(ab_failed.variant, "ab");
    assert_eq!(
        ab_failed.ab_side.as_ref().map(|s| s.variant.as_str()),
        Some("")
    );

    let exec = store.runs("exec").unwrap();
    assert_eq!(exec.iter().filter(|r| r.is_measured()).count(), 1);
    assert!(exec[0]
        .run
        .values
        .iter()
        .any(|v| v.primary && v.metric == "wall_sec"));

    let imported = store.sessions("imported").unwrap();
    assert_eq!(
        imported[0].source,
        Some(ImportSource {
            file: "my (odd) dir/perf.txt".into(),
            format: "perf-bench".into(),
            content_hash: Some("0123456789abcdef".into()),
        })
    );
    assert!(store
        .has_source_content("imported", "0123456789abcdef")
        .unwrap());
    assert!(!store
        .has_source_content("base", "0123456789abcdef")
        .unwrap());
    let summaries = store.summaries("imported").unwrap();
    let primary: Vec<&str> = summaries
        .iter()
        .filter(|s| s.primary)
        .map(|s| s.metric.as_str())
        .collect();
    assert_eq!(primary, ["time_elapsed_sec"]);
    let imported_run = &store.runs("imported").unwrap()[0].run;
    assert!(imported_run.is_measured());
    assert!(imported_run
        .values
        .iter()
        .any(|v| v.primary && v.metric == "usecs_per_op"));

    // list, the sessions and the runs agree on what was measured.
    for label in store.labels().unwrap() {
        let runs = store.runs(&label.label).unwrap();
        let measured = runs.iter().filter(|r| r.is_measured()).count() as u64;
        let per_session: u64 = store
            .sessions(&label.label)
            .unwrap()
            .iter()
            .map(|s| s.runs)
            .sum();
        assert_eq!(
            (label.runs, per_session),
            (measured, measured),
            "{}",
            label.label
        );
    }
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn a_version_1_export_reads_upgraded() {
    let export = r#"{"format":"kbench-export","version":1,"label":"x","sessions":[{
        "session":{"label":"x","kind":"import","boot_id":null,"started_unix_ns":1,
                   "kbench_version":"0.1.0","command_line":"kbench import",
                   "seed":null,"environment":null,
                   "source":"perf.txt (perf-bench, content 00000000000000ff)"},
        "ended_unix_ns":2,
        "runs":[
          {"workload":"sched/pipe","params":{"loop":5,"signed_loops":5},"variant":"symmetric",
           "run_index":0,"warmup":false,"exit_status":0,"start_unix_ns":null,"end_unix_ns":null,
           "pinned_cpus":null,"cpus_used":null,"rusage":null,"tasks":null,
           "record":{"workload":"sched/pipe","params":{"loop":5,"signed_loops":5}},
           "values":[{"metric":"usecs_per_op","value":1.0,"unit":"us/op","higher_is_better":false},
                     {"metric":"csw_per_op","value":2.0,"unit":"csw/op","higher_is_better":false}]},
          {"workload":"sched/pipe","params":{},"variant":"failed","run_index":1,"warmup":false,
           "exit_status":1,"start_unix_ns":null,"end_unix_ns":null,"pinned_cpus":null,
           "cpus_used":null,"rusage":null,"tasks":null,
           "record":{"error":"it broke","spec":"pipe"},"values":[]},
          {"workload":"ab","params":{"a":"x","b":"y"},"variant":"ab","run_index":2,
           "warmup":false,"exit_status":0,"start_unix_ns":null,"end_unix_ns":null,
           "pinned_cpus":null,"cpus_used":null,"rusage":null,"tasks":null,
           "record":{"side":"b","workload":"command","params":{"command":"sh -c y"},
                     "variant":"exec","record":null},
           "values":[{"metric":"wall_sec","value":1.0,"unit":"s","higher_is_better":false}]}
        ],
        "summaries":[]}]}"#;
    let export = kbench_import::export::parse_export(export)
        .unwrap()
        .unwrap();
    assert_eq!(export.version, kbench_store::export::EXPORT_VERSION);
    let session = &export.sessions[0];
    assert_eq!(
        session.session.source,
        Some(ImportSource {
            file: "perf.txt".into(),
            format: "perf-bench".into(),
            content_hash: Some("00000000000000ff".into()),
        })
    );
    let [pipe, failed, ab] = &session.runs[..] else {
        panic!("three runs");
    };
    assert!(!pipe.params.contains_key("signed_loops"));
    let record = pipe.record.as_ref().unwrap().value().unwrap();
    assert_eq!(record["perf_signed_loops"], 5);
    assert!(record["params"].get("signed_loops").is_none());
    assert!(pipe
        .values
        .iter()
        .any(|v| v.primary && v.metric == "usecs_per_op"));
    assert_eq!(failed.error.as_deref(), Some("it broke"));
    assert_eq!(
        (failed.variant.as_str(), failed.record.as_ref()),
        ("", None)
    );
    let side = ab.ab_side.as_ref().unwrap();
    assert_eq!(
        (side.side.as_str(), side.workload.as_str()),
        ("b", "command")
    );
    assert_eq!(side.variant, "exec");
    assert!(ab.record.is_none());
    assert!(ab.values[0].primary);
}

#[test]
fn migration_6_gives_older_sessions_uuids_and_the_machine_machine_of_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v5.db");
    let environments = [
        Some(serde_json::json!({"hostname": "rk3399", "cpu_models": ["Cortex-A53", "Cortex-A72"]})),
        Some(serde_json::json!({"hostname": 7, "cpu_models": []})),
        Some(serde_json::json!({"cpu_models": ["EPYC", 3]})),
        None,
    ];
    {
        let mut store = Store::open(&path).unwrap();
        for (i, environment) in environments.iter().enumerate() {
            store
                .begin_session(&kbench_store::NewSession {
                    label: "old".into(),
                    kind: "run".into(),
                    started_unix_ns: i as u64,
                    // Kept as they are, odd types and all: the SQL of migration 6
                    // names their machines.
                    environment: environment
                        .clone()
                        .map(|e| serde_json::from_value(e).unwrap()),
                    ..Default::default()
                })
                .unwrap();
        }
    }
    // Back to version 5: the columns migration 6 adds, and the tables of later ones,
    // gone.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE runs DROP COLUMN placement; ALTER TABLE runs DROP COLUMN has_series;
         DROP TABLE sequential_looks; DROP TABLE sequential_designs;
         DROP INDEX runs_measured_by_session; DROP INDEX sessions_by_label_machine;
         DROP INDEX sessions_by_machine_id; ALTER TABLE sessions DROP COLUMN machine_id;
         DROP INDEX sessions_by_uuid; DROP INDEX sessions_by_machine;
         ALTER TABLE sessions DROP COLUMN uuid; ALTER TABLE sessions DROP COLUMN machine;
         PRAGMA user_version = 5;",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let sessions = store.sessions("old").unwrap();
    let uuids: std::collections::BTreeSet<&str> =
        sessions.iter().map(|s| s.uuid.as_str()).collect();
    assert_eq!(uuids.len(), environments.len(), "distinct: {uuids:?}");
    for s in &sessions {
        let parsed = uuid::Uuid::parse_str(&s.uuid).unwrap();
        assert_eq!(parsed.get_version_num(), 4, "{}", s.uuid);
        assert_eq!(
            s.machine,
            kbench_store::machine_of(s.environment.as_ref()),
            "{:?}",
            s.environment
        );
    }
}

/// Migration 8 reads each run's placement and whether it has latency series out of its
/// record into columns: the analysis then reads a record only when it has series.
#[test]
fn migration_8_puts_placement_and_series_in_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v7.db");
    let placement = serde_json::json!({"kind": "mixed", "colocated_share": 0.5});
    let records = [
        (
            "sched/pipe",
            serde_json::json!({"placement": placement, "series": []}),
        ),
        (
            "sched/wakeup",
            serde_json::json!({"series": [{"name": "wake_latency"}]}),
        ),
        (
            "command",
            serde_json::json!({"note": "\"placement\" and \"series\" only as text"}),
        ),
    ];
    {
        let mut store = Store::open(&path).unwrap();
        let session = store
            .begin_session(&kbench_store::NewSession {
                label: "old".into(),
                kind: "run".into(),
                ..Default::default()
            })
            .unwrap();
        for (i, (workload, record)) in records.iter().enumerate() {
            let run = kbench_store::StoredRun {
                workload: workload.to_string(),
                run_index: i as u32,
                record: Some(kbench_store::RawJson::from_stored(record.to_string())),
                ..Default::default()
            };
            store.insert_run(session, &run).unwrap();
        }
    }
    // Back to version 7: the columns gone, the records as they were.
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE runs DROP COLUMN placement; ALTER TABLE runs DROP COLUMN has_series;
         DROP INDEX runs_measured_by_session; DROP INDEX sessions_by_label_machine;
         DROP INDEX sessions_by_machine_id; ALTER TABLE sessions DROP COLUMN machine_id;
         ALTER TABLE sequential_looks DROP COLUMN unit_level;
         ALTER TABLE sequential_designs DROP COLUMN boundary;
         PRAGMA user_version = 7;",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let whole = store.runs("old").unwrap();
    let light = store.runs_for_analysis("old").unwrap();
    let expected = whole[0].run.record_facts().placement;
    assert!(expected.is_some());
    let placements: Vec<_> = light.iter().map(|r| r.run.placement()).collect();
    assert_eq!(placements, [expected, None, None]);
    assert_eq!(
        whole.iter().map(|r| r.run.placement()).collect::<Vec<_>>(),
        placements
    );
    // Only the run with series keeps its record; nobody's rusage or tasks.
    let kept: Vec<bool> = light.iter().map(|r| r.run.record.is_some()).collect();
    assert_eq!(kept, [false, true, false]);
    assert!(whole.iter().all(|r| r.run.record.is_some()));
    // A run stored now gets the same columns from its record.
    let conn = Connection::open(&path).unwrap();
    let fresh: Vec<(Option<String>, i64)> = conn
        .prepare("SELECT placement, has_series FROM runs ORDER BY run_index")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(fresh.iter().map(|f| f.1).collect::<Vec<_>>(), [0, 1, 0]);
}

/// Migration 12 gives a sequential look the level of its units and a design its
/// boundary: what was recorded before reads back with no level and always valid, the
/// rule every design had then.
#[test]
fn migration_12_reads_older_designs_as_always_valid_and_their_looks_without_a_level() {
    use kbench_record::sequential::{
        Boundary, DesignRecord, DesignedBy, LookOutcome, LookRow, SequentialLook, SequentialOptions,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v11.db");
    {
        let mut store = Store::open(&path).unwrap();
        let id = store
            .insert_sequential_design(&DesignRecord {
                base_label: "a".into(),
                new_label: "b".into(),
                by: DesignedBy::VmAb,
                created_unix_ns: 1,
                kbench_version: "0.1.0".into(),
                command_line: "kbench vm-ab --until-decided".into(),
                options: SequentialOptions {
                    alpha: 0.05,
                    delta_pct: 1.0,
                    max_units_per_side: 10,
                    use_calibration: false,
                    boundary: Boundary::DeclaredMaximum,
                },
                max_time_s: None,
            })
            .unwrap();
        let row = LookRow {
            workload: "sched/pipe".into(),
            params: String::new(),
            variant: String::new(),
            metric: "usecs_per_op".into(),
            n_a: 2,
            n_b: 2,
            shift_pct: Some(1.0),
            interval_pct: None,
            outcome: LookOutcome::Continue,
            unit_level: Some(kbench_record::sequential::Level::Boot),
        };
        let look = SequentialLook {
            index: 1,
            at_unix_ns: 2,
            rows: vec![row],
        };
        store.insert_sequential_look(id, &look).unwrap();
    }
    // Back to version 11: the two columns gone, as a kbench before them wrote it.
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE sequential_looks DROP COLUMN unit_level;
         ALTER TABLE sequential_designs DROP COLUMN boundary;
         PRAGMA user_version = 11;",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let recorded = store
        .sequential_design("a", "b")
        .unwrap()
        .expect("a design");
    assert_eq!(recorded.design.options.boundary, Boundary::AlwaysValid);
    assert_eq!(recorded.looks.len(), 1);
    assert_eq!(recorded.looks[0].rows[0].unit_level, None);
    assert_eq!(recorded.looks[0].rows[0].n_a, 2);
}
