//! Kernel trace text, line by line: the ftrace `trace` file and `trace-cmd report`.
//!
//! Both print one event a line, `TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: FIELDS`, where
//! the ftrace file has a flags column (`d..2.`, `dNh1.`; four characters on older
//! kernels) and trace-cmd has none unless asked for latency format. The task name may
//! hold spaces and dashes, and `-o record-tgid` adds `(TGID)` after the pid, so a line
//! is read around its `[CPU]` field, the first one followed by a timestamp.
//!
//! Timestamps must be seconds with a fraction (any trace clock counted in ns: local,
//! global, mono, boot); the kernel's file prints microseconds, `trace-cmd report -t`
//! nanoseconds. Comments, headers, `CPU:N [LOST M EVENTS]`, `##### CPU N buffer
//! started ####` and stack-trace lines are understood; any other line is an error that
//! names it, since a half-read trace would give phases that look right and are not.
use crate::event::{Event, EventKind, Handler, HandlerLayer, IpiKind};
use std::collections::BTreeSet;

/// Which tool wrote the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// The kernel's `trace` file (tracefs), with its flags column.
    Ftrace,
    /// `trace-cmd report`.
    TraceCmd,
}

impl TraceFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceFormat::Ftrace => "ftrace",
            TraceFormat::TraceCmd => "trace-cmd",
        }
    }
}

/// A trace read into events.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedTrace {
    pub format: TraceFormat,
    /// In file order, which both tools write in time order.
    pub events: Vec<Event>,
    /// The coarsest timestamp step seen, in ns (1000 for microsecond timestamps).
    pub resolution_ns: u64,
    /// The names of the events the trace holds, to say which kinds it lacks.
    pub event_names: BTreeSet<String>,
}

/// A line that is not what a trace holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TraceError {
    pub line: usize,
    pub message: String,
}

fn error<T>(line: usize, message: impl Into<String>) -> Result<T, TraceError> {
    Err(TraceError {
        line,
        message: message.into(),
    })
}

/// Reads a whole trace. An empty file, a file of another kind, or a malformed or cut
/// line is an error naming the line.
pub fn parse_trace(text: &str) -> Result<ParsedTrace, TraceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut header_format = None;
    let mut events = Vec::new();
    let mut event_names = BTreeSet::new();
    let mut resolution_ns = 1;
    let mut flags_seen = None;
    let mut last_ts_ns = 0;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if events.is_empty() && header_format.is_none() {
            header_format = header_of(trimmed);
        }
        if let Some(kind) = non_event_line(trimmed) {
            if let Some(kind) = kind {
                events.push(Event {
                    line,
                    cpu: lost_cpu(&kind),
                    ts_ns: last_ts_ns,
                    pid: -1,
                    kind,
                });
            }
            continue;
        }
        let Some(fields) = split_event_line(raw) else {
            return if events
                .iter()
                .all(|e| matches!(e.kind, EventKind::Lost { .. }))
                && header_format.is_none()
            {
                error(line, "not a kernel trace (expected the ftrace `trace` file or `trace-cmd report` output)")
            } else {
                error(line, "not a trace event line (truncated or garbled?)")
            };
        };
        let ts = parse_timestamp(fields.timestamp).or_else(|message| error(line, message))?;
        resolution_ns = resolution_ns.max(ts.resolution_ns);
        last_ts_ns = ts.ns;
        flags_seen.get_or_insert(fields.flags.is_some());
        event_names.insert(fields.event.to_string());
        let kind = event_kind(fields.event, fields.body).or_else(|message| error(line, message))?;
        events.push(Event {
            line,
            cpu: fields.cpu,
            ts_ns: ts.ns,
            pid: fields.pid,
            kind,
        });
    }
    if event_names.is_empty() {
        let line = text.lines().count().max(1);
        return if header_format.is_some() {
            error(line, "the trace holds no events")
        } else {
            error(1, "not a kernel trace: no event lines")
        };
    }
    let format = header_format.unwrap_or(if flags_seen == Some(true) {
        TraceFormat::Ftrace
    } else {
        TraceFormat::TraceCmd
    });
    Ok(ParsedTrace {
        format,
        events,
        resolution_ns,
        event_names,
    })
}

