//! `kbench stat A_FILE B_FILE`: two files of numbers compared, ministat-style, as text
//! or JSON, with the figures, percentages and p-values every report writes.
use crate::words::{figure, p_clause, percent, wrap};
use kbench_stats::{Comparison, SideDiagnostics, Summary, Verdict};
use serde::Serialize;
use std::path::Path;

/// The `--json` document, pretty-printed, with its newline.
pub fn json(c: &Comparison) -> String {
    serde_json::to_string_pretty(&StatJson::from(c)).unwrap_or_default() + "\n"
}

/// A number in 10 columns: [`figure`]'s five significant digits, in scientific notation
/// from a million up and below a thousandth.
fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x != 0.0 && x.is_finite() && (x.abs() >= 1e6 || x.abs() < 1e-3) => {
            format!("{x:>10.3e}")
        }
        v => format!("{:>10}", figure(v)),
    }
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
            format!("{flag}{slope:+.3}%/run {}", p_clause(d.p_value, false))
        }
        (Some(d), None) => format!("no trend {}", p_clause(d.p_value, false)),
        _ => "-".to_string(),
    };
    format!("  {tag}: outliers {outliers}; {modes}; {drift}\n")
}

/// The ministat-style table, verdict and diagnostics, within 80 columns; `a_path` and
/// `b_path` are the files the values came from.
pub fn text(c: &Comparison, a_path: &Path, b_path: &Path) -> String {
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
            "B vs A: {} ({confidence} CI {} .. {}), {}\n",
            percent(c.shift_pct),
            percent(c.ci_low_pct),
            percent(c.ci_high_pct),
            c.p_value
                .map_or_else(|| "p = -".to_string(), |p| p_clause(p, true)),
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
                "  KS after removing the shift: D={:.3} {} ({flag})\n",
                shape.ks_d,
                p_clause(shape.ks_p, false)
            ));
        }
    }
    if let Some(v) = c
        .diagnostics
        .as_ref()
        .and_then(|d| d.verdict_without_outliers)
    {
        let note = format!("note: without the flagged outliers the verdict would be {v}");
        out.push_str(&wrap(&note, "  "));
    }
    for note in &c.notes {
        out.push_str(&wrap(&format!("note: {note}"), "  "));
    }
    out
}

#[cfg(test)]
mod tests {
    use kbench_stats::{compare, CompareOptions};
    use std::path::Path;

    fn text(a: &[f64], b: &[f64]) -> String {
        let c = compare(a, b, &CompareOptions::default());
        super::text(&c, Path::new("a.txt"), Path::new("b.txt"))
    }

    #[test]
    fn p_values_and_percentages_follow_the_reports_rules() {
        let a: Vec<f64> = (0..20).map(|i| 10.0 + (i % 7) as f64 * 0.03).collect();
        let b: Vec<f64> = a.iter().map(|v| v * 1.1).collect();
        let text = text(&a, &b);
        // One p-value rule with compare's: three decimals, `< 0.001` below.
        assert!(text.contains("), p < 0.001\n"), "{text}");
        assert!(text.contains("B vs A: +10.00% (95% CI +"), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "too wide: {line}");
            assert!(!line.contains("e-"), "no scientific p-value: {line}");
        }
    }

    #[test]
    fn a_zero_is_a_figure_like_any_other() {
        let same = [5.0; 10];
        let text = text(&same, &same);
        assert!(text.contains("     0.0000    0.00\n"), "{text}");
        assert!(text.contains("p = 1.000\n"), "{text}");
        assert!(text.contains("no trend p=1.000"), "{text}");
    }
}
