//! The shared store end to end: kbench run, list, compare, report and push against
//! the test script's private PostgreSQL server (and servers of a test's own, stopped
//! mid-push), with real workloads, real processes and real signals.
mod common;
#[path = "../../kbench-store/tests/pg/mod.rs"]
mod pg;

use common::{kbench_command, kbench_db_arg, one_line_error, stdout_ok, text, wait_within};
use kbench_store::{NewSession, SessionWithRuns, Store, StoredRun, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn ok(db: &str, args: &[&str]) -> String {
    stdout_ok(kbench_db_arg(db, args), args)
}

/// The one line a refused command says, with exit status 2.
fn refused(db: &str, args: &[&str]) -> String {
    one_line_error(&kbench_db_arg(db, args), 2, args)
}

/// A short real workload: five runs of pipe, no warm-up.
fn run_pipe(db: &str, label: &str) {
    ok(
        db,
        &[
            "run",
            "--label",
            label,
            "--runs",
            "5",
            "--warmup",
            "0",
            "pipe:-l 1000",
        ],
    );
}

fn count(url: &str, query: &str) -> i64 {
    pg::sql_value(url, query).parse().unwrap()
}

#[test]
fn run_list_show_compare_export_and_report_work_on_postgres() {
    let Some(db) = pg::fresh_database("cli_round_trip") else {
        return;
    };
    for label in ["base", "base", "new"] {
        run_pipe(&db, label);
    }
    // A password in the URL (trust authentication takes any) is never stored: every
    // reader of the database sees a session's command line.
    let with_password = db.replacen("kbench@", "kbench:hunter2@", 1);
    run_pipe(&with_password, "new");
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM sessions WHERE command_line LIKE '%hunter2%'"
        ),
        0
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM sessions WHERE command_line LIKE '%kbench:***@%'"
        ),
        1
    );
    let list = ok(&db, &["list"]);
    assert!(list.contains("base") && list.contains("new"), "{list}");
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 20);
    let compare = ok(&db, &["compare", "base", "new", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&compare).unwrap();
    assert_eq!(report["base"]["sessions"], 2);
    assert_eq!(report["new"]["runs"], 10);
    let show = ok(&db, &["show", "base"]);
    assert!(show.contains("pipe"), "{show}");
    let export: serde_json::Value =
        serde_json::from_str(&ok(&db, &["export", "base", "--format", "json"])).unwrap();
    assert_eq!(export["sessions"].as_array().unwrap().len(), 2);
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    ok(
        &db,
        &["report", "base", "new", "-o", page.to_str().unwrap()],
    );
    assert!(std::fs::read_to_string(&page).unwrap().contains("<svg"));
    // The same database through the server's socket directory.
    if let Some(socket) = std::env::var_os("KBENCH_TEST_PG_SOCKET") {
        let name = db.rsplit('/').next().unwrap();
        let out = kbench_command()
            .args(["list", "--db"])
            .arg(&socket)
            .env("PGUSER", "kbench")
            .env("PGDATABASE", name)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), list);
    }
}

#[test]
fn four_writers_at_once_lose_nothing() {
    let Some(db) = pg::fresh_database("cli_four_writers") else {
        return;
    };
    // A new database: the four race to make its schema, which is made once.
    let children: Vec<Child> = (0..4)
        .map(|w| {
            kbench_command()
                .args([
                    "run",
                    "--label",
                    &format!("w{w}"),
                    "--runs",
                    "20",
                    "--warmup",
                    "0",
                ])
                .args(["pipe:-l 500", "--db", &db])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    assert_eq!(count(&db, "SELECT count(*) FROM kbench_schema"), 1);
    for w in 0..4 {
        assert_eq!(
            count(
                &db,
                &format!(
                    "SELECT count(*) FROM runs r JOIN sessions s ON s.id = r.session_id
                     WHERE s.label = 'w{w}'"
                )
            ),
            20
        );
    }
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs r WHERE NOT EXISTS
             (SELECT 1 FROM run_values v WHERE v.run_id = r.id)"
        ),
        0,
        "every run with its values"
    );
}

