//! The store's end-to-end behaviour, once per backend: every test here runs against
//! an SQLite file and against a fresh database on the test script's PostgreSQL
//! server (`KBENCH_TEST_PG`), through the one `Store` interface.
mod pg;

use kbench_store::push::push;
use kbench_store::{
    Backend, CalibrationComponent, NewBoot, NewCalibration, NewSession, RawJson, SessionWithRuns,
    Store, StoreError, StoredRun, SummaryRow, Value,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One backend's database for one test.
struct TestDb {
    path: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    fn open(&self) -> Store {
        Store::open(&self.path).unwrap()
    }
}

fn sqlite_db() -> TestDb {
    let dir = tempfile::tempdir().unwrap();
    TestDb {
        path: dir.path().join("k.db"),
        _dir: Some(dir),
    }
}

fn postgres_db(test: &str) -> Option<TestDb> {
    Some(TestDb {
        path: PathBuf::from(pg::fresh_database(test)?),
        _dir: None,
    })
}

macro_rules! on_both_backends {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $test() {
                super::$test(&super::sqlite_db());
            })*
        }
        mod postgres {
            $(#[test]
            fn $test() {
                if let Some(db) = super::postgres_db(stringify!($test)) {
                    super::$test(&db);
                }
            })*
        }
    };
}

on_both_backends!(
    a_session_and_its_runs_read_back_as_stored,
    a_row_read_after_another_keeps_nothing_of_it,
    values_come_back_in_metric_order_one_per_metric,
    a_boot_keeps_its_console_log_and_kernel_config,
    an_imported_file_and_an_export_read_back_whole,
    a_failed_write_leaves_nothing_behind,
    pushing_twice_copies_each_session_once,
    each_pushed_session_keeps_its_own_config,
    two_pushes_at_once_store_each_session_once,
    a_session_not_ended_is_pushed_only_when_asked,
    four_writers_at_once_lose_nothing,
    machines_hold_their_labels,
    boards_of_one_name_are_told_apart_by_their_ids,
    calibrations_read_back,
    sequential_designs_read_back_newest_first_with_their_looks,
    a_reader_is_never_given_a_new_database,
    the_backend_is_the_one_named,
);

fn session(label: &str, started: u64, host: &str) -> NewSession {
    NewSession {
        label: label.into(),
        kind: "run".into(),
        boot_id: Some(format!("boot-{started}")),
        started_unix_ns: started,
        kbench_version: "test".into(),
        command_line: "kbench run --label x".into(),
        seed: Some(u64::MAX / 3),
        environment: serde_json::from_value(
            json!({"hostname": host, "cpu_models": ["Cortex-A53", "Cortex-A72"]}),
        )
        .unwrap(),
        ..NewSession::default()
    }
}

fn value(metric: &str, v: f64, primary: bool) -> Value {
    Value {
        metric: metric.into(),
        value: v,
        unit: "usecs".into(),
        higher_is_better: !primary,
        primary,
    }
}

fn full_run(index: u32) -> StoredRun {
    StoredRun {
        workload: "sched/pipe".into(),
        params: BTreeMap::from([("loops".into(), json!(1000)), ("mode".into(), json!("pp"))]),
        variant: "pingpong".into(),
        run_index: index,
        warmup: index == 0,
        exit_status: Some(0),
        start_unix_ns: Some(1_796_000_000_123_456_789 + u64::from(index)),
        end_unix_ns: Some(1_796_000_001_123_456_789 + u64::from(index)),
        pinned_cpus: Some("0-1".into()),
        cpus_used: Some("0,1".into()),
        rusage: RawJson::from_value(&json!({"voluntary_csw": 12})),
        tasks: RawJson::from_value(&json!([{"task": "a", "cpus": "0"}])),
        record: RawJson::from_value(&json!({"workload": "sched/pipe", "note": "ünïcödé ✓"})),
        values: vec![
            value("usecs_per_op", 8.25 + f64::from(index), true),
            value("z_ctx", 1e-300, false),
        ],
        error: None,
        ab_side: None,
        facts: None,
    }
}

