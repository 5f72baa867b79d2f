//! The report's plots, each an inline SVG or, when its data cannot make one, a short
//! message in its place: the verdict plot, the runs in the order they ran, the values
//! per side (strip plot and ECDFs), and the latency percentile curves.
use super::svg::{escape, finite_range, tick_text, Linear, Log10, Shape, Svg};
use crate::compare::table::{needed, shown_rows, spec_name, Needed};
use crate::compare::{verdict_text, CompareReport, CompareRow, SideName};
use crate::words::{figure, percent, unit_word};
use kbench_analysis::plots::{
    LatencyCurves, RunPoint, WorkloadPlot, MEDIAN_CONFIDENCE, OUTLIER_RULE,
};

pub(super) const WIDTH: f64 = 760.0;
pub(super) const LEFT: f64 = 64.0;
pub(super) const RIGHT: f64 = 16.0;
pub(super) const TOP: f64 = 16.0;
pub(super) const BOTTOM: f64 = 36.0;

/// A plot that cannot be drawn says why, in its place.
pub(super) fn no_plot(why: &str) -> String {
    format!("<p class=\"noplot\">{}</p>", escape(why))
}

fn side_class(side: SideName) -> &'static str {
    match side {
        SideName::Base => "base",
        SideName::New => "new",
    }
}

fn side_shape(side: SideName) -> Shape {
    match side {
        SideName::Base => Shape::Circle,
        SideName::New => Shape::Square,
    }
}

/// Horizontal grid lines and labels of a y scale.
pub(super) fn y_axis(svg: &mut Svg, y: &Linear, height: f64, unit: &str) {
    for (t, label) in y.labelled_ticks() {
        let py = y.px(t);
        svg.line(LEFT, py, WIDTH - RIGHT, py, "grid");
        svg.text(LEFT - 6.0, py + 4.0, "end", "tick", &label);
    }
    svg.vertical_text(14.0, TOP + (height - TOP - BOTTOM) / 2.0, "axis", unit);
}

/// Vertical grid lines and labels of an x scale.
fn x_axis(svg: &mut Svg, x: &Linear, height: f64, label: &str) {
    for (t, label) in x.labelled_ticks() {
        let px = x.px(t);
        svg.line(px, TOP, px, height - BOTTOM, "grid");
        svg.text(px, height - BOTTOM + 14.0, "middle", "tick", &label);
    }
    svg.text(
        (LEFT + WIDTH - RIGHT) / 2.0,
        height - 6.0,
        "middle",
        "axis",
        label,
    );
}

/// A row's name in the plots and tables: its spec as the text compare names it, and
/// its metric.
pub fn row_name(report: &CompareReport, row: &CompareRow) -> String {
    let rows = shown_rows(std::slice::from_ref(report));
    format!("{} {}", spec_name(row, &rows), row.metric)
}

/// The verdict in a few words: what it is, and what would settle it.
fn short_verdict(row: &CompareRow) -> String {
    let verdict = row.verdict.as_str().to_uppercase();
    match needed(row) {
        Some((Needed::About(n), level)) => format!("{verdict}: ≈{n} {}/side", unit_word(level, n)),
        Some((Needed::Unknown, level)) => format!("{verdict}: ? {}/side", unit_word(level, 2)),
        Some((Needed::BeyondPractical, level)) => format!(
            "{verdict}: >{} {}/side",
            kbench_stats::sequential::PRACTICAL_UNITS_PER_SIDE,
            unit_word(level, 2)
        ),
        None => verdict,
    }
}

