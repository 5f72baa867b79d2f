//! Every reader of outside text kbench imports, each a pure function returning typed
//! records. They know nothing about the database: the store writes what they return in
//! one transaction, so a malformed file imports nothing; kbench-fuzz fuzzes them here.
//!
//! - Other tools' output into plain [`Imported`] data: [`parse_file_text`] detects the
//!   format and hands the file to one reader; each reader is one module with a
//!   `looks_like` test and a `parse` function. The same table reads a command's output
//!   for `kbench exec` and `kbench ab` ([`read_output_figures`]).
//! - [`trace`]: a kernel trace's wakes into run records (`kbench import-trace`).
//! - [`lava`]: a LAVA job's log into console text and boots (`kbench import-console`).
//! - [`export`]: kbench's own JSON export, checked and upgraded (`kbench import`).
//!
//! [`fnv1a`] fingerprints an imported file, so that it is not imported twice.
use kbench_record::MetricValue;

pub use kbench_record::imported::{Imported, ImportedRun, ImportedSummary};

pub mod cyclictest;
pub mod export;
pub mod hackbench;
pub mod hyperfine;
pub mod lava;
pub mod perf_bench;
pub mod perf_stat;
pub mod run_record;
pub mod trace;

/// The fingerprint of an imported file's content, so that the same file is not
/// imported twice into one label.
pub use kbench_record::fnv1a;

/// A file that no reader accepts, or a reader that found a malformed line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}:{line}: {message}")]
pub struct ImportError {
    pub path: String,
    pub line: usize,
    pub message: String,
}

impl ImportError {
    /// An error at a 1-based line of the file at `path`.
    pub fn new(path: &str, line: usize, message: impl Into<String>) -> ImportError {
        ImportError {
            path: path.into(),
            line,
            message: message.into(),
        }
    }
}

/// A reader's way to the figures of one run of its tool: path (for errors) and text.
type FiguresOf = fn(&str, &str) -> Result<Vec<MetricValue>, ImportError>;

/// One format reader: a cheap test of whether a file is its format, and its parser.
struct Reader {
    name: &'static str,
    looks_like: fn(&str) -> bool,
    parse: fn(&str, &str) -> Result<Imported, ImportError>,
    /// The figures of one run of the tool, read from its output, when they are not
    /// simply the one run `parse` returns (perf stat: a single run is no summary).
    figures: Option<FiguresOf>,
}

/// The readers, tried in order; the first whose `looks_like` accepts the file parses it,
/// and its errors are final (a malformed file of a known format is not retried as another).
///
/// Order matters: a `perf stat -r N -- perf bench ...` capture contains perf bench text,
/// so perf stat comes before perf bench. The JSON formats come first, kbench's run
/// records before hyperfine (whose test only asks for a `"results"` somewhere).
const READERS: &[Reader] = &[
    Reader {
        name: run_record::FORMAT_NAME,
        looks_like: run_record::looks_like,
        parse: run_record::parse,
        figures: None,
    },
    Reader {
        name: hyperfine::FORMAT_NAME,
        looks_like: hyperfine::looks_like,
        parse: hyperfine::parse,
        figures: None,
    },
    Reader {
        name: perf_stat::FORMAT_NAME,
        looks_like: perf_stat::looks_like,
        parse: perf_stat::parse,
        figures: Some(perf_stat::figures),
    },
    Reader {
        name: perf_bench::FORMAT_NAME,
        looks_like: perf_bench::looks_like,
        parse: perf_bench::parse,
        figures: None,
    },
    Reader {
        name: hackbench::FORMAT_NAME,
        looks_like: hackbench::looks_like,
        parse: hackbench::parse,
        figures: None,
    },
    Reader {
        name: cyclictest::FORMAT_NAME,
        looks_like: cyclictest::looks_like,
        parse: cyclictest::parse,
        figures: None,
    },
];