fn a_session_and_its_runs_read_back_as_stored(db: &TestDb) {
    let mut store = db.open();
    let id = store.begin_session(&session("base", 10, "rk3399")).unwrap();
    let runs: Vec<StoredRun> = (0..4).map(full_run).collect();
    for run in &runs {
        store.insert_run(id, run).unwrap();
    }
    let failed = StoredRun {
        workload: "sched/pipe".into(),
        run_index: 4,
        exit_status: Some(137),
        // What a bulk load's text format must escape: tab, newline, carriage return,
        // backslash, and a backslash-N that is text, not NULL.
        error: Some("killed after 600 s:\tsignal 9\r\nC:\\path \\N end".into()),
        ab_side: Some(kbench_store::AbSide {
            side: "b".into(),
            workload: "sched/pipe".into(),
            params: BTreeMap::new(),
            variant: String::new(),
        }),
        ..StoredRun::default()
    };
    store.insert_run(id, &failed).unwrap();
    store.end_session(id, 20).unwrap();
    drop(store);

    let store = Store::open_existing(&db.path).unwrap();
    let back: Vec<StoredRun> = store
        .runs("base")
        .unwrap()
        .into_iter()
        .map(|r| r.run)
        .collect();
    let mut expected = runs;
    expected.push(failed);
    assert_eq!(back, expected);
    let sessions = store.sessions("base").unwrap();
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert_eq!(
        s.as_new_session().environment,
        session("base", 10, "rk3399").environment
    );
    assert_eq!((s.started_unix_ns, s.ended_unix_ns), (10, Some(20)));
    assert_eq!(s.seed, Some(u64::MAX / 3));
    assert_eq!(s.runs, 3, "measured: not the warm-up, not the failed run");
    assert_eq!(s.uuid.len(), 36, "a UUID from its start: {}", s.uuid);
    assert_eq!(
        s.machine.as_deref(),
        Some("rk3399: Cortex-A53 + Cortex-A72")
    );
    let labels = store.labels().unwrap();
    assert_eq!(labels.len(), 1);
    assert_eq!(
        (labels[0].sessions, labels[0].runs, labels[0].boots),
        (1, 3, 1)
    );
    assert!(store.has_label("base").unwrap());
    assert!(!store.has_label("bas").unwrap());
    assert!(store.has_session("base", 10, Some("boot-10")).unwrap());
    assert!(!store.has_session("base", 10, None).unwrap());
    assert!(store.has_uuid(&s.uuid).unwrap());
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

/// Rows are read one at a time into one row refilled: a long text, then NULL, then a
/// short text in the same columns must each come back as written, and a run's values
/// must not follow it into the next.
fn a_row_read_after_another_keeps_nothing_of_it(db: &TestDb) {
    let mut store = db.open();
    let id = store.begin_session(&session("rows", 1, "h")).unwrap();
    let long = StoredRun {
        error: Some("a long reason ".repeat(40)),
        ..full_run(1)
    };
    let bare = StoredRun {
        workload: "w".into(),
        run_index: 2,
        values: vec![value("usecs_per_op", 1.0, true)],
        ..StoredRun::default()
    };
    let short = StoredRun {
        pinned_cpus: Some("3".into()),
        cpus_used: Some("3".into()),
        error: Some("no".into()),
        exit_status: Some(1),
        ..full_run(3)
    };
    let runs = [long, bare, short];
    for run in &runs {
        store.insert_run(id, run).unwrap();
    }
    store.end_session(id, 2).unwrap();
    let back: Vec<StoredRun> = store
        .runs("rows")
        .unwrap()
        .into_iter()
        .map(|r| r.run)
        .collect();
    assert_eq!(back, runs);
    let analysed = store.runs_for_analysis("rows").unwrap();
    assert_eq!(analysed.len(), 3);
    for (read, written) in analysed.iter().zip(&runs) {
        assert_eq!(read.run.error, written.error);
        assert_eq!(read.run.pinned_cpus, written.pinned_cpus);
        assert_eq!(read.run.values, written.values);
    }
}

fn values_come_back_in_metric_order_one_per_metric(db: &TestDb) {
    let mut store = db.open();
    let id = store.begin_session(&session("v", 1, "h")).unwrap();
    let run = StoredRun {
        workload: "w".into(),
        values: vec![
            value("zeta", 1.0, false),
            value("alpha", 2.0, true),
            value("zeta", 3.0, false),
        ],
        ..StoredRun::default()
    };
    store.insert_run(id, &run).unwrap();
    let back = &store.runs("v").unwrap()[0].run.values;
    let metrics: Vec<(&str, f64)> = back.iter().map(|v| (v.metric.as_str(), v.value)).collect();
    assert_eq!(metrics, [("alpha", 2.0), ("zeta", 3.0)]);
}

fn a_boot_keeps_its_console_log_and_kernel_config(db: &TestDb) {
    let mut store = db.open();
    let s = session("guest", 5, "kbench-guest");
    let config = "CONFIG_HZ=250\nCONFIG_PREEMPT=y\n";
    let id = store
        .insert_boot(&NewBoot {
            session: &s,
            console_log: "[    0.000000] Linux version 6.1\nKBENCH frame\n",
            kernel_config: Some(config),
            runs: &[full_run(1)],
            ended_unix_ns: 9,
        })
        .unwrap();
    let gzip = store.console_log(id).unwrap().expect("a console log");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gzip[..]), &mut text).unwrap();
    assert!(text.contains("KBENCH frame"));
    let back = store.kernel_config(id).unwrap().expect("a config");
    assert!(back.contains("CONFIG_HZ=250"));
    // A second session of the same kernel shares its config row.
    let again = store
        .begin_session(&session("guest", 6, "kbench-guest"))
        .unwrap();
    let hash = store.set_kernel_config(again, config).unwrap();
    let sessions = store.sessions("guest").unwrap();
    assert!(sessions
        .iter()
        .all(|s| s.kernel_config_hash.as_deref() == Some(hash.as_str())));
}

