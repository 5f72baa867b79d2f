//! Hand-written traces with known timestamps: the phases come out exact, in both text
//! formats, and every wake that cannot be followed is counted under its reason.
use kbench_record::{Incomplete, Milestone, WakePath};
use kbench_trace::{analyse, parse_trace, Selection, TraceFormat, Wake};
use proptest::prelude::*;
use std::collections::BTreeMap;

const FTRACE_X86: &str = include_str!("fixtures/ftrace-x86.trace");
const TRACE_CMD_ARM64: &str = include_str!("fixtures/trace-cmd-arm64.report");
/// Real captures on a 2-CPU x86 VM (6.18), excerpted as people paste them: a shell
/// forking (`sched_wakeup_new`, `sched_wakeup`, `sched_switch`), and `sleep 0.02`
/// (`sched_wakeup` and `sched_switch` only). Neither recorded `sched_waking` or any
/// IPI event.
const WAKEUP_NEW: &str = include_str!("fixtures/ftrace-x86-wakeup-new.trace");
const WAKEUP_ONLY: &str = include_str!("fixtures/ftrace-x86-wakeup-only.trace");

fn by_comm(comm: &str) -> Selection {
    Selection {
        comms: vec![comm.into()],
        ..Selection::default()
    }
}

use Milestone::*;

fn phases(wake: &Wake) -> Vec<(Milestone, Milestone, u64)> {
    wake.phases()
}

#[test]
fn ftrace_file_region_gives_exact_phases_and_counts_the_rest() {
    let (parsed, runs) = analyse(FTRACE_X86, &Selection::all()).unwrap();
    assert_eq!(parsed.format, TraceFormat::Ftrace);
    assert_eq!(parsed.resolution_ns, 1000);
    assert_eq!(runs.len(), 1, "one kbench region");
    let region = runs[0].region.as_ref().unwrap();
    assert_eq!(
        (region.wakee_pid, region.waker_pid, region.wakes),
        (102, 101, 4)
    );
    let m = &runs[0].matched;
    assert_eq!(
        m.looked_at, 4,
        "the four wake marks; the warm-up wake before begin is out"
    );
    assert_eq!(m.wakes.len(), 2);
    let ipi = &m.wakes[0];
    assert_eq!(ipi.path, WakePath::CallFunctionSingle);
    // x86 HLT: the handler runs before the idle-exit event.
    assert_eq!(
        phases(ipi),
        [
            (Waking, IpiSent, 2_000),
            (IpiSent, HandlerEntry, 8_000),
            (HandlerEntry, HandlerExit, 3_000),
            (HandlerExit, IdleExit, 2_000),
            (IdleExit, SwitchIn, 5_000),
        ]
    );
    assert_eq!(ipi.total_ns(), 20_000);
    let polled = &m.wakes[1];
    assert_eq!(polled.path, WakePath::Polling);
    assert_eq!(
        phases(polled),
        [
            (Waking, IpiSkipped, 1_000),
            (IpiSkipped, IdleExit, 3_000),
            (IdleExit, SwitchIn, 5_000)
        ]
    );
    assert_eq!(
        m.incomplete,
        BTreeMap::from([(Incomplete::NoHandler, 1), (Incomplete::NoWaking, 1)])
    );
}

#[test]
fn trace_cmd_report_gives_exact_ns_phases_for_the_selected_task() {
    let selection = Selection::pid(300);
    let (parsed, runs) = analyse(TRACE_CMD_ARM64, &selection).unwrap();
    assert_eq!(parsed.format, TraceFormat::TraceCmd);
    assert_eq!(parsed.resolution_ns, 1);
    assert_eq!(runs.len(), 1);
    assert!(runs[0].region.is_none());
    let m = &runs[0].matched;
    assert_eq!(m.looked_at, 4);
    assert_eq!(m.wakes.len(), 2);
    let wakelist = &m.wakes[0];
    assert_eq!(wakelist.path, WakePath::CallFunctionSingle);
    // arm64 WFI: the idle exit comes before the handler; the outer IRQ handler is the
    // one timed.
    assert_eq!(
        phases(wakelist),
        [
            (Waking, IpiSent, 250),
            (IpiSent, IdleExit, 3_750),
            (IdleExit, HandlerEntry, 500),
            (HandlerEntry, HandlerExit, 800),
            (HandlerExit, SwitchIn, 2_700),
        ]
    );
    let resched = &m.wakes[1];
    assert_eq!(resched.path, WakePath::Reschedule);
    assert_eq!(
        phases(resched),
        [
            (Waking, IpiSent, 300),
            (IpiSent, HandlerEntry, 1_700),
            (HandlerEntry, HandlerExit, 400),
            (HandlerExit, SwitchIn, 600),
        ]
    );
    assert_eq!(
        m.incomplete,
        BTreeMap::from([(Incomplete::EventsLost, 1), (Incomplete::NoSwitchIn, 1)])
    );
}

#[test]
fn selection_by_name_and_all_tasks() {
    let by_comm = Selection {
        comms: vec!["rt-app".into()],
        ..Selection::default()
    };
    let (_, runs) = analyse(TRACE_CMD_ARM64, &by_comm).unwrap();
    assert_eq!(runs[0].matched.wakes.len(), 2);
    let (_, runs) = analyse(TRACE_CMD_ARM64, &Selection::all()).unwrap();
    // The kworker's wake never reaches its switch-in in the trace.
    assert_eq!(runs[0].matched.looked_at, 5);
    assert_eq!(
        runs[0].matched.incomplete.get(&Incomplete::NoSwitchIn),
        Some(&2)
    );
}