/// One row per primary metric: the change and its interval as a whisker over the
/// row's ±delta band, the verdict written beside it.
pub fn verdict_plot(report: &CompareReport) -> String {
    let rows: Vec<&CompareRow> = report.rows.iter().filter(|r| r.is_primary()).collect();
    let drawn: Vec<&&CompareRow> = rows.iter().filter(|r| r.shift_pct.is_some()).collect();
    if drawn.is_empty() {
        return no_plot("No primary metric has an estimated change to plot.");
    }
    const ROW: f64 = 24.0;
    const NAMES: f64 = 230.0;
    const VERDICTS: f64 = 200.0;
    let height = TOP + ROW * rows.len() as f64 + BOTTOM;
    let ends = rows.iter().flat_map(|r| {
        [
            r.ci_low_pct,
            r.ci_high_pct,
            r.shift_pct,
            Some(r.delta_pct),
            Some(-r.delta_pct),
        ]
    });
    let (lo, hi) = finite_range(ends.flatten()).unwrap_or((-1.0, 1.0));
    // Past ±100% the interval says enough; its end is drawn at the edge.
    let (lo, hi) = (lo.max(-100.0), hi.min(100.0));
    let x = Linear::new(
        lo - (hi - lo) * 0.05,
        hi + (hi - lo) * 0.05,
        NAMES,
        WIDTH - VERDICTS,
    );
    let title = format!(
        "Change of each primary metric, {} against {}",
        report.new.label, report.base.label
    );
    let desc: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {}: {} {}",
                r.workload,
                r.metric,
                percent(r.shift_pct),
                verdict_text(r)
            )
        })
        .collect();
    let mut svg = Svg::new(WIDTH, height, &title, &desc.join("; "));
    let axis_x = Linear::new(x.domain().0, x.domain().1, NAMES, WIDTH - VERDICTS);
    for (t, label) in axis_x.labelled_ticks() {
        svg.line(
            x.px(t),
            TOP,
            x.px(t),
            height - BOTTOM,
            if t == 0.0 { "zero" } else { "grid" },
        );
        svg.text(
            x.px(t),
            height - BOTTOM + 14.0,
            "middle",
            "tick",
            &format!("{label}%"),
        );
    }
    svg.text(
        (NAMES + WIDTH - VERDICTS) / 2.0,
        height - 6.0,
        "middle",
        "axis",
        "change, % (95% interval)",
    );
    let clamp = |v: f64| x.px(v.clamp(x.domain().0, x.domain().1));
    for (i, row) in rows.iter().enumerate() {
        let mid = TOP + ROW * (i as f64 + 0.5);
        svg.rect(
            clamp(-row.delta_pct),
            mid - ROW * 0.4,
            clamp(row.delta_pct) - clamp(-row.delta_pct),
            ROW * 0.8,
            "band",
        );
        let name = crate::truncate(&row_name(report, row), 36);
        svg.text(NAMES - 8.0, mid + 4.0, "end", "label", &name);
        if let (Some(low), Some(high)) = (row.ci_low_pct, row.ci_high_pct) {
            svg.line(clamp(low), mid, clamp(high), mid, "whisker");
            svg.line(clamp(low), mid - 5.0, clamp(low), mid + 5.0, "whisker");
            svg.line(clamp(high), mid - 5.0, clamp(high), mid + 5.0, "whisker");
        }
        if let Some(shift) = row.shift_pct {
            let tooltip = format!(
                "{} {}: {}",
                row.workload,
                row.metric,
                crate::compare::change_text(row)
            );
            svg.marker(Shape::Circle, clamp(shift), mid, "estimate", &tooltip);
        }
        let verdict = crate::truncate(&short_verdict(row), 30);
        svg.text(
            WIDTH - VERDICTS + 8.0,
            mid + 4.0,
            "start",
            &format!("verdict {}", row.verdict.as_str().replace(' ', "-")),
            &verdict,
        );
    }
    svg.finish()
}

