//! Kernel traces given to `kbench import-trace`: the ftrace `trace` file and
//! `trace-cmd report` output.
use kbench_record::Milestone;
use kbench_trace::{analyse, parse_trace, Selection};

/// The text parsed into events: in file order, each from a line of the file.
pub fn trace_parse(data: &[u8]) {
    let Some(text) = crate::strict_text(data) else {
        return;
    };
    let Ok(parsed) = parse_trace(text) else {
        return;
    };
    assert!(!parsed.event_names.is_empty(), "a trace without events");
    assert!(parsed.resolution_ns >= 1);
    let lines = text.lines().count();
    let mut previous = 0;
    for event in &parsed.events {
        assert!(
            event.line > previous && event.line <= lines,
            "line {}",
            event.line
        );
        previous = event.line;
    }
}

/// The whole of `import-trace`: events, kbench's regions and the wakes matched in them,
/// for every task (no `--pid`/`--comm`) as the binary does by default.
pub fn trace_analyse(data: &[u8]) {
    let Some(text) = crate::strict_text(data) else {
        return;
    };
    let Ok((parsed, regions)) = analyse(text, &Selection::all()) else {
        return;
    };
    assert!(!regions.is_empty(), "an analysis without a region");
    for region in &regions {
        for wake in &region.matched.wakes {
            let _ = (wake.total_ns(), wake.phases());
            let first = wake.milestones.first().map(|m| m.0);
            let last = wake.milestones.last().map(|m| m.0);
            assert!(
                matches!(
                    first,
                    Some(Milestone::Waking | Milestone::Wakeup | Milestone::WakeupNew)
                ),
                "a wake starts at its waking, or where there is none at its wakeup: {first:?}"
            );
            assert_eq!(
                last,
                Some(Milestone::SwitchIn),
                "a wake ends at its switch-in"
            );
        }
    }
    let _ = parsed.format.as_str();
}
