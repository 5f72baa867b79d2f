//! Plain text, at most 80 columns, to paste into an email: one screen by default
//! (the primary rows as a table, the notes of the rows that have any), every row in
//! full with `--full`.
use super::table::{self, Table, TableCell};
use super::{
    change_text, delta_text, design_text, diagnostic_text, metric_text, noise_text,
    not_compared_text, note_text, CompareFormat, CompareReport, CompareRow, Compared, Layout,
    RowKind,
};
use crate::words::{figure, p_text, wrap, WIDTH};
use kbench_stats::Verdict;

pub struct TextFormat;

impl CompareFormat for TextFormat {
    fn render(&self, compared: Compared<'_>, layout: Layout) -> String {
        let reports = compared.reports();
        match layout {
            Layout::Compact => compact(reports),
            Layout::Full => reports.iter().map(full).collect::<Vec<_>>().join("\n"),
        }
    }
}

const CARRIED_TITLE: &str = "Real workloads, and what the micro results predict for them:";

/// The one-screen view.
fn compact(reports: &[CompareReport]) -> String {
    let Some(first) = reports.first() else {
        return String::new();
    };
    let labels: Vec<&str> = reports.iter().map(|r| r.new.label.as_str()).collect();
    let mut out = wrap(
        &format!(
            "kbench compare: {} -> {}",
            first.base.label,
            labels.join(", ")
        ),
        "  ",
    );
    let mut sides = vec![side_text(&first.base)];
    sides.extend(reports.iter().map(|r| side_text(&r.new)));
    out.push_str(&wrap(&format!("  {}", sides.join("; ")), "    "));
    out.push_str(&wrap(&format!("  {}", delta_text(first)), "    "));
    out.push_str(&wrap(&format!("  {}", noise_text(first)), "    "));
    out.push('\n');
    let t = Table::build(reports);
    out.push_str(&render_table(&t));
    out.push('\n');
    if let Some(legend) = table::needed_legend(&t.needed_levels()) {
        out.push_str(&wrap(&legend, "  "));
    }
    for r in reports {
        let lead = if reports.len() == 1 {
            "primary".to_string()
        } else {
            r.new.label.clone()
        };
        out.push_str(&wrap(&format!("{lead}: {}", table::tally_text(r)), "  "));
        if let Some(secondary) = table::secondary_text(r) {
            out.push_str(&wrap(&format!("  {secondary}"), "    "));
        }
    }
    out.push('\n');
    section(
        &mut out,
        CARRIED_TITLE,
        &super::carried_lines_of_all(reports),
    );
    section(&mut out, "Notes:", &table::notes(reports));
    section(&mut out, "Reproduce:", &table::reproduce(reports));
    out
}

/// How much of each cell the table shows; the first that fits 80 columns wins.
#[derive(Clone, Copy)]
struct Detail {
    ci: bool,
    short_verdicts: bool,
}

const DETAILS: [Detail; 3] = [
    Detail {
        ci: true,
        short_verdicts: false,
    },
    Detail {
        ci: false,
        short_verdicts: false,
    },
    Detail {
        ci: false,
        short_verdicts: true,
    },
];

/// The narrowest the spec column gets before cells lose detail.
const MIN_NAME: usize = 16;

fn short_verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "regr",
        Verdict::Improvement => "impr",
        Verdict::Equivalent => "equiv",
        Verdict::Changed => "changed",
        Verdict::Inconclusive => "incon",
        Verdict::Insufficient => "insuff",
    }
}

/// One column: its heading and one cell per line; numbers are right-aligned.
struct Column {
    heading: String,
    cells: Vec<String>,
    right: bool,
}

impl Column {
    fn width(&self) -> usize {
        self.cells
            .iter()
            .chain(std::iter::once(&self.heading))
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
    }
}

