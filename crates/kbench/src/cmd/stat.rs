//! `kbench stat A_FILE B_FILE`: ministat-style comparison of two files of numbers.
use kbench_stats::{
    compare, parse_numbers, CompareOptions, Comparison, SideDiagnostics, Summary, Verdict,
};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Exit status when `--fail-on-regression` is given and the verdict is a regression
/// (1 is a failed workload, 2 a usage error).
const EXIT_REGRESSION: i32 = 1;

#[derive(Debug, clap::Args)]
pub struct StatArgs {
    /// Baseline values: one number per line; blank lines and `#` comments are ignored.
    pub a_file: PathBuf,
    /// Values to compare against the baseline, same format.
    pub b_file: PathBuf,
    /// Practical threshold in percent: changes smaller than this do not matter.
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub delta: f64,
    /// Two-sided error rate (the interval has confidence 1 - alpha).
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Larger values are better (e.g. ops/s); by default larger is worse (times).
    #[arg(long)]
    pub higher_is_better: bool,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Exit with status 1 when the verdict is a regression (as `compare --fail-on`).
    #[arg(long)]
    pub fail_on_regression: bool,
}

pub fn run(args: StatArgs) -> anyhow::Result<i32> {
    if !(args.delta.is_finite() && (0.0..100.0).contains(&args.delta)) {
        return crate::error::usage(format!(
            "--delta must be a percentage in [0, 100), got {}",
            args.delta
        ));
    }
    if !(args.alpha > 0.0 && args.alpha < 0.5) {
        return crate::error::usage(format!("--alpha must be in (0, 0.5), got {}", args.alpha));
    }
    let a = read_values(&args.a_file)?;
    let b = read_values(&args.b_file)?;
    let opts = CompareOptions {
        delta_pct: args.delta,
        alpha: args.alpha,
        higher_is_better: args.higher_is_better,
    };
    let result = compare(&a, &b, &opts);
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&StatJson::from(&result))?
        );
    } else {
        out!("{}", render_text(&result, &args.a_file, &args.b_file));
    }
    let regressed = result.verdict == Verdict::Regression;
    Ok(if args.fail_on_regression && regressed {
        EXIT_REGRESSION
    } else {
        0
    })
}

/// Reads one finite number per line ([`parse_numbers`]); any other content is a usage
/// error naming the file and line.
fn read_values(path: &Path) -> anyhow::Result<Vec<f64>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return crate::error::usage(format!("{}: cannot read: {e}", path.display())),
    };
    parse_numbers(&text).or_else(|e| match e.line() {
        Some(line) => crate::error::usage(format!("{}:{line}: {e}", path.display())),
        None => crate::error::usage(format!("{}: {e}", path.display())),
    })
}

/// The `--json` object: the documented keys first, then the full comparison.
#[derive(Serialize)]
struct StatJson<'a> {
    n_a: usize,
    n_b: usize,
    median_a: Option<f64>,
    median_b: Option<f64>,
    shift_pct: Option<f64>,
    ci_low_pct: Option<f64>,
    ci_high_pct: Option<f64>,
    p_value: Option<f64>,
    verdict: Verdict,
    runs_needed: Option<usize>,
    outliers_a: Vec<usize>,
    outliers_b: Vec<usize>,
    bimodal_a: bool,
    bimodal_b: bool,
    drift_a: bool,
    drift_b: bool,
    shape_changed: bool,
    verdict_without_outliers: Option<Verdict>,
    method: &'a str,
    delta_pct: f64,
    confidence: f64,
    higher_is_better: bool,
    notes: &'a [String],
    details: &'a Comparison,
}

impl<'a> From<&'a Comparison> for StatJson<'a> {
    fn from(c: &'a Comparison) -> Self {
        let d = c.diagnostics.as_ref();
        let side = |pick: fn(&kbench_stats::Diagnostics) -> &SideDiagnostics| d.map(pick);
        let (da, db) = (side(|d| &d.a), side(|d| &d.b));
        StatJson {
            n_a: c.n_a,
            n_b: c.n_b,
            median_a: c.median_a,
            median_b: c.median_b,
            shift_pct: c.shift_pct,
            ci_low_pct: c.ci_low_pct,
            ci_high_pct: c.ci_high_pct,
            p_value: c.p_value,
            verdict: c.verdict,
            runs_needed: c.runs_needed,
            outliers_a: da.map(|s| s.outliers.clone()).unwrap_or_default(),
            outliers_b: db.map(|s| s.outliers.clone()).unwrap_or_default(),
            bimodal_a: da.is_some_and(|s| s.bimodality.bimodal),
            bimodal_b: db.is_some_and(|s| s.bimodality.bimodal),
            drift_a: da.is_some_and(|s| s.drifting),
            drift_b: db.is_some_and(|s| s.drifting),
            shape_changed: d
                .and_then(|d| d.shape.as_ref())
                .is_some_and(|s| s.shape_changed),
            verdict_without_outliers: d.and_then(|d| d.verdict_without_outliers),
            method: &c.method,
            delta_pct: c.delta_pct,
            confidence: c.confidence,
            higher_is_better: c.higher_is_better,
            notes: &c.notes,
            details: c,
        }
    }
}

