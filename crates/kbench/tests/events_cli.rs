//! Events per operation on real runs: the interrupts of the CPUs a run's tasks used,
//! the system calls per operation by construction, and the perf_event_open counters
//! of `--counters`, checked against the kernel's own accounts (rusage, perf stat).
mod common;
use common::{bench_json, kbench, kbench_bin, one_line_error, text, TempDb};
use kbench_record::{CounterOutcome, PerfCounter, RunRecord};
use std::process::Command;

fn outcome(rec: &RunRecord, counter: PerfCounter) -> &CounterOutcome {
    &rec.events
        .as_ref()
        .expect("events")
        .counter(counter)
        .unwrap_or_else(|| panic!("no {counter:?} in {:?}", rec.events))
        .outcome
}

fn counted(rec: &RunRecord, counter: PerfCounter) -> u64 {
    match outcome(rec, counter) {
        CounterOutcome::Counted { value, .. } => *value,
        other => panic!("{counter:?} not counted: {other:?}"),
    }
}

/// Equal to the last bits a JSON round trip keeps (serde_json may miss the nearest
/// double by one unit in the last place).
fn close(got: f64, expected: f64) -> bool {
    (got - expected).abs() <= 1e-12 * expected.abs().max(1.0)
}

fn metric(rec: &RunRecord, name: &str) -> Option<f64> {
    rec.metrics.iter().find(|m| m.name == name).map(|m| m.value)
}

#[test]
fn a_pipe_run_with_counters_counts_what_rusage_and_the_clock_say() {
    // On one CPU every token the reader waits for is a context switch, and the two
    // workers together cannot use more CPU time than the wall time.
    let rec = bench_json::<RunRecord>(&[
        "sched",
        "pipe",
        "-l",
        "20000",
        "--placement",
        "same-cpu",
        "--counters",
    ]);
    assert_eq!(rec.params["counters"], true);
    let switches = counted(&rec, PerfCounter::ContextSwitches);
    let rusage = rec.rusage.total_csw();
    assert!(
        switches.abs_diff(rusage) <= 10 + rusage / 50,
        "context-switches {switches} against rusage {rusage}"
    );
    let task_clock_ns = counted(&rec, PerfCounter::TaskClock);
    assert!(task_clock_ns > 0);
    assert!(
        task_clock_ns as f64 <= rec.total_ns as f64 * 1.02,
        "task clock {task_clock_ns} ns on one CPU in {} ns",
        rec.total_ns
    );
    counted(&rec, PerfCounter::PageFaults);
    counted(&rec, PerfCounter::CpuMigrations);
    let per_op = metric(&rec, "task_clock_ns_per_op").expect("task_clock_ns_per_op");
    assert!((per_op - task_clock_ns as f64 / 20000.0).abs() < 1e-6);
    let events = rec.events_per_op().expect("events per op");
    assert_eq!(events.context_switches, switches as f64 / 20000.0);
    assert!(close(
        metric(&rec, "csw_per_op").unwrap(),
        rusage as f64 / 20000.0
    ));
    // The only CPU was busy throughout: its tick ran, and was counted as the tick.
    let cpu = &rec.ipis[0].cpus[0];
    assert_eq!(rec.ipis[0].cpus.len(), 1, "{:?}", rec.ipis);
    assert!(cpu.irqs.unwrap().local_timer > 0, "{cpu:?}");
}

/// What perf stat makes of `event` on `true`: `Some(true)` counted, `Some(false)` not
/// supported, `None` when perf is missing or says something else.
fn perf_counts(event: &str) -> Option<bool> {
    let out = Command::new("/usr/bin/perf")
        .args(["stat", "-x", ",", "-e", event, "true"])
        .output()
        .ok()?;
    let stderr = text(&out.stderr);
    let line = stderr.lines().find(|l| l.contains(event))?;
    let value = line.split(',').next()?;
    if value == "<not supported>" {
        Some(false)
    } else {
        value.parse::<u64>().ok().map(|_| true)
    }
}

