//! The analysis on constructed data: runs written straight into a real SQLite store
//! (no workload runs), then compared. Each test builds the replication design it is
//! about and checks the design, the verdict and the diagnostics.
use kbench_analysis::calibration::{ComponentKey, Fingerprint};
use kbench_analysis::group::RunKey;
use kbench_analysis::SideName;
use kbench_analysis::{compare_labels, CompareReport, CompareRow, Diagnostic, ReportOptions};
use kbench_record::{LatencySeries, ObservedPlacement, PlacementKind, RunRecord};
use kbench_stats::{Design, Level, NoiseComponents, NoiseSource, Verdict};
use kbench_store::{
    CalibrationComponent, NewCalibration, NewSession, RawJson, Store, StoredRun, Value,
};
use std::collections::BTreeMap;

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    next_start: u64,
    /// The environment snapshot new sessions carry (none by default).
    environment: Option<kbench_record::SessionEnvironment>,
}

/// A deterministic spread of `n` factors around 1 with CV about `cv`.
fn spread(n: usize, cv: f64, phase: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 1.0 + cv * (((i * 7 + phase * 3) % 11) as f64 - 5.0) / 3.2)
        .collect()
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db")).unwrap();
        Fixture {
            _dir: dir,
            store,
            next_start: 1,
            environment: None,
        }
    }

    /// A session of `label` in `boot` whose runs have these usecs_per_op values.
    fn session(&mut self, label: &str, boot: &str, group: Option<&str>, values: &[f64]) -> i64 {
        self.session_with(label, boot, group, values, |_| None)
    }

    fn session_with(
        &mut self,
        label: &str,
        boot: &str,
        group: Option<&str>,
        values: &[f64],
        record: impl Fn(f64) -> Option<RunRecord>,
    ) -> i64 {
        self.next_start += 1;
        let id = self
            .store
            .begin_session(&NewSession {
                label: label.into(),
                kind: "run".into(),
                boot_id: Some(boot.into()),
                started_unix_ns: self.next_start,
                kbench_version: "test".into(),
                command_line: format!("kbench run --label {label}"),
                interleave_group: group.map(str::to_string),
                environment: self.environment.clone(),
                ..NewSession::default()
            })
            .unwrap();
        for (i, v) in values.iter().enumerate() {
            let run = StoredRun {
                workload: "sched/pipe".into(),
                params: BTreeMap::from([("loop".to_string(), serde_json::json!(1000))]),
                variant: "symmetric".into(),
                run_index: i as u32,
                exit_status: Some(0),
                values: vec![Value {
                    metric: "usecs_per_op".into(),
                    value: *v,
                    unit: "us/op".into(),
                    higher_is_better: false,
                    primary: true,
                }],
                record: record(*v).and_then(|r| RawJson::from_value(&r)),
                ..StoredRun::default()
            };
            self.store.insert_run(id, &run).unwrap();
        }
        id
    }

    fn compare(&self, base: &str, new: &str) -> CompareReport {
        compare_labels(&self.store, base, new, ReportOptions::default()).unwrap()
    }
}

fn primary(report: &CompareReport) -> &CompareRow {
    report
        .rows
        .iter()
        .find(|r| r.metric == "usecs_per_op" && !r.is_split())
        .unwrap_or_else(|| panic!("no usecs_per_op row: {report:?}"))
}

fn runs(center: f64, cv: f64, phase: usize) -> Vec<f64> {
    spread(12, cv, phase).iter().map(|f| f * center).collect()
}

#[test]
fn one_session_a_side_makes_no_claim_even_for_a_large_change() {
    let mut f = Fixture::new();
    f.session("a", "boot1", None, &runs(10.0, 0.01, 0));
    f.session("b", "boot1", None, &runs(13.0, 0.01, 1));
    let report = f.compare("a", "b");
    let row = primary(&report);
    assert_eq!(row.design, Some(Design::Unpaired(Level::Session)));
    assert_eq!(row.verdict, Verdict::Inconclusive);
    assert!(row.diagnostics.contains(&Diagnostic::NoReplication {
        level: Level::Session
    }));
    // No spread at all: no number of sessions, but what would give one.
    assert_eq!(row.units_needed, None);
    assert_eq!(row.settle, Some(kbench_stats::UnitsToSettle::unknown()));
    assert!((row.shift_pct.unwrap() - 30.0).abs() < 1.0, "{row:?}");
    assert_eq!(report.tally.inconclusive, 1);
}