fn value(metric: &str, v: f64, primary: bool) -> Value {
    Value {
        metric: metric.into(),
        value: v,
        unit: "usecs".into(),
        higher_is_better: false,
        primary,
    }
}

/// A board's SQLite database: `sessions` sessions of `runs` runs each, label `board`.
fn board_database(dir: &Path, sessions: u64, runs: u32) -> PathBuf {
    let path = dir.join("board.db");
    let whole: Vec<SessionWithRuns> = (0..sessions)
        .map(|s| SessionWithRuns {
            session: NewSession {
                label: "board".into(),
                kind: "run".into(),
                started_unix_ns: 1_000 + s,
                kbench_version: "test".into(),
                command_line: "kbench run --label board".into(),
                environment: serde_json::from_value(
                    serde_json::json!({"hostname": "board-1", "cpu_models": ["A53"]}),
                )
                .unwrap(),
                uuid: Some(kbench_store::store::new_session_uuid()),
                ..NewSession::default()
            },
            ended_unix_ns: Some(2_000 + s),
            runs: (0..runs)
                .map(|i| StoredRun {
                    workload: "sched/pipe".into(),
                    variant: "pingpong".into(),
                    run_index: i,
                    values: vec![
                        value("usecs_per_op", 8.0 + f64::from(i % 7), true),
                        value("z_csw", 2.0, false),
                    ],
                    ..StoredRun::default()
                })
                .collect(),
            summaries: Vec::new(),
            kernel_config_hash: None,
        })
        .collect();
    Store::open(&path)
        .unwrap()
        .insert_sessions(&whole, &Default::default())
        .unwrap();
    path
}

/// Makes the schema, so what a test then watches is its push alone.
fn make_schema(db: &str) {
    Store::open(Path::new(db)).unwrap();
}

fn push_child(local: &Path, to: &str) -> Child {
    kbench_command()
        .args(["push", "--to", to, "--db"])
        .arg(local)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `ready` holds, polling; fails after `limit`.
fn wait_for(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_push_killed_mid_transaction_leaves_nothing_half_written() {
    let Some(db) = pg::fresh_database("cli_killed_push") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // One session of many runs: its push is one long transaction.
    let local = board_database(dir.path(), 1, 6000);
    let local_db = local.to_str().unwrap();
    make_schema(&db);
    let mut child = push_child(&local, &db);
    let in_transaction = "SELECT count(*) FROM pg_stat_activity
         WHERE application_name = 'kbench' AND xact_start IS NOT NULL
           AND backend_type = 'client backend'";
    wait_for(Duration::from_secs(60), "the push's transaction", || {
        count(&db, in_transaction) > 0
    });
    // SAFETY: kill(2) on our own child's pid has no memory effects.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let status = child.wait().unwrap();
    assert!(!status.success(), "the push ended before it was killed");
    wait_for(
        Duration::from_secs(30),
        "the server to end the dead client's transaction",
        || count(&db, in_transaction) == 0,
    );
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), 0);
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 0);
    assert_eq!(count(&db, "SELECT count(*) FROM run_values"), 0);
    let out = ok(local_db, &["push", "--to", &db]);
    assert!(out.contains("pushed 1 sessions (6000 runs)"), "{out}");
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 6000);
    assert_eq!(count(&db, "SELECT count(*) FROM run_values"), 12000);
}