fn an_imported_file_and_an_export_read_back_whole(db: &TestDb) {
    let mut store = db.open();
    let text = include_str!("../../kbench-import/tests/fixtures/import/perf_stat_messaging.txt");
    let imported = kbench_import::parse_file_text("perf.txt", text).unwrap();
    let id = store.import(&session("stat", 3, "h"), &imported).unwrap();
    let summaries = store.summaries("stat").unwrap();
    assert_eq!(summaries.len(), imported.summaries.len());
    assert!(summaries.iter().all(|m| m.session_id == id));
    assert_eq!(summaries.iter().filter(|m| m.primary).count(), 1);

    let export = kbench_store::export::export_label(&store, "stat").unwrap();
    // Imported into another label of another database, it reads back the same.
    let other = sqlite_db();
    let mut copy = other.open();
    let mut sessions: Vec<SessionWithRuns> = export.sessions.clone();
    for s in &mut sessions {
        s.session.label = "copy".into();
    }
    copy.insert_sessions(&sessions, &export.kernel_configs)
        .unwrap();
    let strip = |rows: Vec<SummaryRow>| -> Vec<SummaryRow> {
        rows.into_iter()
            .map(|m| SummaryRow { session_id: 0, ..m })
            .collect()
    };
    assert_eq!(
        strip(copy.summaries("copy").unwrap()),
        strip(store.summaries("stat").unwrap())
    );
    assert_eq!(
        copy.sessions("copy").unwrap()[0].uuid,
        store.sessions("stat").unwrap()[0].uuid,
        "an export carries its sessions' UUIDs"
    );
}

