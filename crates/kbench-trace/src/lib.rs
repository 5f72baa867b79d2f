//! Wake phases from kernel trace text, pure: no I/O, so every rule is testable on
//! hand-written traces without root.
//!
//! - [`text`]: the ftrace `trace` file (with its flags column) and `trace-cmd report`
//!   output, line by line, into typed [`event::Event`]s;
//! - [`wakes`]: the events of each wake matched from `sched_waking` to the wakee's
//!   `sched_switch`, with the path it took, or the reason it cannot be followed;
//! - [`regions`]: the measured regions kbench marks with `trace_marker`, so warm-up
//!   wakes stay out, and one run per region.
//!
//! [`analyse`] does all three.
pub mod event;
pub mod regions;
pub mod text;
pub mod wakes;

pub use event::{Event, EventKind, Handler, HandlerLayer, IpiKind};
pub use regions::{Region, RegionMarks};
pub use text::{parse_trace, ParsedTrace, TraceError, TraceFormat};
pub use wakes::{match_wakes, Selection, Wake, WakeMatch};

/// The wakes of one measured region (or of the whole trace when it has no kbench marks).
#[derive(Debug, Clone, PartialEq)]
pub struct RegionWakes {
    /// The region's own description (its kbench begin mark), if any.
    pub region: Option<Region>,
    pub matched: WakeMatch,
}

/// Parses `text` and matches its wakes: one entry per kbench region, or one for the
/// whole trace (every wake `selection` accepts) when it has no kbench marks.
pub fn analyse(
    text: &str,
    selection: &Selection,
) -> Result<(ParsedTrace, Vec<RegionWakes>), TraceError> {
    let parsed = parse_trace(text)?;
    let marks = regions::find_regions(&parsed.events)
        .map_err(|(line, message)| TraceError { line, message })?;
    let runs = if marks.is_empty() {
        vec![RegionWakes {
            region: None,
            matched: match_wakes(&parsed.events, selection, None),
        }]
    } else {
        marks
            .into_iter()
            .map(|marks| RegionWakes {
                region: Some(marks.region.clone()),
                matched: match_wakes(
                    &parsed.events,
                    &Selection::pid(marks.region.wakee_pid),
                    Some(&marks),
                ),
            })
            .collect()
    };
    Ok((parsed, runs))
}
