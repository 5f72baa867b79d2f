//! `kbench report` and `compare --format html`: one self-contained page. No script, no
//! fetched resource (a Content-Security-Policy says so to the browser), inline SVG
//! plots whose colours are CSS classes, so that dark mode and print restyle them.
//! Every piece of text goes through [`svg::escape`].
pub mod history;
pub mod plots;
pub mod svg;

use crate::compare::{
    change_text, config_lines, delta_text, metric_text, noise_text, not_compared_text, side_counts,
    table, verdict_text, CompareFormat, CompareReport, Compared, Layout,
};
use crate::words::figure;
use kbench_analysis::plots::PlotData;
use svg::escape;

/// What a page shows: each comparison against the base, with its plots.
pub struct PageComparison<'a> {
    pub report: &'a CompareReport,
    pub plots: &'a PlotData,
}

const STYLE: &str = r#"
:root { --fg: #1b1b1b; --bg: #ffffff; --muted: #666; --grid: #e3e3e3; --band: #dcefdc;
  --base: #1f5fbf; --new: #c0392b; --f1: #1b1b1b; --f2: #9a9a9a; --f3: #e0b000; --f4: #2a9d8f; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e6e6; --bg: #161616; --muted: #a0a0a0; --grid: #333; --band: #23402a;
    --base: #6fa8ff; --new: #ff7a6b; --f1: #e6e6e6; --f2: #777; --f3: #e0b000; --f4: #2a9d8f; }
}
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  max-width: 800px; margin: 1.5em auto; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: .5em 0; } td, th { padding: 2px 8px; text-align: left;
  border-bottom: 1px solid var(--grid); vertical-align: top; } td.num { text-align: right; }
pre { white-space: pre-wrap; font-size: 12px; }
.noplot, .legend { color: var(--muted); }
.key { margin-right: 1em; } .key.base { color: var(--base); } .key.new { color: var(--new); }
.key.outline.o1 { color: var(--f1); } .key.outline.o2 { color: var(--f2); }
.key.outline.o3 { color: var(--f3); } .key.outline.o4 { color: var(--f4); }
svg { display: block; max-width: 100%; height: auto; margin: .5em 0; }
svg text { fill: var(--fg); font-size: 11px; } svg .tick { fill: var(--muted); }
svg .grid { stroke: var(--grid); } svg .zero { stroke: var(--muted); }
svg .session { stroke: var(--muted); stroke-width: .5; }
svg .boot { stroke: var(--muted); stroke-dasharray: 4 3; }
svg .band { fill: var(--band); } svg .whisker { stroke: var(--fg); stroke-width: 1.5; }
svg .estimate { fill: var(--fg); }
svg .base { stroke: var(--base); } svg .new { stroke: var(--new); }
svg .hollow { fill: none; }
svg .run { stroke-width: 2.5; paint-order: stroke; }
svg .run.base { fill: var(--base); } svg .run.new { fill: var(--new); }
svg .o1 { stroke: var(--f1); } svg .o2 { stroke: var(--f2); }
svg .o3 { stroke: var(--f3); } svg .o4 { stroke: var(--f4); }
svg .small { stroke-width: .8; } svg .outlier { fill: none; stroke: var(--fg); r: 7; }
svg .ci.base { fill: var(--base); fill-opacity: .15; stroke: none; }
svg .ci.new { fill: var(--new); fill-opacity: .15; stroke: none; }
svg .median { stroke-width: 2; }
svg .segment { stroke: var(--base); stroke-width: 2; }
svg .change { stroke: var(--new); stroke-width: 1.5; stroke-dasharray: 5 3; }
svg .ecdf, svg .curve { fill: none; stroke-width: 1.5; }
svg .curve.new, svg .ecdf.new { stroke-dasharray: 5 2; }
svg .verdict-regression { fill: var(--new); font-weight: bold; }
svg .verdict-improvement { fill: var(--base); font-weight: bold; }
@media print { body { max-width: none; } h2 { break-before: auto; } svg { break-inside: avoid; } }
"#;

/// The page as one format among the others: its plots drawn from what the comparisons
/// read (reports alone give the verdicts and tables, with no run plotted); every row
/// whatever the layout.
pub struct HtmlFormat;

impl CompareFormat for HtmlFormat {
    fn render(&self, compared: Compared<'_>, _: Layout) -> String {
        let plots = compared.plots();
        let pages: Vec<PageComparison<'_>> = compared
            .reports()
            .iter()
            .zip(&plots)
            .map(|(report, plots)| PageComparison { report, plots })
            .collect();
        render(&pages)
    }
}

