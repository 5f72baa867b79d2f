//! The one-screen view shared by the text and markdown formats: the primary rows of
//! one or more comparisons against one base, one line per workload spec and one
//! column per compared label, grouped under their metric; then the notes of the rows
//! that have any, merged where rows say the same.
use super::{
    diagnostic_text, not_compared_text, note_text, placement_words, settle_short, settle_words,
    CompareReport, CompareRow, Diagnostic, ReportNote, RowKind,
};
use crate::words::{figure, percent, unit_word};
use kbench_stats::sequential::PRACTICAL_UNITS_PER_SIDE;
use kbench_stats::{Level, UnitsToSettle, Verdict};

/// One compared label's cell of a line.
#[derive(Clone)]
pub struct TableCell {
    pub new_value: String,
    pub change: String,
    /// `[-2.5, -0.9]`, percent.
    pub ci: String,
    pub verdict: Verdict,
    /// Units a side that would settle an inconclusive row, and their level.
    pub needed: Option<(Needed, Level)>,
}

/// What would settle an inconclusive cell, as short as the table needs it; the range
/// and the reasons are in the notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needed {
    /// About this many units a side.
    About(usize),
    /// No estimate of the noise to compute it from.
    Unknown,
    /// More than any practical number.
    BeyondPractical,
}

impl Needed {
    /// Larger is further from settled: beyond practical, then the most units, then
    /// unknown.
    fn rank(self) -> (u8, usize) {
        match self {
            Needed::Unknown => (0, 0),
            Needed::About(n) => (1, n),
            Needed::BeyondPractical => (2, 0),
        }
    }
}

/// What would settle `row`, with the level of its units: from `settle`, or from the
/// point estimates of a report written before it.
pub fn needed(row: &CompareRow) -> Option<(Needed, Level)> {
    if let Some(settle) = &row.settle {
        let needed = match settle {
            UnitsToSettle::Unknown { .. } => Needed::Unknown,
            UnitsToSettle::About { per_side, .. } => Needed::About(*per_side),
            UnitsToSettle::BeyondPractical { .. } => Needed::BeyondPractical,
        };
        return Some((needed, row.level()));
    }
    row.runs_needed
        .map(|n| (Needed::About(n), Level::Run))
        .or_else(|| row.units_needed.map(|n| (Needed::About(n), row.level())))
}

/// One line of the table.
pub struct Line {
    /// The metric heading the line is grouped under.
    pub metric: String,
    /// The workload spec, shortened; split rows name their class or placement only.
    pub name: String,
    /// A row restricted to one CPU class set or placement, shown under its pooled row.
    pub split: bool,
    pub base_value: String,
    /// Per compared label; `None` where that comparison lacks the row.
    pub cells: Vec<Option<TableCell>>,
}

/// The table and what goes around it.
pub struct Table {
    pub base: String,
    pub labels: Vec<String>,
    pub lines: Vec<Line>,
}

/// What identifies a row across comparisons with one base: workload, metric,
/// parameters, variant, CPU classes and placement of a split row.
type RowKey = (String, String, String, String, String, String);

fn row_key(r: &CompareRow) -> RowKey {
    (
        r.workload.clone(),
        r.metric.clone(),
        r.params.clone(),
        r.variant.clone(),
        r.cpu_classes.clone(),
        r.placement
            .map(|p| p.as_str().to_string())
            .unwrap_or_default(),
    )
}

/// The rows the one-screen view shows: primary per-run and summary rows.
fn shown(r: &CompareRow) -> bool {
    r.is_primary() && !matches!(r.kind, RowKind::PooledPercentile { .. })
}

/// The rows the table shows: primary, not pooled percentiles.
pub fn shown_rows(reports: &[CompareReport]) -> Vec<&CompareRow> {
    reports
        .iter()
        .flat_map(|r| r.rows.iter().filter(|row| shown(row)))
        .collect()
}

/// `sched/pipe` as `pipe`: the collection is implied by the name.
fn workload_name(workload: &str) -> &str {
    workload.rsplit('/').next().unwrap_or(workload)
}

/// A parameter's words: a placement by its value alone, others as `name=value`.
fn param_words(name: &str, value: &str) -> String {
    if name == "placement" {
        value.to_string()
    } else {
        format!("{name}={value}")
    }
}

fn split_params(params: &str) -> Vec<(&str, &str)> {
    params
        .split(' ')
        .filter_map(|kv| kv.split_once('='))
        .collect()
}

