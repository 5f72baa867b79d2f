//! A command's own figures: what it printed (perf bench, perf stat, hackbench,
//! cyclictest, kbench's records), read with the import readers and stored as the run's
//! metrics beside what kbench measures from outside (wall, user and sys time, max RSS).
use crate::capture::{CapturedOutput, CAPTURE_LIMIT_BYTES};
use crate::child::CommandRun;
use crate::RunnerError;
use kbench_import::{read_output_figures, OutputError, OutputFigures};
use kbench_record::Value;
use kbench_record::{Direction, MetricValue};

/// How a command's primary figure is chosen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FigureOptions {
    /// The primary metric, by name: a figure of the output or one measured from
    /// outside; `None` for what the output's reader declares, else wall_sec.
    pub metric: Option<String>,
    /// Do not read the command's output: wall_sec is the primary metric.
    pub no_parse: bool,
}

/// The primary metric of a command whose output gives no figures.
pub const WALL_METRIC: &str = "wall_sec";

/// The names of what kbench measures from outside; a figure of the output with one of
/// these names is stored as `output_<name>`, so the two never mix.
const MEASURED_METRICS: [&str; 4] = [WALL_METRIC, "user_sec", "sys_sec", "max_rss_kib"];

/// Reads the figures of the runs of one command (a session of `exec`, a side of `ab`),
/// saying once when its output gives none.
#[derive(Debug)]
pub struct FigureReader {
    options: FigureOptions,
    /// The command as the user wrote it, for messages.
    command: String,
    /// The reader that understood the last run's output.
    pub source_format: Option<&'static str>,
    said_unread: bool,
}

impl FigureReader {
    pub fn new(options: &FigureOptions, command: &str) -> FigureReader {
        FigureReader {
            options: options.clone(),
            command: command.to_string(),
            source_format: None,
            said_unread: false,
        }
    }

    /// The values of one run, exactly one primary: the output's figures (renamed where
    /// they would collide) and the measured ones; the primary is `--metric`, else the
    /// output reader's, else wall_sec. A failed run's output is not read, since the run
    /// is not counted.
    pub fn values(&mut self, run: &CommandRun) -> Result<Vec<Value>, RunnerError> {
        let succeeded = run.exit_status == 0;
        let read = if self.options.no_parse || !succeeded {
            Ok(Vec::new())
        } else {
            figures_of(&run.output).map(|figures| {
                self.source_format = Some(figures.source_format);
                figures.values
            })
        };
        let (figures, unread) = match read {
            Ok(figures) => (figures, None),
            Err(why) => (Vec::new(), Some(why)),
        };
        let mut values: Vec<Value> = figures
            .into_iter()
            .map(without_collision)
            .chain(measured_values(run))
            .map(|m| Value::from(&m))
            .collect();
        if succeeded {
            self.primary_by_name(&mut values, unread.as_deref())?;
        }
        if !values.iter().any(|v| v.primary) {
            mark_primary(&mut values, WALL_METRIC);
        }
        if let Some(why) = unread {
            let primary = values.iter().find(|v| v.primary).map(|v| v.metric.as_str());
            self.say_unread_once(&why, primary.unwrap_or(WALL_METRIC));
        }
        Ok(values)
    }

    /// Makes the `--metric` value, if one was asked for, the primary of a successful run's
    /// values; its absence is the user's mistake (exit 2), named with what the run gave
    /// and, when its output was not read, why.
    pub fn primary_by_name(
        &self,
        values: &mut [Value],
        unread: Option<&str>,
    ) -> Result<(), RunnerError> {
        let Some(name) = &self.options.metric else {
            return Ok(());
        };
        if mark_primary(values, name) {
            return Ok(());
        }
        let names: Vec<&str> = values.iter().map(|v| v.metric.as_str()).collect();
        let unread = unread.map(|why| format!("; output not read: {why}"));
        Err(RunnerError::Usage(format!(
            "--metric {name}: `{}` gave no such figure (it gave: {}{})",
            self.command,
            names.join(", "),
            unread.unwrap_or_default()
        )))
    }

    fn say_unread_once(&mut self, why: &str, primary: &str) {
        if !std::mem::replace(&mut self.said_unread, true) {
            errln!(
                "kbench: figures not read from the output of `{}`: {why}; the primary metric is {primary}",
                self.command
            );
        }
    }
}

/// The figures of a command's standard output, or of its standard error when no reader
/// knows its standard output (perf stat writes its counters there).
fn figures_of(output: &CapturedOutput) -> Result<OutputFigures, String> {
    if output.stdout.is_empty() && output.stderr.is_empty() {
        return Err("it printed nothing".into());
    }
    if output.truncated {
        return Err(format!(
            "it printed more than {} MiB",
            CAPTURE_LIMIT_BYTES >> 20
        ));
    }
    let stdout = read_output_figures(&String::from_utf8_lossy(&output.stdout));
    let result = match stdout {
        Err(OutputError::NotRecognised { .. }) if !output.stderr.is_empty() => {
            match read_output_figures(&String::from_utf8_lossy(&output.stderr)) {
                Err(OutputError::NotRecognised { .. }) => stdout,
                stderr => stderr,
            }
        }
        other => other,
    };
    result.map_err(|e| e.to_string())
}

/// A figure of the output named like a measured one, renamed `output_<name>`.
fn without_collision(mut figure: MetricValue) -> MetricValue {
    if MEASURED_METRICS.contains(&figure.name.as_str()) {
        figure.name = format!("output_{}", figure.name);
    }
    figure
}

/// What kbench measured of the run from outside, all secondary: the caller marks the
/// primary.
fn measured_values(run: &CommandRun) -> Vec<MetricValue> {
    let lower = Direction::LowerIsBetter;
    [
        (WALL_METRIC, run.wall_ns as f64 / 1e9, "s"),
        ("user_sec", run.user_us as f64 / 1e6, "s"),
        ("sys_sec", run.sys_us as f64 / 1e6, "s"),
        ("max_rss_kib", run.max_rss_kib as f64, "KiB"),
    ]
    .map(|(name, value, unit)| MetricValue::secondary(name, value, unit, lower))
    .into()
}

/// Makes `name` the one primary value; false (and nothing changed) when there is none.
pub fn mark_primary(values: &mut [Value], name: &str) -> bool {
    if !values.iter().any(|v| v.metric == name) {
        return false;
    }
    for v in values.iter_mut() {
        v.primary = v.metric == name;
    }
    true
}