fn a_failed_write_leaves_nothing_behind(db: &TestDb) {
    let mut store = db.open();
    // The second session has the first's UUID: the whole write fails, and the first
    // session, written before it in the same transaction, is not kept either.
    let first = session("atomic", 1, "h");
    let whole = |s: NewSession| SessionWithRuns {
        session: NewSession {
            uuid: Some("00000000-0000-4000-8000-000000000001".into()),
            ..s
        },
        ended_unix_ns: Some(2),
        runs: (0..20).map(full_run).collect(),
        summaries: Vec::new(),
        kernel_config_hash: None,
    };
    let err = store
        .insert_sessions(
            &[whole(first.clone()), whole(session("atomic", 2, "h"))],
            &BTreeMap::new(),
        )
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Sqlite(_) | StoreError::Postgres(_)),
        "{err}"
    );
    assert!(!store.has_label("atomic").unwrap());
    assert!(store.runs("atomic").unwrap().is_empty());
    // A run for a session that does not exist is refused, and nothing is kept.
    assert!(store.insert_run(987_654, &full_run(1)).is_err());
    // The connection is usable after both.
    store.begin_session(&first).unwrap();
    assert!(store.has_label("atomic").unwrap());
}

/// A board's database: three sessions of two labels, one a boot with its log.
fn board_database() -> (TestDb, usize) {
    let board = sqlite_db();
    let mut store = board.open();
    let mut runs = 0;
    for (label, started) in [("v6.12", 1), ("v6.12", 2), ("patched", 3)] {
        let s = session(label, started, "board-7");
        let id = store
            .insert_boot(&NewBoot {
                session: &s,
                console_log: "console",
                kernel_config: Some("CONFIG_HZ=1000\n"),
                runs: &(0..5).map(full_run).collect::<Vec<_>>(),
                ended_unix_ns: started + 1,
            })
            .unwrap();
        assert!(id > 0);
        runs += 5;
    }
    (board, runs)
}

fn pushing_twice_copies_each_session_once(db: &TestDb) {
    let (board, runs) = board_database();
    let from = Store::open_existing(&board.path).unwrap();
    let mut to = db.open();
    let first = push(&from, &mut to, &[], false, |_, _| {}).unwrap();
    assert_eq!(
        (
            first.sessions_copied,
            first.runs_copied,
            first.sessions_present
        ),
        (3, runs as u64, 0)
    );
    let second = push(&from, &mut to, &[], false, |_, _| {}).unwrap();
    assert_eq!((second.sessions_copied, second.sessions_present), (0, 3));
    for label in ["v6.12", "patched"] {
        let here: Vec<StoredRun> = from
            .runs(label)
            .unwrap()
            .into_iter()
            .map(|r| r.run)
            .collect();
        let there: Vec<StoredRun> = to.runs(label).unwrap().into_iter().map(|r| r.run).collect();
        assert_eq!(here, there, "{label}");
        let (a, b) = (from.sessions(label).unwrap(), to.sessions(label).unwrap());
        let ids = |s: &[kbench_store::SessionRow]| -> Vec<String> {
            s.iter().map(|s| s.uuid.clone()).collect()
        };
        assert_eq!(ids(&a), ids(&b));
        assert_eq!(
            to.console_log(b[0].id).unwrap(),
            from.console_log(a[0].id).unwrap()
        );
        assert_eq!(
            to.kernel_config(b[0].id).unwrap(),
            from.kernel_config(a[0].id).unwrap()
        );
    }
    // One label only: nothing new either.
    let third = push(&from, &mut to, &["patched".to_string()], false, |_, _| {}).unwrap();
    assert_eq!((third.sessions_copied, third.sessions_present), (0, 1));
}

/// Configs are stored in hash order, not in the sessions' order: each session must
/// still get its own.
fn each_pushed_session_keeps_its_own_config(db: &TestDb) {
    let board = sqlite_db();
    let mut local = board.open();
    let configs = ["CONFIG_HZ=1000\n", "CONFIG_HZ=250\n", "CONFIG_PREEMPT=y\n"];
    for started in 0..9 {
        let s = session("configs", started, "board-7");
        local
            .insert_boot(&NewBoot {
                session: &s,
                console_log: "console",
                kernel_config: Some(configs[(started as usize * 2) % 3]),
                runs: &[full_run(1)],
                ended_unix_ns: started + 1,
            })
            .unwrap();
    }
    let mut to = db.open();
    let done = push(&local, &mut to, &[], false, |_, _| {}).unwrap();
    assert_eq!(done.sessions_copied, 9);
    let (here, there) = (
        local.sessions("configs").unwrap(),
        to.sessions("configs").unwrap(),
    );
    for (a, b) in here.iter().zip(&there) {
        assert_eq!(a.uuid, b.uuid);
        assert_eq!(
            to.kernel_config(b.id).unwrap(),
            local.kernel_config(a.id).unwrap(),
            "{}",
            a.uuid
        );
    }
}