#[test]
fn a_new_tasks_first_wake_begins_at_sched_wakeup_new() {
    // bash forks pid 2926 on CPU 1 for CPU 0; it runs there 25 us later. No IPI event
    // was recorded, so how it got there is untraced, not guessed.
    let (_, runs) = analyse(WAKEUP_NEW, &by_comm("bash")).unwrap();
    let m = &runs[0].matched;
    let new: Vec<&Wake> = m.wakes.iter().filter(|w| w.pid == 2926).collect();
    assert_eq!(new.len(), 1, "{m:?}");
    assert_eq!(new[0].path, WakePath::Untraced);
    assert_eq!((new[0].waker_cpu, new[0].target_cpu), (1, 0));
    assert_eq!(phases(new[0]), [(WakeupNew, SwitchIn, 25_000)]);
    // sh (2926 after exec) forks 2927: the same; 2926's own wake in the excerpt never
    // reaches its switch-in.
    let (_, runs) = analyse(WAKEUP_NEW, &by_comm("sh")).unwrap();
    let m = &runs[0].matched;
    assert_eq!(m.wakes.len(), 1, "{m:?}");
    assert_eq!(m.wakes[0].pid, 2927);
    assert_eq!(phases(&m.wakes[0]), [(WakeupNew, SwitchIn, 21_000)]);
    assert_eq!(m.incomplete, BTreeMap::from([(Incomplete::NoSwitchIn, 1)]));
}

#[test]
fn a_trace_without_sched_waking_begins_wakes_at_sched_wakeup() {
    // sleep's timer fires on CPU 1, where it slept: a local wake, 11 us to its switch-in.
    let (_, runs) = analyse(WAKEUP_ONLY, &by_comm("sleep")).unwrap();
    let m = &runs[0].matched;
    assert_eq!(m.looked_at, 1);
    assert_eq!(m.wakes.len(), 1, "{m:?}");
    assert_eq!(m.wakes[0].path, WakePath::Local);
    assert_eq!(phases(&m.wakes[0]), [(Wakeup, SwitchIn, 11_000)]);
    // Every task's wakes: each begins at its sched_wakeup.
    let (_, runs) = analyse(WAKEUP_ONLY, &Selection::all()).unwrap();
    let m = &runs[0].matched;
    assert!(m.wakes.len() >= 5, "{m:?}");
    assert!(m.wakes.iter().all(|w| w.milestones[0].0 == Wakeup));
}

#[test]
fn with_sched_waking_recorded_a_lone_sched_wakeup_begins_nothing() {
    // The x86 fixture records sched_waking: its sched_wakeup events only place wakes.
    let (_, runs) = analyse(FTRACE_X86, &Selection::all()).unwrap();
    for run in &runs {
        assert!(run
            .matched
            .wakes
            .iter()
            .all(|w| w.milestones[0].0 == Waking));
    }
}

#[test]
fn bad_input_names_its_line() {
    let cases: &[(&str, usize)] = &[
        ("", 1),
        ("hello world\n", 1),
        ("{\"workload\": \"sched/pipe\"}\n", 1),
        ("# tracer: nop\n#\n", 2),
        ("# tracer: nop\n  <idle>-0  [001] d..2. 100.0000", 2),
        (
            "# tracer: nop\n  <idle>-0  [001] d..2. 100.000001: sched_waking: comm=x\n",
            2,
        ),
        ("cpus=2\n  a-1 [000] 12345: sched_switch: x\n", 2),
        (
            "cpus=2\n  a-1 [000] 1.000001: sched_switch: prev_pid=1 next_pid=2\n",
            2,
        ),
    ];
    for (text, line) in cases {
        let err = parse_trace(text).unwrap_err();
        assert_eq!(err.line, *line, "{text:?}: {err}");
        assert!(!err.to_string().contains('\n'));
    }
    let cut = FTRACE_X86.lines().take(20).collect::<Vec<_>>().join("\n")
        + "\n    sched-wakeup-101     [000] d..2.   100.0020";
    assert_eq!(parse_trace(&cut).unwrap_err().line, 21);
}

#[test]
fn a_region_cut_by_the_end_of_the_trace_counts_its_open_wakes() {
    let cut: String = FTRACE_X86
        .lines()
        .take_while(|l| !l.contains("100.002063"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (_, runs) = analyse(&cut, &Selection::all()).unwrap();
    let m = &runs[0].matched;
    assert!(m.wakes.is_empty());
    assert_eq!(m.incomplete, BTreeMap::from([(Incomplete::NoSwitchIn, 1)]));
}

proptest! {
    #[test]
    fn the_parser_never_panics(text in "\\PC{0,400}") {
        let _ = analyse(&text, &Selection::all());
    }

    #[test]
    fn mangled_real_traces_never_panic(cut in 0usize..4000, junk in "[ -~\\[\\]:=0-9]{0,40}") {
        let mut text = FTRACE_X86.to_string();
        let at = text.char_indices().map(|(i, _)| i).nth(cut % text.chars().count()).unwrap_or(0);
        text.insert_str(at, &junk);
        let _ = analyse(&text, &Selection::all());
        let mut report = TRACE_CMD_ARM64.to_string();
        report.truncate(cut.min(report.len()));
        let _ = analyse(&report, &Selection::pid(300));
    }
}
