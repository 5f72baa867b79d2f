//! `kbench plausible` and `compare --saving`: whether claimed savings could explain a
//! change, as text (80 columns) or JSON. The analysis decided everything; this says it.
use crate::words::wrap;
use kbench_analysis::plausible::{CostUnit, Explains, PlausibleReport, PlausibleRow};

pub use crate::words::duration_text;

/// An op's cost or a saving for a reader: a duration, or counted, `1,531 insns`.
pub fn cost_text(amount: f64, unit: CostUnit) -> String {
    match unit {
        CostUnit::Ns => duration_text(amount),
        CostUnit::Insns if amount.abs() >= 100.0 => format!("{} insns", thousands(amount)),
        CostUnit::Insns => format!("{amount:.1} insns"),
    }
}

/// A whole number with thousands separated: `11,603`.
fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// The report in `format`: JSON, or text for any other.
pub fn in_format(report: &PlausibleReport, format: crate::format::Format) -> String {
    match format {
        crate::format::Format::Json => json(report),
        _ => text(report),
    }
}

/// The whole report as text.
pub fn text(report: &PlausibleReport) -> String {
    let mut out = wrap(
        &format!(
            "Could the claimed savings explain it? Runs of {}: events per op and time per op are measured, the savings are yours.",
            report.label
        ),
        "",
    );
    let mut last_workload = None;
    for row in &report.rows {
        let heading = format!("{} {} [{}]", row.workload, row.params, row.variant);
        if last_workload.as_ref() != Some(&heading) {
            out.push('\n');
            out.push_str(&wrap(
                &format!(
                    "{heading}: {} = {} (median of {} runs)",
                    row.metric,
                    cost_text(row.cost_per_op, row.cost_unit),
                    row.runs
                ),
                "    ",
            ));
            last_workload = Some(heading);
        }
        for line in row_lines(row) {
            out.push_str(&wrap(&format!("  {line}"), "      "));
        }
    }
    if report.rows.is_empty() {
        out.push_str(
            "\nno workload of this label has a time per op (usecs/op, a latency) or, counted, instructions per op\n",
        );
    }
    out
}

/// What one saving means for one workload, a line each.
fn row_lines(row: &PlausibleRow) -> Vec<String> {
    let event = row.saving.event.name();
    let saving = cost_text(row.saving.amount, row.saving.unit);
    let mut lines = Vec::new();
    let (Some(per_op), Some(max)) = (row.events_per_op, row.max_change_pct) else {
        lines.push(format!(
            "{event} {saving} saved: its runs do not count {event} events per op"
        ));
        return lines;
    };
    lines.push(format!(
        "{event} {saving} saved: {per_op:.3} {event}/op, so at most {max:.2}% of an op"
    ));
    if let Some(observed) = &row.observed {
        let ci = match (observed.ci_low_pct, observed.ci_high_pct) {
            (Some(lo), Some(hi)) => format!(" [{lo:+.1}%, {hi:+.1}%]"),
            _ => String::new(),
        };
        let needed = row
            .needed_per_event
            .map(|n| format!(": needs {} saved per {event}", cost_text(n, row.cost_unit)))
            .unwrap_or_default();
        let judgement = match row.explains {
            Some(Explains::Beyond) => "; the saving cannot explain it alone",
            Some(Explains::Within) => "; the saving could explain it",
            Some(Explains::Undecided) => {
                "; its interval holds changes both within and beyond what the saving explains"
            }
            None => "",
        };
        lines.push(format!(
            "observed against {}: {:+.2}%{ci} ({}){needed}{judgement}",
            observed.base,
            observed.shift_pct,
            observed.verdict.as_str(),
        ));
    }
    match &row.measured_cost {
        Some(cost) => lines.push(format!(
            "one {event} costs {}{} here in all ({}, measured)",
            if cost.upper_bound {
                "at most "
            } else {
                "about "
            },
            cost_text(cost.amount, row.cost_unit),
            cost.source
        )),
        None => lines.push(format!(
            "what one {event} costs here is not measured by kbench"
        )),
    }
    lines
}

/// The whole report as one JSON object.
pub fn json(report: &PlausibleReport) -> String {
    serde_json::to_string_pretty(report).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_writes_them() {
        assert_eq!(duration_text(820.4), "820 ns");
        assert_eq!(duration_text(2310.0), "2.31 us");
        assert_eq!(duration_text(23_390.0), "23.4 us");
        assert_eq!(duration_text(1_200_000.0), "1.20 ms");
    }
}