/// The tool a header line names.
fn header_of(line: &str) -> Option<TraceFormat> {
    if line.starts_with("# tracer:") {
        Some(TraceFormat::Ftrace)
    } else if line.starts_with("cpus=") || line.starts_with("version =") {
        Some(TraceFormat::TraceCmd)
    } else {
        None
    }
}

/// `Some(None)` for a line without an event (comment, header, stack frame),
/// `Some(Some(Lost))` for a lost-events line, `None` for a line to read as an event.
fn non_event_line(line: &str) -> Option<Option<EventKind>> {
    if line.starts_with('#') && !line.starts_with("#####") {
        return Some(None);
    }
    if let Some(cpu) = buffer_started_cpu(line) {
        return Some(Some(EventKind::Lost { cpu }));
    }
    if let Some(cpu) = lost_events_cpu(line) {
        return Some(Some(EventKind::Lost { cpu }));
    }
    let header = line.starts_with("cpus=")
        || line.starts_with("version =")
        || line.starts_with("=>")
        || (line.starts_with("CPU ") && line.ends_with(" is empty"));
    header.then_some(None)
}

fn lost_cpu(kind: &EventKind) -> u32 {
    match kind {
        EventKind::Lost { cpu } => *cpu,
        _ => 0,
    }
}

/// `##### CPU 3 buffer started ####`
fn buffer_started_cpu(line: &str) -> Option<u32> {
    let rest = line
        .strip_prefix("#####")?
        .trim_start()
        .strip_prefix("CPU ")?;
    let (cpu, rest) = rest.split_once(' ')?;
    rest.starts_with("buffer started")
        .then(|| cpu.parse().ok())?
}

/// `CPU:3 [LOST 120 EVENTS]` (ftrace, trace-cmd), `CPU:3 [120 EVENTS DROPPED]`.
fn lost_events_cpu(line: &str) -> Option<u32> {
    let rest = line.strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    (rest.starts_with('[') && rest.contains("EVENTS")).then(|| cpu.parse().ok())?
}

/// The columns of an event line.
struct EventFields<'a> {
    pid: i32,
    cpu: u32,
    flags: Option<&'a str>,
    timestamp: &'a str,
    event: &'a str,
    body: &'a str,
}

/// Splits an event line around the first `[CPU]` field that a timestamp follows.
fn split_event_line(line: &str) -> Option<EventFields<'_>> {
    let bytes = line.as_bytes();
    let mut search = 0;
    while let Some(offset) = line[search..].find('[') {
        let open = search + offset;
        search = open + 1;
        let close = line[open..].find(']').map(|c| open + c)?;
        let cpu_text = &line[open + 1..close];
        if open == 0 || !bytes[open - 1].is_ascii_whitespace() || !all_digits(cpu_text) {
            continue;
        }
        let Some(pid) = task_pid(&line[..open]) else {
            continue;
        };
        let Some((flags, timestamp, after)) = flags_and_timestamp(&line[close + 1..]) else {
            continue;
        };
        let (event, body) = match after.trim_start().split_once(':') {
            Some((event, body)) if !event.is_empty() && !event.contains(char::is_whitespace) => {
                (event, body.trim())
            }
            _ => continue,
        };
        return Some(EventFields {
            pid,
            cpu: cpu_text.parse().ok()?,
            flags,
            timestamp,
            event,
            body,
        });
    }
    None
}

/// The pid of `COMM-PID` or `COMM-PID (TGID)`, the part of a line before `[CPU]`.
fn task_pid(prefix: &str) -> Option<i32> {
    let mut task = prefix.trim_end();
    if task.ends_with(')') {
        let open = task.rfind('(')?;
        task = task[..open].trim_end();
    }
    let (_, pid) = task.rsplit_once('-')?;
    if all_digits(pid) {
        pid.parse().ok()
    } else {
        None
    }
}

/// After `[CPU]`: optional flags, then `SECONDS.FRACTION:`; returns the flags, the
/// timestamp text and what follows its colon.
fn flags_and_timestamp(rest: &str) -> Option<(Option<&str>, &str, &str)> {
    let rest = rest.trim_start();
    let (first, after_first) = split_word(rest)?;
    if let Some(ts) = first.strip_suffix(':').filter(|t| looks_like_timestamp(t)) {
        return Some((None, ts, after_first));
    }
    if !(3..=6).contains(&first.len()) || !first.bytes().all(is_flag_char) {
        return None;
    }
    let (second, after_second) = split_word(after_first.trim_start())?;
    let ts = second
        .strip_suffix(':')
        .filter(|t| looks_like_timestamp(t))?;
    Some((Some(first), ts, after_second))
}