fn two_pushes_at_once_store_each_session_once(db: &TestDb) {
    let (board, runs) = board_database();
    db.open();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let pushes: Vec<_> = (0..2)
        .map(|_| {
            let (from, to, barrier) = (board.path.clone(), db.path.clone(), barrier.clone());
            std::thread::spawn(move || {
                let from = Store::open_existing(&from).unwrap();
                let mut to = Store::open(&to).unwrap();
                barrier.wait();
                push(&from, &mut to, &[], false, |_, _| {}).unwrap()
            })
        })
        .collect();
    let counts: Vec<_> = pushes.into_iter().map(|p| p.join().unwrap()).collect();
    assert_eq!(
        counts.iter().map(|c| c.sessions_copied).sum::<u64>(),
        3,
        "{counts:?}"
    );
    assert!(counts
        .iter()
        .all(|c| c.sessions_copied + c.sessions_present == 3));
    let to = Store::open_existing(&db.path).unwrap();
    let stored: usize = ["v6.12", "patched"]
        .iter()
        .map(|l| to.runs(l).unwrap().len())
        .sum();
    assert_eq!(stored, runs);
}

fn a_session_not_ended_is_pushed_only_when_asked(db: &TestDb) {
    let board = sqlite_db();
    let mut local = board.open();
    let ended = local.begin_session(&session("l", 1, "b")).unwrap();
    local.insert_run(ended, &full_run(1)).unwrap();
    local.end_session(ended, 2).unwrap();
    let running = local.begin_session(&session("l", 3, "b")).unwrap();
    local.insert_run(running, &full_run(1)).unwrap();
    let mut to = db.open();
    let first = push(&local, &mut to, &[], false, |_, _| {}).unwrap();
    assert_eq!((first.sessions_copied, first.sessions_unended), (1, 1));
    // Its runs go on; once it has ended, the next push takes it whole.
    local.insert_run(running, &full_run(2)).unwrap();
    local.end_session(running, 4).unwrap();
    let second = push(&local, &mut to, &[], false, |_, _| {}).unwrap();
    assert_eq!((second.sessions_copied, second.sessions_present), (1, 1));
    assert_eq!(to.runs("l").unwrap().len(), 3);
    // A killed session (never ended) goes when asked.
    let killed = local.begin_session(&session("l", 5, "b")).unwrap();
    local.insert_run(killed, &full_run(1)).unwrap();
    let third = push(&local, &mut to, &[], true, |_, _| {}).unwrap();
    assert_eq!((third.sessions_copied, third.sessions_unended), (1, 0));
}

fn four_writers_at_once_lose_nothing(db: &TestDb) {
    // Each writer opens the database itself, at the same moment: the first opens of a
    // new database race to create the schema, which is made once.
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let path = db.path.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let mut store = Store::open(&path).unwrap();
                let id = store
                    .begin_session(&session("shared", 100 + w, &format!("host-{w}")))
                    .unwrap();
                for i in 1..=50 {
                    store.insert_run(id, &full_run(i)).unwrap();
                }
                store.end_session(id, 1000 + w).unwrap();
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let store = Store::open_existing(&db.path).unwrap();
    assert_eq!(store.runs("shared").unwrap().len(), 200);
    assert_eq!(store.labels().unwrap()[0].sessions, 4);
    if store.backend() == Backend::Postgres {
        let versions = pg::sql_value(
            &db.path.to_string_lossy(),
            "SELECT count(*) FROM kbench_schema",
        );
        assert_eq!(versions, "1", "the schema was made once");
    }
}