#[test]
fn three_sessions_a_side_are_the_units() {
    let mut f = Fixture::new();
    // Sessions offset by up to ±2 %; B 10 % slower.
    for (i, offset) in [1.0, 1.02, 0.98].iter().enumerate() {
        f.session("a", "boot1", None, &runs(10.0 * offset, 0.01, i));
        f.session("b", "boot1", None, &runs(11.0 * offset, 0.01, i + 3));
    }
    let report = f.compare("a", "b");
    let row = primary(&report);
    assert_eq!(row.design, Some(Design::Unpaired(Level::Session)));
    assert_eq!((row.units_a, row.units_b), (3, 3));
    assert_eq!(row.verdict, Verdict::Regression, "{row:?}");
    assert_eq!(report.base.sessions, 3);
    assert_eq!(report.tally.regression, 1);
}

#[test]
fn ab_groups_in_several_boots_are_paired_by_boot() {
    let mut f = Fixture::new();
    // Boot offsets of ±20 % would swamp an unpaired 3 % change; pairing cancels them.
    for (i, offset) in [1.0, 1.2, 0.8, 1.1].iter().enumerate() {
        let boot = format!("boot{i}");
        let group = format!("g{i}");
        f.session("a", &boot, Some(&group), &runs(10.0 * offset, 0.005, i));
        f.session("b", &boot, Some(&group), &runs(10.3 * offset, 0.005, i));
    }
    let report = f.compare("a", "b");
    let row = primary(&report);
    assert_eq!(row.design, Some(Design::Paired(Level::Boot)));
    assert_eq!(row.verdict, Verdict::Regression, "{row:?}");
    assert_eq!(report.base.sessions, 4);
}

#[test]
fn one_interleaved_group_compares_runs() {
    let mut f = Fixture::new();
    f.session("a", "boot1", Some("g"), &runs(10.0, 0.01, 0));
    f.session("b", "boot1", Some("g"), &runs(10.5, 0.01, 1));
    let report = f.compare("a", "b");
    let row = primary(&report);
    assert_eq!(row.design, Some(Design::Interleaved));
    assert_eq!(row.verdict, Verdict::Regression, "{row:?}");
    assert!(row.method.starts_with("hodges-lehmann"), "{}", row.method);
    assert_eq!(report.base.sessions, 1);
}

fn calibrate(f: &mut Fixture, session_sd: f64) {
    let components = NoiseComponents {
        runs: 60,
        sessions: 5,
        boots: 1,
        within_sd: Some(0.01),
        session_sd: Some(session_sd),
        session_df: 4,
        runs_per_session: 12.0,
        session_within_var: 0.01f64.powi(2) / 12.0,
        sessions_per_boot: 5.0,
        between_session_sd: Some(session_sd),
        ..NoiseComponents::default()
    };
    let key = ComponentKey {
        run: RunKey {
            workload: "sched/pipe".into(),
            params: "loop=1000".into(),
            variant: "symmetric".into(),
        },
        metric: "usecs_per_op".into(),
        pooled_quantile: None,
    };
    f.store
        .insert_calibration(&NewCalibration {
            label: "kbench-calibration".into(),
            created_unix_ns: 1,
            kbench_version: "test".into(),
            fingerprint: serde_json::to_value(Fingerprint {
                host: Some("test-host".into()),
                ..Fingerprint::default()
            })
            .unwrap(),
            sessions: 5,
            boots: 1,
            components: vec![CalibrationComponent {
                workload: key.run.workload,
                params: key.run.params,
                variant: key.run.variant,
                metric: key.metric,
                pooled_quantile: None,
                components: serde_json::to_value(&components).unwrap(),
            }],
        })
        .unwrap();
}