fn split_word(text: &str) -> Option<(&str, &str)> {
    if text.is_empty() {
        return None;
    }
    Some(match text.find(char::is_whitespace) {
        Some(end) => (&text[..end], &text[end..]),
        None => (text, ""),
    })
}

fn is_flag_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b".+!#$@*-".contains(&b)
}

fn looks_like_timestamp(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// A timestamp in ns and the step its digits allow.
struct Timestamp {
    ns: u64,
    resolution_ns: u64,
}

fn parse_timestamp(text: &str) -> Result<Timestamp, String> {
    let Some((secs, fraction)) = text.split_once('.') else {
        return Err(format!(
            "timestamp {text} is not in seconds: trace with a clock counted in ns (mono, global, local), not counter or x86-tsc"
        ));
    };
    if !all_digits(secs) || !all_digits(fraction) || fraction.len() > 9 {
        return Err(format!("timestamp {text}: expected SECONDS.FRACTION"));
    }
    let scale = 10u64.pow(9 - fraction.len() as u32);
    let secs: u64 = secs
        .parse()
        .map_err(|_| format!("timestamp {text}: too large"))?;
    let fraction: u64 = fraction.parse().map_err(|_| format!("timestamp {text}"))?;
    let ns = secs
        .checked_mul(1_000_000_000)
        .and_then(|s| s.checked_add(fraction * scale))
        .ok_or_else(|| format!("timestamp {text}: too large"))?;
    Ok(Timestamp {
        ns,
        resolution_ns: scale,
    })
}

/// The typed meaning of an event the matcher reads; [`EventKind::Other`] for the rest.
fn event_kind(event: &str, body: &str) -> Result<EventKind, String> {
    let kind = match event {
        "sched_waking" => EventKind::Waking {
            pid: field(body, "pid")?,
            comm: comm_field(body),
            target_cpu: field(body, "target_cpu")?,
        },
        "sched_wakeup" | "sched_wakeup_new" => EventKind::Wakeup {
            pid: field(body, "pid")?,
            comm: comm_field(body),
            target_cpu: field(body, "target_cpu")?,
            new: event == "sched_wakeup_new",
        },
        "sched_switch" => switch_fields(body)?,
        "sched_wake_idle_without_ipi" => EventKind::IdleWithoutIpi {
            cpu: field(body, "cpu")?,
        },
        "ipi_send_cpu" => EventKind::IpiSend {
            targets: vec![field(body, "cpu")?],
            kind: callback_kind(body),
        },
        "ipi_send_cpumask" => EventKind::IpiSend {
            targets: parse_cpulist(raw_field(body, "cpumask")?)?,
            kind: callback_kind(body),
        },
        "ipi_raise" => EventKind::IpiSend {
            targets: parse_hex_mask(raw_field(body, "target_mask")?)?,
            kind: Some(reason_kind(body)),
        },
        "ipi_entry" | "ipi_exit" => {
            let reason = body
                .trim_start_matches('(')
                .trim_end_matches(')')
                .to_string();
            let handler = Handler {
                kind: Some(reason_kind(&reason)),
                layer: HandlerLayer::Ipi(reason),
            };
            if event == "ipi_entry" {
                EventKind::HandlerEntry(handler)
            } else {
                EventKind::HandlerExit(handler)
            }
        }
        "irq_handler_entry" => {
            let irq = field(body, "irq")?;
            if raw_field(body, "name").is_ok_and(|name| name == "IPI") {
                EventKind::HandlerEntry(Handler {
                    layer: HandlerLayer::Irq(irq),
                    kind: None,
                })
            } else {
                EventKind::Other
            }
        }
        "irq_handler_exit" => EventKind::HandlerExit(Handler {
            layer: HandlerLayer::Irq(field(body, "irq")?),
            kind: None,
        }),
        "cpu_idle" => EventKind::CpuIdle {
            state: field(body, "state")?,
            cpu: field(body, "cpu_id")?,
        },
        "tracing_mark_write" => EventKind::Marker(body.to_string()),
        "print" => EventKind::Marker(
            body.strip_prefix("tracing_mark_write:")
                .unwrap_or(body)
                .trim()
                .to_string(),
        ),
        _ => match x86_vector(event) {
            Some((name, kind, entry)) => {
                let handler = Handler {
                    layer: HandlerLayer::X86Vector(name),
                    kind: Some(kind),
                };
                if entry {
                    EventKind::HandlerEntry(handler)
                } else {
                    EventKind::HandlerExit(handler)
                }
            }
            None => EventKind::Other,
        },
    };
    Ok(kind)
}

/// x86's IPI vectors: `reschedule_entry`, `call_function_single_exit`, ...
fn x86_vector(event: &str) -> Option<(&'static str, IpiKind, bool)> {
    const VECTORS: [(&str, IpiKind); 3] = [
        ("reschedule", IpiKind::Reschedule),
        ("call_function_single", IpiKind::CallFunctionSingle),
        ("call_function", IpiKind::CallFunction),
    ];
    VECTORS.iter().find_map(|&(name, kind)| {
        if event.strip_prefix(name)? == "_entry" {
            Some((name, kind, true))
        } else if event.strip_prefix(name)? == "_exit" {
            Some((name, kind, false))
        } else {
            None
        }
    })
}

/// The text of `key=VALUE` up to the next space (the last occurrence, since a task
/// name before it may hold anything).
fn raw_field<'a>(body: &'a str, key: &str) -> Result<&'a str, String> {
    let needle = format!("{key}=");
    let start = body
        .match_indices(&needle)
        .filter(|(at, _)| *at == 0 || body.as_bytes()[at - 1] == b' ')
        .last()
        .map(|(at, _)| at + needle.len())
        .ok_or_else(|| format!("no {key}= field"))?;
    let value = &body[start..];
    Ok(value.split(' ').next().unwrap_or(value))
}