fn machines_hold_their_labels(db: &TestDb) {
    let mut store = db.open();
    for (label, started, host) in [("a", 1, "x"), ("a", 2, "y"), ("b", 3, "x")] {
        let id = store.begin_session(&session(label, started, host)).unwrap();
        store.insert_run(id, &full_run(1)).unwrap();
    }
    store
        .begin_session(&NewSession {
            environment: None,
            ..session("imported", 4, "")
        })
        .unwrap();
    let rows: Vec<(Option<String>, String, u64, u64)> = store
        .machine_labels()
        .unwrap()
        .into_iter()
        .map(|m| (m.machine, m.label, m.sessions, m.runs))
        .collect();
    let m = |h: &str| Some(format!("{h}: Cortex-A53 + Cortex-A72"));
    assert_eq!(
        rows,
        [
            (m("x"), "a".into(), 1, 1),
            (m("x"), "b".into(), 1, 1),
            (m("y"), "a".into(), 1, 1),
            (None, "imported".into(), 1, 0),
        ]
    );
}

/// Two boards of one type report one host name and CPU models; their ids tell them
/// apart once both are seen, and the sessions stored before ids keep the bare name.
fn boards_of_one_name_are_told_apart_by_their_ids(db: &TestDb) {
    let mut store = db.open();
    let on_board = |label: &str, started: u64, id: Option<&str>| {
        let mut s = session(label, started, "kbench-guest");
        let snapshot = s.environment.as_mut().and_then(|e| e.snapshot.as_mut());
        snapshot.expect("a snapshot").machine_id = id.map(str::to_string);
        s
    };
    let name = "kbench-guest: Cortex-A53 + Cortex-A72";
    let machines = |store: &Store| -> Vec<(Option<String>, String)> {
        let rows = store.machine_labels().unwrap();
        rows.into_iter().map(|m| (m.machine, m.label)).collect()
    };
    for (label, started, id) in [("before-ids", 1, None), ("a", 2, Some("dt:aaaa"))] {
        let session = store.begin_session(&on_board(label, started, id)).unwrap();
        store.insert_run(session, &full_run(1)).unwrap();
    }
    // One id under the name: one machine, under the name it always had.
    assert_eq!(
        machines(&store),
        [
            (Some(name.into()), "before-ids".into()),
            (Some(name.into()), "a".into())
        ]
    );
    assert_eq!(
        store.sessions("a").unwrap()[0].machine.as_deref(),
        Some(name)
    );
    let b = store
        .begin_session(&on_board("b", 3, Some("dt:bbbb")))
        .unwrap();
    store.insert_run(b, &full_run(1)).unwrap();
    let with = |id: &str| Some(format!("{name} [{id}]"));
    assert_eq!(
        machines(&store),
        [
            (Some(name.into()), "before-ids".into()),
            (with("dt:aaaa"), "a".into()),
            (with("dt:bbbb"), "b".into()),
        ]
    );
    assert_eq!(store.sessions("b").unwrap()[0].machine, with("dt:bbbb"));
    assert_eq!(
        store.sessions("before-ids").unwrap()[0].machine.as_deref(),
        Some(name)
    );
    // One machine's reads take the sessions shown under it, and only those.
    assert_eq!(
        store.machines().unwrap(),
        [
            name.to_string(),
            with("dt:aaaa").unwrap(),
            with("dt:bbbb").unwrap()
        ]
    );
    for (machine, label) in [
        (name.to_string(), "before-ids"),
        (with("dt:aaaa").unwrap(), "a"),
        (with("dt:bbbb").unwrap(), "b"),
    ] {
        let scope = store.machine_scope(&machine).unwrap();
        for other in ["before-ids", "a", "b"] {
            let sessions = store.sessions_in(other, &scope).unwrap();
            let runs = store.runs_for_analysis_in(other, &scope).unwrap();
            let expected = usize::from(other == label);
            assert_eq!(
                (sessions.len(), runs.len()),
                (expected, expected),
                "{machine} {other}"
            );
            assert!(sessions
                .iter()
                .all(|s| s.machine.as_deref() == Some(&machine)));
        }
    }
    let nowhere = store.machine_scope("elsewhere").unwrap();
    assert!(store.sessions_in("a", &nowhere).unwrap().is_empty());
}

