//! The HTML report as a browser and an attacker would read it: it parses as HTML5
//! without an error and each SVG as XML, carries no script, handler or URL, shows
//! hostile text as text, stays small, and draws degenerate data as a message or a
//! sound plot, never a broken or enormous one.
use html5ever::tendril::TendrilSink;
use kbench_analysis::plots::{LatencyCurves, PlotData, RunPoint, SideSpread, WorkloadPlot};
use kbench_report::compare::{CompareReport, RowKind, SideName};
use kbench_report::html::{render, PageComparison};
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use std::path::PathBuf;

const HOSTILE: [&str; 6] = [
    "<script>alert(1)</script>",
    "\"><img src=x onerror=alert(1)>",
    "</style><b>bold</b>",
    "100% of 'it' &amp; more",
    "größe µs 数字",
    "a]]>b<!--c-->",
];

fn fixture_report() -> CompareReport {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/single.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A report whose every name is hostile text.
fn hostile_report() -> CompareReport {
    let mut r = fixture_report();
    r.base.label = HOSTILE[0].into();
    r.new.label = HOSTILE[1].into();
    for (i, row) in r.rows.iter_mut().enumerate() {
        row.workload = HOSTILE[i % HOSTILE.len()].into();
        row.unit = HOSTILE[3].into();
    }
    r.reproduce = vec![format!("kbench compare '{}' x", HOSTILE[2])];
    r
}

/// Seeded values around `centre` (a linear congruential walk).
fn values(n: usize, centre: f64, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            centre * (1.0 + ((state >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.1)
        })
        .collect()
}

fn points(side: SideName, values: &[f64], start_ns: u64, class: &str) -> Vec<RunPoint> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| RunPoint {
            side,
            run: i as u32 + 1,
            start_unix_ns: Some(start_ns + i as u64 * 50_000_000),
            value: *v,
            cpus: vec![0, 1],
            cpu_class: class.to_string(),
            placement: None,
            session: format!("session:{}", i / 50),
            boot: "boot-a".into(),
            outlier: i == 7,
        })
        .collect()
}

fn curve(scale: f64) -> Vec<(f64, f64)> {
    (0..=48)
        .map(|i| 10f64.powf(f64::from(i) / 12.0))
        .filter(|t| *t >= 2.0)
        .map(|t| (1.0 - 1.0 / t, scale * t.sqrt()))
        .collect()
}

fn plot(base: &[f64], new: &[f64], unit: &str) -> WorkloadPlot {
    let spread = |v: &[f64]| SideSpread {
        n: v.len(),
        median: v.first().copied(),
        median_ci: v.first().map(|m| (m * 0.99, m * 1.01)),
    };
    let mut all = points(SideName::Base, base, 1_700_000_000_000_000_000, HOSTILE[4]);
    all.extend(points(
        SideName::New,
        new,
        1_700_000_100_000_000_000,
        HOSTILE[5],
    ));
    WorkloadPlot {
        workload: HOSTILE[0].into(),
        params: HOSTILE[1].into(),
        variant: "v".into(),
        metric: HOSTILE[2].into(),
        unit: unit.into(),
        higher_is_better: false,
        points: all,
        base: spread(base),
        new: spread(new),
        latency: vec![
            LatencyCurves {
                series: HOSTILE[3].into(),
                base: curve(1000.0),
                new: curve(1100.0),
            },
            LatencyCurves {
                series: "wake_latency".into(),
                base: curve(20_000.0),
                new: curve(19_000.0),
            },
        ],
    }
}

fn page(report: &CompareReport, plots: &PlotData) -> String {
    render(&[PageComparison { report, plots }])
}

fn parse(html: &str) -> RcDom {
    html5ever::parse_document(RcDom::default(), Default::default())
        .from_utf8()
        .read_from(&mut html.as_bytes())
        .unwrap()
}

/// Every element of the tree, depth first.
fn elements(node: &Handle, out: &mut Vec<Handle>) {
    if let NodeData::Element { .. } = node.data {
        out.push(node.clone());
    }
    for child in node.children.borrow().iter() {
        elements(child, out);
    }
}

