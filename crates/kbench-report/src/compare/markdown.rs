//! A Markdown table, for a pull request or a wiki page: the one-screen table of the
//! text format by default, every row with `--full`.
use super::table::{self, Table};
use super::{
    delta_text, design_text, diagnostic_text, metric_text, noise_text, not_compared_text,
    note_text, CompareFormat, CompareReport, Compared, Layout,
};
use crate::words::{figure, p_text, percent};

pub struct MarkdownFormat;

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

impl CompareFormat for MarkdownFormat {
    fn render(&self, compared: Compared<'_>, layout: Layout) -> String {
        let reports = compared.reports();
        match layout {
            Layout::Compact => compact(reports),
            Layout::Full => reports
                .iter()
                .map(full)
                .collect::<Vec<_>>()
                .join("\n---\n\n"),
        }
    }
}

fn compact(reports: &[CompareReport]) -> String {
    let Some(first) = reports.first() else {
        return String::new();
    };
    let side =
        |s: &super::SideSummary| format!("**{}** ({})", cell(&s.label), super::side_counts(s));
    let mut out = side(&first.base);
    for r in reports {
        out.push_str(" vs ");
        out.push_str(&side(&r.new));
    }
    out.push_str(&format!(
        ", {}\n\n{}\n\n",
        delta_text(first),
        cell(&noise_text(first))
    ));
    let t = Table::build(reports);
    let levels = t.needed_levels();
    let single = reports.len() == 1;
    out.push_str(&format!("| benchmark | metric | {} |", cell(&t.base)));
    for label in &t.labels {
        if single {
            out.push_str(&format!(" {} | change [95% CI] | verdict |", cell(label)));
        } else {
            out.push_str(&format!(" {} |", cell(label)));
        }
    }
    let columns = if single { 6 } else { 3 + t.labels.len() };
    out.push_str(&format!("\n|{}\n", "---|".repeat(columns)));
    for l in &t.lines {
        let name = if l.split {
            format!("&nbsp;&nbsp;{}", cell(&l.name))
        } else {
            cell(&l.name)
        };
        out.push_str(&format!(
            "| {name} | {} | {} |",
            cell(&l.metric),
            l.base_value
        ));
        for c in &l.cells {
            let change = |c: &table::TableCell| match c.ci.as_str() {
                "-" => c.change.clone(),
                ci => format!("{} {ci}", c.change),
            };
            let verdict = |c: &table::TableCell| {
                format!("{} {}", c.verdict, table::needed_text(c, &levels))
                    .trim_end()
                    .to_string()
            };
            match (c, single) {
                (None, true) => out.push_str(" - | - | - |"),
                (None, false) => out.push_str(" - |"),
                (Some(c), true) => out.push_str(&format!(
                    " {} | {} | {} |",
                    c.new_value,
                    change(c),
                    verdict(c)
                )),
                (Some(c), false) => out.push_str(&format!(" {} {} |", change(c), verdict(c))),
            }
        }
        out.push('\n');
    }
    out.push('\n');
    if let Some(legend) = table::needed_legend(&levels) {
        out.push_str(&format!("{legend}\n\n"));
    }
    for r in reports {
        out.push_str(&format!(
            "- **{}**: {}",
            cell(&r.new.label),
            table::tally_text(r)
        ));
        if let Some(secondary) = table::secondary_text(r) {
            out.push_str(&format!("; {secondary}"));
        }
        out.push('\n');
    }
    let carried = super::carried_lines_of_all(reports);
    if !carried.is_empty() {
        out.push_str("\n**Real workloads, and what the micro results predict for them**\n\n");
        for line in carried {
            out.push_str(&format!("- {line}\n"));
        }
    }
    let notes = table::notes(reports);
    if !notes.is_empty() {
        out.push_str("\n**Notes**\n\n");
        for n in notes {
            out.push_str(&format!("- {n}\n"));
        }
    }
    reproduce_block(&mut out, &table::reproduce(reports));
    out
}

/// The kernel config status, then each option with its values as code.
fn config_items(r: &CompareReport) -> Vec<String> {
    std::iter::once(super::config_status_text(r))
        .chain(
            super::config_differences(r)
                .iter()
                .map(|d| format!("`{}`: `{}` → `{}`", d.option, d.base, d.new)),
        )
        .collect()
}

fn reproduce_block(out: &mut String, lines: &[String]) {
    if !lines.is_empty() {
        out.push_str("\n```sh\n");
        for line in lines {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("```\n");
    }
}

/// Every row: the detail `--full` prints.
fn full(r: &CompareReport) -> String {
    let mut out = format!(
        "**{}** ({}) vs **{}** ({}), {}\n\n{}\n\n",
        cell(&r.base.label),
        super::side_counts(&r.base),
        cell(&r.new.label),
        super::side_counts(&r.new),
        delta_text(r),
        cell(&noise_text(r)),
    );
    out.push_str("| workload | metric | params | n | units | median base | median new | change | 95% CI | p | verdict |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for row in &r.rows {
        out.push_str(&format!(
            "| {}{} | {}{} ({}) | {} [{}] | {}/{} | {} | {} | {} | {} | {} .. {} | {} | {} |\n",
            cell(&row.workload),
            match (row.placement, row.cpu_classes.is_empty()) {
                (Some(p), _) => format!(" {}", super::placement_words(p)),
                (None, true) => String::new(),
                (None, false) => format!(" on {}", cell(&row.cpu_classes)),
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
        ("Kernel config", config_items(r)),
        (
            "Real workloads, and what the micro results predict for them",
            super::carried_lines(r),
        ),
        (
            "Notes",
            super::machines_note_text(r)
                .into_iter()
                .chain(r.notes.iter().map(|n| note_text(n, r)))
                .collect(),
        ),
    ];
    for (title, items) in lists {
        if !items.is_empty() {
            out.push_str(&format!("\n**{title}**\n\n"));
            for item in items {
                out.push_str(&format!("- {}\n", item));
            }
        }
    }
    reproduce_block(&mut out, &r.reproduce);
    out
}
