//! A run as it is stored: the contract between whatever produces runs (the runner,
//! the importers, a guest's console) and the store that keeps them.
use crate::json::RawJson;
use crate::{MetricValue, RunRecord, WorkloadId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A new session's description.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewSession {
    pub label: String,
    pub kind: String,
    pub boot_id: Option<String>,
    pub started_unix_ns: u64,
    pub kbench_version: String,
    pub command_line: String,
    pub seed: Option<u64>,
    pub environment: Option<crate::SessionEnvironment>,
    /// The file an `import` session was read from; `None` for sessions run here.
    #[serde(default, deserialize_with = "source_of_any_version")]
    pub source: Option<ImportSource>,
    /// Sessions whose runs alternate (the two sides of one `kbench ab`) share a group:
    /// for replication they are one session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave_group: Option<String>,
    /// The session's identity in every database it is copied to (`kbench push`,
    /// export and import); made when the session is first stored if `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
}

impl NewSession {
    /// This session as the one of a file measured elsewhere (`kbench import`,
    /// `import-trace`): its source, with the hash of its content that refuses the same
    /// file twice, and without this machine's boot and environment, which do not
    /// describe it.
    pub fn measured_elsewhere(self, file: &str, format: &str, text: &str) -> NewSession {
        let content_hash = format!("{:016x}", crate::fnv1a(text.as_bytes()));
        NewSession {
            source: Some(ImportSource {
                file: file.to_string(),
                format: format.to_string(),
                content_hash: Some(content_hash),
            }),
            boot_id: None,
            environment: None,
            ..self
        }
    }
}

/// Where an imported session came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportSource {
    /// The path given to `kbench import` (`-` for standard input).
    pub file: String,
    /// The reader that understood it: `perf-bench`, `perf-stat`, `hyperfine`.
    pub format: String,
    /// A fingerprint of the file's content (16 hex digits), so that the same file is
    /// never imported twice into one label.
    #[serde(default)]
    pub content_hash: Option<String>,
}

impl ImportSource {
    /// The one-line text older kbench versions stored, `FILE (FORMAT, content HASH)`.
    pub fn from_legacy_text(text: &str) -> ImportSource {
        let parsed = text.strip_suffix(')').and_then(|t| {
            let (rest, hash) = t.rsplit_once(", content ")?;
            let (file, format) = rest.rsplit_once(" (")?;
            Some(ImportSource {
                file: file.into(),
                format: format.into(),
                content_hash: Some(hash.into()),
            })
        });
        parsed.unwrap_or_else(|| ImportSource {
            file: text.into(),
            ..ImportSource::default()
        })
    }
}

/// An export's `source`: an [`ImportSource`], or the text of a version 1 export.
fn source_of_any_version<'de, D>(d: D) -> Result<Option<ImportSource>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum AnyVersion {
        Typed(ImportSource),
        Text(String),
    }
    Ok(match Option::<AnyVersion>::deserialize(d)? {
        Some(AnyVersion::Typed(s)) => Some(s),
        Some(AnyVersion::Text(t)) => Some(ImportSource::from_legacy_text(&t)),
        None => None,
    })
}

/// One measured value of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Value {
    pub metric: String,
    pub value: f64,
    pub unit: String,
    pub higher_is_better: bool,
    /// The run's primary metric (one per run). Read back from a run of an older kbench,
    /// none of whose values is marked, it is [`legacy_primary`]'s choice.
    #[serde(default)]
    pub primary: bool,
}