/// A number in 10 columns with 5 significant digits.
fn num(v: Option<f64>) -> String {
    match v {
        None => format!("{:>10}", "-"),
        Some(x) if x != 0.0 && (x.abs() >= 1e6 || x.abs() < 1e-3) => format!("{x:>10.3e}"),
        Some(x) => {
            let digits = 5 - (x.abs().log10().floor() as i32 + 1).clamp(-3, 5);
            format!("{x:>10.prec$}", prec = digits.clamp(0, 8) as usize)
        }
    }
}

/// A p-value with 2-3 significant digits, scientific below 0.01.
fn p_text(p: f64) -> String {
    if p < 1e-2 {
        format!("{p:.2e}")
    } else {
        format!("{p:.3}")
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |x| format!("{x:+.2}%"))
}

fn file_label(path: &Path) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if name.chars().count() > 30 {
        format!("{}...", name.chars().take(27).collect::<String>())
    } else {
        name
    }
}

fn summary_row(tag: &str, s: &Summary) -> String {
    format!(
        "{tag} {:>5} {} {} {} {} {} {:>7}\n",
        s.n,
        num(s.min),
        num(s.max),
        num(s.median),
        num(s.mean),
        num(s.sd),
        s.cv_pct.map_or("-".to_string(), |c| format!("{c:.2}")),
    )
}

fn verdict_explanation(c: &Comparison) -> String {
    let delta = format!("{:.2}%", c.delta_pct);
    match c.verdict {
        Verdict::Regression => format!("B is worse than A by more than {delta}"),
        Verdict::Improvement => format!("B is better than A by more than {delta}"),
        Verdict::Equivalent => format!("no change larger than {delta}"),
        Verdict::Changed => format!("a real change; whether it exceeds {delta} is unresolved"),
        Verdict::Inconclusive => match c.runs_needed {
            Some(n) => format!("need about {n} runs per side to settle at {delta}"),
            None => "more runs needed".to_string(),
        },
        Verdict::Insufficient => "too few values for a verdict".to_string(),
    }
}

fn side_diagnostics(tag: &str, s: &SideDiagnostics) -> String {
    let outliers = if s.outliers.is_empty() {
        "none".to_string()
    } else {
        let shown: Vec<String> = s.outliers.iter().take(6).map(|i| i.to_string()).collect();
        let more = if s.outliers.len() > 6 { ",..." } else { "" };
        format!("{} (#{}{more})", s.outliers.len(), shown.join(","))
    };
    let modes = if s.bimodality.bimodal {
        "BIMODAL"
    } else {
        "unimodal"
    };
    let drift = match (&s.drift, s.drift_pct_per_run) {
        (Some(d), Some(slope)) => {
            let flag = if s.drifting { "DRIFT " } else { "" };
            format!("{flag}{slope:+.3}%/run p={:.2}", d.p_value)
        }
        (Some(d), None) => format!("no trend p={:.2}", d.p_value),
        _ => "-".to_string(),
    };
    format!("  {tag}: outliers {outliers}; {modes}; {drift}\n")
}

/// The ministat-style table, verdict and diagnostics, within 80 columns.
fn render_text(c: &Comparison, a_path: &Path, b_path: &Path) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "A: {}\nB: {}\n",
        file_label(a_path),
        file_label(b_path)
    ));
    out.push_str(&format!(
        "      N {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}\n",
        "Min", "Max", "Median", "Mean", "SD", "CV%"
    ));
    out.push_str(&summary_row("A", &c.summary_a));
    out.push_str(&summary_row("B", &c.summary_b));
    let confidence = format!("{:.0}%", c.confidence * 100.0);
    if c.shift_pct.is_some() {
        out.push_str(&format!(
            "B vs A: {} ({confidence} CI {} .. {}), p = {}\n",
            pct(c.shift_pct),
            pct(c.ci_low_pct),
            pct(c.ci_high_pct),
            c.p_value.map_or("-".to_string(), p_text),
        ));
    }
    out.push_str(&format!(
        "verdict: {} ({})\n",
        c.verdict.as_str().to_uppercase(),
        verdict_explanation(c)
    ));
    out.push_str(&format!("method: {}\n", c.method));
    if let Some(d) = &c.diagnostics {
        out.push_str("diagnostics:\n");
        out.push_str(&side_diagnostics("A", &d.a));
        out.push_str(&side_diagnostics("B", &d.b));
        if let Some(shape) = &d.shape {
            let flag = if shape.shape_changed {
                "shape CHANGED"
            } else {
                "same shape"
            };
            out.push_str(&format!(
                "  KS after removing the shift: D={:.3} p={} ({flag})\n",
                shape.ks_d,
                p_text(shape.ks_p)
            ));
        }
    }
    if let Some(v) = c
        .diagnostics
        .as_ref()
        .and_then(|d| d.verdict_without_outliers)
    {
        let note = format!("note: without the flagged outliers the verdict would be {v}");
        out.push_str(&kbench_report::compare::wrap(&note, "  "));
    }
    for note in &c.notes {
        out.push_str(&kbench_report::compare::wrap(
            &format!("note: {note}"),
            "  ",
        ));
    }
    out
}
