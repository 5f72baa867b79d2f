//! The one loop that runs everything: setups, warm-ups, blocks until the stop rule
//! says so, cleanups; every run handed to the sink before the next one starts.
pub use crate::arm::{ArmOutcome, MeasuredRun, Measurement, RunFailure};
use crate::executor::{Executor, Unit};
use crate::hooks::{run_hook, HookFailure, HookKind, Hooks};
use crate::sink::RunSink;
use crate::stop::{NextBlock, StopPolicy, StopRule};
use crate::RunnerError;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// The order of the arms within a block (and within a round of warm-ups).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// A fresh random order each block, from this seed (`kbench run`'s workloads).
    Shuffled { seed: u64 },
    /// The arms in turn, reversed every other block: A B, B A, A B, ... so that drift
    /// and order effects fall on both sides alike (`kbench ab`). Warm-ups in order.
    Abba,
}

/// The arm of each unit of `blocks` ABBA blocks of two arms: A B, B A, A B, ... (arm 0
/// is A): the one ABBA order, of `ab`'s runs, of vm-ab's and a bisection's boots and of
/// a LAVA job's.
pub fn abba(blocks: u32) -> Vec<usize> {
    (0..u64::from(blocks))
        .flat_map(|block| abba_block(block, 2))
        .collect()
}

/// The arms of the `block`-th ABBA block, from 0: in turn, reversed every other block.
fn abba_block(block: u64, arms: usize) -> Vec<usize> {
    match block.is_multiple_of(2) {
        true => (0..arms).collect(),
        false => (0..arms).rev().collect(),
    }
}

/// What decides what runs, beside the executors.
pub struct Schedule<'a, M = MeasuredRun> {
    pub order: Order,
    /// Rounds of warm-up runs (each arm once a round), recorded and not measured.
    pub warmup: u32,
    /// The hooks of each arm; an arm without an entry has none.
    pub hooks: Vec<Hooks>,
    pub stop: &'a mut dyn StopRule<M>,
}

/// Told what happens, for progress and messages; every method does nothing by default
/// but a failed hook, which is said in one line.
pub trait Observer<M = MeasuredRun> {
    fn starting(&mut self, _arm: usize, _warmup: bool, _so_far: &ArmOutcome<M>) {}
    fn hook_failed(&mut self, _arm: usize, failure: &HookFailure) {
        errln!("kbench: {}", failure.message);
    }
    fn finished(&mut self) {}
}

/// No progress shown; a failed hook is said in one line.
pub struct NoProgress;
impl<M> Observer<M> for NoProgress {}

/// Runs one arm alone: its setup, `warmup` warm-ups, `attempts` measured attempts
/// (failed ones count), each after its prepare hook, and its cleanup, without progress;
/// every run handed to `sink`.
pub fn run_alone(
    executor: &mut dyn Executor,
    warmup: u32,
    attempts: u32,
    hooks: Hooks,
    sink: &mut dyn RunSink,
) -> Result<ArmOutcome, RunnerError> {
    let mut stop = StopPolicy::Attempts(attempts);
    let schedule = Schedule {
        order: Order::Abba,
        warmup,
        hooks: vec![hooks],
        stop: &mut stop,
    };
    let mut outcomes = run(schedule, &mut [executor], sink, &mut NoProgress)?;
    Ok(outcomes.remove(0))
}

/// Runs the schedule: each arm's setup in turn (the first that fails stops there),
/// the warm-ups, then blocks until the stop rule is satisfied, each run after its
/// arm's prepare hook (one that fails stops the schedule), and the cleanup of every
/// arm whose setup succeeded, whatever happened in between.
pub fn run<U: Unit>(
    schedule: Schedule<'_, U::Measured>,
    executors: &mut [&mut dyn Executor<U>],
    sink: &mut dyn RunSink<U::Kept>,
    observer: &mut dyn Observer<U::Measured>,
) -> Result<Vec<ArmOutcome<U::Measured>>, RunnerError> {
    let mut state = State {
        arms: vec![ArmOutcome::default(); executors.len()],
        executors,
        sink,
        observer,
        hooks: schedule.hooks,
    };
    let mut set_up = 0;
    while set_up < state.arms.len() && state.hook(HookKind::Setup, set_up)? {
        set_up += 1;
    }
    let mut result = Ok(());
    if set_up == state.arms.len() {
        result = state.warmups_and_blocks(schedule.order, schedule.warmup, schedule.stop);
    }
    for arm in 0..set_up {
        let cleaned = state.hook(HookKind::Cleanup, arm).map(|_| ());
        result = result.and(cleaned);
    }
    result?;
    state.observer.finished();
    Ok(state.arms)
}

