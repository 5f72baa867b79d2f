//! A sequential comparison (`compare --sequential`, `ab` and `vm-ab --until-decided`)
//! as text or JSON: per primary metric, its decision or how many more units it needs.
use crate::words::{advice_text, from_text, percent, unit_word, utc, wrap};
use kbench_analysis::sequential::{SequentialReport, SequentialRow};
use kbench_record::sequential::RecordedDesign;
use kbench_stats::sequential::{Decision, Look, MoreEstimate};
use kbench_stats::Level;

/// The report in `format`: JSON, or text for any other.
pub fn in_format(report: &SequentialReport, format: crate::format::Format) -> String {
    match format {
        crate::format::Format::Json => json(report),
        _ => text(report),
    }
}

/// A sequential decision, when there is one, then the fixed-design report of the same
/// units; in JSON the decision alone, as the verdict.
pub fn decided_in(
    sequential: Option<&SequentialReport>,
    fixed: &kbench_analysis::CompareReport,
    format: crate::format::Format,
    layout: crate::compare::Layout,
) -> String {
    let mut out = String::new();
    if let Some(decided) = sequential {
        out = in_format(decided, format);
        if format != crate::format::Format::Text {
            return out;
        }
        out.push_str(
            "\nBelow, the fixed-design comparison of the same units, for its diagnostics:\n\n",
        );
    }
    out + &format.render(std::slice::from_ref(fixed), layout)
}

/// What `compare` says, on stderr, of two labels looked at sequentially when it was
/// asked for what only the fixed design gives.
pub fn fixed_only_notice(base: &str, new: &str, design: &RecordedDesign) -> String {
    format!(
        "kbench: {base} and {new} were looked at sequentially (`{}`): `kbench compare {base} {new} --sequential` gives their verdict; below, the fixed design's, which does not hold its error rate after stopping on the data",
        design.design.command_line
    )
}

/// One screen: the design, then each primary metric's line, then the answer.
pub fn text(report: &SequentialReport) -> String {
    let level = report.rows.first().map_or(Level::Run, |r| r.level);
    let o = &report.options;
    let family = match report.rows.len() {
        1 => "its one primary metric".to_string(),
        n => format!("all {n} primary metrics together"),
    };
    let mut out = wrap(
        &format!(
            "Sequential: {} (A) against {} (B), {} as units, at most {} a side. α {} for {family}, δ {}%: each interval holds at every look, so looking again costs no error rate.",
            report.base,
            report.new,
            unit_word(level, 2),
            o.max_units_per_side,
            o.alpha,
            o.delta_pct
        ),
        "",
    );
    if let Some(recorded) = &report.recorded {
        out.push_str(&wrap(&recorded_text(recorded), ""));
    }
    out.push('\n');
    for row in &report.rows {
        out.push_str(&wrap(&format!("  {}", metric_text(row)), "    "));
        out.push_str(&wrap(&format!("    {}", look_text(row)), "      "));
    }
    if report.rows.is_empty() {
        out.push_str("  no primary metric is on both sides\n");
    }
    out.push('\n');
    out.push_str(&wrap(&answer(report), "  "));
    out
}

/// `Design recorded by kbench ab at 2026-12-03 14:05:00 UTC; 7 looks, the last after
/// 14 and 14 units: regression.` (its command line is in the JSON).
fn recorded_text(recorded: &RecordedDesign) -> String {
    let d = &recorded.design;
    let head = format!(
        "Design recorded by kbench {} at {} UTC",
        d.by.as_str(),
        utc(d.created_unix_ns)
    );
    let Some(last) = recorded.looks.last() else {
        return format!("{head}; no look recorded yet.");
    };
    let outcomes: Vec<&str> = last.rows.iter().map(|r| r.outcome.as_str()).collect();
    let units = last.rows.first().map_or((0, 0), |r| (r.n_a, r.n_b));
    format!(
        "{head}; {} look{}, the last after {} and {} units: {}.",
        recorded.looks.len(),
        if recorded.looks.len() == 1 { "" } else { "s" },
        units.0,
        units.1,
        outcomes.join(", ")
    )
}

