//! The scheduler against a mock executor: the order of runs, what counts, when it
//! stops, and the hooks (real `sh -c` commands) around the runs.
use kbench_record::{StoredRun, Value};
use kbench_runner::scheduler::{self, NoProgress};
use kbench_runner::{
    ArmOutcome, Attempt, Executor, HookFailure, Hooks, MemorySink, Order, RunnerError, Schedule,
    StopPolicy,
};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// Every call a mock made: (arm, stored index, warm-up).
type Calls = Rc<RefCell<Vec<(usize, u32, bool)>>>;

/// An arm whose n-th call (from 0) gives `outcome(n)`: a value, or a failure.
struct Mock {
    arm: usize,
    calls: Calls,
    outcome: Box<dyn Fn(usize) -> Result<f64, String>>,
    made: usize,
}

impl Mock {
    fn new(
        arm: usize,
        calls: &Calls,
        outcome: impl Fn(usize) -> Result<f64, String> + 'static,
    ) -> Mock {
        Mock {
            arm,
            calls: calls.clone(),
            outcome: Box::new(outcome),
            made: 0,
        }
    }
}

fn stored(index: u32, warmup: bool, value: Option<f64>) -> StoredRun {
    StoredRun {
        workload: "mock".into(),
        run_index: index,
        warmup,
        exit_status: Some(i32::from(value.is_none())),
        values: value
            .map(|value| Value {
                metric: "ns".into(),
                value,
                unit: "ns".into(),
                higher_is_better: false,
                primary: true,
            })
            .into_iter()
            .collect(),
        ..StoredRun::default()
    }
}

impl Executor for Mock {
    fn run(&mut self, index: u32, warmup: bool) -> Result<Attempt, RunnerError> {
        self.calls.borrow_mut().push((self.arm, index, warmup));
        let outcome = (self.outcome)(self.made);
        self.made += 1;
        Ok(match outcome {
            Ok(value) => Attempt {
                run: stored(index, warmup, Some(value)),
                failure: None,
                placement: None,
            },
            Err(why) => Attempt {
                run: stored(index, warmup, None),
                failure: Some(why),
                placement: None,
            },
        })
    }

    fn hook_failure_run(&self, failure: &HookFailure, index: u32) -> StoredRun {
        StoredRun {
            error: Some(failure.message.clone()),
            ..stored(index, false, None)
        }
    }
}

fn steady(_: usize) -> Result<f64, String> {
    Ok(100.0)
}

/// Runs `arms` mocks under `order`, `warmup` and `stop`, with `hooks`.
fn schedule(
    arms: Vec<Mock>,
    order: Order,
    warmup: u32,
    mut stop: StopPolicy,
    hooks: Vec<Hooks>,
) -> (Result<Vec<ArmOutcome>, RunnerError>, MemorySink) {
    let mut arms = arms;
    let mut executors: Vec<&mut dyn Executor> =
        arms.iter_mut().map(|m| m as &mut dyn Executor).collect();
    let mut sink = MemorySink::default();
    let schedule = Schedule {
        order,
        warmup,
        hooks,
        stop: &mut stop,
    };
    let result = scheduler::run(schedule, &mut executors, &mut sink, &mut NoProgress);
    (result, sink)
}

#[test]
fn abba_blocks_alternate_after_warmups_in_order() {
    let calls = Calls::default();
    let arms = vec![Mock::new(0, &calls, steady), Mock::new(1, &calls, steady)];
    let (result, sink) = schedule(arms, Order::Abba, 1, StopPolicy::Attempts(3), vec![]);
    let outcomes = result.unwrap();
    let order: Vec<(usize, bool)> = calls.borrow().iter().map(|&(a, _, w)| (a, w)).collect();
    assert_eq!(
        order,
        [
            (0, true),
            (1, true),
            (0, false),
            (1, false),
            (1, false),
            (0, false),
            (0, false),
            (1, false)
        ]
    );
    // Each arm numbers its own stored runs, warm-ups included.
    let indexes_of = |arm: usize| -> Vec<u32> {
        sink.runs
            .iter()
            .filter(|(a, _)| *a == arm)
            .map(|(_, r)| r.run_index)
            .collect()
    };
    assert_eq!(indexes_of(0), [0, 1, 2, 3]);
    assert_eq!(indexes_of(1), [0, 1, 2, 3]);
    assert!(outcomes
        .iter()
        .all(|o| o.attempts == 3 && o.measured.len() == 3));
}