/// A run as stored.
///
/// Two runs are equal when they hold the same: their [`StoredRun::facts`] are what
/// their record says, and are not compared.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StoredRun {
    pub workload: String,
    pub params: BTreeMap<String, serde_json::Value>,
    pub variant: String,
    pub run_index: u32,
    pub warmup: bool,
    pub exit_status: Option<i32>,
    pub start_unix_ns: Option<u64>,
    pub end_unix_ns: Option<u64>,
    pub pinned_cpus: Option<String>,
    pub cpus_used: Option<String>,
    /// The getrusage figures, as JSON: a workload's [`crate::RusageDelta`], or a
    /// command's (`voluntary_csw`, `user_us`, `max_rss_kib`, ...).
    pub rusage: Option<RawJson>,
    /// Per task, the CPUs it ran on: JSON of [`crate::TaskCpus`].
    pub tasks: Option<RawJson>,
    /// The workload's own run record (a [`RunRecord`], see [`StoredRun::record`]), when
    /// there is one; the same for a `kbench ab` run. Kept as text until asked for.
    pub record: Option<RawJson>,
    pub values: Vec<Value>,
    /// Why the run produced no record, when it failed (a timeout, a crash); such a run
    /// keeps its workload and, if known, its variant.
    #[serde(default)]
    pub error: Option<String>,
    /// For a run of `kbench ab`: which side it was and what that side really ran.
    #[serde(default)]
    pub ab_side: Option<AbSide>,
    /// What the store keeps of the record in columns of its own, taken where the record
    /// was first read (the runner's parse, the store's columns, an import); `None` when
    /// whoever built the run did not say, and then derived from the record
    /// ([`StoredRun::record_facts`]) when asked. Not exported: an export's record holds
    /// them.
    #[serde(skip)]
    pub facts: Option<RecordFacts>,
}

impl PartialEq for StoredRun {
    fn eq(&self, other: &StoredRun) -> bool {
        // Every field named, so that a new one is not forgotten here.
        let StoredRun {
            workload,
            params,
            variant,
            run_index,
            warmup,
            exit_status,
            start_unix_ns,
            end_unix_ns,
            pinned_cpus,
            cpus_used,
            rusage,
            tasks,
            record,
            values,
            error,
            ab_side,
            facts: _,
        } = self;
        *workload == other.workload
            && *params == other.params
            && *variant == other.variant
            && *run_index == other.run_index
            && *warmup == other.warmup
            && *exit_status == other.exit_status
            && *start_unix_ns == other.start_unix_ns
            && *end_unix_ns == other.end_unix_ns
            && *pinned_cpus == other.pinned_cpus
            && *cpus_used == other.cpus_used
            && *rusage == other.rusage
            && *tasks == other.tasks
            && *record == other.record
            && *values == other.values
            && *error == other.error
            && *ab_side == other.ab_side
    }
}

/// What one side of a `kbench ab` ran. Both sides' runs are stored as workload `ab`,
/// variant `ab`, with the pair of specs as parameters, so they share one comparison
/// key; this keeps what differed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AbSide {
    /// `a` or `b`.
    pub side: String,
    /// The workload key (`sched/pipe`) or `command`.
    pub workload: String,
    pub params: BTreeMap<String, serde_json::Value>,
    /// The workload's variant; empty when the run failed before it said.
    pub variant: String,
}

impl StoredRun {
    /// Whether the run counts: not a warm-up, not failed, and exited 0 (or has no exit
    /// status, as imported runs). The one definition for list, show, compare and ab;
    /// the store's SQL counts use the same condition.
    pub fn is_measured(&self) -> bool {
        !self.warmup && self.error.is_none() && matches!(self.exit_status, Some(0) | None)
    }

    /// The workload's run record, when one was stored and it reads as one (parsed on
    /// each call).
    pub fn record(&self) -> Option<RunRecord> {
        self.record.as_ref()?.parse()
    }

    /// The run's facts: as it was built with them ([`StoredRun::facts`]), else read
    /// from its record ([`StoredRun::record_facts`]).
    pub fn facts(&self) -> RecordFacts {
        self.facts.unwrap_or_else(|| self.record_facts())
    }

    /// The run with its facts, derived from its record if it was built without them:
    /// for whoever builds a run from a record's text (an import, a guest's console), so
    /// that the record is read for them once, there.
    pub fn with_facts(mut self) -> StoredRun {
        self.facts = Some(self.facts());
        self
    }