fn calibrations_read_back(db: &TestDb) {
    let mut store = db.open();
    let calibration = NewCalibration {
        label: "kbench-calibration".into(),
        created_unix_ns: 7,
        kbench_version: "test".into(),
        fingerprint: json!({"host": "x", "cpu_models": ["A53"]}),
        sessions: 6,
        boots: 2,
        components: vec![CalibrationComponent {
            workload: "sched/pipe".into(),
            params: "loops=1000".into(),
            variant: "pingpong".into(),
            metric: "usecs_per_op".into(),
            pooled_quantile: Some(0.99),
            components: json!({"within": 0.5}),
        }],
    };
    let id = store.insert_calibration(&calibration).unwrap();
    let rows = store.calibrations().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            rows[0].id,
            rows[0].sessions,
            rows[0].boots,
            &rows[0].fingerprint
        ),
        (id, 6, 2, &calibration.fingerprint)
    );
    assert_eq!(
        store.calibration_components(id).unwrap(),
        calibration.components
    );
}

fn sequential_designs_read_back_newest_first_with_their_looks(db: &TestDb) {
    use kbench_record::sequential::{
        Boundary, DesignRecord, DesignedBy, Level, LookOutcome, LookRow, SequentialLook,
        SequentialOptions,
    };
    let mut store = db.open();
    assert_eq!(store.sequential_design("a", "b").unwrap(), None);
    let design = |created_unix_ns, by| DesignRecord {
        base_label: "a".into(),
        new_label: "b".into(),
        by,
        created_unix_ns,
        kbench_version: "test".into(),
        command_line: "kbench ab --until-decided".into(),
        options: SequentialOptions {
            alpha: 0.05,
            delta_pct: 1.5,
            max_units_per_side: 40,
            use_calibration: true,
            boundary: if by == DesignedBy::Compare {
                Boundary::AlwaysValid
            } else {
                Boundary::DeclaredMaximum
            },
        },
        max_time_s: Some(3600.0),
    };
    let row = |metric: &str, n, outcome, interval_pct| LookRow {
        workload: "sched/pipe".into(),
        params: "loops=1000".into(),
        variant: "pingpong".into(),
        metric: metric.into(),
        n_a: n,
        n_b: n,
        shift_pct: Some(3.25),
        interval_pct,
        outcome,
        // Both a level and none (a look recorded before kbench kept it) come back.
        unit_level: (metric == "usecs_per_op").then_some(Level::Boot),
    };
    store
        .insert_sequential_design(&design(1, DesignedBy::Compare))
        .unwrap();
    let newer = design(2, DesignedBy::VmAb);
    let id = store.insert_sequential_design(&newer).unwrap();
    let looks = vec![
        SequentialLook {
            index: 1,
            at_unix_ns: 10,
            rows: vec![
                row("total_sec", 2, LookOutcome::Continue, None),
                row("usecs_per_op", 2, LookOutcome::Continue, None),
            ],
        },
        SequentialLook {
            index: 2,
            at_unix_ns: 20,
            rows: vec![
                row("total_sec", 3, LookOutcome::Equivalent, Some((-0.5, 0.75))),
                row("usecs_per_op", 3, LookOutcome::Regression, Some((2.0, 4.5))),
            ],
        },
    ];
    for look in &looks {
        store.insert_sequential_look(id, look).unwrap();
    }
    let read = store
        .sequential_design("a", "b")
        .unwrap()
        .expect("a design");
    assert_eq!((read.id, &read.design, &read.looks), (id, &newer, &looks));
    assert!(read.is_closed());
    // The labels' order matters: B against A is another comparison.
    assert_eq!(store.sequential_design("b", "a").unwrap(), None);
}

fn a_reader_is_never_given_a_new_database(db: &TestDb) {
    let err = match Store::open_existing(&db.path) {
        Err(e) => e,
        Ok(_) => panic!("a new database opened for reading"),
    };
    assert!(matches!(err, StoreError::Unusable(_)), "{err}");
    assert!(err.to_string().contains("no kbench database"), "{err}");
    // The writer makes it; the reader then opens it.
    db.open();
    Store::open_existing(&db.path).unwrap();
}