#[test]
fn shuffled_blocks_follow_their_seed_and_hold_each_arm_once() {
    let order_of = |seed: u64| -> Vec<usize> {
        let calls = Calls::default();
        let arms = (0..4).map(|arm| Mock::new(arm, &calls, steady)).collect();
        let (result, _) = schedule(
            arms,
            Order::Shuffled { seed },
            0,
            StopPolicy::Runs(5),
            vec![],
        );
        result.unwrap();
        let arms: Vec<usize> = calls.borrow().iter().map(|&(a, _, _)| a).collect();
        arms
    };
    let first = order_of(7);
    assert_eq!(first, order_of(7), "the same seed, the same order");
    assert_ne!(first, order_of(8), "another seed, another order");
    for block in first.chunks(4) {
        let mut arms = block.to_vec();
        arms.sort_unstable();
        assert_eq!(arms, [0, 1, 2, 3], "{first:?}");
    }
}

#[test]
fn failed_runs_are_stored_and_not_counted_and_a_failing_arm_is_given_up() {
    let calls = Calls::default();
    let arms = vec![
        // Fails every third run: its fourth failure (3 + 10/10) ends it at 8 runs.
        Mock::new(0, &calls, |n| {
            if n % 3 == 2 {
                Err(format!("run {n} failed"))
            } else {
                Ok(1.0)
            }
        }),
        Mock::new(1, &calls, |n| Err(format!("always ({n})"))),
    ];
    let (result, sink) = schedule(
        arms,
        Order::Shuffled { seed: 1 },
        0,
        StopPolicy::Runs(10),
        vec![],
    );
    let outcomes = result.unwrap();
    assert_eq!(outcomes[0].primary_values().len(), 8);
    assert_eq!(outcomes[0].failures.len(), 4);
    assert_eq!(outcomes[0].failures[0].attempt, 3);
    // Three failures without one measured run end that arm, not the others.
    assert_eq!(outcomes[1].failures.len(), 3);
    assert!(outcomes[1].measured.is_empty());
    assert_eq!(sink.runs.len(), 12 + 3, "every attempt is stored");
}

