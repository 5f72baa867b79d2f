//! Runs and their values: stored one at a time or in bulk, read back a label at a time.
use super::handle::Store;
use super::scope::SessionScope;
use crate::cell_row;
use crate::db::{to_i64, Cell, Db};
use crate::error::StoreError;
use kbench_record::{mark_legacy_primary, RawJson, RecordFacts, RunRecord, StoredRun, Value};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A label's runs, whole ([`Store::runs`]).
const RUNS_WHOLE: &str = "SELECT r.id, r.session_id, s.boot_id, r.workload, r.params, r.variant,
        r.run_index, r.warmup, r.exit_status, r.start_unix_ns, r.end_unix_ns,
        r.pinned_cpus, r.cpus_used, r.rusage, r.tasks, r.record, r.error, r.ab_side,
        r.placement, r.has_series, s.started_unix_ns
    FROM runs r JOIN sessions s ON s.id = r.session_id
    WHERE s.label = ?1{scope}";

/// A label's runs as the analysis reads them ([`Store::runs_for_analysis`]).
const RUNS_FOR_ANALYSIS: &str = "SELECT r.id, r.session_id, s.boot_id, r.workload, r.params,
        r.variant, r.run_index, r.warmup, r.exit_status, r.start_unix_ns, r.end_unix_ns,
        r.pinned_cpus, r.cpus_used, NULL, NULL,
        CASE WHEN r.has_series = 1 THEN r.record END, r.error, r.ab_side, r.placement,
        r.has_series, s.started_unix_ns
    FROM runs r JOIN sessions s ON s.id = r.session_id
    WHERE s.label = ?1{scope}";

/// A stored run with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub session_id: i64,
    pub label: String,
    pub boot_id: Option<String>,
    /// The run, with its [`StoredRun::facts`] as the store keeps them in columns of
    /// their own (where its two tasks ran, whether it has latency series): read without
    /// its record, which [`Store::runs_for_analysis`] leaves out of most runs.
    #[serde(flatten)]
    pub run: StoredRun,
}

impl RunRow {
    /// See [`StoredRun::is_measured`].
    pub fn is_measured(&self) -> bool {
        self.run.is_measured()
    }

    /// See [`StoredRun::record`].
    pub fn record(&self) -> Option<RunRecord> {
        self.run.record()
    }
}

pub(super) fn insert_run_tx(
    db: &mut dyn Db,
    session_id: i64,
    run: &StoredRun,
) -> Result<i64, StoreError> {
    let ids = insert_runs_tx(db, &[(session_id, run)])?;
    ids.first()
        .copied()
        .ok_or_else(|| StoreError::Corrupt("no run id".into()))
}

/// The columns of a run row, in [`run_cells`]'s order.
const RUN_COLUMNS: [&str; 19] = [
    "id",
    "session_id",
    "workload",
    "params",
    "variant",
    "run_index",
    "warmup",
    "exit_status",
    "start_unix_ns",
    "end_unix_ns",
    "pinned_cpus",
    "cpus_used",
    "rusage",
    "tasks",
    "record",
    "error",
    "ab_side",
    "placement",
    "has_series",
];

/// The columns of a value row, in [`value_cells`]'s order.
const VALUE_COLUMNS: [&str; 6] = [
    "run_id",
    "metric",
    "value",
    "unit",
    "higher_is_better",
    "is_primary",
];

/// Inserts runs (each with the session it belongs to) and their values in three
/// statements whatever their number: their ids reserved first, then the runs and the
/// values as bulk loads ([`Db::insert_rows`]). Returns the runs' ids in order.
pub(super) fn insert_runs_tx(
    db: &mut dyn Db,
    runs: &[(i64, &StoredRun)],
) -> Result<Vec<i64>, StoreError> {
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let ids = db.reserve_ids("runs", runs.len())?;
    let run_rows: Vec<Vec<Cell>> = runs
        .iter()
        .zip(&ids)
        .map(|((session_id, run), id)| run_cells(*id, *session_id, run))
        .collect();
    db.insert_rows("runs", &RUN_COLUMNS, &run_rows)?;
    let value_rows: Vec<Vec<Cell>> = runs
        .iter()
        .zip(&ids)
        .flat_map(|((_, run), id)| {
            distinct_values(&run.values)
                .into_iter()
                .map(move |v| value_cells(*id, v))
        })
        .collect();
    db.insert_rows("run_values", &VALUE_COLUMNS, &value_rows)?;
    Ok(ids)
}

