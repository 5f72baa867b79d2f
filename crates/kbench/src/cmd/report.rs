//! `kbench report BASE NEW [NEW...] -o report.html`: the comparison as one HTML page.
use crate::session::DbArgs;
use kbench_analysis::CompareReport;
use kbench_store::Store;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The label of the reference side (before).
    pub base: String,
    /// The labels judged against it (after).
    #[arg(required = true, value_name = "NEW")]
    pub new: Vec<String>,
    #[command(flatten)]
    pub verdict: crate::cmd::compare::VerdictArgs,
    #[command(flatten)]
    pub machines: crate::cmd::compare::MachineArgs,
    /// The file to write [default: standard output].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ReportArgs) -> anyhow::Result<i32> {
    if !cfg!(feature = "html-report") {
        return crate::error::built_without("the HTML report", "report");
    }
    let options = args.verdict.options()?;
    crate::cmd::compare::check_distinct(&args.new)?;
    let store = args.db.open_existing()?;
    let reports = crate::cmd::compare::compare_each(
        &store,
        &args.base,
        &args.new,
        options,
        &args.machines.choice(),
    )?;
    let page = page(&store, &reports)?;
    match &args.output {
        Some(path) => {
            crate::output::write_whole(path, page.as_bytes())?;
            outln!("wrote {} ({} bytes)", path.display(), page.len());
        }
        None => crate::output::write_stdout(page.as_bytes())?,
    }
    Ok(0)
}

/// The HTML page of `reports`, with the plot data read from their labels' runs.
pub fn page(store: &Store, reports: &[CompareReport]) -> anyhow::Result<String> {
    if !cfg!(feature = "html-report") {
        return crate::error::built_without("the HTML report", "--format html");
    }
    let plots = reports
        .iter()
        .map(|r| kbench_analysis::plots::plot_data(store, r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(crate::analysis_error)?;
    let comparisons: Vec<kbench_report::html::Comparison<'_>> = reports
        .iter()
        .zip(&plots)
        .map(|(report, plots)| kbench_report::html::Comparison { report, plots })
        .collect();
    Ok(kbench_report::html::render(&comparisons))
}
