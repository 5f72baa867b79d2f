//! Golden tests of the compare layouts: reports (JSON of real `kbench compare` runs,
//! their verdicts edited to show every kind) rendered byte for byte as the files
//! beside them. `KBENCH_BLESS=1 cargo test -p kbench-report --test compare_golden`
//! rewrites the expected files after a deliberate change; review the diff.
use kbench_report::compare::{CompareReport, Layout};
use kbench_report::format::by_name;
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The reports of a fixture: one report, or `{"base", "comparisons": [...]}`.
fn reports(name: &str) -> Vec<CompareReport> {
    let text = std::fs::read_to_string(golden_dir().join(name)).expect("fixture");
    let value: serde_json::Value = serde_json::from_str(&text).expect("fixture JSON");
    match value.get("comparisons") {
        Some(list) => serde_json::from_value(list.clone()).expect("reports"),
        None => vec![serde_json::from_value(value).expect("report")],
    }
}

fn check(fixture: &str, format: &str, layout: Layout, expected: &str) {
    let text = by_name(format)
        .expect("format")
        .render(&reports(fixture), layout);
    let path = golden_dir().join(expected);
    if std::env::var_os("KBENCH_BLESS").is_some() {
        std::fs::write(&path, &text).expect("bless");
        return;
    }
    let want = std::fs::read_to_string(&path).expect("golden file");
    assert_eq!(
        text, want,
        "{format} of {fixture} differs from {expected}; KBENCH_BLESS=1 rewrites it"
    );
}

