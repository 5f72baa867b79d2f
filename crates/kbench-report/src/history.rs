//! `kbench history` as text (one screen a history) or JSON. The analysis found the
//! change points and their steps; this lays them out.
use crate::words::{figure, unit_word, wrap};
use kbench_analysis::history::{
    History, HistoryChange, HistoryOptions, HistoryOrder, HistoryReport,
};

/// Up to this many labels, a history lists each; past it, each segment between change
/// points is one line, so a lab's hundred kernels still fit a screen.
pub const LABELS_LISTED: usize = 24;

pub fn text(report: &HistoryReport) -> String {
    let o = &report.options;
    let mut out = wrap(
        &format!(
            "Change points by e-divisive means on unit means: p ≤ {} by {} permutations of whole labels (seed {}), at least {} labels a side.",
            o.change.significance, o.change.permutations, o.change.seed, o.change.min_labels
        ),
        "",
    );
    if report.histories.is_empty() {
        out.push_str("no runs of the metrics asked for in these labels\n");
    }
    for history in &report.histories {
        out.push('\n');
        out.push_str(&history_text(history, o));
    }
    out
}

fn history_text(h: &History, o: &HistoryOptions) -> String {
    let machine = h
        .machine
        .as_deref()
        .unwrap_or("a machine its sessions do not name");
    let order = match o.order {
        HistoryOrder::Date => "by date",
        HistoryOrder::Given => "in the order given",
        HistoryOrder::Commit => "along the tree's history",
    };
    let mut out = wrap(
        &format!(
            "{}{} in {} on {machine}: {} labels {order}, {} as units.",
            h.metric,
            params_text(h),
            h.unit,
            h.labels.len(),
            unit_word(h.level, 2)
        ),
        "",
    );
    let width = h
        .labels
        .iter()
        .map(|l| l.label.chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 32);
    if h.labels.len() <= LABELS_LISTED {
        out.push_str(&format!(
            "  {:<width$} {:>6}  {:>10}  {}% interval\n",
            "label",
            unit_word(h.level, 2),
            "mean",
            o.confidence * 100.0
        ));
        for (i, label) in h.labels.iter().enumerate() {
            if let Some(change) = h.changes.iter().find(|c| c.index == i) {
                out.push_str(&change_text(change));
            }
            out.push_str(&format!(
                "  {:<width$} {:>6}  {:>10}  {}\n",
                crate::truncate(&label.label, width),
                label.units,
                figure(Some(label.mean)),
                interval(label.ci)
            ));
        }
    } else {
        for (i, segment) in h.segments.iter().enumerate() {
            if i > 0 {
                if let Some(change) = h.changes.iter().find(|c| c.index == segment.first) {
                    out.push_str(&change_text(change));
                }
            }
            out.push_str(&wrap(
                &format!(
                    "  {} .. {} ({} labels, {} {}): {} {}",
                    h.labels[segment.first].label,
                    h.labels[segment.last].label,
                    segment.last - segment.first + 1,
                    segment.units,
                    unit_word(h.level, segment.units),
                    figure(Some(segment.mean)),
                    interval(segment.ci)
                ),
                "      ",
            ));
        }
    }
    if h.changes.is_empty() {
        out.push_str("  no change point\n");
    }
    out
}

/// ` [loop=2000 placement=same-cpu]`: the parameters that keep this metric's runs apart
/// from the same workload's others (the default suite runs pipe on one CPU and across
/// two); empty when there are none.
pub fn params_text(h: &History) -> String {
    if h.metric.params.is_empty() {
        String::new()
    } else {
        format!(" [{}]", h.metric.params)
    }
}

/// The step with its interval, `+3.01% [+2.50%, +3.52%]`.
pub fn step_text(c: &HistoryChange) -> String {
    match &c.step {
        Some(s) => format!(
            "{:+.2}% [{:+.2}%, {:+.2}%]",
            s.change_pct, s.ci_pct.0, s.ci_pct.1
        ),
        None => "a step too few units measure".to_string(),
    }
}

/// `regression` or `improvement`.
pub fn kind_word(c: &HistoryChange) -> &'static str {
    if c.regression {
        "regression"
    } else {
        "improvement"
    }
}

fn change_text(c: &HistoryChange) -> String {
    let kind = kind_word(c);
    let article = if c.regression { "a" } else { "an" };
    let mut out = wrap(
        &format!(
            "  -- change between {} and {}: {}, {article} {kind} (p {:.3})",
            c.before,
            c.after,
            step_text(c),
            c.p_value
        ),
        "     ",
    );
    out.push_str(&wrap(&format!("     {}", c.compare), "       "));
    out
}

/// `5.01 .. 5.24`, or `-` for a label of one unit.
pub fn interval(ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((low, high)) => format!("{} .. {}", figure(Some(low)), figure(Some(high))),
        None => "-".into(),
    }
}

pub fn json(report: &HistoryReport) -> String {
    serde_json::to_string_pretty(report).unwrap_or_default() + "\n"
}