#[test]
fn every_arm_failing_gives_up_with_the_first_failure() {
    let calls = Calls::default();
    let arms = vec![
        Mock::new(0, &calls, |n| Err(format!("first arm, run {n}"))),
        Mock::new(1, &calls, |n| Err(format!("second arm, run {n}"))),
    ];
    let (result, sink) = schedule(
        arms,
        Order::Shuffled { seed: 3 },
        1,
        StopPolicy::Runs(100),
        vec![],
    );
    match result {
        Err(RunnerError::GaveUp(why)) => assert_eq!(
            why,
            "every workload failed three times; stopping: first arm, run 1"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(sink.runs.len(), 2 + 6);
}

#[test]
fn fixed_attempts_count_failures_too() {
    let calls = Calls::default();
    let arms = vec![Mock::new(0, &calls, |n| {
        if n % 2 == 0 {
            Err("even".into())
        } else {
            Ok(2.0)
        }
    })];
    let (result, _) = schedule(arms, Order::Abba, 2, StopPolicy::Attempts(4), vec![]);
    let outcome = &result.unwrap()[0];
    assert_eq!(outcome.attempts, 4);
    // Calls 0 and 1 were the warm-ups; of the measured 2..6, the even ones failed.
    assert_eq!(outcome.failures.len(), 2);
    assert_eq!(outcome.measured.len(), 2);
    assert_eq!(
        outcome
            .failures
            .iter()
            .map(|f| f.attempt)
            .collect::<Vec<_>>(),
        [1, 3]
    );
}

#[test]
fn precision_stops_when_the_median_is_known_and_at_the_time_limit() {
    let calls = Calls::default();
    let arms = vec![Mock::new(0, &calls, |n| Ok(100.0 + (n % 2) as f64 * 0.01))];
    let precise = StopPolicy::Precision {
        pct: 1.0,
        min_runs: 5,
        max_time: Duration::from_secs(600),
    };
    let (result, _) = schedule(arms, Order::Abba, 0, precise, vec![]);
    let runs = result.unwrap()[0].measured.len();
    assert!((5..=12).contains(&runs), "{runs}");

    let calls = Calls::default();
    // Never precise: only the time limit ends it.
    let arms = vec![Mock::new(0, &calls, |n| {
        std::thread::sleep(Duration::from_millis(2));
        Ok(if n % 2 == 0 { 1.0 } else { 1000.0 })
    })];
    let never = StopPolicy::Precision {
        pct: 0.001,
        min_runs: 5,
        max_time: Duration::from_millis(50),
    };
    let (result, _) = schedule(arms, Order::Abba, 0, never, vec![]);
    let runs = result.unwrap()[0].measured.len();
    assert!(
        (1..=30).contains(&runs),
        "{runs} runs of 2 ms or more in 50 ms"
    );
}

fn hooks(setup: &str, prepare: &str, cleanup: &str) -> Hooks {
    let some = |c: &str| (!c.is_empty()).then(|| c.to_string());
    Hooks {
        setup: some(setup),
        prepare: some(prepare),
        cleanup: some(cleanup),
        show_output: false,
    }
}

#[test]
fn a_failed_setup_stops_before_any_run_and_cleans_up_only_what_was_set_up() {
    let dir = tempfile::tempdir().unwrap();
    let cleaned = |arm: usize| dir.path().join(format!("cleaned-{arm}"));
    let calls = Calls::default();
    let arms = vec![Mock::new(0, &calls, steady), Mock::new(1, &calls, steady)];
    let cleanup = |arm| format!("touch {}", cleaned(arm).display());
    let (result, sink) = schedule(
        arms,
        Order::Abba,
        1,
        StopPolicy::Attempts(3),
        vec![
            hooks("true", "", &cleanup(0)),
            hooks("exit 3", "", &cleanup(1)),
        ],
    );
    let outcomes = result.unwrap();
    assert!(calls.borrow().is_empty(), "no run after a failed setup");
    assert!(cleaned(0).exists(), "arm 0 was set up, so it is cleaned up");
    assert!(!cleaned(1).exists(), "arm 1's setup failed: no cleanup");
    assert_eq!(outcomes[1].hook_failures.len(), 1);
    assert_eq!(
        outcomes[1].hook_failures[0].message,
        "setup hook 'exit 3' exited with status 3"
    );
    // The failed hook is stored as a failed run of its arm.
    assert_eq!(sink.runs.len(), 1);
    assert_eq!(sink.runs[0].0, 1);
    assert!(sink.runs[0]
        .1
        .error
        .as_deref()
        .unwrap()
        .contains("setup hook"));
}

#[test]
fn a_failed_prepare_stops_the_runs_and_the_cleanup_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("prepared");
    let cleaned = dir.path().join("cleaned");
    let calls = Calls::default();
    let arms = vec![Mock::new(0, &calls, steady)];
    // The third prepare fails: two runs, then the failed hook, then the cleanup.
    let prepare = format!("echo x >> {0}; test $(wc -l < {0}) -lt 3", count.display());
    let (result, sink) = schedule(
        arms,
        Order::Abba,
        1,
        StopPolicy::Attempts(5),
        vec![hooks("", &prepare, &format!("touch {}", cleaned.display()))],
    );
    let outcome = &result.unwrap()[0];
    assert_eq!(calls.borrow().len(), 2);
    assert_eq!(outcome.measured.len(), 1, "a warm-up and one measured run");
    assert_eq!(outcome.hook_failures.len(), 1);
    assert!(cleaned.exists());
    assert_eq!(
        sink.runs
            .iter()
            .map(|(_, r)| r.run_index)
            .collect::<Vec<_>>(),
        [0, 1, 2]
    );
}

#[test]
fn a_sink_that_fails_stops_the_schedule_after_the_cleanups() {
    let dir = tempfile::tempdir().unwrap();
    let cleaned = dir.path().join("cleaned");
    let calls = Calls::default();
    let mut arms = [Mock::new(0, &calls, steady)];
    let mut executors: Vec<&mut dyn Executor> =
        arms.iter_mut().map(|m| m as &mut dyn Executor).collect();
    let mut taken = 0;
    let mut full_after_two = |_arm: usize, _run: StoredRun| {
        taken += 1;
        if taken > 2 {
            anyhow::bail!("disk full");
        }
        Ok(())
    };
    let mut stop = StopPolicy::Attempts(10);
    let schedule = Schedule {
        order: Order::Abba,
        warmup: 0,
        hooks: vec![hooks("", "", &format!("touch {}", cleaned.display()))],
        stop: &mut stop,
    };
    let result = scheduler::run(
        schedule,
        &mut executors,
        &mut full_after_two,
        &mut NoProgress,
    );
    match result {
        Err(RunnerError::Sink(e)) => assert_eq!(e.to_string(), "disk full"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        calls.borrow().len(),
        3,
        "nothing runs after the sink failed"
    );
    assert!(cleaned.exists());
}

#[test]
fn abba_gives_the_arm_of_each_unit_of_its_blocks() {
    assert_eq!(scheduler::abba(3), [0, 1, 1, 0, 0, 1]);
    assert!(scheduler::abba(0).is_empty());
}