/// The lines a look after `pairs` pairs of boots says: each primary metric's interval
/// against ±δ so far, after a line saying the time bound ended the boots when it closed
/// what was still open (`out_of_time`).
pub fn boot_pairs_lines(look: &SequentialReport, pairs: u32, out_of_time: bool) -> Vec<String> {
    let stopped = out_of_time.then(|| "--max-time reached: no more boots".to_string());
    let rows = look.rows.iter().map(|row| {
        let metric = format!("{} {}", row.workload, row.metric);
        let line = progress_line(&metric, &row.look, look.options.delta_pct);
        format!("after {pairs} boot pairs: {line}")
    });
    stopped.into_iter().chain(rows).collect()
}

/// One metric at one look, for a progress line: `sched/pipe usecs_per_op: +35.2%
/// [+12.0%, +61.0%] against ±1%: open`.
pub fn progress_line(metric: &str, look: &Look, delta_pct: f64) -> String {
    let interval = look.interval_pct.map_or_else(
        || "interval not bounded yet".to_string(),
        |(low, high)| format!("[{low:+.1}%, {high:+.1}%]"),
    );
    let state = match &look.decision {
        Decision::Continue { .. } => "open",
        Decision::Undecided => "undecided at the bound",
        Decision::Regression => "decided, regression",
        Decision::Improvement => "decided, improvement",
        Decision::Changed => "changed, at the bound",
        Decision::Equivalent => "decided, no change larger than δ",
    };
    format!(
        "{metric}: {} {interval} against ±{delta_pct}%: {state}",
        percent(look.shift_pct)
    )
}

/// The whole report as one JSON object.
pub fn json(report: &SequentialReport) -> String {
    serde_json::to_string_pretty(report).unwrap_or_default() + "\n"
}

fn metric_text(row: &SequentialRow) -> String {
    let params = if row.params.is_empty() {
        String::new()
    } else {
        format!(" ({})", row.params)
    };
    format!("{} {}{params}", row.workload, row.metric)
}

/// `decided: regression, +35.20% [+12.00%, +61.00%], 6 boots a side`.
fn look_text(row: &SequentialRow) -> String {
    let look = &row.look;
    let interval = match look.interval_pct {
        Some((low, high)) => format!(
            "{} [{}, {}]",
            percent(look.shift_pct),
            percent(Some(low)),
            percent(Some(high))
        ),
        None => format!("{}, interval not bounded yet", percent(look.shift_pct)),
    };
    let seen = format!("{} and {} {}", look.n_a, look.n_b, unit_word(row.level, 2));
    let calibrated = if row.calibrated {
        ", with this machine's calibration"
    } else {
        ""
    };
    match &look.decision {
        Decision::Continue { more_per_side } => format!(
            "continue: {interval} after {seen}{calibrated}; {}",
            more_text(more_per_side, row.level)
        ),
        Decision::Undecided => {
            format!("undecided at the bound: {interval} after {seen}{calibrated}")
        }
        decided => format!(
            "decided: {} {interval} after {seen}{calibrated}",
            decision_word(decided)
        ),
    }
}

fn decision_word(decision: &Decision) -> &'static str {
    match decision {
        Decision::Regression => "regression",
        Decision::Improvement => "improvement",
        Decision::Changed => "changed (by less than it may be, relative to δ)",
        Decision::Equivalent => "no change larger than δ",
        Decision::Undecided => "undecided",
        Decision::Continue { .. } => "continue",
    }
}

