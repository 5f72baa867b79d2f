//! Reader of `perf stat -r N` summaries (the human-readable default output).
//!
//! Format, as observed with Debian's perf 6.1 (fixtures in
//! `tests/fixtures/import/perf_stat_*.txt`):
//!
//! ```text
//!  Performance counter stats for 'perf bench sched pipe -l 2000' (5 runs):
//!
//!              18.79 msec task-clock                #    0.893 CPUs utilized    ( +-  0.92% )
//!               4004      context-switches          #  212.918 K/sec            ( +-  0.02% )
//!    <not supported>      cycles
//!
//!            0.02105 +- 0.00104 seconds time elapsed  ( +-  4.92% )
//! ```
//!
//! - The header gives the command (the summaries' workload) and `n`.
//! - Each counter row gives a mean and `( +- X% )`, the standard error of the mean as a
//!   percentage of the mean; perf leaves it out when it is zero (e.g. a mean of 0), so a
//!   missing one reads as 0. `<not supported>` / `<not counted>` rows are skipped.
//! - The elapsed line gives the mean and its absolute standard error in seconds.
//! - Numbers follow the locale perf ran in: `100,010` (en_US), `100.003` and `308,59`
//!   (de_DE). The decimal separator is found from the `( +- X% )` fields, which perf
//!   always prints with two decimals, and every other separator is dropped.
//!
//! Several blocks in one file (a loop appending) are all read. Lines outside the blocks
//! are the measured command's own output (perf bench text, make logs, anything) and perf's
//! hints; they are not read, since they need not follow any format.
//!
//! Not accepted, with a message saying why: the single-run form (no `-r N`), which has no
//! standard error, and CSV output (`-x`), which records neither the command nor `n`.
use super::{ImportError, Imported, ImportedSummary};
use kbench_record::{Direction, MetricValue, Role};

/// The `source_format` this reader reports.
pub const FORMAT_NAME: &str = "perf-stat";

/// The metric name of the `seconds time elapsed` line.
pub const ELAPSED_METRIC: &str = "time_elapsed_sec";

const HEADER_PREFIX: &str = "Performance counter stats for ";
const ELAPSED_SUFFIX: &str = "seconds time elapsed";

/// Whether `text` holds a perf stat summary header or perf stat CSV rows.
pub fn looks_like(text: &str) -> bool {
    text.lines()
        .any(|l| l.trim_start().starts_with(HEADER_PREFIX) || is_csv_row(l))
}

/// Reads every `perf stat -r N` block of a file.
pub fn parse(path: &str, text: &str) -> Result<Imported, ImportError> {
    let summaries: Vec<ImportedSummary> = read_blocks(path, text, SingleRuns::Rejected)?
        .into_iter()
        .map(|s| s.summary)
        .collect();
    if summaries.is_empty() {
        return Err(ImportError::new(path, 1, "no perf stat summary found"));
    }
    Ok(Imported {
        source_format: FORMAT_NAME.into(),
        runs: Vec::new(),
        summaries,
    })
}

/// The figures of one perf stat invocation, read from its output (for `kbench exec`):
/// the counters of its one block, single-run or `-r N` (then the means), the elapsed
/// time primary.
pub fn figures(path: &str, text: &str) -> Result<Vec<MetricValue>, ImportError> {
    let summaries = read_blocks(path, text, SingleRuns::Accepted)?;
    let Some(first) = summaries.first() else {
        return Err(ImportError::new(path, 1, "no perf stat counters found"));
    };
    if let Some(other) = summaries.iter().find(|s| s.block_line != first.block_line) {
        return Err(ImportError::new(
            path,
            other.block_line,
            "a second perf stat block where one run's figures were expected",
        ));
    }
    let mut values: Vec<MetricValue> = summaries
        .iter()
        .map(|s| {
            let direction = Direction::from_higher_is_better(s.summary.higher_is_better);
            let role = if s.summary.primary {
                Role::Primary
            } else {
                Role::Secondary
            };
            let name = s.summary.metric.as_str();
            MetricValue::new(
                name,
                s.summary.mean,
                s.summary.unit.as_str(),
                direction,
                role,
            )
        })
        .collect();
    values.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(values)
}