#[test]
fn the_server_stopped_mid_push_is_one_error_and_the_push_then_completes() {
    const SESSIONS: i64 = 5_000;
    let Some(server) = pg::PrivateServer::start() else {
        return;
    };
    let db = pg::fresh_database_on(&server.url, "stopped");
    let dir = tempfile::tempdir().unwrap();
    // Fifty batches of 100 sessions, 1,000 runs (kbench_store::push), stored by
    // writers at once: the server is stopped after the first and long before the
    // last.
    let local = board_database(dir.path(), SESSIONS as u64, 10);
    make_schema(&db);
    let child = push_child(&local, &db);
    wait_for(Duration::from_secs(60), "some sessions pushed", || {
        count(&db, "SELECT count(*) FROM sessions") >= 10
    });
    server.stop();
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("push to postgres://"), "{stderr}");
    assert!(stderr.contains("run again copies the rest"), "{stderr}");
    server.restart();
    let pushed_before = count(&db, "SELECT count(*) FROM sessions");
    assert!(
        pushed_before < SESSIONS,
        "the push was stopped before its end"
    );
    assert_eq!(pushed_before % 100, 0, "whole batches: {pushed_before}");
    let out = ok(local.to_str().unwrap(), &["push", "--to", &db]);
    assert!(
        out.contains(&format!(
            "pushed {} sessions ({} runs)",
            SESSIONS - pushed_before,
            (SESSIONS - pushed_before) * 10
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("{pushed_before} were there already")),
        "{out}"
    );
    assert_eq!(count(&db, "SELECT count(*) FROM sessions"), SESSIONS);
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), SESSIONS * 10);
    let again = ok(local.to_str().unwrap(), &["push", "--to", &db]);
    assert!(again.contains("pushed 0 sessions (0 runs)"), "{again}");
}

