//! Stored runs grouped by what makes them comparable, each value with its
//! replication coordinates (boot, session, position) and the CPUs it ran on.
use kbench_record::PlacementKind;
use kbench_stats::{Observation, RunHistogram};
use kbench_store::{RunRow, SessionRow};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What identifies comparable runs: never pooled across different keys.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunKey {
    pub workload: String,
    /// The parameters and the pinning, `name=value` words.
    pub params: String,
    pub variant: String,
}

/// A metric of a key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub run: RunKey,
    pub metric: String,
}

/// Values of one key on one side.
#[derive(Debug, Default, Clone)]
pub struct SideObservations {
    pub observations: Vec<Observation>,
    /// Per observation: the CPU classes its run used (`A53+A72` when mixed), or empty
    /// when unknown (an imported run, a session without a topology).
    pub classes: Vec<Arc<str>>,
    /// Per observation: the CPUs its run used.
    pub cpus: Vec<Arc<[u32]>>,
    /// Per observation: where its run's two tasks mostly ran
    /// ([`kbench_record::ObservedPlacement::effective`]), `None` for other workloads.
    pub placements: Vec<Option<PlacementKind>>,
    /// Per observation: when its run started, if recorded (imports may not say).
    pub starts_unix_ns: Vec<Option<u64>>,
    pub unit: String,
    pub higher_is_better: bool,
    pub primary: bool,
}

impl SideObservations {
    /// The observations `keep` accepts, by index.
    fn select(&self, keep: impl Fn(usize) -> bool) -> SideObservations {
        let kept: Vec<usize> = (0..self.observations.len()).filter(|&i| keep(i)).collect();
        SideObservations {
            observations: kept.iter().map(|&i| self.observations[i].clone()).collect(),
            classes: kept.iter().map(|&i| self.classes[i].clone()).collect(),
            cpus: kept.iter().map(|&i| self.cpus[i].clone()).collect(),
            placements: kept.iter().map(|&i| self.placements[i]).collect(),
            starts_unix_ns: kept.iter().map(|&i| self.starts_unix_ns[i]).collect(),
            // Not `..self.clone()`: that copies every observation to keep three fields.
            unit: self.unit.clone(),
            higher_is_better: self.higher_is_better,
            primary: self.primary,
        }
    }

    /// The observations whose run used exactly the class set `class`.
    pub fn only(&self, class: &str) -> SideObservations {
        self.select(|i| &*self.classes[i] == class)
    }

    /// The observations whose run mostly ran with placement `kind`.
    pub fn only_placement(&self, kind: PlacementKind) -> SideObservations {
        self.select(|i| self.placements[i] == Some(kind))
    }

    /// Distinct class sets, in order of first appearance.
    pub fn class_sets(&self) -> Vec<String> {
        distinct(
            self.classes
                .iter()
                .filter(|c| !c.is_empty())
                .map(|c| c.to_string()),
        )
    }

    /// Distinct placements, in order of first appearance.
    pub fn placement_kinds(&self) -> Vec<PlacementKind> {
        distinct(self.placements.iter().flatten().copied())
    }

    pub fn values(&self) -> Vec<f64> {
        self.observations.iter().map(|o| o.value).collect()
    }
}