struct State<'a, 'e, U: Unit> {
    arms: Vec<ArmOutcome<U::Measured>>,
    executors: &'a mut [&'e mut dyn Executor<U>],
    sink: &'a mut dyn RunSink<U::Kept>,
    observer: &'a mut dyn Observer<U::Measured>,
    hooks: Vec<Hooks>,
}

/// Whether the schedule goes on after a step.
enum Step {
    Next,
    /// A prepare hook failed.
    Halt,
}

impl<U: Unit> State<'_, '_, U> {
    fn warmups_and_blocks(
        &mut self,
        order: Order,
        warmup: u32,
        stop: &mut dyn StopRule<U::Measured>,
    ) -> Result<(), RunnerError> {
        let mut blocks = Blocks::new(order, self.arms.len());
        for _ in 0..warmup {
            for arm in blocks.warmup_round() {
                if let Step::Halt = self.step(arm, true)? {
                    return Ok(());
                }
            }
        }
        let started = Instant::now();
        loop {
            let decision = stop.decide(&self.arms, started.elapsed());
            for look in stop.take_looks() {
                self.sink.keep_look(&look).map_err(RunnerError::Sink)?;
            }
            let pending = match decision {
                NextBlock::Continue(pending) => pending,
                NextBlock::Stop => return Ok(()),
                NextBlock::GiveUp(why) => return Err(RunnerError::GaveUp(why)),
                NextBlock::Refuse(why) => return Err(RunnerError::Usage(why)),
            };
            for arm in blocks.next_block() {
                if !pending.contains(&arm) {
                    continue;
                }
                if let Step::Halt = self.step(arm, false)? {
                    return Ok(());
                }
            }
        }
    }

    /// The prepare hook, then one unit, stored.
    fn step(&mut self, arm: usize, warmup: bool) -> Result<Step, RunnerError> {
        if !self.hook(HookKind::Prepare, arm)? {
            return Ok(Step::Halt);
        }
        self.observer.starting(arm, warmup, &self.arms[arm]);
        let index = self.arms[arm].next_index;
        let attempt = self.executors[arm].run(index, warmup)?;
        self.record(arm, warmup, attempt)?;
        Ok(Step::Next)
    }

    fn record(&mut self, arm: usize, warmup: bool, unit: U) -> Result<(), RunnerError> {
        let judged = unit.judged();
        self.store(arm, unit.kept())?;
        if warmup {
            return Ok(());
        }
        let outcome = &mut self.arms[arm];
        outcome.attempts += 1;
        match judged {
            Ok(measured) => outcome.measured.push(measured),
            Err(failed) => outcome.failures.push(RunFailure {
                attempt: outcome.attempts,
                message: failed.message,
                exit_status: failed.exit_status,
            }),
        }
        Ok(())
    }

    /// Runs a hook of `arm`; a failure is said, stored as a failed run of the arm, and
    /// gives false.
    fn hook(&mut self, kind: HookKind, arm: usize) -> Result<bool, RunnerError> {
        let Some(hooks) = self.hooks.get(arm) else {
            return Ok(true);
        };
        let Err(failure) = run_hook(kind, hooks.command(kind), hooks.show_output) else {
            return Ok(true);
        };
        self.observer.hook_failed(arm, &failure);
        let index = self.arms[arm].next_index;
        let run = self.executors[arm].hook_failure_run(&failure, index);
        self.store(arm, run)?;
        self.arms[arm].hook_failures.push(failure);
        Ok(false)
    }

    fn store(&mut self, arm: usize, run: U::Kept) -> Result<(), RunnerError> {
        self.sink.accept(arm, run).map_err(RunnerError::Sink)?;
        self.arms[arm].next_index += 1;
        Ok(())
    }
}

/// The order of each round of warm-ups and of each block.
struct Blocks {
    order: Order,
    arms: usize,
    rng: ChaCha8Rng,
    block: u64,
}

impl Blocks {
    fn new(order: Order, arms: usize) -> Blocks {
        let seed = match order {
            Order::Shuffled { seed } => seed,
            Order::Abba => 0,
        };
        Blocks {
            order,
            arms,
            rng: ChaCha8Rng::seed_from_u64(seed),
            block: 0,
        }
    }

    fn warmup_round(&mut self) -> Vec<usize> {
        match self.order {
            Order::Shuffled { .. } => self.shuffled(),
            Order::Abba => (0..self.arms).collect(),
        }
    }

    fn next_block(&mut self) -> Vec<usize> {
        let block = self.block;
        self.block += 1;
        match self.order {
            Order::Shuffled { .. } => self.shuffled(),
            Order::Abba => abba_block(block, self.arms),
        }
    }

    fn shuffled(&mut self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.arms).collect();
        order.shuffle(&mut self.rng);
        order
    }
}
