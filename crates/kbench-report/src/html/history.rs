//! `kbench history --format html`: each history as a plot of its labels in order, the
//! label's mean with its interval, the segments between change points as bands, and
//! each change point marked with its step; then the changes and the labels as tables.
use super::svg::{escape, Linear, Shape, Svg};
use super::{page, plots};
use crate::compare::kernel_text;
use crate::history::{interval, kind_word, params_text, step_text};
use crate::words::{figure, unit_word};
use kbench_analysis::history::{History, HistoryReport};

const HEIGHT: f64 = 300.0;

pub fn render(report: &HistoryReport) -> String {
    let o = &report.options.change;
    let title = "kbench history";
    let mut body = format!("<h1>{title}</h1>\n");
    body.push_str(&format!(
        "<p>Change points by e-divisive means on unit means: p ≤ {} by {} permutations of whole labels (seed {}), at least {} labels a side.</p>\n",
        o.significance, o.permutations, o.seed, o.min_labels
    ));
    if report.histories.is_empty() {
        body.push_str("<p>No runs of the metrics asked for in these labels.</p>\n");
    }
    for h in &report.histories {
        body.push_str(&section(h));
    }
    page(title, &body)
}

fn section(h: &History) -> String {
    let machine = h
        .machine
        .as_deref()
        .unwrap_or("a machine its sessions do not name");
    let mut out = format!(
        "<h2>{}</h2>\n<p>{} labels on {}, {} as units; {}.</p>\n",
        escape(&format!("{}{} in {}", h.metric, params_text(h), h.unit)),
        h.labels.len(),
        escape(machine),
        unit_word(h.level, 2),
        match h.changes.len() {
            0 => "no change point".to_string(),
            1 => "one change point".to_string(),
            n => format!("{n} change points"),
        }
    );
    out.push_str(&plot(h));
    if !h.changes.is_empty() {
        out.push_str(
            "<table><tr><th>between</th><th>step</th><th>p</th><th>examine with</th></tr>\n",
        );
        for c in &h.changes {
            out.push_str(&format!(
                "<tr><td>{} → {}</td><td class=\"num\">{} ({})</td><td class=\"num\">{:.3}</td><td><code>{}</code></td></tr>\n",
                escape(&c.before),
                escape(&c.after),
                step_text(c),
                kind_word(c),
                c.p_value,
                escape(&c.compare)
            ));
        }
        out.push_str("</table>\n");
    }
    out.push_str(&format!(
        "<table><tr><th>label</th><th>kernel</th><th class=\"num\">{}</th><th class=\"num\">mean</th><th>interval</th></tr>\n",
        unit_word(h.level, 2)
    ));
    for l in &h.labels {
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
            escape(&l.label),
            escape(&kernel_text(l.kernel_release.as_deref(), l.commit.as_deref())),
            l.units,
            figure(Some(l.mean)),
            interval(l.ci)
        ));
    }
    out.push_str("</table>\n");
    out
}

/// Labels along x, the metric up y: each label's mean and interval, each segment's mean
/// and interval as a band, each change point a dashed line with its step.
fn plot(h: &History) -> String {
    let (left, right, top, bottom) = (
        plots::LEFT,
        plots::WIDTH - plots::RIGHT,
        plots::TOP,
        HEIGHT - plots::BOTTOM,
    );
    let values = h.labels.iter().flat_map(|l| {
        let (lo, hi) = l.ci.unwrap_or((l.mean, l.mean));
        [l.mean, lo, hi]
    });
    let Some(y) = Linear::fit(values, bottom, top) else {
        return plots::no_plot("no finite value to plot");
    };
    let n = h.labels.len().max(1) as f64;
    let x = Linear::new(-0.5, n - 0.5, left, right);
    let mut svg = Svg::new(
        plots::WIDTH,
        HEIGHT,
        &format!("{} per label", h.metric),
        "Each label's mean with its interval, in history order; bands are the segments between change points, dashed lines the change points.",
    );
    plots::y_axis(&mut svg, &y, HEIGHT, &h.unit);
    for s in &h.segments {
        let (x0, x1) = (x.px(s.first as f64 - 0.4), x.px(s.last as f64 + 0.4));
        if let Some((lo, hi)) = s.ci {
            svg.rect(x0, y.px(hi), x1 - x0, y.px(lo) - y.px(hi), "band");
        }
        svg.line(x0, y.px(s.mean), x1, y.px(s.mean), "segment");
    }
    for c in &h.changes {
        let at = x.px(c.index as f64 - 0.5);
        svg.line(at, top, at, bottom, "change");
        if let Some(step) = &c.step {
            svg.text(
                at + 3.0,
                top + 10.0,
                "start",
                "axis",
                &format!("{:+.1}%", step.change_pct),
            );
        }
    }
    let every = (h.labels.len() / 12).max(1);
    for (i, l) in h.labels.iter().enumerate() {
        let px = x.px(i as f64);
        if let Some((lo, hi)) = l.ci {
            svg.line(px, y.px(lo), px, y.px(hi), "whisker");
        }
        svg.marker(
            Shape::Circle,
            px,
            y.px(l.mean),
            "estimate",
            &format!(
                "{}: {} {} ({} {})",
                l.label,
                figure(Some(l.mean)),
                h.unit,
                l.units,
                unit_word(h.level, l.units)
            ),
        );
        if i % every == 0 {
            svg.text(
                px,
                bottom + 14.0,
                "middle",
                "tick",
                &crate::truncate(&l.label, 12),
            );
        }
    }
    svg.finish()
}
