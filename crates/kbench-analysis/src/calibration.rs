//! This machine's noise floor from A/A sessions (`kbench calibrate`): variance
//! components per workload, parameters, variant and metric, stored with a fingerprint
//! of the machine, and found again for a comparison made on the same machine.
use crate::group::{self, RunKey};
use crate::LabelData;
use kbench_record::Clock;
use kbench_stats::{components_from_units, noise_components, Level, NoiseComponents};
use kbench_store::{CalibrationComponent, CalibrationRow, NewCalibration, SessionRow, Store};
use serde::{Deserialize, Serialize};

/// The label calibration sessions are stored under.
pub const CALIBRATION_LABEL: &str = "kbench-calibration";

/// The quantiles of latency series that pooled rows compare.
pub const POOLED_QUANTILES: [(f64, &str); 4] =
    [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9")];

/// `p99` for 0.99, as reports name a pooled percentile.
pub fn quantile_name(q: f64) -> String {
    POOLED_QUANTILES
        .iter()
        .find(|(known, _)| *known == q)
        .map_or_else(|| format!("q{q}"), |(_, name)| name.to_string())
}

/// A calibration older than this is still used, with a warning.
pub const STALE_AFTER_DAYS: f64 = 30.0;

/// What identifies the machine a calibration describes. Host name and CPU models must
/// match for a calibration to be used; the kernel may differ (a comparison before and
/// after a patch always spans two), which is said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub host: Option<String>,
    pub cpu_models: Vec<String>,
    /// Which of several machines of that host name and CPU models
    /// (`kbench_sys::machine_id`); a calibration made before ids has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    pub kernel_release: Option<String>,
    /// FNV-1a of the kernel command line, hex.
    pub cmdline_hash: Option<String>,
    pub kbench_version: String,
    /// What the figures were measured with: counted boots' noise (instructions) is
    /// not a timed machine's.
    #[serde(default, skip_serializing_if = "Clock::is_wall")]
    pub clock: Clock,
}

impl Fingerprint {
    pub fn of(snapshot: &kbench_sys::EnvSnapshot, kbench_version: &str) -> Fingerprint {
        Fingerprint {
            host: snapshot.hostname.clone(),
            cpu_models: snapshot.cpu_models.clone(),
            machine_id: snapshot.machine_id.clone(),
            kernel_release: snapshot.kernel_release.clone(),
            cmdline_hash: snapshot.cmdline.as_deref().map(fnv1a_hex),
            kbench_version: kbench_version.to_string(),
            clock: Clock::Wall,
        }
    }

    /// Whether a calibration with this fingerprint describes `machine`'s noise: the
    /// same host name (known on both), the same CPU models, the same machine id where
    /// both have one (a calibration made before ids describes the machine of its name,
    /// as it did then), and the same clock.
    pub fn same_machine(&self, machine: &Fingerprint) -> bool {
        let hosts_agree = matches!((&self.host, &machine.host), (Some(a), Some(b)) if a == b);
        let ids_agree = match (&self.machine_id, &machine.machine_id) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        hosts_agree
            && self.cpu_models == machine.cpu_models
            && ids_agree
            && self.clock == machine.clock
    }

    /// Whether kernel release and command line agree.
    pub fn same_kernel(&self, machine: &Fingerprint) -> bool {
        self.kernel_release == machine.kernel_release && self.cmdline_hash == machine.cmdline_hash
    }

    pub fn kernel_text(&self) -> String {
        self.kernel_release
            .clone()
            .unwrap_or_else(|| "unknown".into())
    }
}

fn fnv1a_hex(text: &str) -> String {
    format!("{:016x}", kbench_record::fnv1a(text.as_bytes()))
}

/// What a calibration component describes: a per-run metric, or a pooled percentile.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub struct ComponentKey {
    pub run: RunKey,
    pub metric: String,
    pub pooled_quantile: Option<f64>,
}

/// A stored calibration, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub row: CalibrationRow,
    pub fingerprint: Fingerprint,
    pub components: Vec<(ComponentKey, NoiseComponents)>,
}

impl Calibration {
    pub fn find(&self, key: &ComponentKey) -> Option<&NoiseComponents> {
        self.components
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, c)| c)
    }
}

