//! `kbench bench sched wakeup --trace` on this machine (root, tracefs): the traced
//! phases add up to the measured wake latency, `kbench run` stores them, a SIGINT in
//! the middle leaves every tracing setting as it was, and without root it is one line.
mod common;
use common::{kbench_command, series, utf8_stdout_ok};
use kbench_sys::tracefs::Tracefs;
use std::os::unix::process::CommandExt;
use std::process::{Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The traced runs of this file, one at a time: the SIGINT test compares the list of
/// instances, which another traced run would change.
static TRACING: Mutex<()> = Mutex::new(());

/// The stdout of a kbench that must have succeeded, as UTF-8.
fn ok(output: Output) -> String {
    utf8_stdout_ok(output, &[])
}

/// Wakes followed in a traced run of `cpus` (waker, wakee).
fn followed_wakes(cpus: &[String]) -> u64 {
    let out = kbench_command()
        .args([
            "bench", "sched", "wakeup", "--wakes", "40", "--trace", "--json",
        ])
        .args(cpus)
        .output()
        .unwrap();
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    rec["wake_phases"]["paths"]
        .as_object()
        .map(|paths| paths.values().filter_map(|v| v.as_u64()).sum())
        .unwrap_or(0)
}

/// `--waker-cpu W --wakee-cpu T` for the pair of CPUs whose wakes this machine's trace
/// follows best. On one of our hosts (a nested-virtualisation VM) the idle task of
/// CPU 1 emits no trace events at all, so a wakee there is never seen switched in;
/// CPU 0 is traced normally. A short traced run of each order picks the one that works.
fn traceable_cpus() -> Vec<String> {
    static CHOSEN: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CHOSEN
        .get_or_init(|| {
            let cpus = |w: u32, t: u32| {
                vec![
                    "--waker-cpu".to_string(),
                    w.to_string(),
                    "--wakee-cpu".to_string(),
                    t.to_string(),
                ]
            };
            let (forward, backward) = (cpus(0, 1), cpus(1, 0));
            if followed_wakes(&forward) >= followed_wakes(&backward) {
                forward
            } else {
                backward
            }
        })
        .clone()
}

#[test]
fn traced_phases_add_up_to_the_measured_wake_latency() {
    let _one = TRACING.lock().unwrap_or_else(|e| e.into_inner());
    let out = ok(kbench_command()
        .args([
            "bench", "sched", "wakeup", "--wakes", "300", "--trace", "--json",
        ])
        .args(traceable_cpus())
        .output()
        .unwrap());
    let rec: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rec["params"]["trace"], true);
    let phases = &rec["wake_phases"];
    assert_eq!(phases["source"], "tracefs");
    assert_eq!(phases["trace_clock"], "mono");
    assert_eq!(
        phases["wakes"], 300,
        "one mark per measured wake, warm-up left out"
    );
    let followed: u64 = phases["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    let not_followed: u64 = phases["incomplete"]
        .as_object()
        .map(|m| m.values().map(|v| v.as_u64().unwrap()).sum())
        .unwrap_or(0);
    assert_eq!(followed + not_followed, 300, "{phases}");
    assert!(followed >= 150, "most wakes followed: {phases}");
    // Each wake's phases add up to its kernel-side total, so their sums do too.
    let total = series(&rec, "kernel_wake_latency");
    let total_sum = total["mean"].as_f64().unwrap() * total["count"].as_f64().unwrap();
    let phase_sum: f64 = phases["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = series(&rec, p["series"].as_str().unwrap());
            s["mean"].as_f64().unwrap() * s["count"].as_f64().unwrap()
        })
        .sum();
    assert!(
        (phase_sum - total_sum).abs() <= 1e-6 * total_sum.max(1.0),
        "{phase_sum} vs {total_sum}"
    );
    // The kernel's waking-to-switch-in is the measured t0-to-t2 less a syscall entry
    // and a return to user: at the median, within 50 % or 20 us.
    let kernel_p50 = total["percentiles"]["p50"].as_f64().unwrap();
    let measured_p50 = series(&rec, "wake_latency")["percentiles"]["p50"]
        .as_f64()
        .unwrap();
    let bound = (0.5 * measured_p50).max(20_000.0);
    assert!(
        (kernel_p50 - measured_p50).abs() <= bound,
        "kernel p50 {kernel_p50} ns against measured p50 {measured_p50} ns"
    );
    assert!(rec["meta"]["trace_marker_write_ns"].as_u64().is_some());
    let names: Vec<&str> = rec["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"kernel_wake_latency_mean_ns"), "{names:?}");
    assert_eq!(
        rec["metrics"][0]["name"], "wake_latency_p50_ns",
        "the primary is unchanged"
    );
}

#[test]
fn text_output_gains_only_the_phase_table() {
    let _one = TRACING.lock().unwrap_or_else(|e| e.into_inner());
    let traced = ok(kbench_command()
        .args(["bench", "sched", "wakeup", "--wakes", "50", "--trace"])
        .args(traceable_cpus())
        .output()
        .unwrap());
    assert!(
        traced.contains("Wake phases (tracefs, clock mono"),
        "{traced}"
    );
    assert!(traced.contains("total: waking -> switch_in"), "{traced}");
    assert!(
        !traced.contains("phase_"),
        "phase series are in the table, not in blocks: {traced}"
    );
    let plain = ok(kbench_command()
        .args(["bench", "sched", "wakeup", "--wakes", "50"])
        .output()
        .unwrap());
    assert!(!plain.contains("Wake phases"), "{plain}");
}

#[test]
fn run_stores_the_phases_of_a_traced_spec() {
    let _one = TRACING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    ok(kbench_command()
        .args([
            "run",
            &format!("wakeup:--wakes 100 --trace {}", traceable_cpus().join(" ")),
            "--runs",
            "1",
            "--warmup",
            "0",
            "--label",
            "t",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap());
    let export = ok(kbench_command()
        .args(["export", "t", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap());
    let export: serde_json::Value = serde_json::from_str(&export).unwrap();
    let run = &export["sessions"][0]["runs"][0];
    assert_eq!(run["record"]["wake_phases"]["source"], "tracefs", "{run}");
    let values: Vec<&str> = run["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["metric"].as_str().unwrap())
        .collect();
    assert!(values.iter().any(|v| v.starts_with("phase_")), "{values:?}");
}

/// Every top-level tracing setting, the instances and the tracefs mounts.
fn tracing_state() -> Vec<(String, String)> {
    let tracefs = Tracefs::open().expect("tracefs");
    let mut state: Vec<(String, String)> = [
        "tracing_on",
        "current_tracer",
        "buffer_size_kb",
        "trace_clock",
        "set_event",
        "set_event_pid",
        "trace_options",
        "tracing_cpumask",
        "events/enable",
        "events/sched/sched_waking/filter",
        "events/irq/irq_handler_entry/filter",
    ]
    .iter()
    .map(|f| {
        (
            f.to_string(),
            tracefs
                .read(f)
                .unwrap_or_else(|e| format!("unreadable: {e}")),
        )
    })
    .collect();
    state.push((
        "instances".into(),
        tracefs.instance_names().unwrap().join(" "),
    ));
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let tracefs_mounts: Vec<&str> = mounts.lines().filter(|l| l.contains("tracefs")).collect();
    state.push(("mounts".into(), tracefs_mounts.join("\n")));
    state
}

#[test]
fn sigint_in_the_middle_leaves_every_tracing_setting_as_it_was() {
    let _one = TRACING.lock().unwrap_or_else(|e| e.into_inner());
    let before = tracing_state();
    let mut child = kbench_command()
        .args(["bench", "sched", "wakeup", "--wakes", "5000", "--trace"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let instance = format!("kbench-{}", child.id());
    let tracefs = Tracefs::open().unwrap();
    let started = Instant::now();
    while !tracefs.instance_names().unwrap().contains(&instance) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no instance {instance} appeared"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "kbench ended before tracing"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Well into the measured wakes (5000 x 2 ms).
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        child.try_wait().unwrap().is_none(),
        "still running when interrupted"
    );
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "exits 128 + SIGINT: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = tracing_state();
    for ((name, was), (_, is)) in before.iter().zip(&after) {
        assert_eq!(was, is, "{name} changed");
    }
}

#[test]
fn without_root_it_is_one_line_and_exit_2() {
    let out = kbench_command()
        .args(["bench", "sched", "wakeup", "--wakes", "10", "--trace"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("root"), "{stderr}");
}
