//! The typed payloads are the bytes the guest's JSON literals were, and old captures
//! still read.
use kbench_console::payload::{
    Begin, BeginUptimes, CallCosts, End, EndUptimes, Outgoing, Received,
};
use kbench_console::{parse, Emitter, Kind};
use kbench_record::{NewSession, StoredRun};
use serde_json::json;

fn session() -> NewSession {
    NewSession {
        label: "guest".into(),
        kind: "boot".into(),
        boot_id: Some("b-1".into()),
        started_unix_ns: 1_780_000_000_000_000_000,
        kbench_version: "0.1.0".into(),
        command_line: "console=ttyS0 kbench.session=n1".into(),
        environment: serde_json::from_value(json!({"cmdline": "x", "arch": "x86_64"})).unwrap(),
        uuid: Some("u-1".into()),
        ..NewSession::default()
    }
}

#[test]
fn begin_and_end_are_the_bytes_of_the_json_literals() {
    let begin = Begin {
        version: Some(kbench_console::VERSION),
        kernel_release: Some("6.12.0".into()),
        proc_version: Some("Linux version 6.12.0 (gcc 12.2.0)".into()),
        governor: Some("none".into()),
        channel: Some("console".into()),
        planned_runs: Some(12),
        call_cost_ns: Some(CallCosts {
            getcpu: 25.0,
            clock_monotonic: 18.3,
        }),
        kernel_config_sha256: None,
        uptime_s: Some(BeginUptimes { init: Some(1.25) }),
        session: Some(session()),
    };
    let literal = json!({
        "version": kbench_console::VERSION,
        "kernel_release": "6.12.0",
        "proc_version": "Linux version 6.12.0 (gcc 12.2.0)",
        "governor": "none",
        "channel": "console",
        "planned_runs": 12u64,
        "call_cost_ns": {"getcpu": 25.0, "clock_monotonic": 18.3},
        "kernel_config_sha256": Option::<String>::None,
        "uptime_s": { "init": Some(1.25) },
        "session": session(),
    });
    assert_eq!(
        Outgoing::Begin(&begin).payload().unwrap(),
        literal.to_string().into_bytes()
    );
    let end = End {
        uptime_s: Some(EndUptimes {
            init: Some(1.25),
            suite_start: Some(1.5),
            suite_end: None,
            results: Some(9.0),
        }),
    };
    let literal = json!({"uptime_s": {
        "init": Some(1.25),
        "suite_start": Some(1.5),
        "suite_end": Option::<f64>::None,
        "results": Some(9.0),
    }});
    assert_eq!(
        Outgoing::End(Some(&end)).payload().unwrap(),
        literal.to_string().into_bytes()
    );
    assert!(Outgoing::End(None).payload().unwrap().is_empty());
    assert_eq!(Outgoing::Error("x").payload().unwrap(), b"x");
    let run = StoredRun {
        workload: "sched/pipe".into(),
        ..StoredRun::default()
    };
    assert_eq!(
        Outgoing::Record(&run).payload().unwrap(),
        serde_json::to_vec(&run).unwrap()
    );
}

fn capture(messages: &[(Kind, &[u8])]) -> String {
    let mut emitter = Emitter::new("n1");
    let mut log = String::new();
    for (kind, payload) in messages {
        for line in emitter.lines(*kind, payload) {
            log += &line;
            log += "\n";
        }
    }
    log
}

#[test]
fn a_capture_reads_back_typed() {
    let begin = json!({"version": 1, "kernel_release": "6.1.0", "session": session()});
    let run = StoredRun {
        workload: "sched/pipe".into(),
        ..StoredRun::default()
    };
    let log = capture(&[
        (Kind::Begin, begin.to_string().as_bytes()),
        (Kind::Record, &serde_json::to_vec(&run).unwrap()),
        (Kind::Record, b"not a run"),
        (Kind::Error, b"it broke"),
        (Kind::End, b""),
    ]);
    let received = Received::read(&parse(&log, "n1"));
    let read = received.begin.expect("BEGIN");
    assert_eq!(read.kernel_release.as_deref(), Some("6.1.0"));
    assert_eq!(read.session, Some(session()));
    // Fields an older guest did not send are absent, not an unreadable BEGIN.
    assert_eq!((read.planned_runs, read.uptime_s), (None, None));
    assert_eq!(received.records, [run]);
    assert_eq!(received.error.as_deref(), Some("it broke"));
    assert_eq!(received.end, None, "an empty END payload is no JSON");
}

#[test]
fn a_field_of_another_shape_is_absent_and_the_rest_counts() {
    let begin = json!({"kernel_release": 6, "planned_runs": 3.5, "session": "x", "governor": null, "channel": "console"});
    let log = capture(&[
        (Kind::Begin, begin.to_string().as_bytes()),
        (Kind::End, b"[1]"),
    ]);
    let received = Received::read(&parse(&log, "n1"));
    let read = received.begin.expect("a JSON BEGIN arrived");
    assert_eq!(
        (
            read.kernel_release,
            read.planned_runs,
            read.session,
            read.governor
        ),
        (None, None, None, None)
    );
    assert_eq!(read.channel.as_deref(), Some("console"));
    assert_eq!(received.end, Some(End::default()), "JSON, of no use");
}
