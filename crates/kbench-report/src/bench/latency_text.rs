//! The text blocks of latency workloads (`sched/wakeup`, `ipi/ipi`): one block per
//! series (summary line, percentiles, log2 histogram), then the IPI accounting, invalid
//! samples and warnings, then, for a traced run, its wake phases as one table. Every
//! line fits in 80 columns.
use kbench_record::ipi::IpiAccounting;
use kbench_record::latency::{LatencySeries, Log2Bin};
use kbench_record::{InterruptSourceKind, RunRecord, WakePhases};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Width of the histogram bar, in characters: with bin labels of up to 12 digits
/// (1000 s, beyond the histogram's 60 s ceiling) a line stays within 80 columns.
const BAR_WIDTH: usize = 36;

/// Everything after the total-time line of a record that has latency series.
pub fn render_latency(record: &RunRecord) -> String {
    let mut out = String::new();
    let traced = record.wake_phases.as_ref();
    for series in &record.series {
        if traced.is_some_and(|t| t.holds_series(&series.name)) {
            continue;
        }
        out.push('\n');
        out.push_str(&series_block(series));
    }
    for accounting in &record.ipis {
        out.push('\n');
        out.push_str(&ipi_block(accounting));
    }
    if !record.interrupt_sources.is_empty() {
        out.push('\n');
        out.push_str(&sources_block(record));
    }
    if !record.invalid_samples.is_empty() {
        out.push('\n');
        out.push_str(&invalid_line(&record.invalid_samples));
    }
    for warning in &record.warnings {
        out.push_str(&wrapped(&format!("WARNING: {warning}"), 78));
    }
    if let Some(phases) = traced {
        out.push('\n');
        out.push_str(&phase_table(record, phases));
    }
    out
}

/// The [`phase_table`] of each record that traced its wake phases, one after another.
pub fn phase_tables(records: &[RunRecord]) -> String {
    let traced = records
        .iter()
        .filter_map(|r| Some((r, r.wake_phases.as_ref()?)));
    traced.map(|(r, phases)| phase_table(r, phases)).collect()
}

