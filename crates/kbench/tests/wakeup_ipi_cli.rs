//! `kbench bench sched wakeup` and `kbench bench ipi` end to end: real threads, real
//! futexes, pipes, eventfds and membarrier, real `/proc/interrupts`.
//!
//! The machine is shared and noisy, so every bound is generous and the runs of this
//! file are serialised: IPI counts are per CPU and system-wide, and a concurrent run
//! would add its IPIs to another's. Tests that need an idle CPU (a wakee that idles
//! between wakes, an IPI target) take the machine's quiet one, and give the busy one to
//! the waker or sender, so that other work on one core does not sit on the CPU they
//! measure.
mod common;
use common::{bench_record, kbench, one_line_error, series, text, usable_cpus};

use serde_json::Value;
use std::sync::{Mutex, MutexGuard};

static MACHINE: Mutex<()> = Mutex::new(());

/// Exclusive use of the CPUs for one test (a failed test must not poison the rest).
fn machine() -> MutexGuard<'static, ()> {
    MACHINE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn p50_ns(rec: &Value, name: &str) -> f64 {
    series(rec, name)["percentiles"]["p50"]
        .as_f64()
        .unwrap_or_else(|| panic!("no p50 in {name}: {rec}"))
}

/// Total IPIs per operation on `cpu` in the accounting labelled `label`.
fn ipis_per_op(rec: &Value, label: &str, cpu: u64) -> f64 {
    let accounting = rec["ipis"]
        .as_array()
        .and_then(|all| all.iter().find(|a| a["label"] == label))
        .unwrap_or_else(|| panic!("no IPI accounting {label}: {rec}"));
    let entry = accounting["cpus"]
        .as_array()
        .and_then(|cpus| cpus.iter().find(|c| c["cpu"] == cpu))
        .unwrap_or_else(|| panic!("CPU {cpu} missing from {accounting}"));
    entry["per_op"]["total"].as_f64().unwrap()
}

fn kind_per_op(rec: &Value, label: &str, cpu: u64, kind: &str) -> f64 {
    let accounting = rec["ipis"]
        .as_array()
        .and_then(|all| all.iter().find(|a| a["label"] == label))
        .unwrap();
    let entry = accounting["cpus"]
        .as_array()
        .and_then(|cpus| cpus.iter().find(|c| c["cpu"] == cpu))
        .unwrap();
    entry["per_op"][kind].as_f64().unwrap()
}

