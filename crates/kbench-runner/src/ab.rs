//! The A/B schedule (`kbench ab 'CMD_A' 'CMD_B'`): two commands or two workload specs,
//! interleaved in ABBA blocks, each run handed to the sink as a run of its side; and,
//! with `--until-decided`, the one sequential driver over runs as units, each look said
//! on stderr and timed for the record.
use crate::driver::{
    Bounds, Looker, PrimaryState, PrimaryStates, PrimaryUnits, Reached, Seen, SequentialDriver,
    UnitLooker,
};
use crate::executor::{CommandExecutor, Executor, WorkloadExecutor};
use crate::figures::{FigureOptions, FigureReader};
use crate::hooks::{HookFailure, HookKind, Hooks};
use crate::scheduler::{self, ArmOutcome, MeasuredRun, Observer, Order, Schedule};
use crate::sink::RunSink;
use crate::spec::WorkloadSpec;
use crate::stop::{StopPolicy, StopRule};
use crate::RunnerError;
use kbench_analysis::sequential::{SequentialOptions, SequentialReport};
use kbench_analysis::LabelData;
use kbench_record::sequential::SequentialLook;
use kbench_record::stored::{AbSide, StoredRun};
use kbench_store::Store;
use kbench_workloads::measure::unix_now_ns;
use std::time::Duration;

/// The labels of an A/B's two sides: those `given`, else `ab-<unix seconds>-a` and
/// `-b`; each a valid label, and the two different.
pub fn side_labels(given: [Option<&str>; 2]) -> Result<[String; 2], RunnerError> {
    let stamp = unix_now_ns() / 1_000_000_000;
    let [a, b] = [(given[0], 'a'), (given[1], 'b')]
        .map(|(label, side)| label.map_or_else(|| format!("ab-{stamp}-{side}"), str::to_string));
    for label in [&a, &b] {
        kbench_store::check_label(label).map_err(|e| RunnerError::Usage(e.to_string()))?;
    }
    if a == b {
        return Err(RunnerError::Usage(
            "the two sides need different labels".into(),
        ));
    }
    Ok([a, b])
}

/// Which host's runs the verdict of an A/B reads: those of the machine its `session`
/// ran on, whatever else the labels hold.
pub fn verdict_machines(session: &kbench_store::NewSession) -> kbench_analysis::Machines {
    let machine = kbench_store::machine_with_id(session.environment.as_ref());
    machine.map_or(
        kbench_analysis::Machines::Same,
        kbench_analysis::Machines::Only,
    )
}

/// One side of an A/B: a workload spec or a shell command.
pub enum AbCommand {
    Workload(WorkloadSpec),
    Shell(String),
}

impl AbCommand {
    /// The side `text` names: a workload spec when it looks like one, else a command.
    pub fn parse(text: &str) -> Result<AbCommand, RunnerError> {
        if text.trim().is_empty() {
            return Err(RunnerError::Usage("an empty command".into()));
        }
        if WorkloadSpec::looks_like_spec(text) {
            return WorkloadSpec::parse(text)
                .map(AbCommand::Workload)
                .map_err(RunnerError::Usage);
        }
        Ok(AbCommand::Shell(text.to_string()))
    }

    /// Its executor: `reader` reads a command's figures and applies `--metric` to a
    /// workload's. A command's runs do not say they were pinned.
    fn executor(
        &self,
        reader: FigureReader,
        cpus: Option<&[u32]>,
        timeout: Duration,
    ) -> Box<dyn Executor> {
        match self {
            AbCommand::Workload(spec) => Box::new(WorkloadExecutor {
                spec: spec.clone(),
                cpus: cpus.map(kbench_sys::format_cpulist),
                timeout,
                metric: Some(reader),
            }),
            AbCommand::Shell(command) => Box::new(CommandExecutor {
                cpus: cpus.map(<[u32]>::to_vec),
                ..CommandExecutor::shell(command, reader, timeout)
            }),
        }
    }
}

