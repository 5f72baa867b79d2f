//! Plain text, at most 80 columns, to paste into an email.
use super::{figure, p_text, percent, CompareFormat, CompareReport, CompareRow};

pub struct TextFormat;

const WIDTH: usize = 80;

impl CompareFormat for TextFormat {
    fn render(&self, r: &CompareReport) -> String {
        let mut out = String::new();
        out.push_str(&wrap(
            &format!(
                "kbench compare: {} ({} runs, {} boot{}) -> {} ({} runs, {} boot{}), delta {}%",
                r.base,
                r.base_runs,
                r.base_boots,
                plural(r.base_boots),
                r.new,
                r.new_runs,
                r.new_boots,
                plural(r.new_boots),
                r.delta_pct
            ),
            "",
        ));
        out.push('\n');
        for row in &r.rows {
            out.push_str(&row_text(row));
        }
        section(&mut out, "Not compared:", &r.not_compared);
        let env: Vec<String> = r
            .environment_differences
            .iter()
            .map(|d| format!("{}: {} -> {}", d.key, d.base, d.new))
            .collect();
        section(&mut out, "Environment differences:", &env);
        section(&mut out, "Notes:", &r.notes);
        section(&mut out, "Reproduce:", &r.reproduce);
        out
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn row_text(row: &CompareRow) -> String {
    let mut out = String::new();
    let mut head = format!("{} {}", row.workload, row.metric);
    if !row.unit.is_empty() {
        head.push_str(&format!(" ({})", row.unit));
    }
    out.push_str(&wrap(&head, ""));
    let mut context = format!("{} [{}]", row.params, row.variant);
    if !row.cpu_classes.is_empty() {
        context.push_str(&format!(" on {} only", row.cpu_classes));
    }
    out.push_str(&wrap(context.trim(), "  "));
    // Pooled percentile rows carry the percentile where other rows carry the median.
    let figure_name = if row.metric.ends_with("_pooled") {
        "value"
    } else {
        "median"
    };
    out.push_str(&format!(
        "  n {}/{}  {figure_name} {} -> {}  {} [{}, {}]\n",
        row.n_a,
        row.n_b,
        figure(row.median_a),
        figure(row.median_b),
        percent(row.shift_pct),
        percent(row.ci_low_pct),
        percent(row.ci_high_pct),
    ));
    let mut verdict = format!(
        "  p {}  {}",
        p_text(row.p_value),
        row.verdict.to_uppercase()
    );
    if let Some(runs) = row.runs_needed {
        verdict.push_str(&format!(": about {runs} runs per side would settle it"));
    }
    out.push_str(&wrap(&verdict, "    "));
    for d in &row.diagnostics {
        out.push_str(&wrap(&format!("  - {d}"), "    "));
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