/// The fingerprint of the machine a set of sessions ran on (the newest snapshot), with
/// the clock its figures were measured with.
pub fn fingerprint_of(sessions: &[SessionRow]) -> Option<Fingerprint> {
    sessions.iter().rev().find_map(|s| {
        let snapshot = crate::snapshot(s)?;
        let clock = s
            .environment
            .as_ref()
            .map(|e| e.clock())
            .unwrap_or_default();
        Some(Fingerprint {
            clock,
            ..Fingerprint::of(snapshot, &s.kbench_version)
        })
    })
}

/// Computes the components of every metric from the calibration sessions of a label
/// (read once, [`LabelData`]) that ran on the machine of its newest session:
/// within-session, between-session and (from two boots on) between-boot, for per-run
/// metrics and pooled percentiles.
pub fn compute(data: &LabelData, seed: u64) -> Result<NewCalibration, crate::AnalysisError> {
    let label = data.label.as_str();
    let Some(machine) = fingerprint_of(&data.sessions) else {
        return Err(crate::AnalysisError::Usage(format!(
            "no calibration sessions with an environment under '{label}'"
        )));
    };
    let mine = data.of_sessions(|s| {
        fingerprint_of(std::slice::from_ref(s)).is_some_and(|f| f.same_machine(&machine))
    });
    let mut components = Vec::new();
    for (key, side) in group::group(&mine.runs, &mine.sessions) {
        if side.observations.iter().any(|o| o.value <= 0.0) {
            continue;
        }
        components.push(component(
            &key.run,
            &key.metric,
            None,
            &noise_components(&side.observations),
        ));
    }
    for (run_key, series) in group::series_runs(&mine.runs, &mine.sessions).0 {
        for (name, histograms) in series {
            for (q, _) in POOLED_QUANTILES {
                let units = kbench_stats::pooled::session_estimates(&histograms, q, 200, seed);
                if units.len() < 2 {
                    continue;
                }
                components.push(component(
                    &run_key,
                    &name,
                    Some(q),
                    &components_from_units(&units),
                ));
            }
        }
    }
    let boots: std::collections::BTreeSet<_> = mine
        .sessions
        .iter()
        .filter_map(|s| s.boot_id.clone())
        .collect();
    Ok(NewCalibration {
        label: label.to_string(),
        created_unix_ns: mine
            .sessions
            .iter()
            .filter_map(|s| s.ended_unix_ns)
            .max()
            .unwrap_or(0),
        kbench_version: machine.kbench_version.clone(),
        fingerprint: serde_json::to_value(&machine).unwrap_or_default(),
        sessions: mine.sessions.len() as u64,
        boots: boots.len() as u64,
        components,
    })
}

fn component(
    run: &RunKey,
    metric: &str,
    pooled_quantile: Option<f64>,
    c: &NoiseComponents,
) -> CalibrationComponent {
    CalibrationComponent {
        workload: run.workload.clone(),
        params: run.params.clone(),
        variant: run.variant.clone(),
        metric: metric.to_string(),
        pooled_quantile,
        components: serde_json::to_value(c).unwrap_or_default(),
    }
}

/// The calibration of the stored sessions of `labels` (`calibrate --from`: the boots of
/// an A/A by `vm-ab`, counted or timed) and the machine they ran on. Counted
/// and timed sessions are never pooled, here either; a label without sessions, or fewer
/// than two sessions with measured runs, is the user's mistake.
pub fn from_labels(
    store: &Store,
    labels: &[String],
    seed: u64,
) -> Result<(NewCalibration, Fingerprint), crate::AnalysisError> {
    let mut loaded = Vec::new();
    for label in labels {
        let data = LabelData::load(store, label)?;
        if data.sessions.is_empty() {
            return Err(crate::AnalysisError::Usage(format!(
                "no label '{label}' (kbench list shows the labels)"
            )));
        }
        loaded.push(data);
    }
    let data = LabelData::joined(loaded);
    crate::clock::label_clock(&labels.join(", "), &data.sessions)?;
    let computed = compute(&data, seed)?;
    if computed.sessions < 2 {
        return Err(crate::AnalysisError::Usage(format!(
            "{}: {} session with measured runs; a calibration needs two or more",
            labels.join(", "),
            computed.sessions
        )));
    }
    let Some(machine) = fingerprint_of(&data.sessions) else {
        let why = "the calibration just made matches none of its sessions' machines";
        return Err(crate::AnalysisError::Usage(why.into()));
    };
    Ok((computed, machine))
}

