//! `kbench exec`'s closing table: every metric of the measured runs, the primary one
//! first, then the failed runs and hooks.
use kbench_record::Value;

/// What `kbench exec` ran and what its runs gave.
pub struct ExecSummary<'a> {
    pub label: &'a str,
    /// The command, as a shell would take it.
    pub command: &'a str,
    /// The format its figures were read from, if they were.
    pub source_format: Option<&'a str>,
    /// The values of each measured run that exited 0.
    pub runs: Vec<&'a [Value]>,
    /// Each failed run: its attempt (from 1) and exit status.
    pub failed_runs: Vec<(u32, i32)>,
    /// Each failed hook: its message, and whether no run came after it.
    pub failed_hooks: Vec<(&'a str, bool)>,
}

/// The table of every metric of the measured runs, the primary one first.
pub fn summary(s: &ExecSummary<'_>) -> String {
    let mut out = format!("kbench exec: label {}, {}\n", s.label, s.command);
    let Some(first) = s.runs.first() else {
        out.push_str("\nno measured run exited 0\n");
        out.push_str(&failure_lines(s));
        return out;
    };
    let mut metrics: Vec<&Value> = first.iter().collect();
    metrics.sort_by_key(|v| !v.primary);
    let primary = metrics[0].metric.as_str();
    match s.source_format {
        Some(format) => out.push_str(&format!(
            "figures read from its {format} output; primary metric {primary}\n\n"
        )),
        None => out.push_str(&format!("primary metric {primary}\n\n")),
    }
    let width = metrics.iter().map(|v| v.metric.len()).max().unwrap_or(6);
    out.push_str(&format!(
        "{:<width$} {:>4} {:>12} {:>12} {:>12} {:>7}  unit\n",
        "metric", "n", "median", "min", "max", "CV%"
    ));
    for metric in metrics {
        let values: Vec<f64> = (s.runs.iter())
            .filter_map(|run| run.iter().find(|v| v.metric == metric.metric))
            .map(|v| v.value)
            .collect();
        let d = kbench_stats::describe(&values);
        let figure = crate::compare::figure;
        out.push_str(&format!(
            "{:<width$} {:>4} {:>12} {:>12} {:>12} {:>7}  {}\n",
            metric.metric,
            d.n,
            figure(d.median),
            figure(d.min),
            figure(d.max),
            d.cv_pct
                .map(|c| format!("{c:.2}"))
                .unwrap_or_else(|| "-".into()),
            metric.unit
        ));
    }
    out.push_str(&failure_lines(s));
    out
}

/// The failed runs and hooks, each on its own line after a blank one.
fn failure_lines(s: &ExecSummary<'_>) -> String {
    let mut out = String::new();
    for (attempt, exit_status) in &s.failed_runs {
        out.push_str(&format!(
            "\nrun {attempt} exited with status {exit_status}: recorded, not counted in the figures above"
        ));
    }
    for (message, stopped) in &s.failed_hooks {
        let stopped = if *stopped { "; no run after it" } else { "" };
        out.push_str(&format!("\n{message}: recorded as a failed run{stopped}"));
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}