/// The short spec of a row: the workload, its placement, and the parameters that
/// tell it from the other rows of the same workload (all of them are in `--full`).
/// The row's workload spec as short as `rows` allow: the parameters that tell it
/// from the other rows of its workload (`pipe same-cpu`).
pub fn spec_name(row: &CompareRow, rows: &[&CompareRow]) -> String {
    let same_workload: Vec<&&CompareRow> =
        rows.iter().filter(|r| r.workload == row.workload).collect();
    let mut words = vec![workload_name(&row.workload).to_string()];
    for (name, value) in split_params(&row.params) {
        let varies = same_workload
            .iter()
            .any(|other| !split_params(&other.params).contains(&(name, value)));
        if name == "placement" || varies {
            words.push(param_words(name, value));
        }
    }
    let variants: Vec<&str> = same_workload.iter().map(|r| r.variant.as_str()).collect();
    if variants.iter().any(|v| *v != row.variant) {
        words.push(format!("[{}]", row.variant));
    }
    words.join(" ")
}

fn split_name(row: &CompareRow) -> String {
    match (&row.placement, row.cpu_classes.as_str()) {
        (Some(p), _) => placement_words(*p).to_string(),
        (None, classes) => format!("on {classes}"),
    }
}

/// A percentage interval with as many decimals as its size needs.
pub fn ci_text(row: &CompareRow) -> String {
    let (Some(lo), Some(hi)) = (row.ci_low_pct, row.ci_high_pct) else {
        return "-".into();
    };
    let size = lo.abs().max(hi.abs());
    let decimals = if size < 1.0 {
        2
    } else if size < 100.0 {
        1
    } else {
        0
    };
    format!("[{lo:+.decimals$}, {hi:+.decimals$}]")
}

fn cell(row: &CompareRow) -> TableCell {
    TableCell {
        new_value: figure(row.median_b),
        change: percent(row.shift_pct),
        ci: ci_text(row),
        verdict: row.verdict,
        needed: needed(row),
    }
}

impl Table {
    /// The primary rows of `reports`, which share their base, in the first report's
    /// order, rows only later reports have after them.
    pub fn build(reports: &[CompareReport]) -> Table {
        let all = shown_rows(reports);
        let mut keys = Vec::new();
        for row in &all {
            let key = row_key(row);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let lines: Vec<Line> = keys
            .iter()
            .map(|key| {
                let cells: Vec<Option<&CompareRow>> = reports
                    .iter()
                    .map(|r| r.rows.iter().find(|row| shown(row) && &row_key(row) == key))
                    .collect();
                let first = cells.iter().flatten().next().copied();
                let first = first.unwrap_or(all[0]);
                Line {
                    metric: first.metric.clone(),
                    name: if first.is_split() {
                        split_name(first)
                    } else {
                        spec_name(first, &all)
                    },
                    split: first.is_split(),
                    base_value: figure(first.median_a),
                    cells: cells.into_iter().map(|c| c.map(cell)).collect(),
                }
            })
            .collect();
        // Grouped under their metric, in order of first appearance; a split row right
        // under its pooled row, even when only a later comparison has it.
        let metrics = kbench_analysis::group::distinct(keys.iter().map(|k| k.1.clone()));
        let pooled_of = |k: &RowKey| (k.0.clone(), k.1.clone(), k.2.clone(), k.3.clone());
        let anchors = kbench_analysis::group::distinct(keys.iter().map(pooled_of));
        let order: Vec<(usize, usize, bool, usize)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let metric = metrics.iter().position(|m| *m == k.1).unwrap_or(0);
                let anchor = anchors.iter().position(|a| *a == pooled_of(k)).unwrap_or(0);
                (metric, anchor, lines[i].split, i)
            })
            .collect();
        let mut indexed: Vec<(usize, Line)> = lines.into_iter().enumerate().collect();
        indexed.sort_by_key(|(i, _)| order[*i]);
        let lines = indexed.into_iter().map(|(_, l)| l).collect();
        Table {
            base: reports
                .first()
                .map(|r| r.base.label.clone())
                .unwrap_or_default(),
            labels: reports.iter().map(|r| r.new.label.clone()).collect(),
            lines,
        }
    }

    /// One table per compared label, each against the base.
    pub fn per_label(&self) -> Vec<Table> {
        (0..self.labels.len())
            .map(|i| Table {
                base: self.base.clone(),
                labels: vec![self.labels[i].clone()],
                lines: self
                    .lines
                    .iter()
                    .filter(|l| l.cells[i].is_some())
                    .map(|l| Line {
                        metric: l.metric.clone(),
                        name: l.name.clone(),
                        split: l.split,
                        base_value: l.base_value.clone(),
                        cells: vec![l.cells[i].clone()],
                    })
                    .collect(),
            })
            .collect()
    }

    /// The levels of the units that would settle the inconclusive cells.
    pub fn needed_levels(&self) -> Vec<Level> {
        let levels = self
            .lines
            .iter()
            .flat_map(|l| l.cells.iter().flatten())
            .filter_map(|c| c.needed.map(|(_, level)| level));
        kbench_analysis::group::distinct(levels)
    }
}

