//! `kbench run`: the main job. Repeated, interleaved, recorded runs under a label.
use crate::error::usage;
use crate::runner::spec::WorkloadSpec;
use crate::runner::{self, Plan, Stopping, WorkloadOutcome};
use crate::session::{self, DbArgs};
use std::time::{Duration, Instant};

/// The default suite: perf's three sched benchmarks, idle-CPU wakeup latency and IPI
/// cost, sized for about ten minutes on two cores (about one with `--quick`).
///
/// pipe and seccomp-notify run with their tasks pinned: left free, a run lands on one
/// CPU (a context switch per round trip) or on two (a cross-CPU wakeup, often an IPI
/// and an idle exit), several times slower, and the mix of the two swamps any change.
/// Cross-CPU is the path wakeups and IPIs take, so both measure it; pipe on one CPU
/// is the second spec, the context-switch path alone.
const SUITE: &[&str] = &[
    "messaging:-g 10 -l 100",
    "pipe:-l 100000 --placement cross-cpu",
    "pipe:-l 100000 --placement same-cpu",
    "seccomp-notify:-l 100000 --placement cross-cpu",
    "wakeup:--wakes 1000",
    "ipi:--iterations 20000",
];
pub const QUICK_SUITE: &[&str] = &[
    "messaging:-g 4 -l 50",
    "pipe:-l 20000 --placement cross-cpu",
    "pipe:-l 20000 --placement same-cpu",
    "seccomp-notify:-l 20000 --placement cross-cpu",
    "wakeup:--wakes 300 --gap-us 1000",
    "ipi:--iterations 5000",
];
const DEFAULT_RUNS: u32 = 100;
const QUICK_RUNS: u32 = 25;

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Workloads: `pipe`, `pipe:-l 100000 --pingpong`, `messaging:-g 4`, ...
    /// [default: messaging, pipe and seccomp-notify]
    pub workloads: Vec<String>,
    /// The label these runs are stored under (a kernel, a patch).
    #[arg(long)]
    pub label: String,
    /// Measured runs per workload [default: 100, or 25 with --quick].
    #[arg(long, conflicts_with = "precision")]
    pub runs: Option<u32>,
    /// Repeat until the 95% CI of each median is within ±PCT percent.
    #[arg(long, value_name = "PCT")]
    pub precision: Option<f64>,
    /// Time limit for --precision, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    pub max_time: f64,
    /// Warm-up runs per workload, recorded and excluded from statistics.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Smaller workloads and fewer runs: about a minute on two cores.
    #[arg(long)]
    pub quick: bool,
    /// Pin every run: a cpulist (`0-3,6`) or a class (`class:big`, `class:Cortex-A72`).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Stop a run (and record it as failed) after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    pub run_timeout: f64,
    /// Seed of the run order [default: from the clock; recorded either way].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Count perf_event_open counters (task clock, context switches, migrations, page
    /// faults; instructions and cycles where the PMU has them) in every run of pipe,
    /// seccomp-notify and messaging. Counting slows context switches, so these runs
    /// compare only with runs made with --counters.
    #[arg(long)]
    pub counters: bool,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    session::check_label(&args.label)?;
    let plan = plan(&args)?;
    let mut store = args.db.open()?;
    let new = session::new_session(&args.label, "run", Some(plan.seed));
    let session_id = session::begin_session(&mut store, &new)?;
    let started = Instant::now();
    let outcomes = runner::execute(&mut store, session_id, &plan)?;
    store
        .end_session(session_id, session::unix_now_ns())
        .map_err(session::store_error)?;
    out!(
        "{}",
        summary(
            &args.label,
            session_id,
            &plan,
            &outcomes,
            started.elapsed(),
            &args.db
        )
    );
    let any_failed = outcomes.iter().any(|o| !o.failures.is_empty());
    Ok(i32::from(any_failed))
}