fn field<T: std::str::FromStr>(body: &str, key: &str) -> Result<T, String> {
    let text = raw_field(body, key)?;
    text.parse()
        .map_err(|_| format!("{key}={text}: not a number"))
}

/// `comm=` of `sched_waking` and `sched_wakeup`: everything up to ` pid=`, since names
/// hold spaces.
fn comm_field(body: &str) -> String {
    let Some(rest) = body.strip_prefix("comm=") else {
        return String::new();
    };
    match rest.rfind(" pid=") {
        Some(end) => rest[..end].to_string(),
        None => String::new(),
    }
}

/// `prev_pid` and `next_pid` of `sched_switch`, each read from its own side of `==>`.
fn switch_fields(body: &str) -> Result<EventKind, String> {
    let (prev, next) = body
        .rsplit_once(" ==> ")
        .ok_or_else(|| "sched_switch without ==>".to_string())?;
    Ok(EventKind::Switch {
        prev_pid: field(prev, "prev_pid")?,
        next_pid: field(next, "next_pid")?,
    })
}

/// The kind an `ipi_send_*` callback names: none for resched_curr's IPI, the generic
/// function-call handlers by name; `None` when only an address is printed.
fn callback_kind(body: &str) -> Option<IpiKind> {
    let callback = raw_field(body, "callback").ok()?;
    if matches!(callback, "0x0" | "0" | "(nil)" | "0000000000000000") {
        Some(IpiKind::Reschedule)
    } else if callback.contains("call_function_single") || callback.contains("sched_ttwu_pending") {
        Some(IpiKind::CallFunctionSingle)
    } else if callback.contains("call_function") {
        Some(IpiKind::CallFunction)
    } else if callback.starts_with("0x") {
        None
    } else {
        Some(IpiKind::Other)
    }
}

/// arm/arm64 IPI reason texts (`ipi_raise`, `ipi_entry`).
fn reason_kind(text: &str) -> IpiKind {
    if text.contains("Rescheduling") {
        IpiKind::Reschedule
    } else if text.contains("Single function call") {
        IpiKind::CallFunctionSingle
    } else if text.contains("Function call") {
        IpiKind::CallFunction
    } else {
        IpiKind::Other
    }
}

/// The most CPUs one IPI's cpumask may name, repeats included (as kbench-sys bounds CPU
/// ids): the kernel prints each CPU once and has at most 8192, and without a bound one
/// line of `0-65535,0-65535,...` held gigabytes of targets.
const MAX_MASK_CPUS: usize = 1 << 16;