#[test]
fn hardware_counters_are_counted_exactly_where_perf_counts_them() {
    // Not "this VM has no PMU": whatever perf stat finds here, kbench must agree.
    let rec = bench_json::<RunRecord>(&["sched", "pipe", "-l", "2000", "--counters"]);
    for (counter, event) in [
        (PerfCounter::InstructionsUser, "instructions:u"),
        (PerfCounter::InstructionsKernel, "instructions:k"),
        (PerfCounter::CyclesUser, "cycles:u"),
        (PerfCounter::CyclesKernel, "cycles:k"),
    ] {
        let Some(perf_counted) = perf_counts(event) else {
            eprintln!("SKIP: perf stat -e {event} gave no reading to compare with");
            continue;
        };
        let ours = outcome(&rec, counter);
        match (perf_counted, ours) {
            (true, CounterOutcome::Counted { .. }) => {}
            (false, CounterOutcome::NotSupported { reason }) => {
                assert!(reason.contains("perf_event_open failed"), "{reason}");
                let name = format!("{}_per_op", counter.as_str());
                assert_eq!(metric(&rec, &name), None, "{name} declared");
            }
            _ => panic!("perf stat -e {event} counted: {perf_counted}; kbench: {ours:?}"),
        }
    }
}

#[test]
fn unprivileged_software_counters_follow_perf_event_paranoid() {
    let setpriv = std::path::Path::new("/usr/bin/setpriv");
    if !setpriv.exists() || !rustix::process::geteuid().is_root() {
        eprintln!("SKIP: needs root and setpriv to act as an unprivileged user");
        return;
    }
    let paranoid: i64 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let out = Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(kbench_bin())
        .args([
            "bench",
            "--json",
            "sched",
            "pipe",
            "-l",
            "2000",
            "--counters",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rec: RunRecord = serde_json::from_slice(&out.stdout).unwrap();
    // Software counters count kernel mode too, which paranoid >= 2 keeps from users.
    match (paranoid >= 2, outcome(&rec, PerfCounter::ContextSwitches)) {
        (true, CounterOutcome::NotPermitted { reason }) => assert!(
            reason.contains(&format!("perf_event_paranoid is {paranoid}")),
            "{reason}"
        ),
        (false, CounterOutcome::Counted { .. }) => {}
        (_, other) => panic!("paranoid {paranoid}: {other:?}"),
    }
    if paranoid >= 2 {
        assert_eq!(metric(&rec, "task_clock_ns_per_op"), None);
        // Without the counter, the events per op fall back on rusage.
        assert_eq!(
            rec.events_per_op().unwrap().context_switches,
            rec.rusage.total_csw() as f64 / 2000.0
        );
    }
}

#[test]
fn pipe_seccomp_notify_and_messaging_account_their_interrupts_and_syscalls() {
    let cases: [(&[&str], &str, u64, f64); 4] = [
        (
            &["sched", "pipe", "-l", "5000", "--placement", "cross-cpu"],
            "loop",
            5000,
            4.0,
        ),
        (
            &["sched", "pipe", "-l", "5000", "-n", "-T"],
            "loop",
            5000,
            6.0,
        ),
        (
            &["sched", "seccomp-notify", "-l", "5000"],
            "notification",
            5000,
            3.0,
        ),
        // One group: 20 senders x 20 receivers x 10 loops.
        (
            &["sched", "messaging", "-g", "1", "-l", "10"],
            "message",
            4000,
            2.0,
        ),
    ];
    for (args, per, ops, syscalls) in cases {
        let rec = bench_json::<RunRecord>(args);
        let events = rec.events.as_ref().expect("events");
        assert_eq!((events.per.as_str(), events.ops), (per, ops), "{args:?}");
        assert_eq!(events.syscalls_per_op, syscalls, "{args:?}");
        assert!(events.counters.is_empty(), "counters without --counters");
        assert!(!rec.params.contains_key("counters"));
        let region = &rec.ipis[0];
        assert_eq!((region.label.as_str(), region.ops), ("timed_region", ops));
        let cpus: Vec<u32> = region.cpus.iter().map(|c| c.cpu).collect();
        assert_eq!(cpus, rec.cpus_used, "{args:?}");
        for cpu in &region.cpus {
            let irqs = cpu.irqs.expect("IRQ counts");
            let rates = cpu.irqs_per_op.unwrap();
            assert!(close(
                rates.local_timer,
                irqs.local_timer as f64 / ops as f64
            ));
            assert!(close(
                cpu.per_op.reschedule,
                cpu.counts.reschedule as f64 / ops as f64
            ));
        }
        // The metrics are the per-CPU rates summed over the run's CPUs.
        let same = |name: &str, expected: f64| {
            let got = metric(&rec, name).unwrap_or_else(|| panic!("no {name}"));
            assert!(close(got, expected), "{name}: {got} against {expected}");
        };
        let summed = region.ipis_per_op_summed();
        same("resched_ipis_per_op", summed.reschedule);
        same("call_ipis_per_op", summed.function_call);
        let irqs = region.irqs_per_op_summed().unwrap();
        same("irqs_per_op", irqs.device);
        same("timer_irqs_per_op", irqs.local_timer);
        assert_eq!(metric(&rec, "task_clock_ns_per_op"), None);
        let roles: Vec<&str> = region.cpus.iter().map(|c| c.role.as_str()).collect();
        match per {
            "loop" if args.contains(&"cross-cpu") => assert_eq!(roles, ["worker 0", "worker 1"]),
            "message" => assert!(roles.iter().all(|r| *r == "workers")),
            _ => assert!(roles.iter().all(|r| !r.is_empty())),
        }
    }
}

#[test]
fn perfs_text_output_is_unchanged_by_counters() {
    let out = kbench(&["bench", "sched", "pipe", "-l", "1000", "--counters"]);
    assert!(out.status.success());
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "# Running 'sched/pipe' benchmark:");
    assert_eq!(
        lines[1],
        "# Executed 1000 pipe operations between two processes"
    );
    assert_eq!(lines.len(), 7, "{lines:?}");
    assert!(lines[5].ends_with(" usecs/op") && lines[6].ends_with(" ops/sec"));
}

#[test]
fn counters_for_a_workload_without_them_are_one_line_and_exit_2() {
    for args in [
        &["bench", "--counters", "sched", "wakeup", "--wakes", "10"][..],
        &["bench", "ipi", "--iterations", "10", "--counters"],
    ] {
        let out = kbench(args);
        let stderr = one_line_error(&out, 2, args);
        assert!(
            stderr.contains("has no perf_event_open counters"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// Three runs of pipe on one CPU under `label`, with the options `extra`.
fn run(db: &TempDb, label: &str, extra: &[&str]) {
    let mut args = vec!["run", "--label", label, "--runs", "3", "--warmup", "0"];
    args.extend_from_slice(extra);
    args.push("pipe:-l 2000 --placement same-cpu");
    db.ok(&args);
}

#[test]
fn counted_runs_are_stored_compared_among_themselves_and_never_with_uncounted_ones() {
    let db = TempDb::new();
    run(&db, "a", &["--counters"]);
    run(&db, "b", &["--counters"]);
    run(&db, "plain", &[]);
    let full: serde_json::Value =
        serde_json::from_str(&db.ok(&["compare", "a", "b", "--full", "--format", "json"])).unwrap();
    let metrics: Vec<&str> = full["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["metric"].as_str())
        .collect();
    for name in [
        "usecs_per_op",
        "task_clock_ns_per_op",
        "page_faults_per_op",
        "migrations_per_op",
        "call_ipis_per_op",
        "timer_irqs_per_op",
    ] {
        assert!(metrics.contains(&name), "{name} not in {metrics:?}");
    }
    let mixed: serde_json::Value =
        serde_json::from_str(&db.ok(&["compare", "a", "plain", "--format", "json"])).unwrap();
    assert!(mixed["rows"].as_array().unwrap().is_empty(), "{mixed}");
    assert_eq!(mixed["not_compared"][0]["kind"], "params_differ", "{mixed}");
    assert_eq!(
        mixed["not_compared"][0]["differences"][0][0], "counters",
        "{mixed}"
    );
}