pub fn plan(args: &RunArgs) -> anyhow::Result<Plan> {
    let texts: Vec<String> = if args.workloads.is_empty() {
        let suite = if args.quick { QUICK_SUITE } else { SUITE };
        suite.iter().map(|s| s.to_string()).collect()
    } else {
        args.workloads.clone()
    };
    let specs = texts
        .iter()
        .map(|t| WorkloadSpec::parse(t).map(|s| s.with_counters(args.counters)))
        .collect::<Result<Vec<_>, _>>()
        .or_else(usage)?;
    if let Some(reason) = args
        .counters
        .then(kbench_workloads::counters::no_perf_events)
        .flatten()
    {
        return usage(format!("--counters: {reason}"));
    }
    let stopping = stopping(args)?;
    let cpus = match &args.cpus {
        Some(spec) => Some(kbench_sys::format_cpulist(&resolve_cpus(spec)?)),
        None => None,
    };
    Ok(Plan {
        specs,
        stopping,
        warmup: args.warmup,
        cpus,
        seed: args
            .seed
            .unwrap_or_else(|| session::unix_now_ns() ^ u64::from(std::process::id())),
        run_timeout: run_timeout(args.run_timeout)?,
    })
}

fn stopping(args: &RunArgs) -> anyhow::Result<Stopping> {
    if let Some(pct) = args.precision {
        if !(pct > 0.0 && pct < 100.0 && args.max_time > 0.0 && args.max_time.is_finite()) {
            return usage("--precision takes a percentage in (0, 100) and --max-time a positive number of seconds");
        }
        return Ok(Stopping::Precision {
            pct,
            min_runs: 5,
            max_time: Duration::from_secs_f64(args.max_time),
        });
    }
    let runs = args
        .runs
        .unwrap_or(if args.quick { QUICK_RUNS } else { DEFAULT_RUNS });
    if runs == 0 {
        return usage("--runs must be at least 1");
    }
    Ok(Stopping::Runs(runs))
}

/// `--run-timeout` as a duration; a positive number of seconds.
pub fn run_timeout(secs: f64) -> anyhow::Result<Duration> {
    if secs > 0.0 && secs.is_finite() && secs < 1e9 {
        Ok(Duration::from_secs_f64(secs))
    } else {
        usage("--run-timeout takes a positive number of seconds")
    }
}

/// Resolves `--cpus` (a cpulist or `class:NAME`) to CPUs of this machine.
pub fn resolve_cpus(spec: &str) -> anyhow::Result<Vec<u32>> {
    let root = kbench_sys::Sysroot::from_env();
    let topology = kbench_sys::Topology::read(&root).or_else(|e| usage(e.to_string()))?;
    topology
        .resolve_cpus(spec)
        .or_else(|e| usage(format!("--cpus {spec}: {e}")))
}

/// The closing table: per workload n, median, CI of the median, CV and warnings.
fn summary(
    label: &str,
    session_id: i64,
    plan: &Plan,
    outcomes: &[WorkloadOutcome],
    elapsed: Duration,
    db: &DbArgs,
) -> String {
    let runs: usize = outcomes.iter().map(|o| o.values.len()).sum();
    let mut out = format!(
        "kbench run: label {label}, session {session_id}, {runs} runs in {:.1} s, seed {}{}\n\n",
        elapsed.as_secs_f64(),
        plan.seed,
        plan.cpus
            .as_ref()
            .map(|c| format!(", pinned to CPUs {c}"))
            .unwrap_or_default()
    );
    out.push_str(&format!(
        "{:<NAME_WIDTH$} {:>4} {:>11} {:>8} {:>6}  {}\n",
        "workload", "n", "median", "CI95 ±%", "CV%", "metric"
    ));
    for o in outcomes {
        out.push_str(&summary_row(o, &o.spec));
        out.push_str(&placement_rows(o));
    }
    let notes: Vec<String> = outcomes.iter().flat_map(warnings).collect();
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            out.push_str(&format!("  {note}\n"));
        }
    }
    out.push_str(&format!(
        "\nstored in {}; compare with: kbench compare BASE {label}\n",
        db.path().display()
    ));
    out
}

/// The width of the workload column of the run summary: with the widest metric name
/// (`ipi_round_trip_p50_ns`) a line is 80 columns.
const NAME_WIDTH: usize = 24;

/// One row per placement when a workload's runs ran with more than one.
fn placement_rows(o: &WorkloadOutcome) -> String {
    let kinds = kbench_analysis::group::distinct(o.placements.iter().flatten().copied());
    if kinds.len() < 2 {
        return String::new();
    }
    kinds
        .into_iter()
        .map(|kind| {
            let only = o.only_placement(kind);
            let name = format!("  {}", kbench_report::compare::placement_words(kind));
            summary_row(&only, &name)
        })
        .collect()
}

