//! Files given to `kbench import`, `kbench exec`'s output reader and `kbench stat`.
use kbench_import::export::{parse_export, EXPORT_VERSION};
use kbench_import::{self as import, ImportError, Imported};

/// The path the importers are given: it only appears in their error messages.
const PATH: &str = "fuzz";

type Parse = fn(&str, &str) -> Result<Imported, ImportError>;

/// One reader's `parse`, and what any import it accepts must satisfy.
fn import_with(parse: Parse, data: &[u8]) {
    let Some(text) = crate::strict_text(data) else {
        return;
    };
    match parse(PATH, text) {
        Ok(imported) => check_imported(&imported, text),
        Err(error) => check_error(&error, text),
    }
}

/// What the store writes must be usable: finite figures, one primary per run, and
/// lines that point into the file.
fn check_imported(imported: &Imported, text: &str) {
    assert!(!imported.source_format.is_empty());
    assert!(
        !imported.runs.is_empty() || !imported.summaries.is_empty(),
        "an import with nothing in it"
    );
    let last_line = line_count(text);
    for run in &imported.runs {
        for value in &run.values {
            assert!(value.value.is_finite(), "{}: {}", value.name, value.value);
        }
        let primaries = run.values.iter().filter(|v| v.is_primary()).count();
        assert_eq!(primaries, 1, "primary metrics of run at line {}", run.line);
        assert!((1..=last_line).contains(&run.line), "run line {}", run.line);
    }
    for summary in &imported.summaries {
        assert!(summary.mean.is_finite(), "{}: mean", summary.metric);
        assert!(
            summary.std_error.is_finite(),
            "{}: std error",
            summary.metric
        );
        assert!((1..=last_line).contains(&summary.line), "summary line");
    }
}

/// An error names the file it was given and a line of it (or the line after the last,
/// for a file that ends too early).
fn check_error(error: &ImportError, text: &str) {
    assert_eq!(error.path, PATH);
    assert!(
        (1..=line_count(text) + 1).contains(&error.line),
        "error line {} of {}: {}",
        error.line,
        line_count(text),
        error.message
    );
}

/// Lines as `str::lines` counts them, and at least 1 (an empty file's errors point at
/// line 1).
fn line_count(text: &str) -> usize {
    text.lines().count().max(1)
}

/// `perf bench` text output.
pub fn import_perf_bench(data: &[u8]) {
    import_with(import::perf_bench::parse, data);
}

/// `perf stat -r N` summaries.
pub fn import_perf_stat(data: &[u8]) {
    import_with(import::perf_stat::parse, data);
}

/// hyperfine's JSON export.
pub fn import_hyperfine(data: &[u8]) {
    import_with(import::hyperfine::parse, data);
}

/// hackbench's output.
pub fn import_hackbench(data: &[u8]) {
    import_with(import::hackbench::parse, data);
}

/// cyclictest's output.
pub fn import_cyclictest(data: &[u8]) {
    import_with(import::cyclictest::parse, data);
}

/// kbench's own JSON run records, one per line.
pub fn import_run_record(data: &[u8]) {
    import_with(import::run_record::parse, data);
}

/// `kbench import FILE` for a file that is not an export: the format is detected.
pub fn import_auto(data: &[u8]) {
    import_with(import::parse_file_text, data);
}

/// A command's output read for its figures (`kbench exec`, `kbench ab`).
pub fn output_figures(data: &[u8]) {
    let Some(text) = crate::strict_text(data) else {
        return;
    };
    if let Ok(figures) = import::read_output_figures(text) {
        let primaries = figures.values.iter().filter(|v| v.is_primary()).count();
        assert_eq!(primaries, 1, "{}: primary figures", figures.source_format);
        for value in &figures.values {
            assert!(value.value.is_finite(), "{}: {}", value.name, value.value);
        }
    }
}

/// `kbench import` of a kbench JSON export: what it accepts is of the current version
/// and reads back the same after being written again.
pub fn export_json(data: &[u8]) {
    let Some(text) = crate::strict_text(data) else {
        return;
    };
    let Some(Ok(export)) = parse_export(text) else {
        return;
    };
    assert_eq!(export.version, EXPORT_VERSION, "an export not upgraded");
    let written = serde_json::to_string(&export).expect("an export serialises");
    match parse_export(&written) {
        Some(Ok(again)) => assert_eq!(again, export, "an export changed by a round trip"),
        other => panic!("an export written again does not read back: {other:?}"),
    }
}

/// The files of numbers `kbench stat` compares.
pub fn stat_numbers(data: &[u8]) {
    let Some(text) = crate::strict_text(data) else {
        return;
    };
    match kbench_stats::parse_numbers(text) {
        Ok(values) => {
            assert!(!values.is_empty());
            assert!(values.iter().all(|v| v.is_finite()), "{values:?}");
        }
        Err(error) => {
            if let Some(line) = error.line() {
                assert!((1..=line_count(text)).contains(&line), "line {line}");
            }
        }
    }
}