/// The text of the page as a reader sees it (without the style sheet).
fn text_of(node: &Handle, out: &mut String) {
    match &node.data {
        NodeData::Text { contents } => out.push_str(&contents.borrow()),
        NodeData::Element { name, .. } if &*name.local == "style" => return,
        _ => {}
    }
    for child in node.children.borrow().iter() {
        text_of(child, out);
    }
}

/// Each inline `<svg>...</svg>` of the page.
fn svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").expect("a closed svg") + start + 6;
        out.push(&rest[start..end]);
        rest = &rest[end..];
    }
    out
}

fn check_page(html: &str) {
    let dom = parse(html);
    assert_eq!(
        dom.errors.borrow().len(),
        0,
        "HTML5 parse errors: {:?}",
        dom.errors.borrow()
    );
    let mut all = Vec::new();
    elements(&dom.document, &mut all);
    for e in &all {
        let NodeData::Element { name, attrs, .. } = &e.data else {
            unreachable!()
        };
        assert_ne!(&*name.local, "script");
        assert_ne!(&*name.local, "img");
        for a in attrs.borrow().iter() {
            let attr = a.name.local.to_lowercase();
            assert!(
                !attr.starts_with("on"),
                "handler attribute {attr} on {}",
                name.local
            );
            assert!(
                !["src", "href", "xlink:href", "action"].contains(&attr.as_str()),
                "{attr}"
            );
        }
    }
    let lower = html.to_lowercase();
    assert!(!lower.contains("<script"));
    assert!(!lower.contains("url("));
    assert!(!lower.contains("@import"));
    let urls = lower.matches("://").count();
    let namespaces = lower.matches("http://www.w3.org/2000/svg").count();
    assert_eq!(urls, namespaces, "a URL other than the SVG namespace");
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    for svg in svgs(html) {
        roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("SVG is not XML ({e}): {svg}"));
    }
    assert!(
        !html.contains("NaN") && !html.contains("inf\""),
        "a non-finite number was drawn"
    );
}

#[test]
fn a_hostile_report_parses_clean_and_shows_its_text_as_text() {
    let report = hostile_report();
    let plots = PlotData {
        base_machines: Vec::new(),
        new_machines: Vec::new(),
        workloads: vec![plot(
            &values(100, 10.0, 1),
            &values(100, 11.0, 2),
            HOSTILE[3],
        )],
    };
    let html = page(&report, &plots);
    check_page(&html);
    let mut text = String::new();
    text_of(&parse(&html).document, &mut text);
    for hostile in HOSTILE {
        assert!(text.contains(hostile), "{hostile:?} is not shown as text");
    }
}

#[test]
fn two_labels_of_100_runs_with_two_latency_curves_stay_under_a_megabyte() {
    let report = fixture_report();
    let primary = report
        .rows
        .iter()
        .filter(|r| r.is_primary() && r.kind == RowKind::PerRun)
        .count();
    let plots = PlotData {
        base_machines: Vec::new(),
        new_machines: Vec::new(),
        workloads: vec![plot(&values(100, 10.0, 3), &values(100, 10.5, 4), "us")],
    };
    let html = page(&report, &plots);
    check_page(&html);
    assert!(primary >= 1);
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    // The verdict plot reads with 30 rows: one row each, no overlap.
    let mut many = fixture_report();
    let row = many.rows.iter().find(|r| r.is_primary()).unwrap().clone();
    many.rows = (0..30)
        .map(|i| {
            let mut r = row.clone();
            r.workload = format!("workload-{i}");
            r.shift_pct = Some(f64::from(i) - 15.0);
            r
        })
        .collect();
    let verdicts = kbench_report::html::plots::verdict_plot(&many);
    roxmltree::Document::parse(&verdicts).unwrap();
    assert_eq!(
        verdicts.matches("workload-").count(),
        30 * 3,
        "a label, a tooltip and the description's words per row"
    );
}