#[test]
fn a_calibration_lets_one_session_a_side_claim_and_raises_delta() {
    let mut f = Fixture::new();
    calibrate(&mut f, 0.02);
    // Sessions with an environment have a machine to match the calibration's.
    f.environment = Some(kbench_record::SessionEnvironment::of(
        kbench_sys::EnvSnapshot {
            hostname: Some("test-host".into()),
            ..kbench_sys::EnvSnapshot::default()
        },
    ));
    for (label, center, phase) in [("a", 10.0, 0), ("b", 13.0, 1), ("c", 10.1, 2)] {
        f.session(label, "boot1", None, &runs(center, 0.01, phase));
    }
    let report = f.compare("a", "b");
    assert!(report.calibration.is_some(), "{report:?}");
    let row = primary(&report);
    assert_eq!(row.verdict, Verdict::Regression, "{row:?}");
    assert!(row.diagnostics.iter().any(|d| matches!(
        d,
        Diagnostic::BorrowedNoise {
            source: NoiseSource::Calibration,
            ..
        }
    )));
    // A 2 % session noise with one session a side cannot resolve 1 %: delta is raised.
    assert!(row.delta_pct > 5.0, "{row:?}");
    assert!(row
        .diagnostics
        .iter()
        .any(|d| matches!(d, Diagnostic::DeltaRaised { .. })));
    // A 1 % change inside that noise is not claimed.
    let small = f.compare("a", "c");
    assert!(
        !primary(&small).verdict.claims_difference(),
        "{:?}",
        primary(&small)
    );
    // Without the calibration, no claim at all.
    let bare = compare_labels(
        &f.store,
        "a",
        "b",
        ReportOptions {
            use_calibration: false,
            ..ReportOptions::default()
        },
    )
    .unwrap();
    assert!(bare.calibration.is_none());
    assert_eq!(primary(&bare).verdict, Verdict::Inconclusive);
}

fn latency_record(offset: f64) -> RunRecord {
    // 200 wakes spread over [offset·10 µs, offset·15 µs).
    let buckets: Vec<[u64; 2]> = (0..200)
        .map(|i| [(offset * (10_000.0 + 25.0 * i as f64)) as u64, 1])
        .collect();
    RunRecord {
        workload: "sched/pipe".into(),
        series: vec![LatencySeries {
            name: "wake_latency".into(),
            count: 200,
            buckets,
            ..LatencySeries::default()
        }],
        ..RunRecord::default()
    }
}

#[test]
fn pooled_percentiles_resample_runs_and_are_secondary() {
    let mut f = Fixture::new();
    f.session_with("a", "boot1", Some("g"), &runs(10.0, 0.01, 0), |v| {
        Some(latency_record(v / 10.0))
    });
    f.session_with("b", "boot1", Some("g"), &runs(14.0, 0.01, 1), |v| {
        Some(latency_record(v / 10.0))
    });
    let report = f.compare("a", "b");
    let pooled: Vec<&CompareRow> = report
        .rows
        .iter()
        .filter(|r| matches!(r.kind, kbench_analysis::RowKind::PooledPercentile { .. }))
        .collect();
    assert_eq!(pooled.len(), 4, "p50, p90, p99, p99.9");
    let p50 = pooled[0];
    assert_eq!(p50.metric, "wake_latency");
    assert_eq!(p50.role, kbench_record::Role::Secondary);
    assert_eq!(p50.verdict, Verdict::Regression, "{p50:?}");
    assert!(p50.method.contains("seed"), "{}", p50.method);
    assert!(p50.diagnostics.iter().any(|d| matches!(
        d,
        Diagnostic::Pooled {
            samples_a: 2400,
            runs_a: 12,
            ..
        }
    )));
    // The headline counts the one primary row only.
    assert_eq!(report.tally.regression, 1);
}

#[test]
fn failed_runs_and_warmups_are_not_measured() {
    let mut f = Fixture::new();
    let id = f.session("a", "boot1", Some("g"), &runs(10.0, 0.01, 0));
    f.session("b", "boot1", Some("g"), &runs(10.0, 0.01, 1));
    // A failed run keeps its workload and parameters; it has no variant.
    let failed = StoredRun {
        workload: "sched/pipe".into(),
        params: BTreeMap::from([("loop".to_string(), serde_json::json!(1000))]),
        error: Some("worker died".into()),
        ..StoredRun::default()
    };
    let warmup = StoredRun {
        warmup: true,
        ..failed.clone()
    };
    f.store.insert_run(id, &failed).unwrap();
    f.store
        .insert_run(
            id,
            &StoredRun {
                error: None,
                values: vec![Value {
                    metric: "usecs_per_op".into(),
                    value: 1000.0,
                    unit: "us/op".into(),
                    higher_is_better: false,
                    primary: true,
                }],
                ..warmup
            },
        )
        .unwrap();
    let report = f.compare("a", "b");
    assert_eq!(report.base.runs, 12);
    let row = primary(&report);
    assert_eq!(row.n_a, 12);
    assert!(row
        .diagnostics
        .iter()
        .any(|d| matches!(d, Diagnostic::FailedRuns { count: 1, .. })));
}