/// A cpulist such as `0-3,8`.
fn parse_cpulist(text: &str) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (low, high) = part.split_once('-').unwrap_or((part, part));
        let bad = || format!("cpumask={text}: not a CPU list");
        let (low, high): (u32, u32) = (
            low.parse().map_err(|_| bad())?,
            high.parse().map_err(|_| bad())?,
        );
        if high < low || cpus.len() + (high - low) as usize >= MAX_MASK_CPUS {
            return Err(bad());
        }
        cpus.extend(low..=high);
    }
    Ok(cpus)
}

/// A hex bitmap in 32-bit groups, most significant first: `00000000,00000002`.
fn parse_hex_mask(text: &str) -> Result<Vec<u32>, String> {
    let groups: Vec<&str> = text.split(',').collect();
    let mut cpus = Vec::new();
    for (rank, group) in groups.iter().rev().enumerate() {
        let bits = u32::from_str_radix(group, 16)
            .map_err(|_| format!("target_mask={text}: not a hex CPU mask"))?;
        let base = u32::try_from(rank * 32).map_err(|_| format!("target_mask={text}: too long"))?;
        cpus.extend((0..32).filter(|b| bits & (1 << b) != 0).map(|b| base + b));
    }
    cpus.sort_unstable();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ftrace_lines_with_odd_task_names_and_tgid() {
        let line = " memfd:sealed-91-14446   [000] d..2. 21294.124162: sched_switch: prev_comm=memfd:sealed-91 prev_pid=14446 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120";
        let f = split_event_line(line).unwrap();
        assert_eq!(
            (f.pid, f.cpu, f.flags, f.timestamp, f.event),
            (14446, 0, Some("d..2."), "21294.124162", "sched_switch")
        );
        let tgid = "  Web Content-[1]-77 (   70) [003] dN.1 5.000001: cpu_idle: state=1 cpu_id=3";
        let f = split_event_line(tgid).unwrap();
        assert_eq!((f.pid, f.cpu, f.flags), (77, 3, Some("dN.1")));
        let cmd = "  <idle>-0     [001]  1234.567890123: sched_switch:  prev_comm=a prev_pid=0 prev_prio=1 prev_state=R ==> next_comm=b c next_pid=5 next_prio=1";
        let f = split_event_line(cmd).unwrap();
        assert_eq!((f.flags, f.timestamp), (None, "1234.567890123"));
        assert_eq!(
            event_kind(f.event, f.body).unwrap(),
            EventKind::Switch {
                prev_pid: 0,
                next_pid: 5
            }
        );
    }

    #[test]
    fn timestamps_keep_their_resolution() {
        let us = parse_timestamp("12.000001").unwrap();
        assert_eq!((us.ns, us.resolution_ns), (12_000_001_000, 1000));
        let ns = parse_timestamp("12.000000001").unwrap();
        assert_eq!((ns.ns, ns.resolution_ns), (12_000_000_001, 1));
        assert!(parse_timestamp("123456").is_err());
        assert!(parse_timestamp("1.0000000001").is_err());
        assert!(parse_timestamp("99999999999999999999.1").is_err());
    }

    #[test]
    fn masks_and_lists() {
        assert_eq!(parse_hex_mask("00000000,00000002").unwrap(), [1]);
        assert_eq!(parse_hex_mask("1,00000001").unwrap(), [0, 32]);
        assert_eq!(parse_cpulist("0-2,5").unwrap(), [0, 1, 2, 5]);
        assert!(parse_cpulist("3-1").is_err());
        assert_eq!(parse_cpulist("0-65535").unwrap().len(), MAX_MASK_CPUS);
        // Bounded in all, not per range (fuzz/regressions/trace_parse/huge-cpumask).
        assert!(parse_cpulist("0-65535,0").is_err());
        assert!(parse_cpulist(&["0-32767"; 3].join(",")).is_err());
        assert!(parse_hex_mask("zz").is_err());
    }

    #[test]
    fn ipi_send_callbacks_name_the_kind() {
        let cfs = "cpu=1 callsite=ttwu_queue_wakelist+0x9c/0x100 callback=generic_smp_call_function_single_interrupt+0x0/0x20";
        assert_eq!(callback_kind(cfs), Some(IpiKind::CallFunctionSingle));
        assert_eq!(
            callback_kind("cpu=1 callsite=resched_curr+0x5/0x1 callback=0x0"),
            Some(IpiKind::Reschedule)
        );
        assert_eq!(
            callback_kind("cpu=1 callsite=0xffffffff8100 callback=0xffffffff8123"),
            None
        );
    }
}
