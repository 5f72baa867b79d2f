//! The main job's schedule (`kbench run`, `kbench calibrate`, kbench as a guest's
//! /init): workloads in shuffled blocks, warm-ups first, until the stop policy is met.
use crate::executor::{Executor, WorkloadExecutor};
use crate::progress::Progress;
use crate::scheduler::{self, ArmOutcome, Order, Schedule};
use crate::sink::RunSink;
use crate::spec::WorkloadSpec;
use crate::stop::StopPolicy;
use crate::RunnerError;
pub use kbench_analysis::outcome::WorkloadOutcome;
use std::time::Duration;

/// Everything that decides what runs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub specs: Vec<WorkloadSpec>,
    pub stopping: StopPolicy,
    pub warmup: u32,
    /// The cpulist every run is pinned to, if any.
    pub cpus: Option<String>,
    pub seed: u64,
    /// A run still going after this long is stopped and recorded as failed.
    pub run_timeout: Duration,
}

/// The outcome of `spec`'s arm: its measured runs with a primary value.
pub fn outcome_of(spec: &WorkloadSpec, arm: &ArmOutcome) -> WorkloadOutcome {
    let mut outcome = WorkloadOutcome {
        spec: spec.display(),
        metric: String::new(),
        unit: String::new(),
        values: Vec::new(),
        placements: Vec::new(),
        failures: arm.failures.iter().map(|f| f.message.clone()).collect(),
    };
    for run in &arm.measured {
        if let Some(primary) = run.values.iter().find(|v| v.primary) {
            outcome.metric = primary.metric.clone();
            outcome.unit = primary.unit.clone();
            outcome.values.push(primary.value);
            outcome.placements.push(run.placement);
        }
    }
    outcome
}

/// Runs the plan, handing every run to `sink` (arm = the spec's index in the plan).
pub fn run_suite(plan: &Plan, sink: &mut dyn RunSink) -> Result<Vec<WorkloadOutcome>, RunnerError> {
    say_what_is_not_counted();
    let mut executors: Vec<WorkloadExecutor> = plan
        .specs
        .iter()
        .map(|spec| WorkloadExecutor {
            spec: spec.clone(),
            cpus: plan.cpus.clone(),
            timeout: plan.run_timeout,
            metric: None,
        })
        .collect();
    let mut arms: Vec<&mut dyn Executor> = executors
        .iter_mut()
        .map(|e| e as &mut dyn Executor)
        .collect();
    let mut stop = plan.stopping;
    let mut progress = Progress::new(&plan.specs, &plan.stopping, plan.warmup);
    let schedule = Schedule {
        order: Order::Shuffled { seed: plan.seed },
        warmup: plan.warmup,
        hooks: Vec::new(),
        stop: &mut stop,
    };
    let outcomes = scheduler::run(schedule, &mut arms, sink, &mut progress)?;
    Ok(plan
        .specs
        .iter()
        .zip(&outcomes)
        .map(|(spec, arm)| outcome_of(spec, arm))
        .collect())
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
