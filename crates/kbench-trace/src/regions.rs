//! The measured regions kbench marks in a trace with `trace_marker`:
//!
//! ```text
//! kbench-wakeup: begin wakee=TID waker=TID waker_cpu=A wakee_cpu=B wakes=N
//! kbench-wakeup: wake I        (before each measured wake, in the waker's gap)
//! kbench-wakeup: end
//! ```
//!
//! Warm-up wakes come before `begin`, so they stay out; each wake mark is a wake the
//! trace must show, so a wake the kernel never traced is counted, not lost.
use crate::event::{Event, EventKind};

/// What a `begin` mark says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub wakee_pid: i32,
    pub waker_pid: i32,
    pub waker_cpu: u32,
    pub wakee_cpu: u32,
    pub wakes: u64,
}

/// One region's marks, by index into the trace's events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionMarks {
    pub region: Region,
    pub begin: usize,
    /// `None` when the trace ends before the `end` mark.
    pub end: Option<usize>,
    pub wake_marks: Vec<usize>,
}

impl RegionMarks {
    /// Whether event `index` lies inside the region.
    pub fn contains(&self, index: usize) -> bool {
        index > self.begin && self.end.is_none_or(|end| index < end)
    }
}

const PREFIX: &str = "kbench-wakeup: ";

/// The begin mark of a region, as [`find_regions`] reads it.
pub fn begin_mark(region: &Region) -> String {
    format!(
        "{PREFIX}begin wakee={} waker={} waker_cpu={} wakee_cpu={} wakes={}",
        region.wakee_pid, region.waker_pid, region.waker_cpu, region.wakee_cpu, region.wakes
    )
}

/// The mark written before measured wake `index`.
pub fn wake_mark(index: u64) -> String {
    format!("{PREFIX}wake {index}")
}

/// The end mark.
pub fn end_mark() -> String {
    format!("{PREFIX}end")
}

/// Every kbench region of a trace; `(line, message)` for a malformed or nested mark.
pub fn find_regions(events: &[Event]) -> Result<Vec<RegionMarks>, (usize, String)> {
    let mut regions: Vec<RegionMarks> = Vec::new();
    let mut open: Option<RegionMarks> = None;
    for (index, event) in events.iter().enumerate() {
        let EventKind::Marker(text) = &event.kind else {
            continue;
        };
        let Some(mark) = text.strip_prefix(PREFIX) else {
            continue;
        };
        let bad = |message: &str| (event.line, format!("kbench mark '{text}': {message}"));
        if let Some(fields) = mark.strip_prefix("begin ") {
            if open.is_some() {
                return Err(bad("a region begins inside another"));
            }
            let region = parse_begin(fields).map_err(|m| bad(&m))?;
            open = Some(RegionMarks {
                region,
                begin: index,
                end: None,
                wake_marks: Vec::new(),
            });
        } else if mark.starts_with("wake ") {
            match open.as_mut() {
                Some(marks) => marks.wake_marks.push(index),
                None => return Err(bad("a wake mark outside a region")),
            }
        } else if mark == "end" {
            let Some(mut marks) = open.take() else {
                return Err(bad("an end without a begin"));
            };
            marks.end = Some(index);
            regions.push(marks);
        } else {
            return Err(bad("unknown kbench mark"));
        }
    }
    regions.extend(open);
    Ok(regions)
}

fn parse_begin(fields: &str) -> Result<Region, String> {
    let value = |key: &str| -> Result<&str, String> {
        fields
            .split(' ')
            .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
            .ok_or_else(|| format!("no {key}="))
    };
    fn number<T: std::str::FromStr>(key: &str, text: &str) -> Result<T, String> {
        text.parse()
            .map_err(|_| format!("{key}={text}: not a number"))
    }
    Ok(Region {
        wakee_pid: number("wakee", value("wakee")?)?,
        waker_pid: number("waker", value("waker")?)?,
        waker_cpu: number("waker_cpu", value("waker_cpu")?)?,
        wakee_cpu: number("wakee_cpu", value("wakee_cpu")?)?,
        wakes: number("wakes", value("wakes")?)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(line: usize, text: String) -> Event {
        Event {
            line,
            cpu: 0,
            ts_ns: line as u64,
            pid: 1,
            kind: EventKind::Marker(text),
        }
    }

    #[test]
    fn marks_round_trip_and_misplaced_ones_are_errors() {
        let region = Region {
            wakee_pid: 7,
            waker_pid: 6,
            waker_cpu: 0,
            wakee_cpu: 1,
            wakes: 2,
        };
        let events = vec![
            marker(1, begin_mark(&region)),
            marker(2, wake_mark(0)),
            marker(3, wake_mark(1)),
            marker(4, end_mark()),
        ];
        let found = find_regions(&events).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].region, region);
        assert_eq!(
            (found[0].begin, found[0].end, found[0].wake_marks.clone()),
            (0, Some(3), vec![1, 2])
        );
        assert!(found[0].contains(1) && !found[0].contains(3));
        assert_eq!(find_regions(&events[1..]).unwrap_err().0, 2);
        assert_eq!(
            find_regions(&[marker(9, "kbench-wakeup: begin wakee=x".into())])
                .unwrap_err()
                .0,
            9
        );
        let cut = find_regions(&events[..3]).unwrap();
        assert_eq!(cut[0].end, None);
    }
}
