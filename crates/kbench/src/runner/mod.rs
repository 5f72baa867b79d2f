//! The main job: repeated runs, warm-up first, workloads interleaved in randomized
//! blocks, each run in a fresh process and stored in its own transaction.
pub mod capture;
pub mod child;
pub mod figures;
pub mod hooks;
pub mod progress;
pub mod spec;

use crate::runner::progress::Progress;
use kbench_record::PlacementKind;
use kbench_store::Store;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use spec::WorkloadSpec;
use std::time::{Duration, Instant};

/// When to stop repeating.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stopping {
    /// Exactly this many measured runs per workload.
    Runs(u32),
    /// Until the 95% CI of the median is within ±`pct`% for every workload, with at
    /// least `min_runs` and at most `max_time` in all.
    Precision {
        pct: f64,
        min_runs: u32,
        max_time: Duration,
    },
}

/// Everything that decides what runs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub specs: Vec<WorkloadSpec>,
    pub stopping: Stopping,
    pub warmup: u32,
    /// The cpulist every run is pinned to, if any.
    pub cpus: Option<String>,
    pub seed: u64,
    /// A run still going after this long is stopped and recorded as failed.
    pub run_timeout: Duration,
}

/// What happened to one workload.
#[derive(Debug, Clone)]
pub struct WorkloadOutcome {
    pub spec: String,
    pub metric: String,
    pub unit: String,
    /// The primary metric of each measured run, in run order.
    pub values: Vec<f64>,
    /// Where each measured run's two tasks mostly ran (pipe, seccomp-notify).
    pub placements: Vec<Option<PlacementKind>>,
    pub failures: Vec<String>,
}

impl WorkloadOutcome {
    /// Half-width of the 95% CI of the median, as a percentage of the median.
    pub fn precision_pct(&self) -> Option<f64> {
        precision_pct(&self.values)
    }

    /// The outcome of the runs that mostly ran with placement `kind`.
    pub fn only_placement(&self, kind: PlacementKind) -> WorkloadOutcome {
        let keep = |i: &usize| self.placements[*i] == Some(kind);
        let kept: Vec<usize> = (0..self.values.len()).filter(keep).collect();
        WorkloadOutcome {
            spec: self.spec.clone(),
            metric: self.metric.clone(),
            unit: self.unit.clone(),
            values: kept.iter().map(|&i| self.values[i]).collect(),
            placements: kept.iter().map(|&i| self.placements[i]).collect(),
            failures: Vec::new(),
        }
    }
}

/// Half-width of the 95% CI of the median of `values`, as a percentage of the median.
fn precision_pct(values: &[f64]) -> Option<f64> {
    let sorted = kbench_stats::descriptive::sorted_copy(values);
    let ci = kbench_stats::percentile_ci(&sorted, 0.5, 0.95)?;
    let median = ci.estimate;
    (median != 0.0).then(|| 100.0 * (ci.upper - ci.lower) / 2.0 / median.abs())
}

/// Runs the plan, storing every run under `session_id`.
pub fn execute(
    store: &mut Store,
    session_id: i64,
    plan: &Plan,
) -> anyhow::Result<Vec<WorkloadOutcome>> {
    execute_observed(store, session_id, plan, &mut |_| {})
}