/// At most this many ranges of run ids make a values query; more (a label whose runs
/// interleave another's, as `ab` writes them) and the query finds the runs by label.
const MAX_VALUE_RANGES: usize = 16;

/// The query of the values of `runs`, read just before as `label`'s in `scope`: by the
/// ranges of consecutive ids they make, where there are a few, which need no join (the
/// values' key finds them); else through the runs' sessions, by label, which joins
/// every run and value of the tables (four times the server's time on two labels of
/// 10,000 runs). A run stored after `runs` were read is in none of the ranges, which
/// hold their ids only, and the join's rows of it are passed over.
fn values_query(label: &str, scope: &SessionScope, runs: &[RunRow]) -> (String, Vec<Cell>) {
    const COLUMNS: &str =
        "SELECT v.run_id, v.metric, v.value, v.unit, v.higher_is_better, v.is_primary";
    let ranges = id_ranges(runs.iter().map(|r| r.id));
    if ranges.len() > MAX_VALUE_RANGES {
        let sql = format!(
            "{COLUMNS} FROM run_values v JOIN runs r ON r.id = v.run_id
                 JOIN sessions s ON s.id = r.session_id
             WHERE s.label = ?1{}",
            scope.condition
        );
        return (sql, scope.params_after(label));
    }
    if ranges.is_empty() {
        return (
            format!("{COLUMNS} FROM run_values v WHERE 0 = 1"),
            Vec::new(),
        );
    }
    let conditions: Vec<String> = (0..ranges.len())
        .map(|i| format!("v.run_id BETWEEN ?{} AND ?{}", 2 * i + 1, 2 * i + 2))
        .collect();
    let params = ranges
        .iter()
        .flat_map(|&(first, last)| [Cell::Int(first), Cell::Int(last)])
        .collect();
    let sql = format!(
        "{COLUMNS} FROM run_values v WHERE {}",
        conditions.join(" OR ")
    );
    (sql, params)
}

/// The ranges of consecutive numbers `ids` make, in order, each as (first, last).
fn id_ranges(ids: impl Iterator<Item = i64>) -> Vec<(i64, i64)> {
    let mut ids: Vec<i64> = ids.collect();
    ids.sort_unstable();
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    for id in ids {
        match ranges.last_mut() {
            // Sorted: `id` is at least `last`.
            Some((_, last)) if id <= *last + 1 => *last = id,
            _ => ranges.push((id, id)),
        }
    }
    ranges
}

/// Runs in the order of their sessions' starts, then their own: already so as a rule
/// (rows come back as they were written), else sorted by a permutation, since moving
/// the rows themselves costs more than the comparisons.
fn in_session_order(runs: Vec<(i64, RunRow)>) -> Vec<RunRow> {
    let key = |(started, r): &(i64, RunRow)| (*started, r.session_id, r.run.run_index, r.id);
    if runs.windows(2).all(|w| key(&w[0]) <= key(&w[1])) {
        return runs.into_iter().map(|(_, row)| row).collect();
    }
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_unstable_by_key(|&i| key(&runs[i]));
    let mut slots: Vec<Option<RunRow>> = runs.into_iter().map(|(_, row)| Some(row)).collect();
    order.iter().filter_map(|&i| slots[i].take()).collect()
}

/// A run as the cells of [`RUN_COLUMNS`].
fn run_cells(id: i64, session_id: i64, run: &StoredRun) -> Vec<Cell> {
    let params_text = serde_json::to_string(&run.params).unwrap_or_else(|_| "{}".into());
    let facts = run.facts();
    cell_row![
        id,
        session_id,
        &run.workload,
        params_text,
        &run.variant,
        run.run_index,
        run.warmup,
        run.exit_status,
        run.start_unix_ns.map(to_i64),
        run.end_unix_ns.map(to_i64),
        run.pinned_cpus.as_ref(),
        run.cpus_used.as_ref(),
        run.rusage.as_ref().map(RawJson::as_str),
        run.tasks.as_ref().map(RawJson::as_str),
        run.record.as_ref().map(RawJson::as_str),
        run.error.as_ref(),
        run.ab_side
            .as_ref()
            .and_then(|a| serde_json::to_string(a).ok()),
        facts.placement.and_then(|p| serde_json::to_string(&p).ok()),
        facts.has_series,
    ]
}