    /// What the store keeps in columns of their own from the record: where the run's
    /// two tasks ran, and whether it has latency series. One parse that builds
    /// nothing else, and none for a record naming neither (most workloads'). The one
    /// derivation of [`RecordFacts`] from a record's text; a run built from a parsed
    /// [`RunRecord`] takes them from it ([`RecordFacts::of`]).
    pub fn record_facts(&self) -> RecordFacts {
        #[derive(Deserialize)]
        struct FactsOnly {
            #[serde(default)]
            placement: Option<crate::ObservedPlacement>,
            #[serde(default)]
            series: Vec<serde::de::IgnoredAny>,
        }
        let Some(record) = self.record.as_ref() else {
            return RecordFacts::default();
        };
        let text = record.as_str();
        if !text.contains("\"placement\"") && !text.contains("\"series\"") {
            return RecordFacts::default();
        }
        record
            .parse::<FactsOnly>()
            .map_or_else(RecordFacts::default, |f| RecordFacts {
                placement: f.placement,
                has_series: !f.series.is_empty(),
            })
    }

    /// Where the run's two tasks ran ([`StoredRun::facts`]).
    pub fn placement(&self) -> Option<crate::ObservedPlacement> {
        self.facts().placement
    }
}

/// What the store keeps of a run's record in columns of its own (see
/// [`StoredRun::record_facts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RecordFacts {
    pub placement: Option<crate::ObservedPlacement>,
    pub has_series: bool,
}

impl RecordFacts {
    /// The facts of a parsed record: what [`StoredRun::record_facts`] reads back from
    /// its JSON.
    pub fn of(record: &RunRecord) -> RecordFacts {
        RecordFacts {
            placement: record.placement,
            has_series: !record.series.is_empty(),
        }
    }
}

impl From<&MetricValue> for Value {
    fn from(m: &MetricValue) -> Value {
        Value {
            metric: m.name.clone(),
            value: m.value,
            unit: m.unit.clone(),
            higher_is_better: m.higher_is_better(),
            primary: m.is_primary(),
        }
    }
}

/// The metrics compared for a run: those its workload declared.
pub fn values_of(record: &RunRecord) -> Vec<Value> {
    record.metrics.iter().map(Value::from).collect()
}

/// Whether `metric` was the primary metric of `workload` before runs declared it:
/// for a stored run none of whose values is marked primary (a database or export of
/// an older kbench). The figure perf prints (usecs/op, or the total time for
/// messaging), the first latency series' p50, a command's wall time.
pub fn legacy_primary(workload: &str, metric: &str) -> bool {
    match WorkloadId::of(workload) {
        Some(known) => metric == known.legacy_primary_metric(),
        // `kbench ab` runs carry whichever workload's values (at most one of these),
        // perf stat summaries their elapsed time.
        None => {
            metric == "time_elapsed_sec"
                || WorkloadId::ALL
                    .iter()
                    .any(|w| w.legacy_primary_metric() == metric)
        }
    }
}

/// Marks the legacy primary metric of `workload` among `values` when none is marked.
pub fn mark_legacy_primary(workload: &str, values: &mut [Value]) {
    if values.iter().any(|v| v.primary) {
        return;
    }
    for v in values.iter_mut() {
        v.primary = legacy_primary(workload, &v.metric);
    }
}

/// A stored run from a workload's record.
pub fn stored_run(
    record: &RunRecord,
    run_index: u32,
    warmup: bool,
    pinned_cpus: Option<String>,
    cpus_used: String,
) -> StoredRun {
    StoredRun {
        workload: record.workload.clone(),
        params: record.params.clone(),
        variant: record.variant.clone(),
        run_index,
        warmup,
        exit_status: Some(0),
        start_unix_ns: Some(record.start_unix_ns),
        end_unix_ns: Some(record.end_unix_ns),
        pinned_cpus,
        cpus_used: Some(cpus_used),
        rusage: RawJson::from_value(&record.rusage),
        tasks: RawJson::from_value(&record.tasks),
        record: RawJson::from_value(record),
        values: values_of(record),
        error: None,
        ab_side: None,
        facts: Some(RecordFacts::of(record)),
    }
}

