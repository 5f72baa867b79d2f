//! From matched wakes (`kbench_trace`) to what a run record carries: one latency series
//! per phase and one for the whole kernel-side wake, named in [`WakePhases`].
use crate::latency::{LatencyRecorder, LatencySeries};
use kbench_record::{Milestone, OnePhase, OneWake, PhaseSeries, WakePhases, EACH_WAKE_MAX};
use kbench_trace::WakeMatch;
use std::collections::BTreeMap;

/// The series of the kernel-side wake, `sched_waking` (or the event that began the
/// wake where there was none) to the switch to the wakee.
pub const TOTAL_SERIES: &str = "kernel_wake_latency";

/// How the trace was made, for [`WakePhases`].
pub struct TraceSource<'a> {
    /// `tracefs`, `ftrace` or `trace-cmd`.
    pub name: &'a str,
    pub clock: Option<&'a str>,
    pub resolution_ns: u64,
    pub events: Vec<String>,
}

/// One phase's values and where, on average, it starts after the waking.
struct PhaseValues {
    recorder: LatencyRecorder,
    start_sum_ns: u128,
}

/// The phase series (the total first) and their description.
pub fn phase_series(
    matched: &WakeMatch,
    source: TraceSource<'_>,
) -> Result<(Vec<LatencySeries>, WakePhases), String> {
    let mut total = LatencyRecorder::new()?;
    let mut phases: BTreeMap<(Milestone, Milestone), PhaseValues> = BTreeMap::new();
    let mut paths = BTreeMap::new();
    let mut began_without_waking = BTreeMap::new();
    for wake in &matched.wakes {
        total.record(wake.total_ns());
        *paths.entry(wake.path).or_default() += 1;
        match wake.milestones.first() {
            Some((Milestone::Waking, _)) | None => {}
            Some((began, _)) => *began_without_waking.entry(*began).or_default() += 1,
        }
        let waking_ns = wake.milestones.first().map_or(0, |m| m.1);
        let mut start_ns = waking_ns;
        for (from, to, duration_ns) in wake.phases() {
            let values = match phases.entry((from, to)) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => e.insert(PhaseValues {
                    recorder: LatencyRecorder::new()?,
                    start_sum_ns: 0,
                }),
            };
            values.recorder.record(duration_ns);
            values.start_sum_ns += u128::from(start_ns - waking_ns);
            start_ns += duration_ns;
        }
    }
    let mut ordered: Vec<_> = phases.into_iter().collect();
    // In the order they happen: by mean start after the waking.
    ordered.sort_by_key(|((from, to), v)| {
        (
            v.start_sum_ns / u128::from(v.recorder.count().max(1)),
            *from,
            *to,
        )
    });
    let mut series = vec![total.summary(
        TOTAL_SERIES,
        "sched_waking to the wakee switched in (kernel trace)",
    )];
    let mut described = Vec::new();
    for ((from, to), values) in ordered {
        let name = from.phase_series_name(to);
        let description = format!("{} -> {} (kernel trace)", from.as_str(), to.as_str());
        series.push(values.recorder.summary(&name, &description));
        described.push(PhaseSeries {
            from,
            to,
            series: name,
        });
    }
    let phases = WakePhases {
        source: source.name.to_string(),
        trace_clock: source.clock.map(str::to_string),
        timestamp_resolution_ns: source.resolution_ns,
        wakes: matched.looked_at,
        paths,
        incomplete: matched.incomplete.clone(),
        phases: described,
        total_series: TOTAL_SERIES.to_string(),
        events: source.events,
        began_without_waking,
        each: each_wake(matched),
    };
    Ok((series, phases))
}

/// The warning a run gets when more than a tenth of its traced wakes were incomplete.
pub fn incomplete_warning(phases: &WakePhases) -> Option<String> {
    let bad = phases.incomplete_count();
    (bad * 10 > phases.wakes).then(|| {
        let reasons: Vec<String> = phases
            .incomplete
            .iter()
            .map(|(r, n)| format!("{} {n}", r.as_str()))
            .collect();
        let mut warning = format!(
            "{bad} of {} traced wakes could not be followed ({}): their phases are left out",
            phases.wakes,
            reasons.join(", ")
        );
        let no_switch_in = phases
            .incomplete
            .get(&kbench_record::Incomplete::NoSwitchIn)
            .copied()
            .unwrap_or(0);
        if no_switch_in * 2 > phases.wakes {
            // Seen on a nested-virtualisation host whose second vCPU's idle task
            // emits no events at all: its switches to the wakee are never traced.
            warning.push_str(
                "; when the target CPU's switches out of idle go untraced, as on some \
                 virtual machines, another --wakee-cpu may be followed",
            );
        }
        warning
    })
}

/// Each wake's phases, when there are at most [`EACH_WAKE_MAX`] to show.
fn each_wake(matched: &WakeMatch) -> Vec<OneWake> {
    if matched.wakes.len() > EACH_WAKE_MAX {
        return Vec::new();
    }
    matched
        .wakes
        .iter()
        .map(|wake| OneWake {
            pid: wake.pid,
            path: wake.path,
            phases: wake
                .phases()
                .into_iter()
                .map(|(from, to, ns)| OnePhase { from, to, ns })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_record::WakePath;
    use kbench_trace::Wake;
    use Milestone::*;

    #[test]
    fn phases_are_ordered_as_they_happen_and_sum_to_the_total() {
        let wake = |ipi_at: u64| Wake {
            pid: 1,
            waker_cpu: 0,
            target_cpu: 1,
            path: WakePath::CallFunctionSingle,
            milestones: vec![
                (Waking, 0),
                (IpiSent, ipi_at),
                (HandlerEntry, 10),
                (HandlerExit, 12),
                (IdleExit, 14),
                (SwitchIn, 20),
            ],
        };
        let matched = WakeMatch {
            wakes: vec![wake(2), wake(4)],
            looked_at: 3,
            incomplete: BTreeMap::from([(kbench_record::Incomplete::NoSwitchIn, 1)]),
        };
        let (series, phases) = phase_series(
            &matched,
            TraceSource {
                name: "ftrace",
                clock: None,
                resolution_ns: 1000,
                events: Vec::new(),
            },
        )
        .unwrap();
        let names: Vec<&str> = phases.phases.iter().map(|p| p.series.as_str()).collect();
        assert_eq!(
            names,
            [
                "phase_waking_to_ipi_sent",
                "phase_ipi_sent_to_handler_entry",
                "phase_handler_entry_to_handler_exit",
                "phase_handler_exit_to_idle_exit",
                "phase_idle_exit_to_switch_in"
            ]
        );
        assert_eq!(series[0].name, TOTAL_SERIES);
        assert_eq!((series[0].min, series[0].max), (20, 20));
        assert_eq!((series[1].min, series[1].max), (2, 4));
        assert_eq!(phases.paths.get(&WakePath::CallFunctionSingle), Some(&2));
        assert_eq!(phases.complete() + phases.incomplete_count(), 3);
        assert!(
            incomplete_warning(&phases).is_some(),
            "1 of 3 is more than a tenth"
        );
    }
}