/// A value as the cells of [`VALUE_COLUMNS`].
fn value_cells(run_id: i64, v: &Value) -> Vec<Cell> {
    vec![
        Cell::Int(run_id),
        Cell::from(&v.metric),
        Cell::Real(v.value),
        Cell::from(&v.unit),
        Cell::from(v.higher_is_better),
        Cell::from(v.primary),
    ]
}

/// A run's values, one per metric: a metric named twice keeps its last value, as a
/// map would.
fn distinct_values(values: &[Value]) -> Vec<&Value> {
    let last_of: HashMap<&str, usize> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (v.metric.as_str(), i))
        .collect();
    values
        .iter()
        .enumerate()
        .filter(|(i, v)| last_of[v.metric.as_str()] == *i)
        .map(|(_, v)| v)
        .collect()
}

impl Store {
    /// Stores one run and its values in one transaction.
    pub fn insert_run(&mut self, session_id: i64, run: &StoredRun) -> Result<i64, StoreError> {
        self.in_transaction(|db| insert_run_tx(db, session_id, run))
    }

    /// Every run of `label` (warm-ups included, flagged), in session then run order,
    /// each with its values in metric order. Two queries whatever the number of runs;
    /// the JSON columns stay text until asked for ([`StoredRun::record`]).
    pub fn runs(&self, label: &str) -> Result<Vec<RunRow>, StoreError> {
        self.runs_with(label, &SessionScope::all(), RUNS_WHOLE)
    }

    /// Every run of `label` as [`Store::runs`], with what the analysis reads: no
    /// rusage or tasks, and the record only of a run with latency series (its placement
    /// and whether it has series are in its [`StoredRun::facts`]). A label's records are
    /// most of what it holds.
    pub fn runs_for_analysis(&self, label: &str) -> Result<Vec<RunRow>, StoreError> {
        self.runs_for_analysis_in(label, &SessionScope::all())
    }

    /// [`Store::runs_for_analysis`] of the sessions in `scope`.
    pub fn runs_for_analysis_in(
        &self,
        label: &str,
        scope: &SessionScope,
    ) -> Result<Vec<RunRow>, StoreError> {
        self.runs_with(label, scope, RUNS_FOR_ANALYSIS)
    }

    fn runs_with(
        &self,
        label: &str,
        scope: &SessionScope,
        sql: &str,
    ) -> Result<Vec<RunRow>, StoreError> {
        // Runs of one workload share their parameters: parse each distinct text once.
        let mut last_params: Option<(String, BTreeMap<String, serde_json::Value>)> = None;
        // Each run with its session's start: the order is made here, not with ORDER BY,
        // so that the server sends rows as it scans them rather than first sorting a
        // label's wide rows (on PostgreSQL in parallel workers, on the cores the reader
        // decodes them with).
        let mut runs: Vec<(i64, RunRow)> = Vec::new();
        self.db().query_each(
            &sql.replace("{scope}", &scope.condition),
            &scope.params_after(label),
            &mut |r| {
                let params = match &last_params {
                    Some((text, params)) if text == r.str(4)? => params.clone(),
                    _ => {
                        let text = r.text(4)?;
                        let params: BTreeMap<String, serde_json::Value> =
                            serde_json::from_str(&text).unwrap_or_default();
                        last_params = Some((text, params.clone()));
                        params
                    }
                };
                let session_started_unix_ns = r.i64(20)?;
                let row = RunRow {
                    id: r.i64(0)?,
                    session_id: r.i64(1)?,
                    label: label.to_string(),
                    boot_id: r.take_text(2)?,
                    run: StoredRun {
                        workload: r.text(3)?,
                        params,
                        variant: r.text(5)?,
                        run_index: u32::try_from(r.i64(6)?).unwrap_or(u32::MAX),
                        warmup: r.flag(7)?,
                        exit_status: r.opt_i64(8)?.and_then(|v| i32::try_from(v).ok()),
                        start_unix_ns: r.opt_u64(9)?,
                        end_unix_ns: r.opt_u64(10)?,
                        pinned_cpus: r.take_text(11)?,
                        cpus_used: r.take_text(12)?,
                        rusage: r.take_text(13)?.map(RawJson::from_stored),
                        tasks: r.take_text(14)?.map(RawJson::from_stored),
                        record: r.take_text(15)?.map(RawJson::from_stored),
                        values: Vec::new(),
                        error: r.take_text(16)?,
                        ab_side: r.opt_str(17)?.and_then(|t| serde_json::from_str(t).ok()),
                        facts: Some(RecordFacts {
                            placement: r.opt_str(18)?.and_then(|t| serde_json::from_str(t).ok()),
                            has_series: r.flag(19)?,
                        }),
                    },
                };
                runs.push((session_started_unix_ns, row));
                Ok(())
            },
        )?;
        let mut runs = in_session_order(runs);
        self.attach_values(label, scope, &mut runs)?;
        Ok(runs)
    }