/// A stored summary-only result (perf stat -r).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    pub session_id: i64,
    pub workload: String,
    pub metric: String,
    pub unit: String,
    pub mean: f64,
    pub std_error: f64,
    pub n: u64,
    #[serde(default)]
    pub higher_is_better: bool,
    /// The headline figure of its workload in its session (perf stat: the elapsed
    /// time); for rows of an older kbench, [`crate::legacy_primary`]'s choice.
    #[serde(default)]
    pub primary: bool,
}

/// A session with everything in it, as exported and imported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionWithRuns {
    pub session: NewSession,
    pub ended_unix_ns: Option<u64>,
    pub runs: Vec<StoredRun>,
    pub summaries: Vec<SummaryRow>,
    /// The kernel config it ran on: its hash, the text kept once per export
    /// ([`crate::export::Export::kernel_configs`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_config_hash: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(metric: &str) -> Value {
        Value {
            metric: metric.into(),
            value: 1.0,
            unit: String::new(),
            higher_is_better: false,
            primary: false,
        }
    }

    #[test]
    fn legacy_runs_get_one_primary() {
        for (workload, metrics, primary) in [
            (
                "sched/pipe",
                &["csw_per_op", "usecs_per_op"][..],
                "usecs_per_op",
            ),
            ("sched/messaging", &["csw_total", "total_sec"], "total_sec"),
            (
                "sched/wakeup",
                &[
                    "wake_latency_p50_ns",
                    "wake_latency_p99_ns",
                    "waker_cost_p50_ns",
                ],
                "wake_latency_p50_ns",
            ),
            (
                "ipi/ipi",
                &["baseline_no_peer_p50_ns", "ipi_round_trip_p50_ns"],
                "ipi_round_trip_p50_ns",
            ),
            (
                "command",
                &["max_rss_kib", "sys_sec", "user_sec", "wall_sec"],
                "wall_sec",
            ),
            ("ab", &["csw_per_op", "usecs_per_op"], "usecs_per_op"),
            ("ab", &["max_rss_kib", "wall_sec"], "wall_sec"),
        ] {
            let mut values: Vec<Value> = metrics.iter().map(|m| value(m)).collect();
            mark_legacy_primary(workload, &mut values);
            let marked: Vec<&str> = values
                .iter()
                .filter(|v| v.primary)
                .map(|v| v.metric.as_str())
                .collect();
            assert_eq!(marked, [primary], "{workload}");
        }
    }

    /// The facts a run built from a parsed record carries are those its JSON gives.
    #[test]
    fn facts_of_a_record_are_those_of_its_json() {
        let series: crate::LatencySeries = serde_json::from_value(serde_json::json!({
            "name": "wake_latency", "unit": "ns", "count": 1, "min": 5, "max": 5,
            "mean": 5.0, "stddev": 0.0, "percentiles": {}, "buckets": [[5, 1]],
        }))
        .unwrap();
        let placed = crate::ObservedPlacement {
            kind: crate::PlacementKind::Mixed,
            colocated_share: Some(0.93),
        };
        let records = [
            RunRecord::default(),
            RunRecord {
                placement: Some(placed),
                ..RunRecord::default()
            },
            RunRecord {
                series: vec![series],
                ..RunRecord::default()
            },
        ];
        for record in &records {
            let run = stored_run(record, 0, false, None, String::new());
            assert_eq!(run.facts, Some(RecordFacts::of(record)));
            let without = StoredRun {
                facts: None,
                ..run.clone()
            };
            assert_eq!(without.record_facts(), RecordFacts::of(record));
            assert_eq!(without.clone().with_facts().facts, run.facts);
            assert_eq!(without, run, "facts are not compared");
        }
        assert_eq!(
            stored_run(&records[1], 0, false, None, String::new()).placement(),
            Some(placed)
        );
    }

    #[test]
    fn a_declared_primary_is_kept() {
        let mut values = vec![value("usecs_per_op"), value("csw_per_op")];
        values[1].primary = true;
        mark_legacy_primary("sched/pipe", &mut values);
        assert!(!values[0].primary && values[1].primary);
    }
}