/// A run record that says where its two tasks ran.
fn placed(kind: PlacementKind, share: f64) -> Option<RunRecord> {
    Some(RunRecord {
        workload: "sched/pipe".into(),
        placement: Some(ObservedPlacement {
            kind,
            colocated_share: Some(share),
        }),
        ..RunRecord::default()
    })
}

#[test]
fn runs_on_one_cpu_and_across_cpus_are_split_and_explain_the_modes() {
    let mut f = Fixture::new();
    // Two thirds of the runs on one CPU (1.7 us/op), a third across (13 us/op);
    // a start-up migration (mixed, 97 % colocated) counts as one CPU.
    let values = |center_same: f64, center_cross: f64, phase: usize| -> Vec<f64> {
        spread(12, 0.01, phase)
            .iter()
            .enumerate()
            .map(|(i, f)| {
                f * if i % 3 == 2 {
                    center_cross
                } else {
                    center_same
                }
            })
            .collect()
    };
    let record = |v: f64| {
        if v > 5.0 {
            placed(PlacementKind::CrossCpu, 0.0)
        } else if ((v * 1000.0) as u64).is_multiple_of(2) {
            placed(PlacementKind::Mixed, 0.97)
        } else {
            placed(PlacementKind::SameCpu, 1.0)
        }
    };
    for i in 0..3 {
        f.session_with("a", "boot1", None, &values(1.7, 13.0, i), record);
        f.session_with("b", "boot1", None, &values(1.7, 13.0, i + 3), record);
    }
    let report = f.compare("a", "b");
    let pooled = primary(&report);
    let mix = pooled
        .diagnostics
        .iter()
        .find_map(|d| match d {
            Diagnostic::PlacementMix { base, .. } => Some(base),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no placement mix: {pooled:?}"));
    let counts: Vec<(PlacementKind, usize)> =
        mix.iter().map(|g| (g.placement, g.runs.len())).collect();
    assert!(counts.contains(&(PlacementKind::SameCpu, 24)), "{counts:?}");
    assert!(
        counts.contains(&(PlacementKind::CrossCpu, 12)),
        "{counts:?}"
    );
    for side in [SideName::Base, SideName::New] {
        let modes = pooled.diagnostics.iter().find_map(|d| match d {
            Diagnostic::ModesArePlacements { side: s, groups } if *s == side => Some(groups),
            _ => None,
        });
        let modes = modes.unwrap_or_else(|| panic!("{side:?}: modes not explained: {pooled:?}"));
        assert_eq!(modes[0].placement, PlacementKind::SameCpu);
        assert!((modes[0].median - 1.7).abs() < 0.1 && (modes[1].median - 13.0).abs() < 1.0);
    }
    let split: Vec<Option<PlacementKind>> = report
        .rows
        .iter()
        .filter(|r| r.metric == "usecs_per_op" && r.is_split())
        .map(|r| r.placement)
        .collect();
    assert_eq!(
        split,
        [Some(PlacementKind::SameCpu), Some(PlacementKind::CrossCpu)]
    );
    // Only the pooled row counts in the tally.
    assert_eq!(report.tally.inconclusive + report.tally.equivalent, 1);
}

#[test]
fn one_placement_throughout_adds_nothing() {
    let mut f = Fixture::new();
    for i in 0..3 {
        let record = |_| placed(PlacementKind::CrossCpu, 0.0);
        f.session_with("a", "boot1", None, &runs(13.0, 0.01, i), record);
        f.session_with("b", "boot1", None, &runs(13.0, 0.01, i + 3), record);
    }
    let report = f.compare("a", "b");
    assert!(report.rows.iter().all(|r| !r.is_split()));
    assert!(!primary(&report).diagnostics.iter().any(|d| matches!(
        d,
        Diagnostic::PlacementMix { .. } | Diagnostic::ModesArePlacements { .. }
    )));
}

fn config_comparison(report: &CompareReport) -> &kbench_analysis::ConfigComparison {
    match &report.config_differences {
        kbench_analysis::ConfigDifferences::Compared(c) => c,
        other => panic!("configs not compared: {other:?}"),
    }
}

#[test]
fn kernel_configs_of_the_newest_sessions_are_compared_option_by_option() {
    let mut f = Fixture::new();
    let old_base = f.session("base", "b1", None, &runs(10.0, 0.01, 0));
    let base = f.session("base", "b2", None, &runs(10.0, 0.01, 1));
    let new = f.session("new", "b3", None, &runs(10.0, 0.01, 2));
    // The newest new session has no config: the newest that has one is compared.
    f.session("new", "b4", None, &runs(10.0, 0.01, 3));
    // The older base session's config is not the one compared.
    f.store
        .set_kernel_config(old_base, "CONFIG_OLD=y\n")
        .unwrap();
    f.store
        .set_kernel_config(
            base,
            "CONFIG_A=y\nCONFIG_B=y\nCONFIG_HZ=250\n# CONFIG_N is not set\nCONFIG_SAME=m\n",
        )
        .unwrap();
    f.store
        .set_kernel_config(
            new,
            "CONFIG_A=m\nCONFIG_C=y\nCONFIG_HZ=1000\nCONFIG_SAME=m\n",
        )
        .unwrap();
    let report = f.compare("base", "new");
    let c = config_comparison(&report);
    let listed: Vec<String> = c
        .differences
        .iter()
        .map(|d| format!("{}={}->{}", d.option, d.base, d.new))
        .collect();
    // Changed values first, then options set on one side only; n and absent are one.
    assert_eq!(
        listed,
        [
            "CONFIG_A=y->m",
            "CONFIG_HZ=250->1000",
            "CONFIG_B=y->n",
            "CONFIG_C=n->y"
        ]
    );
    assert_eq!((c.changed, c.only_base, c.only_new), (2, 1, 1));
    assert_eq!((c.base_options_set, c.new_options_set), (4, 4));
    assert_ne!(c.base_hash, c.new_hash);
    // base's two sessions ran on kernels of two configs: said as a note on base.
    let base_note = report.notes.iter().find_map(|n| match n {
        kbench_analysis::ReportNote::SessionsDiffer { side, keys } if *side == SideName::Base => {
            Some(keys.clone())
        }
        _ => None,
    });
    assert_eq!(base_note, Some(vec!["kernel_config".to_string()]));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["config_differences"]["status"], "compared");
    assert_eq!(json["config_differences"]["differences"][0]["base"], "y");
    assert_eq!(json["config_differences"]["differences"][0]["new"], "m");
}

#[test]
fn one_config_on_both_sides_has_no_differences_and_an_unknown_side_is_named() {
    let mut f = Fixture::new();
    let a = f.session("base", "b1", None, &runs(10.0, 0.01, 0));
    let b = f.session("new", "b2", None, &runs(10.0, 0.01, 1));
    f.session("other", "b3", None, &runs(10.0, 0.01, 2));
    f.store.set_kernel_config(a, "CONFIG_A=y\n").unwrap();
    f.store.set_kernel_config(b, "CONFIG_A=y\r\n").unwrap();
    let same = f.compare("base", "new");
    let c = config_comparison(&same);
    assert!(c.differences.is_empty());
    assert_eq!(c.base_hash, c.new_hash);
    match f.compare("base", "other").config_differences {
        kbench_analysis::ConfigDifferences::Unknown { sides } => {
            assert_eq!(sides, [SideName::New])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_report_reads_each_label_once_and_draws_from_what_it_read() {
    let mut f = Fixture::new();
    for (i, offset) in [1.0, 1.02, 0.98].iter().enumerate() {
        f.session("a", "boot1", None, &runs(10.0 * offset, 0.01, i));
        f.session("b", "boot1", None, &runs(11.0 * offset, 0.01, i + 3));
        f.session("c", "boot1", None, &runs(10.0 * offset, 0.01, i + 6));
    }
    let news = ["b".to_string(), "c".to_string()];
    let before = f.store.queries();
    let comparisons = kbench_analysis::compare_each(
        &f.store,
        "a",
        &news,
        ReportOptions::default(),
        &kbench_analysis::Machines::Same,
    )
    .unwrap();
    // Per NEW: whether BASE and NEW exist (2). Per label, once: its runs, their
    // values, its sessions and its summaries (4); BASE is not read again.
    assert_eq!(f.store.queries() - before, 2 * 2 + 4 * 3);
    let read = f.store.queries();
    let plots = kbench_analysis::plots::plot_each(&comparisons);
    assert_eq!(f.store.queries(), read, "the plots read nothing");
    assert_eq!(plots.len(), 2);
    assert_eq!(plots[0].workloads[0].points.len(), 2 * 3 * 12);
    assert_eq!(comparisons.reports[0], f.compare("a", "b"));
}