/// How many more units a side, with where the number comes from and how sure it is.
fn more_text(more: &MoreEstimate, level: Level) -> String {
    let units = unit_word(level, 2);
    match more {
        MoreEstimate::Unknown { .. } => format!(
            "how many more {units} is unknown: there is no estimate of the noise yet (two {units} a side, or `kbench calibrate`, would give one)"
        ),
        MoreEstimate::About {
            per_side,
            low,
            high,
            from,
        } => {
            let range = match high {
                Some(high) => format!("{low}-{high}"),
                None => format!("{low} to beyond any practical bound"),
            };
            format!(
                "about {per_side} more {units} a side ({range}, {})",
                from_text(*from, level)
            )
        }
        MoreEstimate::BeyondPractical {
            at_least,
            from,
            advice,
        } => format!(
            "at least {at_least} more {units} a side ({}): beyond any practical bound; shrink the noise instead: {}",
            from_text(*from, level),
            advice_text(advice, level)
        ),
    }
}

/// The one-line answer: decided, or how many more units the slowest metric needs.
fn answer(report: &SequentialReport) -> String {
    let level = report.rows.first().map_or(Level::Run, |r| r.level);
    if report.rows.is_empty() {
        return "no answer: nothing to compare".into();
    }
    if report.decided() {
        let claims = report
            .rows
            .iter()
            .filter(|r| r.look.decision.claims_change())
            .count();
        let undecided = report
            .rows
            .iter()
            .filter(|r| r.look.decision == Decision::Undecided)
            .count();
        return format!(
            "decided: {claims} of {} primary metrics changed, {undecided} undecided at the bound",
            report.rows.len()
        );
    }
    let open: Vec<&SequentialRow> = report
        .rows
        .iter()
        .filter(|r| !r.look.decision.is_final())
        .collect();
    let beyond = open
        .iter()
        .filter(|r| {
            matches!(
                r.look.decision,
                Decision::Continue {
                    more_per_side: MoreEstimate::BeyondPractical { .. }
                }
            )
        })
        .count();
    let most = open
        .iter()
        .filter_map(|r| match &r.look.decision {
            Decision::Continue {
                more_per_side: MoreEstimate::About { per_side, .. },
            } => Some(*per_side),
            _ => None,
        })
        .max();
    let head = format!(
        "continue: {} of {} primary metrics open",
        open.len(),
        report.rows.len()
    );
    let units = unit_word(level, 2);
    match (beyond, most) {
        (0, Some(n)) => format!("{head}; about {n} more {units} a side"),
        (0, None) => format!("{head}; how many more {units} is not known yet (see above)"),
        (k, _) => format!(
            "{head}; {k} of them would need more {units} than is practical: shrink the noise (see above)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::boot_pairs_lines;
    use kbench_analysis::sequential::{SequentialOptions, SequentialReport, SequentialRow};
    use kbench_stats::sequential::{self, Boundary, SequentialDesign};

    #[test]
    fn a_look_the_time_bound_closed_says_so_before_its_rows() {
        let options = SequentialOptions {
            alpha: 0.05,
            delta_pct: 1.0,
            max_units_per_side: 20,
            use_calibration: false,
            boundary: Boundary::DeclaredMaximum,
        };
        let design = SequentialDesign {
            alpha: 0.05,
            delta_pct: 1.0,
            max_units_per_side: 20,
            primaries: 1,
            higher_is_better: false,
            boundary: Boundary::DeclaredMaximum,
        };
        let mut look = sequential::look(&design, &[0.0, 0.02], &[0.01, 0.0], None);
        // The bound closed it: undecided, and so final.
        look.decision = sequential::Decision::Undecided;
        let report = SequentialReport {
            base: "a".into(),
            new: "b".into(),
            options,
            alpha_per_row: 0.05,
            rows: vec![SequentialRow {
                workload: "sched/pipe".into(),
                params: String::new(),
                variant: String::new(),
                metric: "usecs_per_op".into(),
                unit: "us/op".into(),
                higher_is_better: false,
                level: kbench_stats::Level::Boot,
                calibrated: false,
                look,
            }],
            recorded: None,
        };
        let lines = boot_pairs_lines(&report, 2, true);
        assert_eq!(lines[0], "--max-time reached: no more boots");
        assert!(
            lines[1].starts_with("after 2 boot pairs: sched/pipe usecs_per_op"),
            "{lines:?}"
        );
        assert_eq!(boot_pairs_lines(&report, 2, false).len(), 1);
    }
}