fn widest_line(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn one_label_text_fits_one_screen() {
    check("single.json", "text", Layout::Compact, "single.txt");
    let text = by_name("text")
        .unwrap()
        .render(&reports("single.json"), Layout::Compact);
    assert!(widest_line(&text) <= 80, "{text}");
    assert!(text.lines().count() <= 50, "{text}");
}

#[test]
fn three_kernels_text_has_a_column_per_label() {
    check(
        "three-kernels.json",
        "text",
        Layout::Compact,
        "three-kernels.txt",
    );
    let text = by_name("text")
        .unwrap()
        .render(&reports("three-kernels.json"), Layout::Compact);
    assert!(widest_line(&text) <= 80, "{text}");
}

#[test]
fn markdown_gets_the_same_table() {
    check("single.json", "markdown", Layout::Compact, "single.md");
    check(
        "three-kernels.json",
        "markdown",
        Layout::Compact,
        "three-kernels.md",
    );
}

#[test]
fn full_text_keeps_every_row() {
    let reports = reports("single.json");
    let text = by_name("text").unwrap().render(&reports, Layout::Full);
    assert!(widest_line(&text) <= 80);
    // One block per row, each naming its metric.
    for row in &reports[0].rows {
        assert!(text.contains(&row.metric), "{} missing", row.metric);
    }
}

#[test]
fn an_inconclusive_row_without_a_noise_estimate_says_what_would_give_one() {
    let mut reports = reports("single.json");
    let row = reports[0]
        .rows
        .iter_mut()
        .find(|r| r.is_primary() && r.verdict == kbench_stats::Verdict::Inconclusive)
        .expect("an inconclusive primary row");
    row.units_needed = None;
    row.settle = Some(kbench_stats::UnitsToSettle::unknown());
    let text = by_name("text").unwrap().render(&reports, Layout::Compact);
    assert!(widest_line(&text) <= 80, "{text}");
    assert!(text.contains("inconclusive ≈?"), "{text}");
    assert!(
        text.contains("(sessions per side unknown: no noise estimate)"),
        "{text}"
    );
    assert!(
        text.contains("is no estimate of the noise (2 sessions a side, or"),
        "{text}"
    );
    let csv = by_name("csv").unwrap().render(&reports, Layout::Compact);
    assert!(csv.lines().next().unwrap().ends_with(",settle"));
    assert!(
        csv.contains(",sessions per side unknown: no noise estimate\n"),
        "{csv}"
    );
}

#[test]
fn csv_and_json_have_every_label() {
    let reports = reports("three-kernels.json");
    let csv = by_name("csv").unwrap().render(&reports, Layout::Compact);
    let rows: usize = reports.iter().map(|r| r.rows.len()).sum();
    assert_eq!(csv.lines().count(), rows + 1);
    let json: serde_json::Value =
        serde_json::from_str(&by_name("json").unwrap().render(&reports, Layout::Compact)).unwrap();
    assert_eq!(json["comparisons"].as_array().map(Vec::len), Some(2));
    assert_eq!(json["base"], "v6.1-ptr");
}

#[test]
fn text_fits_80_columns_whatever_the_labels() {
    let template = reports("three-kernels.json");
    for labels in 1..=5 {
        for length in [3, 12, 24, 40] {
            let mut set = Vec::new();
            for i in 0..labels {
                let mut r = template[i % template.len()].clone();
                r.base.label = format!("{:b<length$}", "base");
                r.new.label = format!("{i}{:n<length$}", "new");
                set.push(r);
            }
            for layout in [Layout::Compact, Layout::Full] {
                let text = by_name("text").unwrap().render(&set, layout);
                assert!(
                    widest_line(&text) <= 80,
                    "{labels} labels of {length}:\n{text}"
                );
                for r in &set {
                    let head: String = r.new.label.chars().take(4).collect();
                    assert!(text.contains(&head), "{text}");
                }
            }
        }
    }
}

/// The static-call comparison of the fixture, with `n` more differing options of
/// long names and long string values.
fn with_many_config_differences(n: usize) -> Vec<CompareReport> {
    use kbench_report::compare::ConfigDifferences;
    use kbench_sys::kconfig::{ConfigDifference, ConfigValue};
    let mut reports = reports("three-kernels.json");
    let ConfigDifferences::Compared(c) = &mut reports[1].config_differences else {
        panic!("the fixture compares configs");
    };
    for i in 0..n {
        c.differences.push(ConfigDifference {
            option: format!("CONFIG_SND_SOC_INTEL_SKYLAKE_HDAUDIO_CODEC_NUMBER_{i}"),
            base: ConfigValue::Str("x".repeat(90)),
            new: ConfigValue::Module,
        });
    }
    c.only_base += n;
    reports
}

#[test]
fn full_text_lists_every_differing_option_in_80_columns() {
    let reports = with_many_config_differences(400);
    let text = by_name("text").unwrap().render(&reports, Layout::Full);
    assert!(widest_line(&text) <= 80, "{text}");
    let section = text
        .split("Kernel config:\n")
        .nth(2)
        .expect("a kernel config section per report");
    let words = section.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.starts_with("406 options differ: 2 changed, 402 set in v6.1-ptr only, 2 set in v6.1-static-call only; sha256 "),
        "{section}"
    );
    for i in [0, 199, 399] {
        // A value too long for the line goes on the next, split where it must be.
        let option = format!("  CONFIG_SND_SOC_INTEL_SKYLAKE_HDAUDIO_CODEC_NUMBER_{i}\n    \"xxx");
        assert!(section.contains(&option), "{option} missing:\n{section}");
    }
    assert!(section.contains("  CONFIG_HZ 250 -> 1000\n"), "{section}");
    // The first report's configs differ in one option, said in full too.
    assert!(
        text.contains("  CONFIG_LOCALVERSION \"\" -> \"+rtconst\"\n"),
        "{text}"
    );
}

#[test]
fn the_one_screen_names_three_options_whatever_the_count() {
    for layout_format in ["text", "markdown"] {
        let reports = with_many_config_differences(400);
        let text = by_name(layout_format)
            .unwrap()
            .render(&reports, Layout::Compact);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains("406 options differ"), "{text}");
        assert!(text.contains("--full lists all"), "{text}");
        assert!(!text.contains("CODEC_NUMBER_0"), "{text}");
    }
    let markdown = by_name("markdown")
        .unwrap()
        .render(&with_many_config_differences(2), Layout::Full);
    assert!(
        markdown.contains("- `CONFIG_HZ`: `250` → `1000`\n"),
        "{markdown}"
    );
}
