//! Plain text, at most 80 columns, to paste into an email.
use super::{
    change_text, delta_text, design_text, diagnostic_text, figure, metric_text, noise_text,
    not_compared_text, note_text, p_text, CompareFormat, CompareReport, CompareRow, RowKind,
};

pub struct TextFormat;

const WIDTH: usize = 80;

impl CompareFormat for TextFormat {
    fn render(&self, r: &CompareReport) -> String {
        let mut out = String::new();
        out.push_str(&wrap(&header(r), ""));
        out.push_str(&wrap(&format!("  {}", noise_text(r)), "    "));
        out.push_str(&wrap(&format!("  {}", tally_text(r)), "    "));
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
        let notes: Vec<String> = r.notes.iter().map(|n| note_text(n, r)).collect();
        section(&mut out, "Notes:", &notes);
        section(&mut out, "Reproduce:", &r.reproduce);
        out
    }
}

fn side_text(s: &super::SideSummary) -> String {
    format!(
        "{} ({} runs, {} session{}, {} boot{})",
        s.label,
        s.runs,
        s.sessions,
        plural(s.sessions),
        s.boots,
        plural(s.boots)
    )
}

fn header(r: &CompareReport) -> String {
    format!(
        "kbench compare: {} -> {}, {}",
        side_text(&r.base),
        side_text(&r.new),
        delta_text(r)
    )
}

/// "primary: 3 equivalent, 1 inconclusive, 1 regression".
pub fn tally_text(r: &CompareReport) -> String {
    let t = &r.tally;
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
    .map(|(n, word)| format!("{n} {word}"))
    .collect();
    if parts.is_empty() {
        "primary metrics: none compared".into()
    } else {
        format!("primary metrics: {}", parts.join(", "))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
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

/// Word-wraps `text` to 80 columns; continuation lines start with `indent`. A word
/// longer than a line (a path, a command) is split rather than overflow.
pub fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let lead: String = text.chars().take_while(|c| *c == ' ').collect();
    line.push_str(&lead);
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let fits = line.chars().count() + 1 + word.chars().count() <= WIDTH;
        if !fits && !line.trim().is_empty() {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
        }
        if !line.is_empty() && !line.ends_with(' ') {
            line.push(' ');
        }
        for c in word.chars() {
            if line.chars().count() >= WIDTH {
                out.push_str(&line);
                out.push('\n');
                line = indent.to_string();
            }
            line.push(c);
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}