fn summary_row(o: &WorkloadOutcome, name: &str) -> String {
    let d = kbench_stats::describe(&o.values);
    let fmt = |v: Option<f64>, prec: usize| {
        v.map(|v| format!("{v:.prec$}"))
            .unwrap_or_else(|| "-".into())
    };
    // A spec too long for its column gets a line of its own, so none is cut.
    let (own_line, name) = if name.chars().count() > NAME_WIDTH {
        (format!("{name}\n"), "")
    } else {
        (String::new(), name)
    };
    own_line
        + &format!(
            "{:<NAME_WIDTH$} {:>4} {:>11} {:>8} {:>6}  {}\n",
            name,
            d.n,
            kbench_report::compare::figure(d.median),
            fmt(o.precision_pct(), 2),
            fmt(d.cv_pct, 2),
            o.metric
        )
}

/// Noise warnings for one workload, each naming the runs it concerns.
fn warnings(o: &WorkloadOutcome) -> Vec<String> {
    let mut notes = Vec::new();
    if !o.failures.is_empty() {
        notes.push(format!(
            "{}: {} failed run(s), not counted",
            o.spec,
            o.failures.len()
        ));
    }
    if o.values.len() < 5 {
        return notes;
    }
    let outliers = kbench_stats::mad_outliers(&o.values);
    if !outliers.is_empty() {
        let runs: Vec<String> = outliers.iter().map(|i| (i + 1).to_string()).collect();
        notes.push(format!(
            "{}: outlier runs {} (kept)",
            o.spec,
            runs.join(", ")
        ));
    }
    if let Some(groups) = kbench_analysis::modes::placement_modes(&o.values, &o.placements) {
        notes.push(format!(
            "{}: two populations, split by placement: {}",
            o.spec,
            kbench_report::compare::placement_groups_text(&groups, &o.unit)
        ));
    } else if kbench_stats::bimodality(&o.values).bimodal {
        notes.push(format!("{}: bimodal: two populations of runs", o.spec));
    }
    if let Some(drift) = kbench_stats::drift(&o.values) {
        if drift.p_value < 0.05 {
            notes.push(format!(
                "{}: drifts over the session (Mann-Kendall p={:.3})",
                o.spec, drift.p_value
            ));
        }
    }
    if let Some(cv) = kbench_stats::describe(&o.values).cv_pct {
        if cv > 10.0 {
            notes.push(format!("{}: noisy, CV {cv:.1}%: see kbench env", o.spec));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_record::PlacementKind::{CrossCpu, SameCpu};

    fn outcome(
        values: &[f64],
        placements: &[Option<kbench_record::PlacementKind>],
    ) -> WorkloadOutcome {
        WorkloadOutcome {
            spec: "pipe:-l 100000".into(),
            metric: "usecs_per_op".into(),
            unit: "us/op".into(),
            values: values.to_vec(),
            placements: placements.to_vec(),
            failures: Vec::new(),
        }
    }

    #[test]
    fn runs_of_two_placements_get_a_row_each_and_explain_the_spread() {
        let values = [1.70, 1.71, 13.0, 1.69, 13.4, 12.8, 1.72, 1.70, 13.1];
        let placements: Vec<_> = values
            .iter()
            .map(|v| Some(if *v > 5.0 { CrossCpu } else { SameCpu }))
            .collect();
        let o = outcome(&values, &placements);
        let rows = placement_rows(&o);
        let lines: Vec<&str> = rows.lines().collect();
        assert_eq!(lines.len(), 2, "{rows}");
        assert!(
            lines[0].starts_with("  on one CPU ") && lines[0].contains(" 5 "),
            "{rows}"
        );
        assert!(
            lines[1].starts_with("  across CPUs ") && lines[1].contains(" 4 "),
            "{rows}"
        );
        let notes = warnings(&o).join("\n");
        assert!(
            notes.contains("two populations, split by placement: 5 runs on one CPU: 1.7000 us/op; 4 runs across CPUs: 13.050 us/op"),
            "{notes}"
        );
    }

    #[test]
    fn one_placement_adds_no_rows() {
        let o = outcome(&[1.7, 1.8, 1.75], &[Some(SameCpu); 3]);
        assert_eq!(placement_rows(&o), "");
        let unknown = outcome(&[1.7, 1.8, 1.75], &[None; 3]);
        assert_eq!(placement_rows(&unknown), "");
    }
}