/// Reads a file of another tool's output, detecting its format.
///
/// Detection, in order:
/// 1. `kbench-record`: the first non-blank line is a JSON object with `workload` and
///    `metrics` (`kbench bench --json`);
/// 2. `hyperfine`: the text starts with `{` and mentions `"results"`;
/// 3. `perf-stat`: a line starts with `Performance counter stats for` (or is a
///    `perf stat -x` CSV row, which is rejected with an explanation);
/// 4. `perf-bench`: a `# Running ` header or `Total time:` line, or a first non-blank
///    line that is a bare `<sec>.<msec>` (simple format);
/// 5. `hackbench`: a `Running in ... mode with` line or a `Time: <sec>` line;
/// 6. `cyclictest`: a `T: <n> (<tid>) ...` thread line.
///
/// Anything else is an [`ImportError`] "not a known format" naming the formats tried.
/// `path` is only used in error messages. A leading UTF-8 byte order mark is ignored.
pub fn parse_file_text(path: &str, text: &str) -> Result<Imported, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match reader_of(text) {
        Some(reader) => (reader.parse)(path, text),
        None => Err(unknown_format(path, text)),
    }
}

fn reader_of(text: &str) -> Option<&'static Reader> {
    READERS.iter().find(|r| (r.looks_like)(text))
}

/// The figures of one run of a tool, read from what it printed.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputFigures {
    /// The reader that understood the output (see [`Imported::source_format`]).
    pub source_format: &'static str,
    /// As the reader declares them: exactly one primary.
    pub values: Vec<MetricValue>,
}

/// Why a command's output gave no figures.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OutputError {
    #[error("not the output of a known tool (tried: {tried})")]
    NotRecognised { tried: String },
    #[error("looks like {format} output but cannot be read: line {line}: {message}")]
    Unreadable {
        format: &'static str,
        line: usize,
        message: String,
    },
}

/// Reads the figures of one command run from its output, with the readers of
/// [`parse_file_text`]: output holding several results (`perf bench sched all`, a shell
/// loop) is [`OutputError::Unreadable`], since which of them is the run's is unknown.
pub fn read_output_figures(text: &str) -> Result<OutputFigures, OutputError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(reader) = reader_of(text) else {
        return Err(OutputError::NotRecognised {
            tried: reader_names().join(", "),
        });
    };
    let values = match reader.figures {
        Some(figures) => figures(OUTPUT_PATH, text),
        None => (reader.parse)(OUTPUT_PATH, text).and_then(one_run_figures),
    };
    values
        .map(|values| OutputFigures {
            source_format: reader.name,
            values,
        })
        .map_err(|e| OutputError::Unreadable {
            format: reader.name,
            line: e.line,
            message: e.message,
        })
}

/// The path readers are given for a command's output (it only appears in their errors,
/// which [`read_output_figures`] reports by line).
const OUTPUT_PATH: &str = "output";

/// The values of the only run of `imported`.
fn one_run_figures(imported: Imported) -> Result<Vec<MetricValue>, ImportError> {
    match <[ImportedRun; 1]>::try_from(imported.runs) {
        Ok([run]) => Ok(run.values),
        Err(runs) => Err(ImportError::new(
            OUTPUT_PATH,
            runs.get(1).map_or(1, |r| r.line),
            format!(
                "{} results where one run's figures were expected",
                runs.len()
            ),
        )),
    }
}

fn reader_names() -> Vec<&'static str> {
    READERS.iter().map(|r| r.name).collect()
}

/// serde_json's message without the ` at line L column C` it appends: readers put the
/// line in their error's own field.
fn json_message(error: &serde_json::Error) -> String {
    let full = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    full.strip_suffix(&position).unwrap_or(&full).to_string()
}

/// The error for a file no reader accepts, pointing at its first non-blank line.
fn unknown_format(path: &str, text: &str) -> ImportError {
    let tried = reader_names();
    let first = text.lines().position(|l| !l.trim().is_empty());
    let (line, what) = match first {
        Some(index) => (index + 1, "not a known format"),
        None => (1, "empty file: not a known format"),
    };
    ImportError::new(path, line, format!("{what} (tried: {})", tried.join(", ")))
}
