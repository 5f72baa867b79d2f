//! `kbench compare BASE NEW`: the verdict.
use crate::error::usage;
use crate::session::DbArgs;
use kbench_analysis::{CompareReport, ReportOptions};

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The label of the reference side (before).
    pub base: String,
    /// The label of the side judged against it (after).
    pub new: String,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json", "csv"])]
    pub format: String,
    /// Exit 1 when a row is a regression (or any real change).
    #[arg(long, value_parser = ["regression", "change"])]
    pub fail_on: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// How verdicts are drawn, shared by compare and ab.
#[derive(Debug, Clone, clap::Args)]
pub struct VerdictArgs {
    /// The smallest change that matters, in percent [default: 1, or what this
    /// machine's calibration says it resolves with the runs at hand, if larger].
    #[arg(long, allow_hyphen_values = true)]
    pub delta: Option<f64>,
    /// Ignore this machine's calibration (`kbench calibrate`).
    #[arg(long)]
    pub no_calibration: bool,
    /// Seed of the bootstraps behind pooled-percentile rows.
    #[arg(long, default_value_t = 20_261_201)]
    pub seed: u64,
}

impl VerdictArgs {
    pub fn options(&self) -> anyhow::Result<ReportOptions> {
        if let Some(delta) = self.delta {
            if !(delta > 0.0 && delta < 100.0) {
                return usage("--delta takes a percentage in (0, 100)");
            }
        }
        Ok(ReportOptions {
            delta_pct: self.delta,
            alpha: kbench_analysis::ALPHA,
            seed: self.seed,
            use_calibration: !self.no_calibration,
            now_unix_ns: crate::session::unix_now_ns(),
        })
    }
}

pub fn run(args: CompareArgs) -> anyhow::Result<i32> {
    let options = args.verdict.options()?;
    let store = args.db.open()?;
    let report = kbench_analysis::compare_labels(&store, &args.base, &args.new, options)
        .map_err(crate::analysis_error)?;
    print_report(&report, &args.format)?;
    let failed = args.fail_on.as_deref().is_some_and(|rule| {
        report
            .rows
            .iter()
            .any(|r| kbench_analysis::fails_on(rule, r.verdict))
    });
    Ok(i32::from(failed))
}

/// Prints a report; a closed stdout ends the output quietly.
pub fn print_report(report: &CompareReport, format: &str) -> anyhow::Result<()> {
    if let Some(f) = kbench_report::compare::by_name(format) {
        crate::output::write_stdout(f.render(report).as_bytes())?;
    }
    Ok(())
}