/// [`execute`], handing each run to `on_stored` once it is stored and before the next
/// one starts: kbench as /init reports every run as it goes, so that a boot which dies
/// mid-suite has said how far it got.
pub fn execute_observed(
    store: &mut Store,
    session_id: i64,
    plan: &Plan,
    on_stored: &mut dyn FnMut(&kbench_store::StoredRun),
) -> anyhow::Result<Vec<WorkloadOutcome>> {
    let mut rng = ChaCha8Rng::seed_from_u64(plan.seed);
    let mut outcomes: Vec<WorkloadOutcome> = plan
        .specs
        .iter()
        .map(|s| WorkloadOutcome {
            spec: s.display(),
            metric: String::new(),
            unit: String::new(),
            values: Vec::new(),
            placements: Vec::new(),
            failures: Vec::new(),
        })
        .collect();
    let mut sink = Sink {
        store,
        session_id,
        on_stored,
    };
    say_what_is_not_counted();
    let mut progress = Progress::new(plan);
    let started = Instant::now();
    let mut next_index = vec![0u32; plan.specs.len()];
    for _ in 0..plan.warmup {
        for w in shuffled(plan.specs.len(), &mut rng) {
            progress.start_run(&plan.specs[w], "warm-up");
            run_and_store(
                &mut sink,
                plan,
                w,
                &mut next_index[w],
                true,
                &mut outcomes[w],
            )?;
        }
    }
    loop {
        let pending: Vec<usize> = (0..plan.specs.len())
            .filter(|&w| !is_done(&outcomes[w], plan.stopping))
            .collect();
        if pending.is_empty() || out_of_time(plan.stopping, started) {
            break;
        }
        for w in shuffled(plan.specs.len(), &mut rng) {
            if !pending.contains(&w) {
                continue;
            }
            let label = format!("run {}", outcomes[w].values.len() + 1);
            progress.start_run(&plan.specs[w], &label);
            run_and_store(
                &mut sink,
                plan,
                w,
                &mut next_index[w],
                false,
                &mut outcomes[w],
            )?;
        }
        if outcomes
            .iter()
            .all(|o| o.values.is_empty() && o.failures.len() >= 3)
        {
            anyhow::bail!(
                "every workload failed three times; stopping: {}",
                outcomes[0].failures[0]
            );
        }
    }
    progress.finish();
    Ok(outcomes)
}

/// A machine without /proc/interrupts runs every workload, without the interrupts
/// per op; one line says so, rather than a table that leaves them out unexplained.
fn say_what_is_not_counted() {
    let root = kbench_sys::Sysroot::from_env();
    if kbench_sys::Interrupts::read(&root).is_none() {
        errln!(
            "kbench: no {} here: runs record no IRQs or IPIs per op",
            root.path("/proc/interrupts").display()
        );
    }
}

fn shuffled(n: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    order
}

fn is_done(outcome: &WorkloadOutcome, stopping: Stopping) -> bool {
    // A workload that keeps failing is done: its failures are reported.
    if outcome.failures.len() >= 3 && outcome.values.is_empty() {
        return true;
    }
    match stopping {
        // Failures do not count toward N, but a workload that keeps failing stops.
        Stopping::Runs(n) => {
            outcome.values.len() as u32 >= n || outcome.failures.len() as u32 >= 3 + n / 10
        }
        Stopping::Precision { pct, min_runs, .. } => {
            outcome.values.len() as u32 >= min_runs
                && outcome.precision_pct().is_some_and(|p| p <= pct)
        }
    }
}

fn out_of_time(stopping: Stopping, started: Instant) -> bool {
    matches!(stopping, Stopping::Precision { max_time, .. } if started.elapsed() >= max_time)
}

/// Where a finished run goes: its session in the store, then the observer.
struct Sink<'a> {
    store: &'a mut Store,
    session_id: i64,
    on_stored: &'a mut dyn FnMut(&kbench_store::StoredRun),
}

fn run_and_store(
    sink: &mut Sink<'_>,
    plan: &Plan,
    w: usize,
    next_index: &mut u32,
    warmup: bool,
    outcome: &mut WorkloadOutcome,
) -> anyhow::Result<()> {
    let spec = &plan.specs[w];
    let result = child::run_workload(spec, plan.cpus.as_deref(), plan.run_timeout);
    let stored =
        child::stored_workload_run(spec, &result, *next_index, warmup, plan.cpus.as_deref());
    sink.store
        .insert_run(sink.session_id, &stored)
        .map_err(crate::session::store_error)?;
    (sink.on_stored)(&stored);
    match result {
        Ok(record) => {
            let primary = stored.values.iter().find(|v| v.primary);
            if let (false, Some(primary)) = (warmup, primary) {
                outcome.metric = primary.metric.clone();
                outcome.unit = primary.unit.clone();
                outcome.values.push(primary.value);
                outcome
                    .placements
                    .push(record.placement.map(|p| p.effective()));
            }
        }
        Err(message) => {
            errln!("kbench: {message}");
            // A failed warm-up is recorded but takes no measured run's place.
            if !warmup {
                outcome.failures.push(message);
            }
        }
    }
    *next_index += 1;
    Ok(())
}