/// What an A/B runs: both sides as given and parsed, and how.
pub struct AbPlan<'a> {
    /// Each side's text as the user gave it (`ab`'s arguments).
    pub texts: [&'a str; 2],
    pub sides: &'a [AbCommand; 2],
    pub labels: [&'a str; 2],
    pub figures: FigureOptions,
    pub cpus: Option<&'a [u32]>,
    pub timeout: Duration,
    pub warmup: u32,
    /// Measured runs a side, without a sequential driver.
    pub runs: u32,
    /// Each side's hooks.
    pub hooks: [Hooks; 2],
}

/// Runs the sides in ABBA blocks after their warm-ups, each run after its side's
/// prepare hook; each side's setup first and cleanup last; until the driver decides, or
/// without one for the plan's runs. Every run goes to `sink` as a run of its side
/// ([`as_ab_run`]). Whether a hook failed.
pub fn interleave(
    plan: AbPlan<'_>,
    driver: Option<&mut AbDriver>,
    sink: &mut dyn RunSink,
) -> Result<bool, RunnerError> {
    let mut fixed = StopPolicy::Attempts(plan.runs);
    let stop: &mut dyn StopRule = match driver {
        Some(driver) => driver,
        None => &mut fixed,
    };
    let mut executors = [0, 1].map(|side| {
        let reader = FigureReader::new(&plan.figures, plan.texts[side]);
        plan.sides[side].executor(reader, plan.cpus, plan.timeout)
    });
    let mut arms: Vec<&mut dyn Executor> = executors
        .iter_mut()
        .map(|e| e.as_mut() as &mut dyn Executor)
        .collect();
    let schedule = Schedule {
        order: Order::Abba,
        warmup: plan.warmup,
        hooks: plan.hooks.into(),
        stop,
    };
    let mut sink = AbSink {
        inner: sink,
        pair: plan.texts.map(str::to_string),
    };
    let mut observer = SideMessages {
        labels: plan.labels,
    };
    let outcomes = scheduler::run(schedule, &mut arms, &mut sink, &mut observer)?;
    Ok(outcomes.iter().any(|o| !o.hook_failures.is_empty()))
}

/// The two sides differ on purpose (other parameters, another command), so their
/// runs share one comparison key; what each side really ran is kept in `ab_side`, and
/// the record stays the workload's own.
pub fn as_ab_run(mut run: StoredRun, side: usize, pair: &[String; 2]) -> StoredRun {
    run.ab_side = Some(AbSide {
        side: if side == 0 { "a" } else { "b" }.into(),
        workload: std::mem::take(&mut run.workload),
        params: std::mem::take(&mut run.params),
        variant: std::mem::take(&mut run.variant),
    });
    run.variant = "ab".into();
    run.workload = "ab".into();
    // Both sides carry the pair of specs, so an earlier `ab` under the same labels
    // with other commands is never pooled with this one.
    run.params = [
        ("a".to_string(), serde_json::Value::from(pair[0].as_str())),
        ("b".to_string(), serde_json::Value::from(pair[1].as_str())),
    ]
    .into();
    run
}

/// A sink, with each run marked as a run of its side.
struct AbSink<'a> {
    inner: &'a mut dyn RunSink,
    pair: [String; 2],
}

impl RunSink for AbSink<'_> {
    fn accept(&mut self, side: usize, run: StoredRun) -> anyhow::Result<()> {
        self.inner.accept(side, as_ab_run(run, side, &self.pair))
    }
}

/// A failed hook, said with its side.
struct SideMessages<'a> {
    labels: [&'a str; 2],
}

impl Observer for SideMessages<'_> {
    fn hook_failed(&mut self, side: usize, failure: &HookFailure) {
        let name = ["A", "B"][side];
        let stopped = match failure.kind {
            HookKind::Cleanup => "",
            HookKind::Setup | HookKind::Prepare => "; the A/B stopped, its stored runs are kept",
        };
        errln!(
            "kbench: side {name} ({}): {}{stopped}",
            self.labels[side],
            failure.message
        );
    }
}

/// A look at one primary metric as one progress line, given the design's δ in percent
/// (kbench-report's `sequential::progress_line`).
pub type ProgressLine = Box<dyn Fn(&PrimaryState, f64) -> String>;

/// The one sequential driver over runs as units, as `ab --until-decided` uses it.
pub type AbDriver = SequentialDriver<SaidLooks>;

/// The driver over runs as units (the log of each run's primary value) of the design
/// `options` (α, δ, the runs a side at which the looks stop undecided), stopping
/// undecided after `max_time_s` seconds; each look said on stderr with `line`.
pub fn ab_driver(
    options: &SequentialOptions,
    max_time_s: f64,
    line: ProgressLine,
) -> Result<AbDriver, RunnerError> {
    if !(max_time_s > 0.0 && max_time_s.is_finite()) {
        let why = "--max-time takes a positive number of seconds";
        return Err(RunnerError::Usage(why.into()));
    }
    let looker = UnitLooker::new(
        options.alpha,
        options.delta_pct,
        options.max_units_per_side,
        Box::new(runs_as_units),
    );
    let bounds = Bounds {
        // The looks stop undecided at --max-runs by themselves.
        max_attempts_per_side: None,
        max_time: Duration::from_secs_f64(max_time_s),
    };
    let looks = SaidLooks {
        units: looker,
        looked_at_unix_ns: Vec::new(),
        line,
    };
    Ok(SequentialDriver::new(looks, bounds))
}

