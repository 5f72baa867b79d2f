//! The record of a run: which samples count, their series, and what a reader must
//! know to trust them.
use super::params::{Mode, Params};
use super::threads::{SideLog, WakerLog, HOG_SLOT, WAKEE_SLOT, WAKER_SLOT};
use super::WORKLOAD;
use crate::clock;
use crate::ipiaccount::IpiRegion;
use crate::latency::LatencyRecorder;
use crate::shared::SharedStats;
use crate::waketrace::TracedPhases;
use crate::{RunRecord, WorkloadError};
use std::collections::BTreeMap;

/// More invalid samples than this fraction earns a warning.
const INVALID_WARN_FRACTION: f64 = 0.1;

/// Why a sample is kept out of the histograms, in order of precedence.
fn invalid_reason(
    p: &Params,
    index: usize,
    waker: &WakerLog,
    wakee: &SideLog,
) -> Option<&'static str> {
    let back = waker.back.as_ref();
    if !wakee.seq_ok[index] || back.is_some_and(|b| !b.seq_ok[index]) {
        return Some("out_of_sequence");
    }
    if wakee.cpu[index] != p.wakee_cpu || back.is_some_and(|b| b.cpu[index] != p.waker_cpu) {
        return Some("wrong_cpu");
    }
    if !wakee.slept[index] || back.is_some_and(|b| !b.slept[index]) {
        return Some("did_not_block");
    }
    if waker.overrun[index] {
        return Some("overrun");
    }
    None
}

/// The recorders of one run, one per series.
struct Series {
    wake: LatencyRecorder,
    waker_cost: LatencyRecorder,
    back: Option<(LatencyRecorder, LatencyRecorder)>,
}

fn recorder() -> Result<LatencyRecorder, WorkloadError> {
    LatencyRecorder::new().map_err(WorkloadError::Failed)
}

pub(super) fn build_record(
    p: &Params,
    waker: &WakerLog,
    wakee: &SideLog,
    stats: &SharedStats,
    traced: Option<TracedPhases>,
) -> Result<RunRecord, WorkloadError> {
    let mut series = Series {
        wake: recorder()?,
        waker_cost: recorder()?,
        back: match waker.back {
            Some(_) => Some((recorder()?, recorder()?)),
            None => None,
        },
    };
    let mut invalid: BTreeMap<String, u64> = BTreeMap::new();
    let measured = p.warmup as usize..p.total_wakes();
    for index in measured.clone() {
        if let Some(reason) = invalid_reason(p, index, waker, wakee) {
            *invalid.entry(reason.to_string()).or_default() += 1;
            continue;
        }
        let t0 = waker.t0_ns[index];
        series.wake.record(wakee.t2_ns[index].saturating_sub(t0));
        series
            .waker_cost
            .record(waker.t1_ns[index].saturating_sub(t0));
        if let (Some((ret, round)), Some(back)) = (series.back.as_mut(), waker.back.as_ref()) {
            ret.record(back.t2_ns[index].saturating_sub(back.t0_seen_ns[index]));
            round.record(back.t2_ns[index].saturating_sub(t0));
        }
    }
    let valid = series.wake.count();
    let samples = measured.len() as u64;
    let mut rec = RunRecord {
        workload: WORKLOAD.key(),
        params: p.params_map(),
        variant: format!("{}-{}", p.mode.as_str(), p.mech.as_str()),
        total_ns: waker.elapsed.total_ns,
        tasks: task_records(p, stats),
        cpus_used: stats.all_cpus(),
        start_unix_ns: waker.elapsed.start_unix_ns,
        end_unix_ns: waker.elapsed.end_unix_ns,
        header_lines: header_lines(p),
        series: series_summaries(&series),
        invalid_samples: invalid.clone(),
        warnings: invalid_warnings(&invalid, samples),
        ..RunRecord::default()
    }
    .with_per_op(valid);
    let region = IpiRegion {
        label: "wakes",
        per: if p.mode == Mode::PingPong {
            "round_trip"
        } else {
            "wake"
        },
        ops: samples,
    };
    rec.ipis.extend(
        waker
            .ipis_before
            .account(&waker.ipis_after, region, &cpu_roles(p)),
    );
    if let Some(traced) = traced {
        add_traced_phases(&mut rec, traced);
    }
    rec.metrics = crate::metrics::latency(&rec);
    if valid == 0 {
        return Err(WorkloadError::Failed(format!(
            "sched wakeup: none of the {samples} samples was valid ({})",
            describe_counts(&invalid)
        )));
    }
    Ok(rec)
}