/// What would settle a cell: `≈240`, `≈?` (no noise estimate) or `>1000`, with its
/// unit when the table mixes levels.
pub fn needed_text(cell: &TableCell, levels: &[Level]) -> String {
    let Some((needed, level)) = cell.needed else {
        return String::new();
    };
    let (text, n) = match needed {
        Needed::About(n) => (format!("≈{n}"), n),
        Needed::Unknown => ("≈?".to_string(), 2),
        Needed::BeyondPractical => (format!(">{PRACTICAL_UNITS_PER_SIDE}"), 2),
    };
    if levels.len() <= 1 {
        text
    } else {
        format!("{text} {}", unit_word(level, n))
    }
}

/// The legend of `≈N`, when every cell's unit is the same.
pub fn needed_legend(levels: &[Level]) -> Option<String> {
    match levels {
        [level] => Some(format!(
            "≈N: {} per side that would settle it",
            unit_word(*level, 2)
        )),
        _ => None,
    }
}

/// "3 equivalent, 1 inconclusive (≈240 runs), 1 regression": the primary verdicts.
pub fn tally_text(r: &CompareReport) -> String {
    let t = &r.tally;
    let settle = r
        .rows
        .iter()
        .filter(|row| shown(row) && !row.is_split() && row.verdict == Verdict::Inconclusive)
        .filter_map(|row| needed(row).map(|(n, _)| (n, row)))
        .max_by_key(|(n, _)| n.rank())
        .map(|(_, row)| tally_settle_text(row));
    let parts: Vec<String> = [
        (t.regression, "regression"),
        (t.improvement, "improvement"),
        (t.changed, "changed"),
        (t.equivalent, "equivalent"),
        (t.inconclusive, "inconclusive"),
        (t.insufficient, "insufficient"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, word)| match (*word, &settle) {
        ("inconclusive", Some(settle)) => format!("{n} {word} ({settle})"),
        _ => format!("{n} {word}"),
    })
    .collect();
    if parts.is_empty() {
        "no primary metric compared".into()
    } else {
        parts.join(", ")
    }
}

/// What would settle the least settled row, for the tally: `≈9 sessions per side, 5-31`.
fn tally_settle_text(row: &CompareRow) -> String {
    match (&row.settle, needed(row)) {
        (Some(settle), _) => settle_short(settle, row.level()),
        (None, Some((Needed::About(n), level))) => {
            format!("≈{n} {} per side", unit_word(level, n))
        }
        (None, _) => String::new(),
    }
}

/// "27 secondary rows, 1 regression (--full)": claims among the rows not shown.
pub fn secondary_text(r: &CompareReport) -> Option<String> {
    let hidden: Vec<&CompareRow> = r.rows.iter().filter(|row| !shown(row)).collect();
    if hidden.is_empty() {
        return None;
    }
    let claims: Vec<String> = [Verdict::Regression, Verdict::Improvement, Verdict::Changed]
        .iter()
        .filter_map(|v| {
            let n = hidden.iter().filter(|row| row.verdict == *v).count();
            (n > 0).then(|| format!("{n} {}", v.as_str()))
        })
        .collect();
    Some(format!(
        "{} secondary rows (mechanism metrics, percentiles): {}; --full shows them",
        hidden.len(),
        if claims.is_empty() {
            "no change claimed".to_string()
        } else {
            claims.join(", ")
        }
    ))
}

/// Diagnostics the header or the table already say, left out of the notes.
fn noted(d: &Diagnostic) -> bool {
    !matches!(
        d,
        Diagnostic::Pooled { .. } | Diagnostic::SummaryOnly | Diagnostic::BorrowedNoise { .. }
    )
}