#[test]
fn degenerate_data_gives_a_message_or_a_small_sound_plot() {
    let report = fixture_report();
    let cases: Vec<(&str, WorkloadPlot)> = vec![
        ("one run a side", plot(&[5.0], &[6.0], "us")),
        ("one side empty", plot(&values(20, 3.0, 5), &[], "us")),
        ("zero spread", plot(&[7.0; 30], &[7.0; 30], "us")),
        ("zeros", plot(&[0.0; 10], &[0.0; 10], "ns")),
        (
            "non-finite",
            plot(
                &[f64::NAN, f64::INFINITY, 1.0],
                &[2.0, f64::NEG_INFINITY],
                "us",
            ),
        ),
        (
            "a range of 1e-14",
            plot(&[1.0, 1.0 + 1e-14], &[1.0 + 2e-14, 1.0], "us"),
        ),
    ];
    for (name, mut workload) in cases {
        if name == "zeros" {
            for c in &mut workload.latency {
                c.base = c.base.iter().map(|(q, _)| (*q, 0.0)).collect();
                c.new.clear();
            }
        }
        let plots = PlotData {
            base_machines: Vec::new(),
            new_machines: Vec::new(),
            workloads: vec![workload],
        };
        let html = page(&report, &plots);
        check_page(&html);
        for svg in svgs(&html) {
            assert!(svg.len() < 100_000, "{name}: an SVG of {} bytes", svg.len());
        }
        if name == "one side empty" || name == "zeros" {
            assert!(
                html.contains("class=\"noplot\""),
                "{name}: no message in place of the plot"
            );
        }
    }
}

/// The `class` and text of every `<text class="tick">` of an SVG.
fn tick_labels(svg: &str) -> Vec<String> {
    svg.split("class=\"tick\">")
        .skip(1)
        .map(|rest| rest.split('<').next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_narrow_range_labels_each_tick_apart() {
    let report = fixture_report();
    // Runs between 11.61 and 11.69: ticks 0.02 apart, at 11.6 and 11.7 to one decimal.
    let base: Vec<f64> = (0..8).map(|i| 11.61 + f64::from(i) * 0.005).collect();
    let new: Vec<f64> = base.iter().map(|v| v + 0.04).collect();
    let plot = plot(&base, &new, "us");
    for svg in [
        kbench_report::html::plots::run_order_plot(&report, &plot),
        kbench_report::html::plots::distribution_plot(&report, &plot),
    ] {
        let labels: Vec<String> = tick_labels(&svg)
            .into_iter()
            .filter(|l| l.starts_with("11."))
            .collect();
        assert!(labels.len() >= 3, "{labels:?}");
        let mut distinct = labels.clone();
        distinct.dedup();
        assert_eq!(distinct, labels, "two ticks share a label");
        assert!(labels.contains(&"11.64".to_string()), "{labels:?}");
    }
}

#[test]
fn each_run_keeps_its_sides_colour_and_its_class_is_an_outline() {
    let report = fixture_report();
    let plot = plot(&values(20, 100.0, 1), &values(20, 104.0, 2), "ns");
    let svg = kbench_report::html::plots::run_order_plot(&report, &plot);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let markers: Vec<_> = doc
        .descendants()
        .filter(|n| matches!(n.tag_name().name(), "circle" | "rect"))
        .filter_map(|n| n.attribute("class"))
        .filter(|c| *c != "outlier")
        .collect();
    assert_eq!(markers.len(), 40, "{markers:?}");
    for class in &markers {
        let words: Vec<&str> = class.split(' ').collect();
        // Filled by its side (`.run.base`, `.run.new`); no fill class paints it over.
        assert!(words.contains(&"run"), "{class}");
        assert!(words.contains(&"base") ^ words.contains(&"new"), "{class}");
        assert!(!words.iter().any(|w| w.starts_with('f')), "{class}");
        // Each side's runs ran on one class here: one outline each, told apart.
        assert!(words.iter().any(|w| *w == "o1" || *w == "o2"), "{class}");
    }
    let page = page(
        &report,
        &PlotData {
            workloads: vec![plot],
            ..PlotData::default()
        },
    );
    assert!(page.contains("svg .run.base { fill: var(--base); }"));
    assert!(page.contains("svg .run.new { fill: var(--new); }"));
    assert!(
        page.contains("<span class=\"key outline o1\">"),
        "the legend"
    );
}