/// The whole page.
pub fn render(comparisons: &[PageComparison<'_>]) -> String {
    let Some(first) = comparisons.first() else {
        return page("kbench report", "<p>Nothing to compare.</p>");
    };
    let labels: Vec<&str> = comparisons
        .iter()
        .map(|c| c.report.new.label.as_str())
        .collect();
    let title = format!(
        "kbench: {} against {}",
        labels.join(", "),
        first.report.base.label
    );
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    for c in comparisons {
        body.push_str(&header(c.report, c.plots));
    }
    body.push_str("<h2>Verdicts</h2>\n");
    for c in comparisons {
        body.push_str(&plots::verdict_plot(c.report));
        body.push_str(&summary_table(c.report));
    }
    for c in comparisons {
        body.push_str(&workloads(c));
    }
    body.push_str(&tables(comparisons));
    page(&title, &body)
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// A side's machines and kernels, one per line.
fn machines_text(machines: &[kbench_analysis::plots::Machine]) -> String {
    if machines.is_empty() {
        return "machine unknown (imported)".into();
    }
    let lines: Vec<String> = machines
        .iter()
        .map(|m| {
            escape(&format!(
                "{}: {}, kernel {}",
                m.hostname, m.cpus, m.kernel_release
            ))
        })
        .collect();
    lines.join("<br>")
}

fn header(r: &CompareReport, plots: &PlotData) -> String {
    let row = |side: &crate::compare::SideSummary, role: &str, machines| {
        format!(
            "<tr><th>{role}</th><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            escape(&side.label),
            escape(&side_counts(side)),
            machines_text(machines)
        )
    };
    format!(
        "<table>\n{}{}</table>\n<p>{}<br>{}</p>\n",
        row(&r.base, "base", &plots.base_machines),
        row(&r.new, "new", &plots.new_machines),
        escape(&delta_text(r)),
        escape(&noise_text(r))
    )
}

fn summary_table(r: &CompareReport) -> String {
    let mut out = String::from(
        "<table>\n<tr><th>workload</th><th>metric</th><th>base</th><th>new</th><th>change [95% CI]</th><th>verdict</th></tr>\n",
    );
    let rows = table::shown_rows(std::slice::from_ref(r));
    for row in r.rows.iter().filter(|row| row.is_primary()) {
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
            escape(&table::spec_name(row, &rows)),
            escape(&metric_text(row)),
            escape(&figure(row.median_a)),
            escape(&figure(row.median_b)),
            escape(&change_text(row)),
            escape(&verdict_text(row))
        ));
    }
    out.push_str("</table>\n");
    out
}

fn workloads(c: &PageComparison<'_>) -> String {
    let mut out = String::new();
    for plot in &c.plots.workloads {
        let row = c.report.rows.iter().find(|r| {
            r.is_primary()
                && !r.is_split()
                && (&r.workload, &r.params, &r.variant, &r.metric)
                    == (&plot.workload, &plot.params, &plot.variant, &plot.metric)
        });
        let name = row.map_or_else(
            || format!("{} {}", plot.workload, plot.metric),
            |row| plots::row_name(c.report, row),
        );
        out.push_str(&format!("<h2>{}</h2>\n", escape(&name)));
        if !plot.params.is_empty() {
            out.push_str(&format!(
                "<p class=\"legend\">{}</p>\n",
                escape(&plot.params)
            ));
        }
        out.push_str(&plots::legend(c.report, plot));
        out.push_str(&plots::run_order_plot(c.report, plot));
        out.push_str(&plots::distribution_plot(c.report, plot));
        for curves in &plot.latency {
            out.push_str(&format!("<h3>{}</h3>\n", escape(&curves.series)));
            out.push_str(&plots::latency_plot(c.report, plot, curves));
        }
    }
    out
}

fn list(title: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let lis: Vec<String> = items
        .iter()
        .map(|i| format!("<li>{}</li>", escape(i)))
        .collect();
    format!(
        "<h2>{}</h2>\n<ul>\n{}\n</ul>\n",
        escape(title),
        lis.join("\n")
    )
}

fn tables(comparisons: &[PageComparison<'_>]) -> String {
    let reports: Vec<CompareReport> = comparisons.iter().map(|c| c.report.clone()).collect();
    let mut out = list("Notes", &table::notes(&reports));
    for r in &reports {
        if !r.environment_differences.is_empty() {
            out.push_str(&format!(
                "<h2>Environment: {} and {}</h2>\n<table>\n<tr><th></th><th>{}</th><th>{}</th></tr>\n",
                escape(&r.base.label),
                escape(&r.new.label),
                escape(&r.base.label),
                escape(&r.new.label)
            ));
            for d in &r.environment_differences {
                out.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    escape(&d.key),
                    escape(&d.base),
                    escape(&d.new)
                ));
            }
            out.push_str("</table>\n");
        }
        let not_compared: Vec<String> = r
            .not_compared
            .iter()
            .map(|n| not_compared_text(n, r))
            .collect();
        out.push_str(&list("Not compared", &not_compared));
        out.push_str(&list("Kernel configs", &config_lines(r)));
    }
    let reproduce = table::reproduce(&reports).join("\n");
    out.push_str(&format!(
        "<h2>Reproduce</h2>\n<pre>{}</pre>\n",
        escape(&reproduce)
    ));
    out
}