    /// The values of every run of `label` in `scope`, in one query, onto `rows`.
    fn attach_values(
        &self,
        label: &str,
        scope: &SessionScope,
        rows: &mut [RunRow],
    ) -> Result<(), StoreError> {
        let index: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        let mut current: Option<(i64, usize)> = None;
        let (sql, params) = values_query(label, scope, rows);
        // No ORDER BY: SQLite walks run_values by its (run_id, metric) key, so the rows
        // come grouped by run; any order is taken, and the metric order is made sure of
        // below.
        self.db().query_each(&sql, &params, &mut |r| {
            let run_id = r.i64(0)?;
            let i = match current {
                Some((id, i)) if id == run_id => i,
                _ => match index.get(&run_id) {
                    Some(&i) => {
                        current = Some((run_id, i));
                        i
                    }
                    // A run committed between the two queries.
                    None => return Ok(()),
                },
            };
            rows[i].run.values.push(Value {
                metric: r.str(1)?.to_string(),
                value: r.f64(2)?,
                unit: r.str(3)?.to_string(),
                higher_is_better: r.flag(4)?,
                primary: r.flag(5)?,
            });
            Ok(())
        })?;
        for row in rows {
            let values = &mut row.run.values;
            if !values.windows(2).all(|w| w[0].metric <= w[1].metric) {
                values.sort_by(|a, b| a.metric.cmp(&b.metric));
            }
            mark_legacy_primary(&row.run.workload, values);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_ranges_are_the_stretches_of_consecutive_ids() {
        assert_eq!(id_ranges([].into_iter()), []);
        assert_eq!(id_ranges([7].into_iter()), [(7, 7)]);
        assert_eq!(
            id_ranges([5, 3, 4, 9, 10, 12, 4].into_iter()),
            [(3, 5), (9, 10), (12, 12)]
        );
    }

    #[test]
    fn values_are_read_by_ranges_up_to_the_bound_then_by_label() {
        let runs = |ids: &[i64]| -> Vec<RunRow> {
            ids.iter()
                .map(|&id| RunRow {
                    id,
                    session_id: 1,
                    label: "l".into(),
                    boot_id: None,
                    run: StoredRun::default(),
                })
                .collect()
        };
        let scope = SessionScope::all();
        let (sql, params) = values_query("l", &scope, &runs(&[1, 2, 3, 10]));
        assert!(sql.ends_with("v.run_id BETWEEN ?1 AND ?2 OR v.run_id BETWEEN ?3 AND ?4"));
        assert_eq!(params, [1, 3, 10, 10].map(Cell::Int));
        let alternate: Vec<i64> = (0..=MAX_VALUE_RANGES as i64).map(|i| 2 * i).collect();
        let (sql, params) = values_query("l", &scope, &runs(&alternate));
        assert!(sql.contains("WHERE s.label = ?1"), "{sql}");
        assert_eq!(params, [Cell::from("l")]);
    }
}