fn the_backend_is_the_one_named(db: &TestDb) {
    let store = db.open();
    let text = db.path.to_string_lossy();
    let expected = if text.starts_with("postgres") {
        Backend::Postgres
    } else {
        Backend::Sqlite
    };
    assert_eq!(store.backend(), expected);
    assert_eq!(store.path(), db.path.as_path());
}

/// A push stores its batches on several connections at once; a server that lets
/// fewer connect (a role's connection limit) gets the push on those it lets in.
#[test]
fn a_push_carries_on_with_the_writers_the_server_lets_connect() {
    let Some(url) = pg::fresh_database("push_connection_limit") else {
        return;
    };
    let board = sqlite_db();
    let mut local = board.open();
    // 2,400 runs: three batches, so more than one writer has work.
    for started in 0..24 {
        let id = local.begin_session(&session("many", started, "h")).unwrap();
        for index in 0..100 {
            local.insert_run(id, &full_run(index)).unwrap();
        }
        local.end_session(id, started + 1).unwrap();
    }
    drop(local);
    Store::open(&PathBuf::from(&url)).unwrap();
    let role = format!("limited_{}", std::process::id());
    pg::sql(
        &url,
        &format!(
            "DROP ROLE IF EXISTS {role};
             CREATE ROLE {role} LOGIN CONNECTION LIMIT 2;
             GRANT ALL ON ALL TABLES IN SCHEMA public TO {role};
             GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {role};"
        ),
    );
    let limited = url.replacen("kbench@", &format!("{role}@"), 1);
    let from = Store::open_existing(&board.path).unwrap();
    // One connection here, one writer: a second writer is refused.
    let mut to = Store::open_existing(&PathBuf::from(&limited)).unwrap();
    let done = push(&from, &mut to, &[], false, |_, _| {}).unwrap();
    assert_eq!((done.sessions_copied, done.runs_copied), (24, 2_400));
    drop(to);
    let there = Store::open_existing(&PathBuf::from(&url)).unwrap();
    assert_eq!(there.runs("many").unwrap().len(), 2_400);
    pg::sql(&url, &format!("DROP OWNED BY {role}; DROP ROLE {role};"));
}

/// The two backends' schemas have the same tables with the same columns: one SQL text
/// serves both, and a migration added to one list but not the other shows here.
#[test]
fn the_postgres_schema_has_the_sqlite_tables_and_columns() {
    let Some(url) = pg::fresh_database("schema_parity") else {
        return;
    };
    let sqlite = sqlite_db();
    sqlite.open();
    let conn = rusqlite::Connection::open(&sqlite.path).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
             WHERE m.type = 'table'",
        )
        .unwrap();
    let sqlite_columns: std::collections::BTreeSet<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    Store::open(std::path::Path::new(&url)).unwrap();
    let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    let postgres_columns: std::collections::BTreeSet<(String, String)> = client
        .query(
            "SELECT table_name::text, column_name::text FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name <> 'kbench_schema'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(postgres_columns, sqlite_columns);
    assert_eq!(
        kbench_store::schema::POSTGRES_BASELINE_VERSION
            + kbench_store::schema::POSTGRES_MIGRATIONS.len() as i64,
        kbench_store::schema::current_version()
    );
}

/// On PostgreSQL a value's run is not a foreign key (schema migration 11: checking it
/// was half of a push's work on the server), so the integrity check is what finds a
/// value left without its run. A run's session still is one.
#[test]
fn on_postgres_the_integrity_check_finds_a_value_without_its_run() {
    let Some(url) = pg::fresh_database("value_without_run") else {
        return;
    };
    let mut store = Store::open(std::path::Path::new(&url)).unwrap();
    let id = store.begin_session(&session("orphans", 1, "h")).unwrap();
    store.insert_run(id, &full_run(0)).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    assert!(store.insert_run(987_654, &full_run(1)).is_err());
    pg::sql(
        &url,
        "INSERT INTO run_values (run_id, metric, value, unit) VALUES (987654, 'x', 1, 'ns')",
    );
    assert_eq!(
        store.integrity_check().unwrap(),
        "1 rows without their session or run"
    );
}
