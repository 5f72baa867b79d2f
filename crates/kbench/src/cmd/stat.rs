//! `kbench stat A_FILE B_FILE`: ministat-style comparison of two files of numbers.
use kbench_stats::{compare, parse_numbers, CompareOptions, Verdict};
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
        out!("{}", kbench_report::stat::json(&result));
    } else {
        out!(
            "{}",
            kbench_report::stat::text(&result, &args.a_file, &args.b_file)
        );
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
