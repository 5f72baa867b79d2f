//! Records with and without the event accounting: old records still read, new ones
//! round trip, and the events per operation are the record's own figures divided out.
use kbench_record::{
    CounterOutcome, CounterReading, EventAccounting, IpiAccounting, IpiCounts, IpiCpu, IrqCounts,
    PerfCounter, RunRecord, RusageDelta,
};
use std::path::Path;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn records_written_before_the_event_fields_still_read() {
    // Printed by `kbench bench --json` before records had events or IRQ counts.
    let pipe: RunRecord = serde_json::from_str(&fixture("pipe-record-before-events.json")).unwrap();
    assert_eq!(pipe.workload, "sched/pipe");
    assert!(pipe.events.is_none());
    assert!(pipe.events_per_op().is_none());
    let wakeup: RunRecord =
        serde_json::from_str(&fixture("wakeup-record-before-events.json")).unwrap();
    let region = &wakeup.ipis[0];
    assert!(region.cpus.iter().all(|c| c.irqs.is_none()));
    assert_eq!(region.irqs_per_op_summed(), None);
    // Read back and written again, an old record keeps its JSON: nothing is added.
    let again: serde_json::Value = serde_json::to_value(&wakeup).unwrap();
    let original: serde_json::Value =
        serde_json::from_str(&fixture("wakeup-record-before-events.json")).unwrap();
    assert_eq!(again, original);
}

fn counted(counter: PerfCounter, value: u64) -> CounterReading {
    CounterReading {
        counter,
        outcome: CounterOutcome::Counted {
            value,
            enabled_ns: 10,
            running_ns: 10,
        },
    }
}

fn cpu(cpu: u32, counts: IpiCounts, irqs: IrqCounts, ops: u64) -> IpiCpu {
    IpiCpu {
        cpu,
        role: "worker".into(),
        counts,
        per_op: counts.per_op(ops),
        irqs: Some(irqs),
        irqs_per_op: Some(irqs.per_op(ops)),
    }
}

fn record_with_events(counters: Vec<CounterReading>) -> RunRecord {
    let ops = 1000;
    let region = IpiAccounting {
        label: "timed_region".into(),
        per: "loop".into(),
        ops,
        cpus: vec![
            cpu(
                0,
                IpiCounts {
                    reschedule: 100,
                    function_call: 900,
                    ..IpiCounts::default()
                },
                IrqCounts {
                    device: 3,
                    local_timer: 20,
                    other: 0,
                },
                ops,
            ),
            cpu(
                1,
                IpiCounts {
                    reschedule: 400,
                    tlb_shootdown: 2,
                    ..IpiCounts::default()
                },
                IrqCounts {
                    device: 1,
                    local_timer: 30,
                    other: 1,
                },
                ops,
            ),
        ],
    };
    RunRecord {
        workload: "sched/pipe".into(),
        rusage: RusageDelta {
            self_voluntary_csw: 1500,
            children_voluntary_csw: 500,
            ..RusageDelta::default()
        },
        ipis: vec![region],
        events: Some(EventAccounting {
            per: "loop".into(),
            ops,
            syscalls_per_op: 4.0,
            counters,
        }),
        ..RunRecord::default()
    }
}

#[test]
fn events_per_op_sum_the_cpus_and_prefer_the_counters() {
    let plain = record_with_events(Vec::new()).events_per_op().unwrap();
    assert_eq!(plain.per, "loop");
    assert_eq!(plain.syscalls, 4.0);
    // Without counters: rusage's 2000 switches over 1000 loops, and no migrations.
    assert_eq!(plain.context_switches, 2.0);
    assert_eq!(plain.migrations, None);
    let ipis = plain.ipis.unwrap();
    assert!((ipis.reschedule - 0.5).abs() < 1e-12);
    assert!((ipis.function_call - 0.9).abs() < 1e-12);
    assert!((ipis.total - 1.402).abs() < 1e-12);
    let irqs = plain.irqs.unwrap();
    assert!((irqs.device - 0.004).abs() < 1e-12);
    assert!((irqs.local_timer - 0.05).abs() < 1e-12);
    assert!((irqs.other - 0.001).abs() < 1e-12);

    let counters = vec![
        counted(PerfCounter::ContextSwitches, 1990),
        counted(PerfCounter::CpuMigrations, 7),
        CounterReading {
            counter: PerfCounter::InstructionsUser,
            outcome: CounterOutcome::NotSupported {
                reason: "no PMU".into(),
            },
        },
    ];
    let with = record_with_events(counters).events_per_op().unwrap();
    assert_eq!(with.context_switches, 1.99);
    assert_eq!(with.migrations, Some(0.007));
}

#[test]
fn counter_readings_say_their_status_in_the_json() {
    let rec = record_with_events(vec![
        counted(PerfCounter::TaskClock, 123),
        CounterReading {
            counter: PerfCounter::CyclesKernel,
            outcome: CounterOutcome::NotPermitted {
                reason: "perf_event_paranoid is 2".into(),
            },
        },
    ]);
    let json = serde_json::to_value(&rec).unwrap();
    let counters = &json["events"]["counters"];
    assert_eq!(
        counters[0],
        serde_json::json!({"counter": "task_clock", "status": "counted",
                           "value": 123, "enabled_ns": 10, "running_ns": 10})
    );
    assert_eq!(counters[1]["status"], "not_permitted");
    assert_eq!(counters[1]["counter"], "cycles_kernel");
    assert!(counters[1].get("value").is_none());
    let back: RunRecord = serde_json::from_value(json).unwrap();
    assert_eq!(back, rec);
    let events = back.events.unwrap();
    assert_eq!(events.counter_per_op(PerfCounter::TaskClock), Some(0.123));
    assert_eq!(events.counter_per_op(PerfCounter::CyclesKernel), None);
    assert_eq!(events.counter_per_op(PerfCounter::PageFaults), None);
}

#[test]
fn a_run_without_operations_has_no_events_per_op() {
    let mut rec = record_with_events(Vec::new());
    rec.events.as_mut().unwrap().ops = 0;
    assert!(rec.events_per_op().is_none());
}