fn columns(t: &Table, detail: Detail) -> Vec<Column> {
    let levels = t.needed_levels();
    let single = t.labels.len() == 1;
    let mut cols = vec![Column {
        heading: t.base.clone(),
        cells: t.lines.iter().map(|l| l.base_value.clone()).collect(),
        right: true,
    }];
    for (i, label) in t.labels.iter().enumerate() {
        let text = |l: &table::Line, f: &dyn Fn(&TableCell) -> String| {
            l.cells[i].as_ref().map_or("-".into(), f)
        };
        if single {
            cols.push(Column {
                heading: label.clone(),
                cells: t
                    .lines
                    .iter()
                    .map(|l| text(l, &|c| c.new_value.clone()))
                    .collect(),
                right: true,
            });
        }
        let change = |c: &TableCell| {
            if detail.ci && c.ci != "-" {
                format!("{} {}", c.change, c.ci)
            } else {
                c.change.clone()
            }
        };
        let verdict = |c: &TableCell| {
            let word = if detail.short_verdicts {
                short_verdict(c.verdict)
            } else {
                c.verdict.as_str()
            };
            let needed = table::needed_text(c, &levels);
            if needed.is_empty() {
                word.to_string()
            } else {
                format!("{word} {needed}")
            }
        };
        let changes: Vec<String> = t.lines.iter().map(|l| text(l, &change)).collect();
        let verdicts: Vec<String> = t.lines.iter().map(|l| text(l, &verdict)).collect();
        if single {
            cols.push(Column {
                heading: if detail.ci {
                    "change [95% CI]".into()
                } else {
                    "change".into()
                },
                cells: changes,
                right: false,
            });
            cols.push(Column {
                heading: "verdict".into(),
                cells: verdicts,
                right: false,
            });
        } else {
            // One column per label, headed by it: the change, then the verdict.
            let width = changes.iter().map(|c| c.chars().count()).max().unwrap_or(0);
            cols.push(Column {
                heading: label.clone(),
                cells: changes
                    .iter()
                    .zip(&verdicts)
                    .map(|(c, v)| format!("{c:<width$} {v}"))
                    .collect(),
                right: false,
            });
        }
    }
    cols
}

fn name_width(t: &Table) -> usize {
    t.lines
        .iter()
        .map(|l| l.name.chars().count() + if l.split { 4 } else { 2 })
        .max()
        .unwrap_or(0)
}

fn render_table(t: &Table) -> String {
    if t.lines.is_empty() {
        return String::new();
    }
    match fitted_columns(t) {
        Some(cols) => draw_table(t, &cols),
        // Labels too many or too long for one table: one table per label.
        None if t.labels.len() > 1 => t
            .per_label()
            .iter()
            .map(render_table)
            .collect::<Vec<_>>()
            .join("\n"),
        None => draw_table(t, &shortened(columns(t, DETAILS[DETAILS.len() - 1]))),
    }
}

/// The most detailed columns that fit 80 columns beside a name of `MIN_NAME`, with
/// the headings (labels) cut to their cells' width if need be.
fn fitted_columns(t: &Table) -> Option<Vec<Column>> {
    let name = name_width(t).min(MIN_NAME);
    let fits = |cols: &[Column]| name + cols.iter().map(|c| c.width() + 2).sum::<usize>() <= WIDTH;
    let full = DETAILS.iter().map(|d| columns(t, *d));
    let short = DETAILS.iter().map(|d| shortened(columns(t, *d)));
    full.chain(short).find(|cols| fits(cols))
}

/// The columns with each heading cut to its cells' width (at least 6).
fn shortened(cols: Vec<Column>) -> Vec<Column> {
    cols.into_iter()
        .map(|c| {
            let cells = c.cells.iter().map(|x| x.chars().count()).max().unwrap_or(0);
            Column {
                heading: crate::truncate(&c.heading, cells.max(6)),
                ..c
            }
        })
        .collect()
}

