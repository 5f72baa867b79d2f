//! The words and figures every renderer writes the same way: one home for each, so
//! that a percentage, a p-value, a date or a unit reads alike in `compare`, `stat`,
//! the sequential and history reports and the page.
use kbench_stats::sequential::{NoiseAdvice, VarianceFrom};
use kbench_stats::Level;

/// Text output stays within this many columns.
pub const WIDTH: usize = 80;

/// A number with about five significant digits, the way a person reads a median.
pub fn figure(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(v) if !v.is_finite() => v.to_string(),
        Some(v) => {
            let magnitude = if v == 0.0 {
                0
            } else {
                v.abs().log10().floor() as i32
            };
            let decimals = (4 - magnitude).clamp(0, 9) as usize;
            format!("{v:.decimals$}")
        }
    }
}

/// A signed percentage, `+1.29%`.
pub fn percent(value: Option<f64>) -> String {
    value
        .map(|v| format!("{v:+.2}%"))
        .unwrap_or_else(|| "-".into())
}

/// An unsigned percentage of a spread, `2.15%`, `>999%` from 1000%.
pub fn spread_pct(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v >= 1000.0 => ">999%".into(),
        Some(v) => format!("{v:.2}%"),
    }
}

/// A p-value in at most six characters.
pub fn p_text(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) => format!("{p:.3}"),
    }
}

/// `p = 0.012`, `p < 0.001`: a p-value as a clause, by the rule of [`p_text`];
/// `spaced` puts spaces around the sign (`p=0.012` without).
pub fn p_clause(value: f64, spaced: bool) -> String {
    let text = p_text(Some(value));
    let (sign, figure) = match text.strip_prefix('<') {
        Some(rest) => ("<", rest.to_string()),
        None => ("=", text),
    };
    if spaced {
        format!("p {sign} {figure}")
    } else {
        format!("p{sign}{figure}")
    }
}

/// The unit word of a level, plural when `n != 1`.
pub fn unit_word(level: Level, n: usize) -> String {
    let word = level.as_str();
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// Where a noise estimate came from, in words.
pub fn from_text(from: VarianceFrom, level: Level) -> String {
    match from {
        VarianceFrom::ThisComparison => format!("from this comparison's {}", unit_word(level, 2)),
        VarianceFrom::CalibrationAndThisComparison => {
            format!(
                "from the calibration and this comparison's {}",
                unit_word(level, 2)
            )
        }
    }
}

/// The advice that applies to units of `level`: KVM only for boots.
pub fn advice_text(advice: &[NoiseAdvice], level: Level) -> String {
    let words: Vec<&str> = advice
        .iter()
        .filter(|a| level == Level::Boot || **a != NoiseAdvice::Kvm)
        .map(|a| match a {
            NoiseAdvice::Placement => "pin the workload away from other load",
            NoiseAdvice::MoreRunsPerUnit => "more runs per unit",
            NoiseAdvice::Kvm => "boots under KVM rather than TCG",
        })
        .collect();
    words.join(", ")
}

pub use kbench_record::civil::{civil_date, utc};

/// Word-wraps `text` to 80 columns; continuation lines start with `indent`. A word
/// longer than a line (a path, a command) is split rather than overflow.
pub fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let lead: String = text.chars().take_while(|c| *c == ' ').collect();
    line.push_str(&lead);
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let fits = line.chars().count() + 1 + word.chars().count() <= WIDTH;
        if !fits && !line.trim().is_empty() {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
        }
        if !line.is_empty() && !line.ends_with(' ') {
            line.push(' ');
        }
        for c in word.chars() {
            if line.chars().count() >= WIDTH {
                out.push_str(&line);
                out.push('\n');
                line = indent.to_string();
            }
            line.push(c);
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// A duration for a reader: `820 ns`, `2.31 us`, `23.4 us`, `1.20 ms`.
pub fn duration_text(ns: f64) -> String {
    let (value, unit) = if ns.abs() >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns.abs() >= 1e3 {
        (ns / 1e3, "us")
    } else {
        (ns, "ns")
    };
    let digits = match value.abs() {
        v if v >= 100.0 => 0,
        v if v >= 10.0 => 1,
        _ => 2,
    };
    let digits = if unit == "ns" { 0 } else { digits };
    format!("{value:.digits$} {unit}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(1_796_001_643_000_000_000), "2026-11-30 01:20:43");
        assert_eq!(super::utc(951_782_400_000_000_000), "2000-02-29 00:00:00");
    }
}