/// What a run's outline stands for: the CPU class its CPUs belong to and where its
/// tasks ran, in words; empty when neither is known.
fn outline_name(p: &RunPoint) -> String {
    let placement = p.placement.map(crate::compare::placement_words);
    [Some(p.cpu_class.as_str()), placement]
        .into_iter()
        .flatten()
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The outlines of a plot's runs, in order of first appearance: the legend's entries.
fn outline_names(points: &[RunPoint]) -> Vec<String> {
    kbench_analysis::group::distinct(points.iter().map(outline_name).filter(|n| !n.is_empty()))
}

/// A run's outline class: `o0` (its side's colour) when unknown, else `o1` to `o4` by
/// its place among `outlines`, as the legend shows them.
fn outline_of(p: &RunPoint, outlines: &[String]) -> usize {
    let name = outline_name(p);
    outlines
        .iter()
        .position(|f| *f == name)
        .map_or(0, |i| i % 4 + 1)
}

fn side_label(report: &CompareReport, side: SideName) -> &str {
    match side {
        SideName::Base => &report.base.label,
        SideName::New => &report.new.label,
    }
}

fn tooltip(report: &CompareReport, plot: &WorkloadPlot, p: &RunPoint, at_s: Option<f64>) -> String {
    let mut text = format!(
        "{} run {}: {} {}",
        side_label(report, p.side),
        p.run,
        figure(Some(p.value)),
        plot.unit
    );
    if !p.cpus.is_empty() {
        text.push_str(&format!(", CPUs {}", kbench_sys::format_cpulist(&p.cpus)));
    }
    if !p.cpu_class.is_empty() {
        text.push_str(&format!(" ({})", p.cpu_class));
    }
    if let Some(kind) = p.placement {
        text.push_str(&format!(", {}", crate::compare::placement_words(kind)));
    }
    if let Some(t) = at_s {
        text.push_str(&format!(", at +{t:.1} s"));
    }
    if p.outlier {
        text.push_str(&format!(", outlier by {OUTLIER_RULE}"));
    }
    text
}

/// Both sides' runs on one time axis, sides by colour and shape (each run filled with
/// its side's colour), CPU class and placement as the outline's colour, session and
/// boot changes as thin lines.
pub fn run_order_plot(report: &CompareReport, plot: &WorkloadPlot) -> String {
    let points: Vec<&RunPoint> = plot.points.iter().filter(|p| p.value.is_finite()).collect();
    if points.is_empty() {
        return no_plot("No run has a value to plot.");
    }
    let height = 260.0;
    let first_ns = points.iter().filter_map(|p| p.start_unix_ns).min();
    // Without start times (imports), runs are placed in their order, side after side.
    let at = |i: usize, p: &RunPoint| match (p.start_unix_ns, first_ns) {
        (Some(t), Some(first)) => (t - first) as f64 / 1e9,
        _ => i as f64,
    };
    let xs: Vec<f64> = points.iter().enumerate().map(|(i, p)| at(i, p)).collect();
    let timed = first_ns.is_some() && points.iter().all(|p| p.start_unix_ns.is_some());
    let (Some(x), Some(y)) = (
        Linear::fit(xs.iter().copied(), LEFT, WIDTH - RIGHT),
        Linear::fit(points.iter().map(|p| p.value), height - BOTTOM, TOP),
    ) else {
        return no_plot("No run has a value to plot.");
    };
    let title = format!(
        "{} {} of every run in the order they ran",
        plot.workload, plot.metric
    );
    let desc = format!(
        "{} runs of {} (circles) and {} runs of {} (squares); lines mark a new session, dashed a new boot",
        plot.base.n, report.base.label, plot.new.n, report.new.label
    );
    let mut svg = Svg::new(WIDTH, height, &title, &desc);
    y_axis(&mut svg, &y, height, &plot.unit);
    x_axis(
        &mut svg,
        &x,
        height,
        if timed {
            "seconds since the first run"
        } else {
            "run, in order"
        },
    );
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    for pair in order.windows(2) {
        let (a, b) = (points[pair[0]], points[pair[1]]);
        let boundary = if a.boot != b.boot {
            "boot"
        } else if a.session != b.session {
            "session"
        } else {
            continue;
        };
        let mid = (x.px(xs[pair[0]]) + x.px(xs[pair[1]])) / 2.0;
        svg.line(mid, TOP, mid, height - BOTTOM, boundary);
    }
    let outlines = outline_names(&plot.points);
    for (i, p) in points.iter().enumerate() {
        let class = format!("{} run o{}", side_class(p.side), outline_of(p, &outlines));
        let (cx, cy) = (x.px(xs[i]), y.px(p.value));
        svg.marker(
            side_shape(p.side),
            cx,
            cy,
            &class,
            &tooltip(report, plot, p, timed.then_some(xs[i])),
        );
        if p.outlier {
            svg.marker(Shape::Circle, cx, cy, "outlier", "outlier");
        }
    }
    svg.finish()
}

/// A stable jitter in [-1, 1] for a run, so the page is the same bytes every time.
fn jitter(run: u32) -> f64 {
    let h = u64::from(run).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
    (h as f64 / (1u64 << 24) as f64) * 2.0 - 1.0
}

/// The values per side as a jittered strip with its median and interval, and both
/// sides' ECDFs on the same value axis.
pub fn distribution_plot(report: &CompareReport, plot: &WorkloadPlot) -> String {
    let values = |side: SideName| -> Vec<f64> {
        plot.points
            .iter()
            .filter(|p| p.side == side && p.value.is_finite())
            .map(|p| p.value)
            .collect()
    };
    let (a, b) = (values(SideName::Base), values(SideName::New));
    if a.is_empty() || b.is_empty() {
        let empty = if a.is_empty() {
            &report.base.label
        } else {
            &report.new.label
        };
        return no_plot(&format!(
            "No run of {empty} has this metric: there is nothing to set beside the other side."
        ));
    }
    let height = 300.0;
    let strip_bottom = TOP + 90.0;
    let Some(x) = Linear::fit(a.iter().chain(&b).copied(), LEFT, WIDTH - RIGHT) else {
        return no_plot("No run has a value to plot.");
    };
    let title = format!(
        "{} {} per side: strips and ECDFs",
        plot.workload, plot.metric
    );
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
    let desc = format!(
        "median of {} {}, of {} {} ({}% intervals as bars)",
        report.base.label,
        figure(finite(plot.base.median)),
        report.new.label,
        figure(finite(plot.new.median)),
        (MEDIAN_CONFIDENCE * 100.0).round()
    );
    let mut svg = Svg::new(WIDTH, height, &title, &desc);
    x_axis(&mut svg, &x, height, &plot.unit);
    for (row, side, spread) in [
        (0.0, SideName::Base, &plot.base),
        (1.0, SideName::New, &plot.new),
    ] {
        let mid = TOP + 22.0 + row * 45.0;
        svg.text(
            LEFT - 6.0,
            mid + 4.0,
            "end",
            "label",
            &crate::truncate(side_label(report, side), 9),
        );
        for p in plot
            .points
            .iter()
            .filter(|p| p.side == side && p.value.is_finite())
        {
            let tip = tooltip(report, plot, p, None);
            svg.marker(
                side_shape(side),
                x.px(p.value),
                mid + jitter(p.run) * 12.0,
                &format!("{} hollow small", side_class(side)),
                &tip,
            );
        }
        if let Some((low, high)) = spread
            .median_ci
            .filter(|(l, h)| l.is_finite() && h.is_finite())
        {
            svg.rect(
                x.px(low),
                mid - 17.0,
                x.px(high) - x.px(low),
                34.0,
                &format!("ci {}", side_class(side)),
            );
        }
        if let Some(m) = finite(spread.median) {
            svg.line(
                x.px(m),
                mid - 19.0,
                x.px(m),
                mid + 19.0,
                &format!("median {}", side_class(side)),
            );
        }
    }
    let ecdf_top = strip_bottom + 10.0;
    let p = Linear::new(0.0, 1.0, height - BOTTOM, ecdf_top);
    for t in [0.0, 0.5, 1.0] {
        svg.line(LEFT, p.px(t), WIDTH - RIGHT, p.px(t), "grid");
        svg.text(LEFT - 6.0, p.px(t) + 4.0, "end", "tick", &tick_text(t));
    }
    for (side, values) in [(SideName::Base, &a), (SideName::New, &b)] {
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() as f64;
        let mut steps = vec![(x.px(sorted[0]), p.px(0.0))];
        for (i, v) in sorted.iter().enumerate() {
            steps.push((x.px(*v), p.px(i as f64 / n)));
            steps.push((x.px(*v), p.px((i + 1) as f64 / n)));
        }
        svg.polyline(&steps, &format!("ecdf {}", side_class(side)));
    }
    svg.finish()
}

/// Percentile curves of both sides, x = 1/(1-p) on a log scale.
pub fn latency_plot(report: &CompareReport, plot: &WorkloadPlot, curves: &LatencyCurves) -> String {
    let finite = |curve: &[(f64, f64)]| -> Vec<(f64, f64)> {
        curve
            .iter()
            .filter(|(q, v)| q.is_finite() && v.is_finite() && *q < 1.0)
            .copied()
            .collect()
    };
    let (base, new) = (finite(&curves.base), finite(&curves.new));
    if base.is_empty() || new.is_empty() {
        return no_plot(&format!(
            "{}: too few samples on one side for a percentile curve.",
            curves.series
        ));
    }
    let height = 260.0;
    let inverse = |q: f64| 1.0 / (1.0 - q);
    let all = || base.iter().chain(&new);
    let (Some((qlo, qhi)), Some(y)) = (
        finite_range(all().map(|(q, _)| inverse(*q))),
        Linear::fit(all().map(|(_, v)| *v).chain([0.0]), height - BOTTOM, TOP),
    ) else {
        return no_plot("No percentile to plot.");
    };
    let Some(x) = Log10::new(qlo, qhi.max(qlo * 10.0), LEFT, WIDTH - RIGHT) else {
        return no_plot("No percentile to plot.");
    };
    let title = format!("{} {}: latency percentiles", plot.workload, curves.series);
    let desc = format!(
        "percentile curves of {} and {} from their stored histograms",
        report.base.label, report.new.label
    );
    let mut svg = Svg::new(WIDTH, height, &title, &desc);
    // A counted comparison's series are instructions (docs/vm-ab.md).
    y_axis(&mut svg, &y, height, report.clock.duration_unit());
    for (label, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)] {
        let inv = inverse(q);
        if inv < qlo || inv > qhi.max(qlo * 10.0) {
            continue;
        }
        svg.line(x.px(inv), TOP, x.px(inv), height - BOTTOM, "grid");
        svg.text(x.px(inv), height - BOTTOM + 14.0, "middle", "tick", label);
    }
    svg.text(
        (LEFT + WIDTH - RIGHT) / 2.0,
        height - 6.0,
        "middle",
        "axis",
        "percentile (log scale of 1/(1-p))",
    );
    for (side, curve) in [(SideName::Base, &base), (SideName::New, &new)] {
        let line: Vec<(f64, f64)> = curve
            .iter()
            .map(|(q, v)| (x.px(inverse(*q)), y.px(*v)))
            .collect();
        svg.polyline(&line, &format!("curve {}", side_class(side)));
        for (q, v) in curve
            .iter()
            .filter(|(q, _)| [0.5, 0.9, 0.99, 0.999].iter().any(|m| (q - m).abs() < 1e-9))
        {
            let tip = format!(
                "{} p{}: {} ns",
                side_label(report, side),
                tick_text(q * 100.0),
                figure(Some(*v))
            );
            svg.marker(
                side_shape(side),
                x.px(inverse(*q)),
                y.px(*v),
                &format!("{} hollow", side_class(side)),
                &tip,
            );
        }
    }
    svg.finish()
}

/// The legend of the run plots: sides by shape and colour, outlines by CPU class and
/// placement, the outlier rule.
pub fn legend(report: &CompareReport, plot: &WorkloadPlot) -> String {
    let outlines = outline_names(&plot.points);
    let mut items = vec![
        format!(
            "<span class=\"key base\">&#9679; {}</span>",
            escape(&report.base.label)
        ),
        format!(
            "<span class=\"key new\">&#9632; {}</span>",
            escape(&report.new.label)
        ),
    ];
    for (i, name) in outlines.iter().enumerate() {
        items.push(format!(
            "<span class=\"key outline o{}\">&#9675; {}</span>",
            i % 4 + 1,
            escape(name)
        ));
    }
    if plot.points.iter().any(|p| p.outlier) {
        items.push(format!(
            "<span class=\"key\">&#9711; outlier: {}</span>",
            escape(OUTLIER_RULE)
        ));
    }
    format!("<p class=\"legend\">{}</p>", items.join(" "))
}