fn draw_table(t: &Table, cols: &[Column]) -> String {
    let rest: usize = cols.iter().map(|c| c.width() + 2).sum();
    let name = name_width(t).min(WIDTH.saturating_sub(rest)).max(MIN_NAME);
    let mut out = String::new();
    let mut line = format!("{:name$}", "");
    for c in cols {
        push_cell(&mut line, &c.heading, c.width(), c.right);
    }
    out.push_str(line.trim_end());
    out.push('\n');
    let mut metric = None;
    for (i, l) in t.lines.iter().enumerate() {
        if metric != Some(&l.metric) {
            out.push_str(&l.metric);
            out.push('\n');
            metric = Some(&l.metric);
        }
        let indent = if l.split { "    " } else { "  " };
        let shown = crate::truncate(&format!("{indent}{}", l.name), name);
        let mut line = format!("{shown:name$}");
        for c in cols {
            push_cell(&mut line, &c.cells[i], c.width(), c.right);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn push_cell(line: &mut String, text: &str, width: usize, right: bool) {
    line.push_str("  ");
    if right {
        line.push_str(&format!("{text:>width$}"));
    } else {
        line.push_str(&format!("{text:<width$}"));
    }
}

/// Every row in full: the detail `--full` prints.
fn full(r: &CompareReport) -> String {
    let mut out = String::new();
    out.push_str(&wrap(&header(r), ""));
    out.push_str(&wrap(&format!("  {}", noise_text(r)), "    "));
    out.push_str(&wrap(
        &format!("  primary metrics: {}", table::tally_text(r)),
        "    ",
    ));
    out.push('\n');
    for row in &r.rows {
        out.push_str(&row_text(row, r));
    }
    let not_compared: Vec<String> = r
        .not_compared
        .iter()
        .map(|n| not_compared_text(n, r))
        .collect();
    section(&mut out, "Not compared:", &not_compared);
    let env: Vec<String> = r
        .environment_differences
        .iter()
        .map(|d| format!("{}: {} -> {}", d.key, d.base, d.new))
        .collect();
    section(&mut out, "Environment differences:", &env);
    section(&mut out, "Kernel config:", &super::config_lines(r));
    section(&mut out, CARRIED_TITLE, &super::carried_lines(r));
    let notes: Vec<String> = r.notes.iter().map(|n| note_text(n, r)).collect();
    section(&mut out, "Notes:", &notes);
    section(&mut out, "Reproduce:", &r.reproduce);
    out
}

fn side_text(s: &super::SideSummary) -> String {
    format!("{} ({})", s.label, super::side_counts(s))
}

fn header(r: &CompareReport) -> String {
    format!(
        "kbench compare: {} -> {}, {}",
        side_text(&r.base),
        side_text(&r.new),
        delta_text(r)
    )
}

fn row_text(row: &CompareRow, r: &CompareReport) -> String {
    let mut out = String::new();
    let mut head = format!(
        "{} {}{}",
        row.workload,
        metric_text(row),
        if row.is_primary() { "" } else { " (secondary)" }
    );
    if !row.unit.is_empty() {
        head.push_str(&format!(" [{}]", row.unit));
    }
    out.push_str(&wrap(&head, ""));
    let mut context = format!("{} [{}]", row.params, row.variant);
    if !row.cpu_classes.is_empty() {
        context.push_str(&format!(" on {} only", row.cpu_classes));
    }
    if let Some(p) = row.placement {
        context.push_str(&format!(" {} only", super::placement_words(p)));
    }
    out.push_str(&wrap(context.trim(), "  "));
    // Pooled percentile rows carry the percentile where other rows carry the median.
    let figure_name = match (&row.kind, row.design) {
        (RowKind::PooledPercentile { .. }, _) => "value",
        (RowKind::Summary, _) => "mean",
        (RowKind::PerRun, None | Some(kbench_stats::Design::Interleaved)) => "median",
        (RowKind::PerRun, Some(_)) => "geomean",
    };
    out.push_str(&wrap(
        &format!(
            "  n {}/{} ({})  {figure_name} {} -> {}  {}",
            row.n_a,
            row.n_b,
            design_text(row),
            figure(row.median_a),
            figure(row.median_b),
            change_text(row),
        ),
        "    ",
    ));
    out.push_str(&wrap(
        &format!("  p {}  {}", p_text(row.p_value), super::verdict_text(row)),
        "    ",
    ));
    for d in &row.diagnostics {
        out.push_str(&wrap(&format!("  - {}", diagnostic_text(d, r)), "    "));
    }
    out.push('\n');
    out
}

fn section(out: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    out.push_str(title);
    out.push('\n');
    for line in lines {
        out.push_str(&wrap(&format!("  {line}"), "    "));
    }
    out.push('\n');
}