/// The traced wake phases: how many wakes were followed and by which path, why the
/// others were not, and p50/p90/p99 of each phase in the order they happen.
pub fn phase_table(record: &RunRecord, phases: &WakePhases) -> String {
    let mut out = String::new();
    let clock = phases
        .trace_clock
        .as_deref()
        .map(|c| format!(", clock {c}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        " Wake phases ({}{clock}, timestamps to {} ns):",
        phases.source, phases.timestamp_resolution_ns
    );
    let paths: Vec<String> = phases
        .paths
        .iter()
        .map(|(path, n)| format!("{} {n}", path.as_str()))
        .collect();
    out.push_str(&wrapped(
        &format!(
            "  {} of {} wakes followed; paths: {}",
            phases.complete(),
            phases.wakes,
            if paths.is_empty() {
                "none".into()
            } else {
                paths.join(", ")
            }
        ),
        78,
    ));
    if !phases.incomplete.is_empty() {
        let reasons: Vec<String> = phases
            .incomplete
            .iter()
            .map(|(reason, n)| format!("{} {n}", reason.as_str()))
            .collect();
        out.push_str(&wrapped(
            &format!("  not followed: {}", reasons.join(", ")),
            78,
        ));
    }
    if !phases.began_without_waking.is_empty() {
        let began: Vec<String> = phases
            .began_without_waking
            .iter()
            .map(|(milestone, n)| {
                let event = milestone
                    .beginning_tracepoint()
                    .unwrap_or(milestone.as_str());
                format!("{event} {n}")
            })
            .collect();
        out.push_str(&wrapped(
            &format!(
                "  begun without sched_waking, at: {} (their paths are judged from that event's CPU)",
                began.join(", ")
            ),
            78,
        ));
    }
    if !phases.each.is_empty() {
        out.push_str(&each_wake_table(&phases.each));
        return out;
    }
    let find = |name: &str| record.series.iter().find(|s| s.name == name);
    // Too few wakes for a median: the least, the mean and the most say what there is.
    let few = find(&phases.total_series).is_some_and(|s| s.percentiles.p50.is_none());
    let columns = match few {
        true => ["min", "mean", "max"],
        false => ["p50", "p90", "p99"],
    };
    let _ = writeln!(
        out,
        "   {:<34} {:>7} {:>9} {:>9} {:>9}",
        "phase [ns]", "wakes", columns[0], columns[1], columns[2]
    );
    let total = match phases.began_without_waking.is_empty() {
        true => "total: waking -> switch_in",
        false => "total: first event -> switch_in",
    };
    let rows = phases
        .phases
        .iter()
        .map(|p| {
            (
                format!("{} -> {}", p.from.as_str(), p.to.as_str()),
                &p.series,
            )
        })
        .chain(std::iter::once((total.to_string(), &phases.total_series)));
    for (label, name) in rows {
        let Some(series) = find(name) else { continue };
        let cell = |v: Option<u64>| v.map_or("n/a".to_string(), |v| v.to_string());
        let p = &series.percentiles;
        let values = match few {
            true => [
                series.min.to_string(),
                format!("{:.0}", series.mean),
                series.max.to_string(),
            ],
            false => [cell(p.p50), cell(p.p90), cell(p.p99)],
        };
        let _ = writeln!(
            out,
            "   {label:<34} {:>7} {:>9} {:>9} {:>9}",
            series.count, values[0], values[1], values[2]
        );
    }
    out
}

/// Each wake's phases, for a run of one or two wakes, whose percentiles say nothing.
fn each_wake_table(wakes: &[kbench_record::OneWake]) -> String {
    let mut out = String::new();
    for (i, wake) in wakes.iter().enumerate() {
        let began = wake
            .began_at()
            .and_then(kbench_record::Milestone::beginning_tracepoint)
            .unwrap_or("?");
        let _ = writeln!(
            out,
            "  wake {} of pid {}, path {}, begun at {began}:",
            i + 1,
            wake.pid,
            wake.path.as_str()
        );
        for phase in &wake.phases {
            let label = format!("{} -> {}", phase.from.as_str(), phase.to.as_str());
            let _ = writeln!(out, "   {label:<34} {:>9} ns", phase.ns);
        }
        let _ = writeln!(out, "   {:<34} {:>9} ns", "total", wake.total_ns());
    }
    out
}

/// `text` word-wrapped to `width` columns, each line indented by one space and
/// continuation lines by three.
fn wrapped(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            let _ = writeln!(out, " {line}");
            line = "  ".to_string();
        }
        if !line.is_empty() && !line.ends_with("  ") {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.trim().is_empty() {
        let _ = writeln!(out, " {line}");
    }
    out
}

/// The summary, the percentiles and the histogram of one series.
pub fn series_block(series: &LatencySeries) -> String {
    let mut out = String::new();
    let head = format!(
        " {} [{}]: {} samples",
        series.name, series.unit, series.count
    );
    let spread = format!("mean {:.0}, stddev {:.0}", series.mean, series.stddev);
    if head.len() + 2 + spread.len() <= 80 {
        let _ = writeln!(out, "{head}, {spread}");
    } else {
        let _ = writeln!(out, "{head}\n   {spread}");
    }
    if !series.description.is_empty() {
        let _ = writeln!(out, "   ({})", series.description);
    }
    let mut cells: Vec<(String, String)> = vec![("min".into(), series.min.to_string())];
    for (name, value) in series.percentiles.named() {
        cells.push((name.into(), value.map_or("n/a".into(), |v| v.to_string())));
    }
    cells.push(("max".into(), series.max.to_string()));
    // Each column as wide as its own name or value (at least 6), so one huge max
    // cannot push the row past 80 columns.
    let width = |(n, v): &(String, String)| n.len().max(v.len()).max(6);
    let names: String = cells
        .iter()
        .map(|c| format!(" {:>w$}", c.0, w = width(c)))
        .collect();
    let values: String = cells
        .iter()
        .map(|c| format!(" {:>w$}", c.1, w = width(c)))
        .collect();
    let _ = writeln!(out, " {names}");
    let _ = writeln!(out, " {values}");
    out.push_str(&histogram(&series.log2_bins()));
    out
}

/// A runqlat-style log2 histogram: `low -> high : count |****|`.
pub fn histogram(bins: &[Log2Bin]) -> String {
    let mut out = String::new();
    let peak = bins.iter().map(|b| b.count).max().unwrap_or(0);
    if peak == 0 {
        return out;
    }
    let label_width = bins
        .iter()
        .map(|b| b.high_ns.to_string().len())
        .max()
        .unwrap_or(1)
        .max(2);
    let _ = writeln!(
        out,
        " {:>w$}    {:<w$} : {:<8} distribution",
        "ns",
        "",
        "count",
        w = label_width
    );
    for bin in bins {
        let stars = bar_length(bin.count, peak);
        let _ = writeln!(
            out,
            " {:>w$} -> {:<w$} : {:<8} |{:<bar$}|",
            bin.low_ns,
            bin.high_ns,
            bin.count,
            "*".repeat(stars),
            w = label_width,
            bar = BAR_WIDTH
        );
    }
    out
}

/// Stars for `count` out of `peak`; at least one for any non-zero count.
fn bar_length(count: u64, peak: u64) -> usize {
    if count == 0 || peak == 0 {
        return 0;
    }
    let scaled = (count as u128 * BAR_WIDTH as u128).div_ceil(peak as u128);
    (scaled as usize).clamp(1, BAR_WIDTH)
}

/// IPIs per operation on each CPU involved, by kind.
pub fn ipi_block(accounting: &IpiAccounting) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        " IPIs per {} ({}, {} {}s, /proc/interrupts):",
        accounting.per, accounting.label, accounting.ops, accounting.per
    );
    let _ = writeln!(
        out,
        "   {:>4} {:<12} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "cpu", "role", "resched", "func-call", "tlb", "other", "total"
    );
    for cpu in &accounting.cpus {
        let r = &cpu.per_op;
        let _ = writeln!(
            out,
            "   {:>4} {:<12} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            cpu.cpu, cpu.role, r.reschedule, r.function_call, r.tlb_shootdown, r.other, r.total
        );
    }
    out
}