/// The traced phases as more series after the measured ones (so the primary stays
/// `wake_latency`), with what they are and the cost of the marks.
fn add_traced_phases(rec: &mut RunRecord, traced: TracedPhases) {
    rec.series.extend(traced.series);
    rec.warnings
        .extend(crate::wakephases::incomplete_warning(&traced.phases));
    if let Some(cost) = traced.marker_write_ns {
        rec.meta.insert("trace_marker_write_ns".into(), cost.into());
    }
    rec.wake_phases = Some(traced.phases);
}

fn series_summaries(series: &Series) -> Vec<crate::latency::LatencySeries> {
    let mut out = vec![
        series.wake.summary(
            "wake_latency",
            "t2 - t0: wake call on the waker CPU to the wakee running",
        ),
        series
            .waker_cost
            .summary("waker_cost", "t1 - t0: the waker's wake call"),
    ];
    if let Some((ret, round)) = &series.back {
        out.push(ret.summary("return_latency", "the wakee waking the waker back"));
        out.push(round.summary("round_trip", "waker's t0 to the waker running again"));
    }
    out
}

fn cpu_roles(p: &Params) -> Vec<(u32, &'static str)> {
    if p.waker_cpu == p.wakee_cpu {
        vec![(p.waker_cpu, "waker+wakee")]
    } else {
        vec![(p.waker_cpu, "waker"), (p.wakee_cpu, "wakee")]
    }
}

fn task_records(p: &Params, stats: &SharedStats) -> Vec<crate::TaskCpus> {
    let mut tasks = vec![
        stats.task_record(WAKER_SLOT, "waker"),
        stats.task_record(WAKEE_SLOT, "wakee"),
    ];
    if p.mode == Mode::Preempt {
        tasks.push(stats.task_record(HOG_SLOT, "hog (SCHED_IDLE)"));
    }
    tasks
}

fn header_lines(p: &Params) -> Vec<String> {
    let schedule = if p.mode == Mode::PingPong {
        "# back to back".to_string()
    } else {
        format!(
            "# gap {} us +-{}%, seed {}",
            p.gap_us, p.gap_jitter_pct, p.seed
        )
    };
    vec![
        format!(
            "# {} wakes (+{} warm-up), mode {}, mech {}, CPU {} -> CPU {}",
            p.wakes,
            p.warmup,
            p.mode.as_str(),
            p.mech.as_str(),
            p.waker_cpu,
            p.wakee_cpu
        ),
        schedule,
    ]
}

fn describe_counts(counts: &BTreeMap<String, u64>) -> String {
    counts
        .iter()
        .map(|(reason, n)| format!("{reason} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn invalid_warnings(invalid: &BTreeMap<String, u64>, samples: u64) -> Vec<String> {
    let bad: u64 = invalid.values().sum();
    if samples > 0 && bad as f64 > INVALID_WARN_FRACTION * samples as f64 {
        vec![format!(
            "{bad} of {samples} samples invalid ({}): the run may not measure what it says",
            describe_counts(invalid)
        )]
    } else {
        Vec::new()
    }
}

/// Clock facts and the injected delay, which a reader must know to trust the numbers.
pub(super) fn add_meta(rec: &mut RunRecord, p: &Params, clock_read_ns: u64) {
    let clocksource = clock::clocksource();
    if let Some(source) = clocksource.as_deref() {
        if matches!(source, "hpet" | "acpi_pm" | "jiffies") {
            rec.warnings.push(format!(
                "clocksource {source} is not vDSO-readable: sub-us results are meaningless"
            ));
        }
    }
    rec.meta
        .insert("clocksource".into(), clocksource.unwrap_or_default().into());
    rec.meta.insert("clock".into(), "CLOCK_MONOTONIC".into());
    rec.meta
        .insert("clock_read_ns".into(), clock_read_ns.into());
    if p.inject_delay_us > 0 {
        rec.warnings.push(format!(
            "test mode: {} us injected before t2",
            p.inject_delay_us
        ));
    }
}