/// Runs as units, each look said on stderr, as vm-ab says its own, and timed for the
/// record.
pub struct SaidLooks {
    units: UnitLooker,
    looked_at_unix_ns: Vec<u64>,
    line: ProgressLine,
}

impl Looker<MeasuredRun> for SaidLooks {
    type Look = PrimaryStates;

    fn look(&mut self, arms: &[ArmOutcome]) -> Seen<PrimaryStates> {
        let seen = self.units.look(arms);
        if let Seen::Look(_) = seen {
            self.looked_at_unix_ns.push(unix_now_ns());
        }
        seen
    }

    fn say(&self, states: &PrimaryStates, arms: &[ArmOutcome], _reached: Reached) {
        let runs = arms
            .iter()
            .map(|a| a.primary_values().len())
            .min()
            .unwrap_or(0);
        for state in &states.0 {
            errln!(
                "kbench: after {runs} run{} a side: {}",
                if runs == 1 { "" } else { "s" },
                (self.line)(state, self.units.delta_pct)
            );
        }
    }
}

/// Each side's measured runs as units of the one primary metric.
pub fn runs_as_units(arms: &[ArmOutcome]) -> Vec<PrimaryUnits> {
    let first_primary = arms
        .iter()
        .flat_map(|arm| &arm.measured)
        .find_map(|run| run.values.iter().find(|v| v.primary));
    let Some(primary) = first_primary else {
        return Vec::new();
    };
    let logs = |arm: &ArmOutcome| -> Vec<f64> {
        arm.primary_values()
            .into_iter()
            .filter(|v| *v > 0.0 && v.is_finite())
            .map(f64::ln)
            .collect()
    };
    vec![PrimaryUnits {
        metric: primary.metric.clone(),
        higher_is_better: primary.higher_is_better,
        a_log_units: logs(&arms[0]),
        b_log_units: logs(&arms[1]),
        known: None,
    }]
}

/// The records of the driver's looks during the runs and, as the last, the decision
/// read from the stored runs (`last`: the same units, with what was open at the time
/// bound closed), to be kept with the design.
pub fn look_records(driver: &AbDriver, last: &SequentialReport) -> Vec<SequentialLook> {
    let key_of = |metric: &str| {
        let row = last.rows.iter().find(|r| r.metric == metric);
        row.map_or(("ab", "", "ab"), |r| {
            (r.workload.as_str(), r.params.as_str(), r.variant.as_str())
        })
    };
    let looks: Vec<(u64, &PrimaryStates)> = driver
        .looker()
        .looked_at_unix_ns
        .iter()
        .copied()
        .zip(driver.history())
        .collect();
    let earlier = looks.split_last().map_or(&[][..], |(_, earlier)| earlier);
    let records = earlier
        .iter()
        .enumerate()
        .map(|(i, (at_unix_ns, states))| SequentialLook {
            index: i as u64 + 1,
            at_unix_ns: *at_unix_ns,
            rows: states
                .0
                .iter()
                .map(|state| {
                    let (workload, params, variant) = key_of(&state.metric);
                    kbench_analysis::sequential::look_row(
                        (workload, params, variant, &state.metric),
                        &state.look,
                        kbench_stats::Level::Run,
                    )
                })
                .collect(),
        });
    let closing =
        kbench_analysis::sequential::look_record(last, earlier.len() as u64 + 1, unix_now_ns());
    records.chain([closing]).collect()
}

/// The decision, read from the stored runs of both labels (`data`, loaded after the
/// runs) as `compare --sequential` reads it later, with what is still open (the time
/// bound) closed undecided; the driver's looks and this one are kept with the design
/// `design_id`, which has none recorded yet.
pub fn decide(
    store: &mut Store,
    data: [&LabelData; 2],
    options: SequentialOptions,
    driver: &AbDriver,
    design_id: i64,
) -> anyhow::Result<SequentialReport> {
    let [base, new] = data;
    let mut sequential =
        kbench_analysis::sequential::sequential_of(store, base, new, options, None)?;
    // The runs have stopped: what is still open (the time bound) is undecided.
    sequential.close_undecided();
    for look in look_records(driver, &sequential) {
        store.insert_sequential_look(design_id, &look)?;
    }
    Ok(sequential)
}