/// Whether a block without `(N runs)` in its header is read (as one run, without a
/// standard error) or is an error.
#[derive(Debug, Clone, Copy, PartialEq)]
enum SingleRuns {
    Rejected,
    Accepted,
}

/// A summary with the header line of its block.
#[derive(Debug)]
struct BlockSummary {
    summary: ImportedSummary,
    block_line: usize,
}

/// Every block's rows, in file order.
fn read_blocks(
    path: &str,
    text: &str,
    single_runs: SingleRuns,
) -> Result<Vec<BlockSummary>, ImportError> {
    let decimal = detect_decimal_separator(text);
    let mut summaries = Vec::new();
    let mut block: Option<Block> = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let at = |message: String| ImportError::new(path, number, message);
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix(HEADER_PREFIX) {
            if let Some(open) = &block {
                return Err(at(open.unfinished_message()));
            }
            block = Some(parse_header(rest, number, single_runs).map_err(at)?);
            continue;
        }
        let Some(open) = block.as_mut() else {
            if is_csv_row(raw) {
                return Err(at(CSV_MESSAGE.into()));
            }
            continue; // the measured command's own output
        };
        match parse_block_line(line, decimal, open.single_run).map_err(at)? {
            BlockLine::Skip => {}
            BlockLine::Counter(row) => summaries.push(open.summary(row, number)),
            BlockLine::Elapsed { mean, std_error } => {
                let row = Row {
                    metric: ELAPSED_METRIC.into(),
                    unit: "s".into(),
                    mean,
                    std_error,
                };
                summaries.push(open.summary(row, number));
                block = None;
            }
        }
    }
    if let Some(open) = block {
        return Err(ImportError::new(
            path,
            open.header_line,
            open.unfinished_message(),
        ));
    }
    Ok(summaries)
}

const CSV_MESSAGE: &str = "perf stat CSV output (-x) records neither the command nor the \
run count; import the default (human-readable) output of `perf stat -r N` instead";

/// One open `Performance counter stats` block.
#[derive(Debug)]
struct Block {
    workload: String,
    n: u64,
    header_line: usize,
    /// A block without `(N runs)`: its rows have no standard error.
    single_run: bool,
}

impl Block {
    fn summary(&self, row: Row, line: usize) -> BlockSummary {
        let primary = row.metric == ELAPSED_METRIC;
        let summary = ImportedSummary {
            workload: self.workload.clone(),
            metric: row.metric,
            unit: row.unit,
            mean: row.mean,
            std_error: row.std_error,
            n: self.n,
            line,
            // Counts and times of one fixed command: fewer is better; the elapsed time
            // is what perf stat prints last and what a reader compares first.
            higher_is_better: false,
            primary,
        };
        BlockSummary {
            summary,
            block_line: self.header_line,
        }
    }

    fn unfinished_message(&self) -> String {
        format!(
            "the perf stat block starting on line {} has no `seconds time elapsed` line",
            self.header_line
        )
    }
}

/// A counter's mean and standard error.
#[derive(Debug, PartialEq)]
struct Row {
    metric: String,
    unit: String,
    mean: f64,
    std_error: f64,
}

#[derive(Debug, PartialEq)]
enum BlockLine {
    Skip,
    Counter(Row),
    Elapsed { mean: f64, std_error: f64 },
}

