//! A Markdown table, for a pull request or a wiki page.
use super::{
    delta_text, design_text, diagnostic_text, figure, metric_text, noise_text, not_compared_text,
    note_text, p_text, percent, CompareFormat, CompareReport,
};

pub struct MarkdownFormat;

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

impl CompareFormat for MarkdownFormat {
    fn render(&self, r: &CompareReport) -> String {
        let mut out = format!(
            "**{}** ({} runs, {} sessions, {} boots) vs **{}** ({} runs, {} sessions, {} boots), {}\n\n{}\n\n",
            cell(&r.base.label),
            r.base.runs,
            r.base.sessions,
            r.base.boots,
            cell(&r.new.label),
            r.new.runs,
            r.new.sessions,
            r.new.boots,
            delta_text(r),
            cell(&noise_text(r)),
        );
        out.push_str("| workload | metric | params | n | units | median base | median new | change | 95% CI | p | verdict |\n");
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for row in &r.rows {
            out.push_str(&format!(
                "| {}{} | {}{} ({}) | {} [{}] | {}/{} | {} | {} | {} | {} | {} .. {} | {} | {} |\n",
                cell(&row.workload),
                if row.cpu_classes.is_empty() {
                    String::new()
                } else {
                    format!(" on {}", cell(&row.cpu_classes))
                },
                cell(&metric_text(row)),
                if row.is_primary() { "" } else { " (secondary)" },
                cell(&row.unit),
                cell(&row.params),
                cell(&row.variant),
                row.n_a,
                row.n_b,
                cell(&design_text(row)),
                figure(row.median_a),
                figure(row.median_b),
                percent(row.shift_pct),
                percent(row.ci_low_pct),
                percent(row.ci_high_pct),
                p_text(row.p_value),
                row.verdict
            ));
        }
        let lists = [
            (
                "Diagnostics",
                r.rows
                    .iter()
                    .flat_map(|row| {
                        row.diagnostics.iter().map(move |d| {
                            format!(
                                "{} {}: {}",
                                row.workload,
                                metric_text(row),
                                diagnostic_text(d, r)
                            )
                        })
                    })
                    .collect::<Vec<_>>(),
            ),
            (
                "Not compared",
                r.not_compared
                    .iter()
                    .map(|n| not_compared_text(n, r))
                    .collect(),
            ),
            (
                "Environment differences",
                r.environment_differences
                    .iter()
                    .map(|d| format!("{}: `{}` → `{}`", d.key, d.base, d.new))
                    .collect(),
            ),
            ("Notes", r.notes.iter().map(|n| note_text(n, r)).collect()),
        ];
        for (title, items) in lists {
            if !items.is_empty() {
                out.push_str(&format!("\n**{title}**\n\n"));
                for item in items {
                    out.push_str(&format!("- {}\n", item));
                }
            }
        }
        if !r.reproduce.is_empty() {
            out.push_str("\n```sh\n");
            for line in &r.reproduce {
                out.push_str(line);
                out.push('\n');
            }
            out.push_str("```\n");
        }
        out
    }
}
