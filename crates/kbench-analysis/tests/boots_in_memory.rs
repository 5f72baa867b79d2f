//! A decision after each boot grows its labels with the boots it was handed
//! (`LabelData::push_session`) instead of reading them back: the labels so grown must
//! give what the store's reading gives, here for boots written into a real SQLite store.
use kbench_analysis::group;
use kbench_analysis::sequential::{sequential_loaded, SequentialOptions};
use kbench_analysis::LabelData;
use kbench_record::stored::SessionWithRuns;
use kbench_record::{NewSession, ObservedPlacement, PlacementKind, RunRecord, StoredRun, Value};
use kbench_stats::sequential::Boundary;
use kbench_store::{NewBoot, RawJson, Store};
use std::collections::BTreeMap;

/// The `boot`-th boot of `label`: five pipe runs around `median`, with a record that
/// says where the two tasks ran, and one failed run.
fn boot(label: &str, boot: u64, median: f64) -> SessionWithRuns {
    let session = NewSession {
        label: label.into(),
        kind: "vm-ab".into(),
        boot_id: Some(format!("{label}-boot-{boot}")),
        started_unix_ns: 1_000 + boot,
        kbench_version: "test".into(),
        command_line: "kbench vm-ab".into(),
        uuid: Some(format!("{label}-{boot}")),
        ..NewSession::default()
    };
    let mut runs: Vec<StoredRun> = (0..5)
        .map(|i| {
            let value = median * (1.0 + 0.01 * ((i * 7 + boot as usize * 3) % 5) as f64);
            let record = RunRecord {
                workload: "sched/pipe".into(),
                placement: Some(ObservedPlacement {
                    kind: PlacementKind::SameCpu,
                    colocated_share: Some(1.0),
                }),
                ..RunRecord::default()
            };
            StoredRun {
                workload: "sched/pipe".into(),
                params: BTreeMap::from([("loop".to_string(), serde_json::json!(2000))]),
                variant: "same-cpu".into(),
                run_index: i as u32,
                exit_status: Some(0),
                record: RawJson::from_value(&record),
                values: vec![Value {
                    metric: "usecs_per_op".into(),
                    value,
                    unit: "us/op".into(),
                    higher_is_better: false,
                    primary: true,
                }],
                ..StoredRun::default()
            }
        })
        .collect();
    runs.push(StoredRun {
        workload: "sched/pipe".into(),
        run_index: 5,
        exit_status: Some(1),
        error: Some("a run that failed".into()),
        ..StoredRun::default()
    });
    SessionWithRuns {
        session,
        ended_unix_ns: Some(2_000 + boot),
        runs,
        summaries: Vec::new(),
        kernel_config_hash: None,
    }
}

#[test]
fn labels_grown_by_the_boots_handed_over_read_as_the_store_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("k.db")).unwrap();
    let mut grown = [LabelData::default(), LabelData::default()];
    for (side, label) in ["vm-a", "vm-b"].iter().enumerate() {
        grown[side].label = label.to_string();
        for b in 0..4 {
            let whole = boot(label, b, [10.0, 10.6][side]);
            store
                .insert_boot(&NewBoot {
                    session: &whole.session,
                    console_log: "",
                    kernel_config: None,
                    runs: &whole.runs,
                    ended_unix_ns: 2_000 + b,
                })
                .unwrap();
            grown[side].push_session(&whole, (1 << 40) + 10 * side as i64 + b as i64);
        }
    }
    let read = [
        LabelData::load(&store, "vm-a").unwrap(),
        LabelData::load(&store, "vm-b").unwrap(),
    ];
    for (g, r) in grown.iter().zip(&read) {
        assert_eq!(g.sessions.len(), r.sessions.len());
        for (gs, rs) in g.sessions.iter().zip(&r.sessions) {
            assert_eq!(
                (
                    &gs.label,
                    &gs.kind,
                    &gs.boot_id,
                    gs.started_unix_ns,
                    gs.runs
                ),
                (
                    &rs.label,
                    &rs.kind,
                    &rs.boot_id,
                    rs.started_unix_ns,
                    rs.runs
                )
            );
            assert_eq!((&gs.uuid, &gs.machine), (&rs.uuid, &rs.machine));
        }
        assert_eq!(g.runs.len(), r.runs.len());
        for (gr, rr) in g.runs.iter().zip(&r.runs) {
            assert_eq!(
                (gr.is_measured(), &gr.boot_id),
                (rr.is_measured(), &rr.boot_id)
            );
            assert_eq!(gr.run.values, rr.run.values);
            assert_eq!(gr.run.placement(), rr.run.placement());
            assert_eq!(gr.run.placement().is_some(), gr.is_measured());
        }
        // The groups the analysis makes of them are the same, ids aside.
        let observations = |data: &LabelData| -> Vec<(String, Vec<f64>)> {
            group::group(&data.runs, &data.sessions)
                .into_iter()
                .map(|(key, side)| {
                    let values = side.observations.iter().map(|o| o.value).collect();
                    (key.metric, values)
                })
                .collect()
        };
        assert_eq!(observations(g), observations(r));
    }
    let options = SequentialOptions {
        alpha: 0.05,
        delta_pct: 1.0,
        max_units_per_side: 10,
        use_calibration: false,
        boundary: Boundary::DeclaredMaximum,
    };
    let from_memory = sequential_loaded(&grown[0], &grown[1], options, None, None);
    let from_store = sequential_loaded(&read[0], &read[1], options, None, None);
    assert_eq!(from_memory, from_store);
    assert_eq!(from_memory.rows.len(), 1);
    assert_eq!(from_memory.rows[0].level, kbench_stats::Level::Boot);
}