/// `'CMD' (N runs):` → the command without its quotes, and N; `'CMD':` (a single run)
/// when `single_runs` accepts it.
fn parse_header(rest: &str, line: usize, single_runs: SingleRuns) -> Result<Block, String> {
    let rest = rest.trim_end();
    let Some(rest) = rest.strip_suffix(':') else {
        return Err(format!("malformed perf stat header: {rest:?}"));
    };
    let (target, n, single_run) = match rest
        .strip_suffix(" runs)")
        .and_then(|r| r.rsplit_once(" ("))
    {
        Some((target, runs)) => {
            let n: u64 = runs
                .parse()
                .map_err(|_| format!("the run count {runs:?} is not a whole number"))?;
            (target, n, false)
        }
        None if single_runs == SingleRuns::Accepted => (rest, 1, true),
        None => {
            return Err(
                "perf stat output of a single run (no `-r N`) has no standard error; \
                    rerun with `perf stat -r N`, N >= 2"
                    .into(),
            )
        }
    };
    // `'system wide'`, `process id '42'`: only a fully quoted target loses its quotes.
    let workload = target
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .unwrap_or(target);
    Ok(Block {
        workload: workload.into(),
        n,
        header_line: line,
        single_run,
    })
}

/// Reads one trimmed line inside a block.
fn parse_block_line(line: &str, decimal: char, single_run: bool) -> Result<BlockLine, String> {
    // Blank lines, continuation metrics (`# 0.85 insn per cycle`), and unsupported events.
    if line.is_empty() || line.starts_with('#') || line.starts_with("<not ") {
        return Ok(BlockLine::Skip);
    }
    if let Some(numbers) = line.find(ELAPSED_SUFFIX).map(|at| line[..at].trim_end()) {
        return parse_elapsed(numbers, decimal, single_run);
    }
    parse_counter(line, decimal).map(BlockLine::Counter)
}

/// `0.02105 +- 0.00104` (the text before `seconds time elapsed`), or `0.02105` alone
/// in a single run's block.
fn parse_elapsed(numbers: &str, decimal: char, single_run: bool) -> Result<BlockLine, String> {
    let words: Vec<&str> = numbers.split_ascii_whitespace().collect();
    match words.as_slice() {
        [mean] if single_run => Ok(BlockLine::Elapsed {
            mean: parse_locale_number(mean, decimal)?,
            std_error: 0.0,
        }),
        [mean, "+-", error] => Ok(BlockLine::Elapsed {
            mean: parse_locale_number(mean, decimal)?,
            std_error: parse_locale_number(error, decimal)?,
        }),
        _ => Err(format!(
            "expected `MEAN +- ERROR seconds time elapsed`, found {numbers:?}"
        )),
    }
}

/// `VALUE [UNIT] EVENT  [# METRIC]  [( +- X% )]  [(RUNNING%)]`.
fn parse_counter(line: &str, decimal: char) -> Result<Row, String> {
    let (fields, noise) = match line.find("( +-") {
        Some(at) => (&line[..at], Some(&line[at + "( +-".len()..])),
        None => (line, None),
    };
    let fields = fields.split('#').next().unwrap_or_default();
    // A multiplexed event ends in `(66.67%)`, the share of time it was counted.
    let words: Vec<&str> = fields
        .split_ascii_whitespace()
        .filter(|w| !w.starts_with('('))
        .collect();
    let (value, unit, event) = match words.as_slice() {
        [value, event] => (*value, "", *event),
        [value, unit, event] => (*value, *unit, *event),
        _ => return Err(format!("unrecognized line in perf stat output: {line:?}")),
    };
    let mean = parse_locale_number(value, decimal)?;
    let relative_error = match noise {
        Some(noise) => parse_noise_percent(noise, decimal)?,
        None => 0.0,
    };
    let std_error = (mean * relative_error / 100.0).abs();
    // Two finite numbers of 300 digits multiply to infinity, which the store would keep
    // and the export could not write.
    if !std_error.is_finite() {
        return Err(format!(
            "the standard error of {value} (+- {relative_error}%) is out of range: {line:?}"
        ));
    }
    Ok(Row {
        metric: event.into(),
        unit: unit.into(),
        mean,
        std_error,
    })
}

/// The text after `( +-`, i.e. `  0.92% )`.
fn parse_noise_percent(noise: &str, decimal: char) -> Result<f64, String> {
    let percent = noise
        .split_once('%')
        .map(|(number, _)| number.trim())
        .ok_or_else(|| format!("malformed `( +- X% )` field: {:?}", noise.trim()))?;
    parse_locale_number(percent, decimal)
}