/// The distinct items, in order of first appearance.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// Parameters as `name=value` words, in name order.
pub fn params_text(params: &BTreeMap<String, serde_json::Value>) -> String {
    params
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The key of a run: the workload's parameters and the pinning (pinned and unpinned
/// runs measure different placements and are never pooled).
pub fn run_key(run: &RunRow) -> RunKey {
    let params = params_text(&run.run.params);
    let params = match &run.run.pinned_cpus {
        Some(cpus) if params.is_empty() => format!("pinned={cpus}"),
        Some(cpus) => format!("{params} pinned={cpus}"),
        None => params,
    };
    RunKey {
        workload: run.run.workload.clone(),
        params,
        variant: run.run.variant.clone(),
    }
}

/// The session a run counts in for replication: both sides of one `kbench ab` share
/// their interleave group, since their runs alternate.
pub fn replication_session(run: &RunRow, sessions: &BTreeMap<i64, &SessionRow>) -> String {
    sessions.get(&run.session_id).map_or_else(
        || format!("session:{}", run.session_id),
        |s| session_unit(s),
    )
}

fn boot_of(run: &RunRow) -> String {
    boot_of_session(run.session_id, run.boot_id.as_deref())
}

/// The boot a session counts in for replication. A session whose boot is unknown (an
/// import) is a boot of its own: two imports are never taken for one boot.
pub fn boot_of_session(session_id: i64, boot_id: Option<&str>) -> String {
    boot_id.map_or_else(|| format!("unknown:{session_id}"), str::to_string)
}

/// The session a stored session counts as for replication (see
/// [`replication_session`]).
pub fn session_unit(session: &SessionRow) -> String {
    session
        .interleave_group
        .clone()
        .map(|g| format!("group:{g}"))
        .unwrap_or_else(|| format!("session:{}", session.id))
}

/// The CPU classes of each session, from its environment snapshot.
fn session_classes(sessions: &[SessionRow]) -> BTreeMap<i64, Vec<kbench_sys::CpuClass>> {
    sessions
        .iter()
        .filter_map(|s| Some((s.id, crate::snapshot(s)?.classes.clone())))
        .collect()
}

/// The CPU classes a run used, joined with `+` (empty when unknown), and its CPUs.
type RunClass = (Arc<str>, Arc<[u32]>);

/// The classes a run's CPUs belong to, joined with `+`; empty when unknown.
fn run_class(run: &RunRow, classes: &BTreeMap<i64, Vec<kbench_sys::CpuClass>>) -> RunClass {
    let cpus = run
        .run
        .cpus_used
        .as_deref()
        .and_then(|c| kbench_sys::parse_cpulist(c).ok())
        .unwrap_or_default();
    let Some(session_classes) = classes.get(&run.session_id) else {
        return ("".into(), cpus.into());
    };
    let names: Vec<&str> = session_classes
        .iter()
        .filter(|c| c.cpus.iter().any(|cpu| cpus.contains(cpu)))
        .map(|c| c.name.as_str())
        .collect();
    (names.join("+").into(), cpus.into())
}

/// The next position (0, 1, ...) of a run of `key` in its side's run order.
fn next_position(positions: &mut BTreeMap<RunKey, u32>, key: &RunKey) -> u32 {
    let next = positions.entry(key.clone()).or_insert(0);
    *next += 1;
    *next - 1
}

/// Every measured value of one label, by key, in run order.
pub fn group(runs: &[RunRow], sessions: &[SessionRow]) -> BTreeMap<Key, SideObservations> {
    let classes = session_classes(sessions);
    let by_id: BTreeMap<i64, &SessionRow> = sessions.iter().map(|s| (s.id, s)).collect();
    let primary_known = runs.iter().any(|r| r.run.values.iter().any(|v| v.primary));
    let mut groups = Groups::default();
    // The boot and replication session of each stored session, made once and shared
    // by all its runs' observations.
    let mut units: BTreeMap<i64, (Arc<str>, Arc<str>)> = BTreeMap::new();
    let mut last_class: Option<(i64, &str, RunClass)> = None;
    for run in runs.iter().filter(|r| r.is_measured()) {
        let cpus_used = run.run.cpus_used.as_deref().unwrap_or("");
        // A session's runs mostly ran on the same CPUs: their classes, worked out once.
        let (class, cpus) = match &last_class {
            Some((session, used, found)) if *session == run.session_id && *used == cpus_used => {
                found.clone()
            }
            _ => {
                let found = run_class(run, &classes);
                last_class = Some((run.session_id, cpus_used, found.clone()));
                found
            }
        };
        let placement = run.run.placement().map(|p| p.effective());
        let (boot, session) = units
            .entry(run.session_id)
            .or_insert_with(|| (boot_of(run).into(), replication_session(run, &by_id).into()))
            .clone();
        let (metrics, order) = groups.of(run);
        for (i, v) in run.run.values.iter().enumerate() {
            let side = metrics.side(i, &v.metric);
            if side.unit != v.unit {
                side.unit.clone_from(&v.unit);
            }
            side.higher_is_better = v.higher_is_better;
            side.primary = if primary_known {
                v.primary
            } else {
                kbench_store::legacy_primary(&run.run.workload, &v.metric)
            };
            side.observations.push(Observation {
                value: v.value,
                boot: boot.clone(),
                session: session.clone(),
                order,
            });
            side.classes.push(class.clone());
            side.cpus.push(cpus.clone());
            side.placements.push(placement);
            side.starts_unix_ns.push(run.run.start_unix_ns);
        }
    }
    groups.into_keyed()
}

/// [`group`]'s work in progress: each run key's sides by metric, in the order met.
/// A label's runs come in long stretches of one workload with the same metrics in the
/// same order, so a run finds its key by comparing with the last run, and a value its
/// side by position, before anything is looked up.
#[derive(Default)]
struct Groups<'r> {
    keys: Vec<(RunKey, u32, Metrics)>,
    index: BTreeMap<RunKey, usize>,
    last: Option<(&'r RunRow, usize)>,
}

#[derive(Default)]
struct Metrics(Vec<(String, SideObservations)>);

impl Metrics {
    /// The side of `metric`, the run's `i`th value.
    fn side(&mut self, i: usize, metric: &str) -> &mut SideObservations {
        let at = match self.0.get(i) {
            Some((name, _)) if name == metric => i,
            _ => match self.0.iter().position(|(name, _)| name == metric) {
                Some(at) => at,
                None => {
                    self.0
                        .push((metric.to_string(), SideObservations::default()));
                    self.0.len() - 1
                }
            },
        };
        &mut self.0[at].1
    }
}

impl<'r> Groups<'r> {
    /// The metrics of `run`'s key, and the run's position among that key's runs.
    fn of(&mut self, run: &'r RunRow) -> (&mut Metrics, u32) {
        let at = match self.last {
            Some((last, at)) if same_key(last, run) => at,
            _ => {
                let key = run_key(run);
                let at = match self.index.get(&key) {
                    Some(&at) => at,
                    None => {
                        self.keys.push((key.clone(), 0, Metrics::default()));
                        self.index.insert(key, self.keys.len() - 1);
                        self.keys.len() - 1
                    }
                };
                self.last = Some((run, at));
                at
            }
        };
        let (_, next, metrics) = &mut self.keys[at];
        *next += 1;
        (metrics, *next - 1)
    }

    fn into_keyed(self) -> BTreeMap<Key, SideObservations> {
        self.keys
            .into_iter()
            .flat_map(|(run, _, metrics)| {
                metrics.0.into_iter().map(move |(metric, side)| {
                    let key = Key {
                        run: run.clone(),
                        metric,
                    };
                    (key, side)
                })
            })
            .collect()
    }
}

/// Whether two runs have the same [`run_key`], without making it.
fn same_key(a: &RunRow, b: &RunRow) -> bool {
    a.run.workload == b.run.workload
        && a.run.variant == b.run.variant
        && a.run.pinned_cpus == b.run.pinned_cpus
        && a.run.params == b.run.params
}

/// Per run key and series name, each measured run's histogram with its coordinates.
pub type SeriesRuns = BTreeMap<RunKey, BTreeMap<String, Vec<RunHistogram>>>;

/// Per run key and series name, the tick of the series' timestamps when a trace gave
/// them coarser than a nanosecond (a wake phase, the kernel-side total): the largest
/// among the runs.
pub type SeriesResolutions = BTreeMap<(RunKey, String), u64>;

/// The latency histograms of one label's measured runs, and the traced series' ticks.
pub fn series_runs(runs: &[RunRow], sessions: &[SessionRow]) -> (SeriesRuns, SeriesResolutions) {
    let by_id: BTreeMap<i64, &SessionRow> = sessions.iter().map(|s| (s.id, s)).collect();
    let mut out = SeriesRuns::new();
    let mut resolutions = SeriesResolutions::new();
    let mut position: BTreeMap<RunKey, u32> = BTreeMap::new();
    // Whether a run has series is one of its facts, kept by the store: a record is read
    // here only for its histograms.
    for run in runs
        .iter()
        .filter(|r| r.is_measured() && r.run.facts().has_series)
    {
        let Some(record) = run.record().filter(|r| !r.series.is_empty()) else {
            continue;
        };
        let key = run_key(run);
        let order = next_position(&mut position, &key);
        let (boot, session) = (boot_of(run), replication_session(run, &by_id));
        let traced = record
            .wake_phases
            .as_ref()
            .filter(|w| w.timestamp_resolution_ns > 1);
        for s in &record.series {
            if let Some(w) = traced
                .filter(|w| w.total_series == s.name || w.phases.iter().any(|p| p.series == s.name))
            {
                let tick = resolutions
                    .entry((key.clone(), s.name.clone()))
                    .or_default();
                *tick = (*tick).max(w.timestamp_resolution_ns);
            }
        }
        let entry = out.entry(key).or_default();
        for s in &record.series {
            entry.entry(s.name.clone()).or_default().push(RunHistogram {
                boot: boot.clone(),
                session: session.clone(),
                order,
                buckets: s
                    .buckets
                    .iter()
                    .map(|[upper, count]| (*upper as f64, *count))
                    .collect(),
            });
        }
    }
    (out, resolutions)
}