/// The newest calibration made on `machine`, if any.
pub fn matching(
    store: &Store,
    machine: &Fingerprint,
) -> Result<Option<Calibration>, crate::AnalysisError> {
    for row in store.calibrations()?.into_iter().rev() {
        let Ok(fingerprint) = serde_json::from_value::<Fingerprint>(row.fingerprint.clone()) else {
            continue;
        };
        if !fingerprint.same_machine(machine) {
            continue;
        }
        let components = store
            .calibration_components(row.id)?
            .into_iter()
            .filter_map(|c| {
                let noise = serde_json::from_value::<NoiseComponents>(c.components).ok()?;
                let key = ComponentKey {
                    run: RunKey {
                        workload: c.workload,
                        params: c.params,
                        variant: c.variant,
                    },
                    metric: c.metric,
                    pooled_quantile: c.pooled_quantile,
                };
                Some((key, noise))
            })
            .collect();
        return Ok(Some(Calibration {
            row,
            fingerprint,
            components,
        }));
    }
    Ok(None)
}

/// One line of `kbench calibrate --show`: what a metric's noise lets this machine
/// resolve with 1, 3 and 10 units a side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolvable {
    pub workload: String,
    pub params: String,
    pub variant: String,
    pub metric: String,
    pub pooled_quantile: Option<f64>,
    pub level: Level,
    pub within_cv_pct: Option<f64>,
    pub between_session_cv_pct: Option<f64>,
    pub between_boot_cv_pct: Option<f64>,
    /// The smallest resolvable change, percent, with 1, 3 and 10 units a side.
    pub resolvable_pct: [Option<f64>; 3],
}

/// The resolvable change of every component, at the boot level when the calibration
/// spans two boots or more, else at the session level.
pub fn resolvable(cal: &Calibration, alpha: f64) -> Vec<Resolvable> {
    let cv = |sd: Option<f64>| sd.map(|s| 100.0 * s.exp_m1());
    let level = if cal.row.boots >= 2 {
        Level::Boot
    } else {
        Level::Session
    };
    let mut out: Vec<Resolvable> = cal
        .components
        .iter()
        .map(|(k, c)| Resolvable {
            workload: k.run.workload.clone(),
            params: k.run.params.clone(),
            variant: k.run.variant.clone(),
            metric: k.metric.clone(),
            pooled_quantile: k.pooled_quantile,
            level,
            within_cv_pct: cv(c.within_sd),
            between_session_cv_pct: cv(c.between_session_sd),
            between_boot_cv_pct: cv(c.between_boot_sd),
            resolvable_pct: [1, 3, 10]
                .map(|units| kbench_stats::resolvable_change_pct(c, level, units, alpha)),
        })
        .collect();
    out.sort_by(|a, b| {
        (
            &a.workload,
            &a.params,
            &a.metric,
            a.pooled_quantile.map(|q| (q * 1e6) as u64),
        )
            .cmp(&(
                &b.workload,
                &b.params,
                &b.metric,
                b.pooled_quantile.map(|q| (q * 1e6) as u64),
            ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::Fingerprint;

    fn board(id: Option<&str>) -> Fingerprint {
        Fingerprint {
            host: Some("kbench-guest".into()),
            cpu_models: vec!["Cortex-A53".into(), "Cortex-A72".into()],
            machine_id: id.map(str::to_string),
            ..Fingerprint::default()
        }
    }

    #[test]
    fn a_calibration_is_of_one_board_and_one_made_before_ids_is_of_its_name() {
        let (a, b, before_ids) = (board(Some("dt:aa")), board(Some("dt:bb")), board(None));
        assert!(a.same_machine(&a));
        assert!(!a.same_machine(&b), "two boards of one type");
        assert!(before_ids.same_machine(&a) && before_ids.same_machine(&b));
        assert!(a.same_machine(&before_ids));
        let elsewhere = Fingerprint {
            host: Some("other".into()),
            ..board(Some("dt:aa"))
        };
        assert!(!a.same_machine(&elsewhere), "an id does not join two names");
        // A counted guest's noise is in instructions: never a timed guest's.
        let counted = Fingerprint {
            clock: kbench_record::Clock::Instructions,
            ..board(Some("dt:aa"))
        };
        assert!(!a.same_machine(&counted) && !counted.same_machine(&a));
        assert!(counted.same_machine(&counted));
        let json = serde_json::to_value(&a).unwrap();
        assert!(
            json.get("clock").is_none(),
            "a timed fingerprint as before: {json}"
        );
        assert_eq!(
            serde_json::to_value(&counted).unwrap()["clock"],
            "instructions"
        );
    }
}