/// The rate of operations, then each device interrupt line and softirq vector that
/// moved, per operation, on every CPU (blkio, netrr).
pub fn sources_block(record: &RunRecord) -> String {
    let per = record.events.as_ref().map_or("op", |e| e.per.as_str());
    let mut out = String::new();
    if let Some(rate) = record.ops_per_sec {
        let _ = writeln!(out, " {rate:.0} {per}s per second");
    }
    let _ = writeln!(out, " Interrupts per {per}, every CPU:");
    for source in &record.interrupt_sources {
        let kind = match source.kind {
            InterruptSourceKind::DeviceIrq => "device IRQ",
            InterruptSourceKind::Softirq => "softirq",
        };
        let _ = writeln!(
            out,
            "   {kind:<10} {:<32} {:>9.3}  ({} in all)",
            source.name, source.per_op, source.count
        );
    }
    out
}

fn invalid_line(invalid: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = invalid.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!(
        " Invalid samples (kept out of the histograms): {}\n",
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_record::latency::Percentiles;

    #[test]
    fn blocks_fit_in_80_columns() {
        // What the recorder makes of 0, 1, 900, 40_000, 41_000, 45_000, 3 s and u64::MAX:
        // values beyond the 60 s ceiling saturate in the histogram; the exact max stays.
        let buckets = vec![
            [0, 1],
            [1, 1],
            [900, 1],
            [40_031, 1],
            [41_023, 1],
            [45_055, 1],
            [3_001_024_511, 1],
            [60_022_980_607, 1],
        ];
        let series = LatencySeries {
            name: "wake_latency".into(),
            description: "t2 - t0".into(),
            unit: "ns".into(),
            count: 8,
            min: 0,
            max: u64::MAX,
            mean: 2.3e18,
            stddev: 6.5e18,
            percentiles: Percentiles::default(),
            buckets,
        };
        let text = series_block(&series);
        for line in text.lines() {
            assert!(line.len() <= 80, "{} columns: {line}", line.len());
        }
        assert!(text.contains("n/a"), "{text}");
    }

    #[test]
    fn warnings_wrap_within_80_columns() {
        let long = "word ".repeat(60);
        let text = wrapped(&long, 78);
        assert!(text.lines().count() > 1);
        assert!(text.lines().all(|l| l.len() <= 80), "{text}");
        assert_eq!(text.split_whitespace().count(), 60);
    }

    #[test]
    fn bars_scale_to_the_peak() {
        assert_eq!(bar_length(10, 10), BAR_WIDTH);
        assert_eq!(bar_length(1, 1_000_000), 1);
        assert_eq!(bar_length(0, 10), 0);
    }
}
