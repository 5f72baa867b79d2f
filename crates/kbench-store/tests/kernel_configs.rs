//! Kernel configs kept with sessions: once per content, read back by session and by
//! hash, carried through an export and its import, and a version 4 database migrates
//! with its sessions' configs unknown.
use kbench_import::export::parse_export;
use kbench_store::export::export_label;
use kbench_store::schema::MIGRATIONS;
use kbench_store::{config_hash, NewSession, Store, StoredRun, Value};
use rusqlite::Connection;

const CONFIG_A: &str = "#\n# Linux/x86 6.1.0 Kernel Configuration\n#\nCONFIG_HZ=250\nCONFIG_EXT4_FS=y\n# CONFIG_KASAN is not set\n";
const CONFIG_B: &str = "CONFIG_HZ=1000\nCONFIG_EXT4_FS=m\n";

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

fn one_run() -> StoredRun {
    StoredRun {
        workload: "w".into(),
        values: vec![Value {
            metric: "m".into(),
            value: 1.0,
            unit: "u".into(),
            higher_is_better: false,
            primary: true,
        }],
        ..StoredRun::default()
    }
}

fn rows_of(store: &Store, table: &str) -> i64 {
    let conn = Connection::open(store.path()).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

#[test]
fn sessions_of_one_config_share_one_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    let first = store.begin_session(&session("base", 1)).unwrap();
    let second = store.begin_session(&session("base", 2)).unwrap();
    let other = store.begin_session(&session("new", 3)).unwrap();
    let none = store.begin_session(&session("new", 4)).unwrap();
    let hash = store.set_kernel_config(first, CONFIG_A).unwrap();
    // The same text with CRLF line ends and trailing blanks is the same config.
    let crlf = CONFIG_A.replace('\n', "  \r\n");
    assert_eq!(store.set_kernel_config(second, &crlf).unwrap(), hash);
    let hash_b = store.set_kernel_config(other, CONFIG_B).unwrap();
    assert_ne!(hash, hash_b);
    assert_eq!(hash, config_hash(CONFIG_A));
    assert_eq!(hash.len(), 64);
    assert_eq!(rows_of(&store, "kernel_configs"), 2);

    assert_eq!(
        store.kernel_config(first).unwrap().as_deref(),
        Some(CONFIG_A)
    );
    assert_eq!(
        store.kernel_config(second).unwrap().as_deref(),
        Some(CONFIG_A)
    );
    assert_eq!(
        store.kernel_config(other).unwrap().as_deref(),
        Some(CONFIG_B)
    );
    assert_eq!(store.kernel_config(none).unwrap(), None);
    assert_eq!(store.kernel_config(9999).unwrap(), None);
    assert_eq!(store.kernel_config_by_hash("0000").unwrap(), None);
    let hashes: Vec<Option<String>> = store
        .sessions("new")
        .unwrap()
        .into_iter()
        .map(|s| s.kernel_config_hash)
        .collect();
    assert_eq!(hashes, [Some(hash_b), None]);
    // A session that is not there gets nothing, and leaves no config behind.
    assert!(store.set_kernel_config(9999, "CONFIG_C=y\n").is_err());
    assert_eq!(rows_of(&store, "kernel_configs"), 2);
}

#[test]
fn a_compressed_config_is_much_smaller_than_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    let text: String = (0..5000)
        .map(|i| format!("CONFIG_OPTION_NUMBER_{i}=y\n"))
        .collect();
    let id = store.begin_session(&session("base", 1)).unwrap();
    store.set_kernel_config(id, &text).unwrap();
    let conn = Connection::open(store.path()).unwrap();
    let stored: i64 = conn
        .query_row("SELECT length(config) FROM kernel_configs", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(stored * 4 < text.len() as i64, "{stored} of {}", text.len());
    assert_eq!(
        store.kernel_config(id).unwrap().as_deref(),
        Some(text.as_str())
    );
}

#[test]
fn an_export_carries_each_config_once_and_its_import_restores_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    let ids: Vec<i64> = (1..=3)
        .map(|t| store.begin_session(&session("base", t)).unwrap())
        .collect();
    for id in &ids {
        store.insert_run(*id, &one_run()).unwrap();
    }
    store.set_kernel_config(ids[0], CONFIG_A).unwrap();
    store.set_kernel_config(ids[1], CONFIG_A).unwrap();
    let export = export_label(&store, "base").unwrap();
    assert_eq!(export.kernel_configs.len(), 1);
    let text = serde_json::to_string(&export).unwrap();
    assert_eq!(text.matches("CONFIG_EXT4_FS").count(), 1, "{text}");

    let parsed = parse_export(&text).unwrap().unwrap();
    assert_eq!(parsed, export);
    let mut target = Store::open(&dir.path().join("other.db")).unwrap();
    let new_ids = target
        .insert_sessions(&parsed.sessions, &parsed.kernel_configs)
        .unwrap();
    let configs: Vec<Option<String>> = new_ids
        .iter()
        .map(|id| target.kernel_config(*id).unwrap())
        .collect();
    assert_eq!(
        configs,
        [Some(CONFIG_A.to_string()), Some(CONFIG_A.to_string()), None]
    );
    assert_eq!(rows_of(&target, "kernel_configs"), 1);
}

#[test]
fn an_export_whose_config_does_not_match_its_hash_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    let id = store.begin_session(&session("base", 1)).unwrap();
    store.insert_run(id, &one_run()).unwrap();
    store.set_kernel_config(id, CONFIG_A).unwrap();
    let text = serde_json::to_string(&export_label(&store, "base").unwrap()).unwrap();

    let edited = text.replace("CONFIG_HZ=250", "CONFIG_HZ=100");
    let e = parse_export(&edited).unwrap().unwrap_err();
    assert!(e.contains("is not the text of that hash"), "{e}");

    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["kernel_configs"] = serde_json::json!({});
    let e = parse_export(&value.to_string()).unwrap().unwrap_err();
    assert!(e.contains("no kernel config"), "{e}");

    // An export of a kbench before configs reads as sessions whose config is unknown.
    value.as_object_mut().unwrap().remove("kernel_configs");
    value["sessions"][0]
        .as_object_mut()
        .unwrap()
        .remove("kernel_config_hash");
    let old = parse_export(&value.to_string()).unwrap().unwrap();
    assert!(old.kernel_configs.is_empty());
    assert_eq!(old.sessions[0].kernel_config_hash, None);
}

#[test]
fn a_version_4_database_migrates_with_configs_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4.db");
    {
        let conn = Connection::open(&path).unwrap();
        for sql in &MIGRATIONS[..4] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch("PRAGMA user_version = 4").unwrap();
        conn.execute(
            "INSERT INTO sessions (label, kind, started_unix_ns, kbench_version, command_line)
             VALUES ('old', 'run', 1, '0.1.0', 'kbench run')",
            [],
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let sessions = store.sessions("old").unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].kernel_config_hash, None);
    let hash = store.set_kernel_config(sessions[0].id, CONFIG_B).unwrap();
    assert_eq!(
        store.sessions("old").unwrap()[0].kernel_config_hash,
        Some(hash)
    );
    assert_eq!(store.integrity_check().unwrap(), "ok");
}