#[test]
fn wakeup_record_carries_distributions_validity_and_ipis() {
    if usable_cpus() < 2 {
        eprintln!("SKIP: needs two CPUs");
        return;
    }
    let _machine = machine();
    let rec = bench_record(&[
        "sched", "wakeup", "--wakes", "200", "--warmup", "20", "--gap-us", "1000",
    ]);
    assert_eq!(rec["workload"], "sched/wakeup");
    assert_eq!(rec["variant"], "idle-futex");
    assert_eq!(rec["params"]["seed"], 1);
    let wake = series(&rec, "wake_latency");
    let valid = wake["count"].as_u64().unwrap();
    let invalid: u64 = rec["invalid_samples"]
        .as_object()
        .map(|m| m.values().filter_map(Value::as_u64).sum())
        .unwrap_or(0);
    assert_eq!(
        valid + invalid,
        200,
        "every measured wake is valid or counted"
    );
    assert_eq!(rec["ops"].as_u64(), Some(valid));
    let bucket_total: u64 = wake["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(bucket_total, valid);
    let (min, p50, max) = (
        wake["min"].as_u64().unwrap(),
        wake["percentiles"]["p50"].as_u64().unwrap(),
        wake["max"].as_u64().unwrap(),
    );
    assert!(min <= p50 && p50 <= max, "{wake}");
    assert!(min > 0 && max < 1_000_000_000, "{wake}");
    // 200 samples are too few for p99 and p99.9 (10 / (1 - q) rule).
    assert!(wake["percentiles"]["p99.9"].is_null());
    assert!(series(&rec, "waker_cost")["count"].as_u64() == Some(valid));
    assert!(rec["meta"]["clock_read_ns"].is_u64());
}

#[test]
fn injected_delay_moves_the_median_by_about_the_delay() {
    if usable_cpus() < 2 {
        eprintln!("SKIP: needs two CPUs");
        return;
    }
    let _machine = machine();
    let (waker, wakee) = common::busy_and_quiet_cpus();
    let (waker, wakee) = (waker.to_string(), wakee.to_string());
    let shared = [
        "sched",
        "wakeup",
        "--wakes",
        "300",
        "--warmup",
        "30",
        "--gap-us",
        "1000",
        "--waker-cpu",
        &waker,
        "--wakee-cpu",
        &wakee,
    ];
    let base = bench_record(&shared);
    let mut delayed_args = shared.to_vec();
    delayed_args.extend(["--inject-delay-us", "200"]);
    let delayed = bench_record(&delayed_args);
    let shift_us = (p50_ns(&delayed, "wake_latency") - p50_ns(&base, "wake_latency")) / 1e3;
    assert!(
        (150.0..=400.0).contains(&shift_us),
        "a 200 us injected delay moved p50 by {shift_us:.1} us"
    );
    // The waker's own cost does not include the wakee's delay.
    assert!(p50_ns(&delayed, "waker_cost") < 150_000.0);
}

#[test]
fn idle_cross_cpu_wakes_send_ipis_to_the_wakee_and_same_cpu_wakes_do_not() {
    if usable_cpus() < 2 {
        eprintln!("SKIP: needs two CPUs");
        return;
    }
    let _machine = machine();
    let (waker, wakee) = common::busy_and_quiet_cpus();
    let (waker_arg, wakee_arg) = (waker.to_string(), wakee.to_string());
    let cross = bench_record(&[
        "sched",
        "wakeup",
        "--mode",
        "idle",
        "--waker-cpu",
        &waker_arg,
        "--wakee-cpu",
        &wakee_arg,
        "--wakes",
        "300",
        "--warmup",
        "20",
        "--gap-us",
        "1000",
    ]);
    let on_wakee = ipis_per_op(&cross, "wakes", wakee.into());
    assert!(
        on_wakee > 0.3,
        "idle cross-CPU wakes: {on_wakee:.3} IPIs per wake on the wakee CPU"
    );
    // A short gap packs many wakes into a short run, so background IPIs of a busy
    // machine weigh little per wake.
    let same = bench_record(&[
        "sched",
        "wakeup",
        "--mode",
        "same-cpu",
        "--waker-cpu",
        &wakee_arg,
        "--wakes",
        "2000",
        "--warmup",
        "50",
        "--gap-us",
        "100",
    ]);
    let on_cpu = ipis_per_op(&same, "wakes", wakee.into());
    assert!(
        on_cpu < 0.3,
        "same-CPU wakes: {on_cpu:.3} IPIs per wake (expected about none)"
    );
}

#[test]
fn preempt_mode_sends_reschedule_ipis_to_the_busy_cpu() {
    if usable_cpus() < 2 {
        eprintln!("SKIP: needs two CPUs");
        return;
    }
    let _machine = machine();
    let (waker, wakee) = common::busy_and_quiet_cpus();
    let rec = bench_record(&[
        "sched",
        "wakeup",
        "--mode",
        "preempt",
        "--waker-cpu",
        &waker.to_string(),
        "--wakee-cpu",
        &wakee.to_string(),
        "--wakes",
        "200",
        "--warmup",
        "20",
        "--gap-us",
        "1000",
    ]);
    let resched = kind_per_op(&rec, "wakes", wakee.into(), "reschedule");
    assert!(resched > 0.3, "{resched:.3} reschedule IPIs per wake");
    let hog = rec["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"].as_str().unwrap_or("").starts_with("hog"))
        .expect("the hog task is reported");
    assert_eq!(hog["cpus"], serde_json::json!([wakee]));
}

#[test]
fn every_mode_and_mechanism_runs() {
    if usable_cpus() < 2 {
        eprintln!("SKIP: needs two CPUs");
        return;
    }
    let _machine = machine();
    for mode in ["idle", "preempt", "pingpong", "same-cpu"] {
        for mech in ["futex", "pipe", "eventfd"] {
            let rec = bench_record(&[
                "sched", "wakeup", "--mode", mode, "--mech", mech, "--wakes", "40", "--warmup",
                "5", "--gap-us", "300",
            ]);
            assert_eq!(rec["variant"], format!("{mode}-{mech}"));
            assert!(rec["ops"].as_u64().unwrap() > 0, "{mode}/{mech}: {rec}");
            let names: Vec<&str> = rec["series"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|s| s["name"].as_str())
                .collect();
            if mode == "pingpong" {
                assert_eq!(
                    names,
                    ["wake_latency", "waker_cost", "return_latency", "round_trip"]
                );
            } else {
                assert_eq!(names, ["wake_latency", "waker_cost"]);
            }
        }
    }
}

