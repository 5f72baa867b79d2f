//! `kbench exec` reads what a command prints: a process the command leaves behind,
//! still writing to the captured pipe, must not keep kbench waiting.
mod common;
use common::{kbench_command, wait_within};
use std::process::Stdio;
use std::time::Duration;

#[test]
fn a_writer_left_behind_does_not_keep_exec_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let mut child = kbench_command()
        .args(["exec", "--label", "bg", "--runs", "1", "--db"])
        .arg(&db)
        .args(["--", "sh", "-c", "yes & sleep 0.2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kbench");
    // Generous: a hang is what is tested, not a speed.
    let status = wait_within(&mut child, Duration::from_secs(60))
        .expect("kbench exec still waiting on the output of `yes` after 60 s");
    assert!(status.success(), "{status:?}");
}
