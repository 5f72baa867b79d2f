//! The sequential stop rule driving the scheduler, against a seeded fake executor
//! whose values we choose: a large effect stops early with the right direction,
//! identical arms stop equivalent or at the bound with no claim.
use kbench_record::{StoredRun, Value};
use kbench_runner::scheduler::{self, NoProgress};
use kbench_runner::{
    ArmOutcome, Attempt, Bounds, Executor, HookFailure, MemorySink, Order, PrimaryState,
    PrimaryUnits, RunnerError, Schedule, SequentialDriver, UnitLooker, UnitsOf,
};
use kbench_stats::sequential::Decision;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// An arm whose runs give `median`·exp(sd·z), z standard normal from its own seed.
struct Fake {
    median: f64,
    sd_log: f64,
    rng: ChaCha8Rng,
}

impl Fake {
    fn new(median: f64, sd_log: f64, seed: u64) -> Fake {
        Fake {
            median,
            sd_log,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    fn normal(&mut self) -> f64 {
        let u1: f64 = 1.0 - self.rng.random::<f64>();
        let u2: f64 = self.rng.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

fn stored(index: u32, warmup: bool, value: f64) -> StoredRun {
    StoredRun {
        workload: "fake".into(),
        run_index: index,
        warmup,
        exit_status: Some(0),
        values: vec![Value {
            metric: "ns".into(),
            value,
            unit: "ns".into(),
            higher_is_better: false,
            primary: true,
        }],
        ..StoredRun::default()
    }
}

impl Executor for Fake {
    fn run(&mut self, index: u32, warmup: bool) -> Result<Attempt, RunnerError> {
        let value = self.median * (self.sd_log * self.normal()).exp();
        Ok(Attempt {
            run: stored(index, warmup, value),
            failure: None,
            placement: None,
        })
    }

    fn hook_failure_run(&self, failure: &HookFailure, index: u32) -> StoredRun {
        StoredRun {
            error: Some(failure.message.clone()),
            ..stored(index, false, 0.0)
        }
    }
}

/// Runs as units: each measured run's log primary value.
fn runs_as_units(arms: &[ArmOutcome]) -> Vec<PrimaryUnits> {
    let logs = |arm: &ArmOutcome| arm.primary_values().iter().map(|v| v.ln()).collect();
    vec![PrimaryUnits {
        metric: "ns".into(),
        higher_is_better: false,
        a_log_units: logs(&arms[0]),
        b_log_units: logs(&arms[1]),
        known: None,
    }]
}

const MAX_UNITS: usize = 40;

/// The one sequential driver over runs as units, at α 0.05 and δ 1 %.
fn driver(units_of: UnitsOf, max_time: Duration) -> SequentialDriver<UnitLooker> {
    let looker = UnitLooker::new(0.05, 1.0, MAX_UNITS, units_of);
    let bounds = Bounds {
        max_attempts_per_side: None,
        max_time,
    };
    SequentialDriver::new(looker, bounds)
}

/// Each primary metric's decision: the driver's last look.
fn states(driver: &SequentialDriver<UnitLooker>) -> &[PrimaryState] {
    &driver.latest().expect("a look").0
}

/// A/B of two fakes until the rule stops: (runs of A, runs of B, the decision).
fn until_decided(a: Fake, b: Fake) -> (usize, usize, Decision) {
    let mut rule = driver(Box::new(runs_as_units), Duration::from_secs(600));
    let (mut a, mut b) = (a, b);
    let mut executors: Vec<&mut dyn Executor> = vec![&mut a, &mut b];
    let mut sink = MemorySink::default();
    let schedule = Schedule {
        order: Order::Abba,
        warmup: 1,
        hooks: vec![],
        stop: &mut rule,
    };
    let arms = scheduler::run(schedule, &mut executors, &mut sink, &mut NoProgress).unwrap();
    let state = &states(&rule)[0];
    assert!(state.decided());
    (
        arms[0].measured.len(),
        arms[1].measured.len(),
        state.look.decision.clone(),
    )
}

#[test]
fn a_large_effect_stops_early_with_the_right_direction() {
    for seed in 0..10 {
        let (na, nb, decision) = until_decided(
            Fake::new(100.0, 0.02, 2 * seed),
            Fake::new(130.0, 0.02, 2 * seed + 1),
        );
        assert_eq!(decision, Decision::Regression, "seed {seed}");
        assert!(na < 10 && nb < 10, "seed {seed}: {na} and {nb} runs");
    }
    // B faster: lower is better here, so an improvement.
    let (_, _, decision) = until_decided(Fake::new(100.0, 0.02, 50), Fake::new(80.0, 0.02, 51));
    assert_eq!(decision, Decision::Improvement);
}

#[test]
fn identical_arms_stop_equivalent_or_at_the_bound_with_no_claim() {
    let mut equivalent = 0;
    for seed in 0..10 {
        let (na, nb, decision) = until_decided(
            Fake::new(100.0, 0.003, 100 + 2 * seed),
            Fake::new(100.0, 0.003, 101 + 2 * seed),
        );
        assert!(
            matches!(decision, Decision::Equivalent | Decision::Undecided),
            "seed {seed}: {decision:?}"
        );
        assert!(na <= MAX_UNITS && nb <= MAX_UNITS);
        equivalent += usize::from(decision == Decision::Equivalent && na < MAX_UNITS);
    }
    // With 0.3 % noise and δ = 1 %, equivalence comes well before the bound.
    assert!(
        equivalent >= 9,
        "{equivalent} of 10 equivalent before the bound"
    );
}

#[test]
fn a_suite_stops_when_every_primary_is_decided_and_a_decided_one_stays_decided() {
    // Two primaries from the same runs: the first sees B 30 % slower, the second the
    // same runs with B's shift taken out (no change, 2 % noise: not decidable in 40).
    let two = |arms: &[ArmOutcome]| {
        let mut units = runs_as_units(arms);
        let mut flat = units[0].clone();
        flat.metric = "flat".into();
        flat.b_log_units.iter_mut().for_each(|v| *v -= 1.3f64.ln());
        units.push(flat);
        units
    };
    let mut rule = driver(Box::new(two), Duration::from_secs(600));
    let (mut a, mut b) = (Fake::new(100.0, 0.02, 7), Fake::new(130.0, 0.02, 8));
    let mut executors: Vec<&mut dyn Executor> = vec![&mut a, &mut b];
    let schedule = Schedule {
        order: Order::Abba,
        warmup: 0,
        hooks: vec![],
        stop: &mut rule,
    };
    let arms = scheduler::run(
        schedule,
        &mut executors,
        &mut MemorySink::default(),
        &mut NoProgress,
    )
    .unwrap();
    assert_eq!(arms[0].measured.len(), MAX_UNITS);
    let states = states(&rule);
    assert_eq!(states[0].look.decision, Decision::Regression);
    assert!(states[0].look.n_a < 10, "decided at {}", states[0].look.n_a);
    assert_eq!(states[1].look.decision, Decision::Undecided);
    assert_eq!(states[1].look.n_a, MAX_UNITS);
}

#[test]
fn the_time_bound_leaves_open_metrics_undecided() {
    let mut rule = driver(Box::new(runs_as_units), Duration::ZERO);
    let (mut a, mut b) = (Fake::new(100.0, 0.02, 9), Fake::new(100.0, 0.02, 10));
    let mut executors: Vec<&mut dyn Executor> = vec![&mut a, &mut b];
    let schedule = Schedule {
        order: Order::Abba,
        warmup: 0,
        hooks: vec![],
        stop: &mut rule,
    };
    let arms = scheduler::run(
        schedule,
        &mut executors,
        &mut MemorySink::default(),
        &mut NoProgress,
    )
    .unwrap();
    assert!(arms[0].measured.len() <= 1);
    assert_eq!(states(&rule)[0].look.decision, Decision::Undecided);
}

/// A looker that never decides by itself, and records every look.
struct NeverDecided;

impl kbench_runner::Looker<kbench_runner::MeasuredRun> for NeverDecided {
    type Look = kbench_stats::sequential::Look;

    fn look(&mut self, arms: &[ArmOutcome]) -> kbench_runner::Seen<Self::Look> {
        let design = kbench_stats::sequential::SequentialDesign {
            alpha: 0.05,
            delta_pct: 1.0,
            max_units_per_side: 1000,
            primaries: 1,
            higher_is_better: false,
            boundary: kbench_stats::sequential::Boundary::DeclaredMaximum,
        };
        let logs = |arm: &ArmOutcome| -> Vec<f64> {
            arm.primary_values().iter().map(|v| v.ln()).collect()
        };
        let look = kbench_stats::sequential::look(&design, &logs(&arms[0]), &logs(&arms[1]), None);
        kbench_runner::Seen::Look(look)
    }

    fn record(
        &self,
        look: &Self::Look,
        index: u64,
    ) -> Option<kbench_record::sequential::SequentialLook> {
        Some(kbench_record::sequential::SequentialLook {
            index,
            at_unix_ns: look.n_a as u64,
            rows: Vec::new(),
        })
    }
}

/// A sink that keeps the looks it is handed.
#[derive(Default)]
struct LookSink {
    runs: usize,
    looks: Vec<kbench_record::sequential::SequentialLook>,
}

impl kbench_runner::RunSink for LookSink {
    fn accept(&mut self, _arm: usize, _run: StoredRun) -> anyhow::Result<()> {
        self.runs += 1;
        Ok(())
    }

    fn keep_look(
        &mut self,
        look: &kbench_record::sequential::SequentialLook,
    ) -> anyhow::Result<()> {
        self.looks.push(look.clone());
        Ok(())
    }
}

#[test]
fn the_driver_closes_at_its_bound_of_units_and_the_sink_keeps_every_look() {
    let bounds = Bounds {
        max_attempts_per_side: Some(3),
        max_time: Duration::from_secs(600),
    };
    let mut driver = SequentialDriver::new(NeverDecided, bounds);
    let (mut a, mut b) = (Fake::new(100.0, 0.05, 11), Fake::new(100.0, 0.05, 12));
    let mut executors: Vec<&mut dyn Executor> = vec![&mut a, &mut b];
    let mut sink = LookSink::default();
    let schedule = Schedule {
        order: Order::Abba,
        warmup: 0,
        hooks: vec![],
        stop: &mut driver,
    };
    let arms = scheduler::run(schedule, &mut executors, &mut sink, &mut NoProgress).unwrap();
    // Three blocks of A and B: a look before the first (no units yet) and after each.
    assert_eq!([arms[0].attempts, arms[1].attempts], [3, 3]);
    assert_eq!(sink.runs, 6);
    let indexes: Vec<u64> = sink.looks.iter().map(|l| l.index).collect();
    assert_eq!(indexes, [1, 2, 3, 4]);
    assert_eq!(driver.history().len(), 4);
    // The last look, at the bound, is closed undecided; the ones before it are open.
    let last = driver.latest().unwrap();
    assert_eq!(last.decision, Decision::Undecided);
    assert_eq!(last.n_a, 3);
    assert!(driver.history()[..3].iter().all(|l| !l.decision.is_final()));
}

/// Records the bound each look is said with.
#[derive(Default)]
struct SaidWith(std::cell::RefCell<Vec<kbench_runner::Reached>>);

impl kbench_runner::Looker<kbench_runner::MeasuredRun> for SaidWith {
    type Look = kbench_stats::sequential::Look;

    fn look(&mut self, arms: &[ArmOutcome]) -> kbench_runner::Seen<Self::Look> {
        NeverDecided.look(arms)
    }

    fn say(&self, _look: &Self::Look, _arms: &[ArmOutcome], reached: kbench_runner::Reached) {
        self.0.borrow_mut().push(reached);
    }
}

#[test]
fn a_look_the_time_bound_closes_is_said_as_closed_by_it() {
    // vm-ab says "--max-time reached" from this: the look was open when the bound came.
    let bounds = Bounds {
        max_attempts_per_side: Some(3),
        max_time: Duration::ZERO,
    };
    let mut driver = SequentialDriver::new(SaidWith::default(), bounds);
    let (mut a, mut b) = (Fake::new(100.0, 0.05, 13), Fake::new(100.0, 0.05, 14));
    let mut executors: Vec<&mut dyn Executor> = vec![&mut a, &mut b];
    let schedule = Schedule {
        order: Order::Abba,
        warmup: 0,
        hooks: vec![],
        stop: &mut driver,
    };
    scheduler::run(
        schedule,
        &mut executors,
        &mut LookSink::default(),
        &mut NoProgress,
    )
    .unwrap();
    let said = driver.looker().0.borrow().clone();
    assert_eq!(said, [kbench_runner::Reached::Time]);
    assert_eq!(driver.latest().unwrap().decision, Decision::Undecided);
}