#[test]
fn text_formats_fit_80_columns_and_simple_prints_the_p50() {
    if usable_cpus() < 2 {
        eprintln!("SKIP: needs two CPUs");
        return;
    }
    let _machine = machine();
    let out = kbench(&[
        "bench", "sched", "wakeup", "--wakes", "100", "--warmup", "10", "--gap-us", "500",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    for needle in [
        "wake_latency [ns]",
        "p50",
        "p99.9",
        "distribution",
        "IPIs per wake",
    ] {
        assert!(shown.contains(needle), "{needle} missing:\n{shown}");
    }
    for line in shown.lines() {
        assert!(line.len() <= 80, "{} columns: {line}", line.len());
    }
    let simple = kbench(&[
        "bench", "-f", "simple", "sched", "wakeup", "--wakes", "50", "--warmup", "5", "--gap-us",
        "500",
    ]);
    assert!(simple.status.success(), "{}", text(&simple.stderr));
    let p50_us: f64 = text(&simple.stdout)
        .trim()
        .parse()
        .expect("simple format: one number");
    assert!(p50_us > 0.0 && p50_us < 100_000.0);
}

#[test]
fn ipi_round_trips_cost_more_than_the_no_peer_baseline_and_send_one_ipi_each() {
    if usable_cpus() < 2 {
        eprintln!("SKIP: needs two CPUs");
        return;
    }
    let _machine = machine();
    let (sender, target) = common::busy_and_quiet_cpus();
    let rec = bench_record(&[
        "ipi",
        "--sender-cpu",
        &sender.to_string(),
        "--target-cpu",
        &target.to_string(),
        "--iterations",
        "3000",
        "--warmup",
        "200",
    ]);
    assert_eq!(rec["workload"], "ipi/ipi");
    assert_eq!(rec["ops"], 3000);
    let with_peer = p50_ns(&rec, "ipi_round_trip");
    let baseline = p50_ns(&rec, "baseline_no_peer");
    assert!(
        with_peer > baseline,
        "IPI round trip p50 {with_peer} ns <= baseline {baseline} ns"
    );
    let peer_calls = kind_per_op(&rec, "peer_spinning", target.into(), "function_call");
    assert!(
        peer_calls > 0.5,
        "{peer_calls:.3} function-call IPIs per call"
    );
    let baseline_calls = kind_per_op(&rec, "baseline_no_peer", target.into(), "function_call");
    assert!(
        baseline_calls < 0.3,
        "{baseline_calls:.3} function-call IPIs per call without a peer"
    );
}

#[test]
fn bad_arguments_are_one_line_usage_errors_never_panics() {
    let _machine = machine();
    let cases: &[&[&str]] = &[
        &["bench", "sched", "wakeup", "--wakee-cpu", "4095"],
        &["bench", "sched", "wakeup", "--waker-cpu", "-1"],
        &[
            "bench",
            "--cpus",
            "0",
            "sched",
            "wakeup",
            "--wakee-cpu",
            "1",
        ],
        &["bench", "sched", "wakeup", "--wakes", "0"],
        &["bench", "sched", "wakeup", "--mode", "sleepy"],
        &["bench", "sched", "wakeup", "--mech", "carrier-pigeon"],
        &["bench", "sched", "wakeup", "--gap-us", "-5"],
        &[
            "bench",
            "sched",
            "wakeup",
            "--waker-cpu",
            "0",
            "--wakee-cpu",
            "0",
        ],
        &[
            "bench",
            "sched",
            "wakeup",
            "--mode",
            "same-cpu",
            "--waker-cpu",
            "0",
            "--wakee-cpu",
            "1",
        ],
        &["bench", "ipi", "--target-cpu", "4095"],
        &["bench", "ipi", "--iterations", "0"],
        &["bench", "ipi", "--sender-cpu", "0", "--target-cpu", "0"],
    ];
    for args in cases {
        let out = kbench(args);
        let stderr = one_line_error(&out, 2, args);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.starts_with("kbench: --") || stderr.starts_with("kbench: "));
    }
}

#[test]
fn the_new_benchmarks_are_listed() {
    let out = kbench(&["bench", "sched"]);
    assert!(
        text(&out.stdout).contains("wakeup: "),
        "{}",
        text(&out.stdout)
    );
}