/// The decimal separator of the file: the character before the last two digits of the
/// first `( +- X.XX% )` field (perf prints those with two decimals), else `.`.
fn detect_decimal_separator(text: &str) -> char {
    text.lines()
        .filter_map(|l| {
            let after = &l[l.find("( +-")? + "( +-".len()..];
            let percent = after.split_once('%')?.0.trim();
            let chars: Vec<char> = percent.chars().collect();
            let separator = *chars.len().checked_sub(3).and_then(|i| chars.get(i))?;
            let two_digits = chars[chars.len() - 2..].iter().all(char::is_ascii_digit);
            (two_digits && !separator.is_ascii_digit()).then_some(separator)
        })
        .next()
        .unwrap_or('.')
}

/// Parses `1,234.5` / `1.234,5` / `1 234,5` given the decimal separator: any other
/// non-digit between digits is a thousands separator.
fn parse_locale_number(word: &str, decimal: char) -> Result<f64, String> {
    let mut plain = String::with_capacity(word.len());
    for (i, c) in word.chars().enumerate() {
        match c {
            '0'..='9' => plain.push(c),
            '-' | '+' if i == 0 => plain.push(c),
            c if c == decimal => plain.push('.'),
            ',' | '.' | '\'' | '\u{2019}' | '\u{a0}' | '\u{202f}' => {}
            _ => return Err(format!("{word:?} is not a number")),
        }
    }
    plain
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{word:?} is not a number"))
}

/// A row of `perf stat -x ,`: `VALUE,UNIT,EVENT,VARIANCE,RUNTIME,PERCENT[,METRIC,UNIT]`.
fn is_csv_row(line: &str) -> bool {
    let fields: Vec<&str> = line.trim().split(',').collect();
    fields.len() >= 6
        && !fields[2].is_empty()
        && fields[2].starts_with(|c: char| c.is_ascii_alphabetic())
        && (fields[0].starts_with(|c: char| c.is_ascii_digit()) || fields[0].starts_with("<not "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_numbers() {
        assert_eq!(parse_locale_number("100,010", '.'), Ok(100010.0));
        assert_eq!(parse_locale_number("100.003", ','), Ok(100003.0));
        assert_eq!(parse_locale_number("308,59", ','), Ok(308.59));
        assert_eq!(parse_locale_number("1\u{202f}234,5", ','), Ok(1234.5));
        assert!(parse_locale_number("12x", '.').is_err());
        assert!(parse_locale_number("", '.').is_err());
    }

    #[test]
    fn a_standard_error_out_of_range_is_an_error() {
        // fuzz/regressions/import_perf_stat/std-error-overflows
        let big = "9".repeat(308);
        let line = format!("{big} context-switches ( +- {big}.00% )");
        let err = parse_counter(&line, '.').unwrap_err();
        assert!(err.contains("out of range"), "{err}");
    }

    #[test]
    fn counter_rows() {
        let row = parse_counter(
            "18.79 msec task-clock   #    0.893 CPUs utilized   ( +-  0.92% )",
            '.',
        )
        .unwrap();
        assert_eq!(
            (row.metric.as_str(), row.unit.as_str()),
            ("task-clock", "msec")
        );
        assert!((row.std_error - 18.79 * 0.0092).abs() < 1e-12);
        let row = parse_counter("0      context-switches", '.').unwrap();
        assert_eq!((row.mean, row.std_error, row.unit.as_str()), (0.0, 0.0, ""));
        let row = parse_counter("1,234  cycles  # 1.0 GHz  ( +- 1.00% )  (66.67%)", '.').unwrap();
        assert_eq!(row.mean, 1234.0);
    }

    #[test]
    fn decimal_detection() {
        assert_eq!(detect_decimal_separator("x ( +-  4,20% )"), ',');
        assert_eq!(detect_decimal_separator("x ( +- 14.28% )"), '.');
        assert_eq!(detect_decimal_separator("nothing"), '.');
    }
}
