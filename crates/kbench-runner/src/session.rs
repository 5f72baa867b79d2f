//! A session as it begins: its label, kind, this boot's id and environment snapshot.
use kbench_record::{NewSession, SessionEnvironment};

/// A session of `kind` for `label` begun now, with this boot's id and environment
/// snapshot and `command_line` (its password masked by the caller).
pub fn new_session(label: &str, kind: &str, seed: Option<u64>, command_line: &str) -> NewSession {
    let root = kbench_sys::Sysroot::from_env();
    let snapshot = kbench_sys::EnvSnapshot::capture(&root);
    NewSession {
        label: label.to_string(),
        kind: kind.to_string(),
        boot_id: snapshot.boot_id.clone(),
        started_unix_ns: kbench_workloads::measure::unix_now_ns(),
        kbench_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: command_line.to_string(),
        seed,
        environment: Some(SessionEnvironment::of(snapshot)),
        source: None,
        interleave_group: None,
        uuid: Some(kbench_store::store::new_session_uuid()),
    }
}