#[test]
fn a_server_that_accepts_and_says_nothing_is_given_up_on() {
    // Takes connections and never answers, as a server whose disk or CPU is stuck.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().collect();
        drop(held);
    });
    let url = format!("postgres://kbench@127.0.0.1:{port}/x?connect_timeout=1");
    let mut child = kbench_command()
        .args(["list", "--db", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A hang is a failure, not a stuck test.
    wait_within(&mut child, Duration::from_secs(60))
        .expect("kbench still waits for the silent server after 60 s");
    let out = child.wait_with_output().unwrap();
    let err = one_line_error(&out, 2, &["list"]);
    assert!(
        err.contains("did not complete the connection within 3 s"),
        "{err}"
    );
}

#[test]
fn a_read_only_role_compares_and_cannot_write() {
    let Some(db) = pg::fresh_database("cli_read_only") else {
        return;
    };
    for label in ["a", "a", "b", "b"] {
        run_pipe(&db, label);
    }
    let role = format!("reader_{}", std::process::id());
    pg::sql(&db, &format!("CREATE ROLE {role} LOGIN"));
    let name = db.rsplit('/').next().unwrap();
    pg::sql(&db, &format!("GRANT CONNECT ON DATABASE {name} TO {role}"));
    pg::sql(&db, &format!("GRANT USAGE ON SCHEMA public TO {role}"));
    pg::sql(
        &db,
        &format!("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"),
    );
    let reader = db.replacen("kbench@", &format!("{role}@"), 1);
    let compare = ok(&reader, &["compare", "a", "b"]);
    assert!(compare.contains("a -> b"), "{compare}");
    ok(&reader, &["list"]);
    ok(&reader, &["export", "a", "--format", "csv"]);
    let err = refused(
        &reader,
        &["run", "--label", "c", "--runs", "2", "pipe:-l 100"],
    );
    assert!(err.contains("refused this role"), "{err}");
    assert!(err.contains("permission denied"), "{err}");
    assert_eq!(
        count(&db, "SELECT count(*) FROM sessions WHERE label = 'c'"),
        0
    );
}

#[test]
fn tls_is_used_where_the_url_asks_for_it_and_verified() {
    let (Some(db), Some(ca)) = (pg::fresh_database("cli_tls"), pg::test_ca()) else {
        return;
    };
    let ca = ca.to_str().unwrap();
    let tls = format!("{db}?sslmode=require&sslrootcert={ca}");
    run_pipe(&tls, "over-tls");
    assert!(ok(&tls, &["list"]).contains("over-tls"));
    // The server's certificate is checked: against the Mozilla roots it is unknown.
    let err = refused(&format!("{db}?sslmode=require"), &["list"]);
    assert!(err.contains("cannot connect"), "{err}");
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    // A CA file that is no CA file.
    let err = refused(
        &format!("{db}?sslmode=require&sslrootcert=/etc/hostname"),
        &["list"],
    );
    assert!(err.contains("sslrootcert"), "{err}");
}

/// Moves `label`'s last session to machine `host` (as if a second board ran it).
fn move_last_session(local: &Path, label: &str, host: &str) {
    let conn = rusqlite::Connection::open(local).unwrap();
    let (id, environment): (i64, String) = conn
        .query_row(
            "SELECT id, environment FROM sessions WHERE label = ?1 ORDER BY id DESC LIMIT 1",
            [label],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let mut environment: kbench_record::SessionEnvironment =
        serde_json::from_str(&environment).unwrap();
    environment.snapshot.as_mut().unwrap().hostname = Some(host.into());
    conn.execute(
        "UPDATE sessions SET environment = ?1, machine = ?2 WHERE id = ?3",
        rusqlite::params![
            serde_json::to_string(&environment).unwrap(),
            kbench_store::machine_of(Some(&environment)),
            id
        ],
    )
    .unwrap();
}

#[test]
fn runs_of_different_machines_are_never_pooled_unless_asked() {
    let Some(db) = pg::fresh_database("cli_machines") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("host.db");
    let local_db = local.to_str().unwrap();
    for label in ["m", "m", "m", "n", "n", "n"] {
        run_pipe(local_db, label);
    }
    move_last_session(&local, "m", "board-2");
    move_last_session(&local, "n", "board-2");
    let pushed = ok(local_db, &["push", "--to", &db]);
    assert!(pushed.contains("pushed 6 sessions (30 runs)"), "{pushed}");
    let machines = ok(&db, &["list", "--machines"]);
    let here = kbench_store::Store::open_existing(&local)
        .unwrap()
        .sessions("m")
        .unwrap()[0]
        .machine
        .clone()
        .unwrap();
    assert!(machines.contains(&here), "{machines}");
    assert!(
        machines.lines().any(|l| l.starts_with("board-2")),
        "{machines}"
    );
    assert_eq!(
        machines.lines().filter(|l| l.starts_with("  m ")).count(),
        2
    );

    // Both labels on both machines: compare says so and pools nothing.
    let err = refused(&db, &["compare", "m", "n"]);
    assert!(
        err.contains("more than one machine") && err.contains("board-2"),
        "{err}"
    );
    assert!(err.contains("--across-machines"), "{err}");
    let one = ok(
        &db,
        &["compare", "m", "n", "--machine", &here, "--format", "json"],
    );
    let one: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(one["base"]["sessions"], 2);
    assert_eq!(one["machines"]["machine"], here.as_str());
    let text_one = ok(&db, &["compare", "m", "n", "--machine", &here]);
    assert!(text_one.contains("only (m's runs on board-2"), "{text_one}");
    let across = ok(
        &db,
        &["compare", "m", "n", "--across-machines", "--format", "json"],
    );
    let across: serde_json::Value = serde_json::from_str(&across).unwrap();
    assert_eq!(across["base"]["sessions"], 3);
    assert_eq!(across["base"]["boots"], 2, "machines are the units");
    assert_eq!(across["machines"]["kind"], "across");
    let err = refused(&db, &["compare", "m", "n", "--machine", "nowhere"]);
    assert!(err.contains("no runs on machine 'nowhere'"), "{err}");

    // One machine holds both labels: that machine's runs alone, and said.
    run_pipe(local_db, "p");
    move_last_session(&local, "p", "board-3");
    run_pipe(local_db, "p");
    let auto = ok(local_db, &["compare", "m", "p"]);
    assert!(auto.contains(&format!("machine: {here} only")), "{auto}");
    assert!(
        auto.contains("board-2") && auto.contains("board-3"),
        "{auto}"
    );

    // The same comparison from the SQLite file and from PostgreSQL: the same rows.
    let rows = |db: &str| {
        let out = ok(
            db,
            &["compare", "m", "n", "--machine", &here, "--format", "json"],
        );
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        report["rows"].clone()
    };
    assert_eq!(rows(local_db), rows(&db));
}