/// The notes of the shown rows, each said once, prefixed by the rows it concerns;
/// then what was not compared, environment and kernel config differences and notes
/// about the sides.
pub fn notes(reports: &[CompareReport]) -> Vec<String> {
    let all = shown_rows(reports);
    // Per text: the rows it concerns and, with several labels, which comparisons.
    let mut by_text: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    let mut every_name: Vec<String> = Vec::new();
    let multi = reports.len() > 1;
    for r in reports {
        for row in r.rows.iter().filter(|row| shown(row)) {
            let name = if row.is_split() {
                format!("{} {}", spec_name(row, &all), split_name(row))
            } else {
                spec_name(row, &all)
            };
            if !every_name.contains(&name) {
                every_name.push(name.clone());
            }
            let diagnostics = row.diagnostics.iter().filter(|d| noted(d));
            let settle = row
                .settle
                .as_ref()
                .filter(|_| row.verdict == Verdict::Inconclusive)
                .map(|s| settle_words(s, row.level()));
            for text in diagnostics.map(|d| diagnostic_text(d, r)).chain(settle) {
                let entry = match by_text.iter().position(|(t, _, _)| *t == text) {
                    Some(i) => &mut by_text[i],
                    None => {
                        by_text.push((text, Vec::new(), Vec::new()));
                        by_text.last_mut().expect("just pushed")
                    }
                };
                if !entry.1.contains(&name) {
                    entry.1.push(name.clone());
                }
                if !entry.2.contains(&r.new.label) {
                    entry.2.push(r.new.label.clone());
                }
            }
        }
    }
    let every_row = every_name.len();
    let mut out: Vec<String> = by_text
        .into_iter()
        .map(|(text, names, labels)| {
            let rows = if names.len() == every_row && every_row > 1 {
                "every row".to_string()
            } else {
                names.join(", ")
            };
            let said = labels.iter().all(|l| text.contains(l.as_str()));
            if multi && labels.len() < reports.len() && !said {
                format!("{rows} [{}]: {text}", labels.join(", "))
            } else {
                format!("{rows}: {text}")
            }
        })
        .collect();
    for r in reports {
        let prefix = if multi {
            format!("{}: ", r.new.label)
        } else {
            String::new()
        };
        for n in &r.not_compared {
            push_once(
                &mut out,
                format!("{prefix}not compared: {}", not_compared_text(n, r)),
            );
        }
        for d in &r.environment_differences {
            push_once(
                &mut out,
                format!("{prefix}environment: {} {} -> {}", d.key, d.base, d.new),
            );
        }
        if let Some(machines) = super::machines_note_text(r) {
            push_once(&mut out, format!("{prefix}{machines}"));
        }
        if let Some(config) = super::config_note_text(r) {
            push_once(&mut out, format!("{prefix}{config}"));
        }
        for n in r
            .notes
            .iter()
            .filter(|n| !matches!(n, ReportNote::OneBoot { .. }))
        {
            let text = note_text(n, r);
            match n {
                ReportNote::NothingToCompare => push_once(&mut out, format!("{prefix}{text}")),
                _ => push_once(&mut out, text),
            }
        }
    }
    let one_boot = one_boot_labels(reports);
    if !one_boot.is_empty() {
        out.push(super::one_boot_text(&one_boot.join(", ")));
    }
    out
}

/// The labels that ran in one boot only, each once.
fn one_boot_labels(reports: &[CompareReport]) -> Vec<String> {
    let labels = reports.iter().flat_map(|r| {
        r.notes.iter().filter_map(move |n| match n {
            ReportNote::OneBoot { side } => Some(r.label(*side).to_string()),
            _ => None,
        })
    });
    kbench_analysis::group::distinct(labels)
}

fn push_once(out: &mut Vec<String>, line: String) {
    if !out.contains(&line) {
        out.push(line);
    }
}

/// The commands that reproduce the comparison: each report's runs, once, then one
/// compare of every label.
pub fn reproduce(reports: &[CompareReport]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in reports {
        let runs = r.reproduce.len().saturating_sub(1);
        for line in &r.reproduce[..runs] {
            push_once(&mut out, line.clone());
        }
    }
    if reports.len() == 1 {
        out.extend(reports[0].reproduce.last().cloned());
    } else if let Some(first) = reports.first() {
        let mut compare = format!("kbench compare {}", first.base.label);
        for r in reports {
            compare.push(' ');
            compare.push_str(&r.new.label);
        }
        if first.delta.explicit {
            compare.push_str(&format!(" --delta {}", first.delta.pct));
        }
        if let Some(m) = &first.machines {
            compare.push_str(&m.compare_option());
        }
        out.push(compare);
    }
    out
}
