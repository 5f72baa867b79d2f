//! `kbench compare BASE NEW`: the verdict.
use crate::analysis::{self, ReportOptions};
use crate::error::usage;
use crate::session::DbArgs;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The label of the reference side (before).
    pub base: String,
    /// The label of the side judged against it (after).
    pub new: String,
    /// The smallest change that matters, in percent.
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    pub delta: f64,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json", "csv"])]
    pub format: String,
    /// Exit 1 when a row is a regression (or any real change).
    #[arg(long, value_parser = ["regression", "change"])]
    pub fail_on: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: CompareArgs) -> anyhow::Result<i32> {
    if !(args.delta > 0.0 && args.delta < 100.0) {
        return usage("--delta takes a percentage in (0, 100)");
    }
    let store = args.db.open()?;
    let report = analysis::compare_labels(
        &store,
        &args.base,
        &args.new,
        ReportOptions {
            delta_pct: args.delta,
            alpha: 0.05,
        },
    )?;
    print_report(&report, &args.format);
    let failed = args.fail_on.as_deref().is_some_and(|rule| {
        report
            .rows
            .iter()
            .any(|r| analysis::fails_on(rule, &r.verdict))
    });
    Ok(i32::from(failed))
}

pub fn print_report(report: &kbench_report::compare::CompareReport, format: &str) {
    if let Some(f) = kbench_report::compare::by_name(format) {
        print!("{}", f.render(report));
    }
}
