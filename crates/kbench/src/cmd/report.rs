//! `kbench report BASE NEW [NEW...] -o report.html`: the comparison as one HTML page.
use crate::session::DbArgs;
use crate::verdict::{HostChoiceArgs, VerdictArgs};
use kbench_report::compare::Layout;
use kbench_report::format::Format;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The label of the reference side (before).
    pub base: String,
    /// The labels judged against it (after).
    #[arg(required = true, value_name = "NEW")]
    pub new: Vec<String>,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    #[command(flatten)]
    pub hosts: HostChoiceArgs,
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
    kbench_analysis::compare::check_distinct(&args.new)?;
    let store = args.db.open_existing()?;
    let comparisons = kbench_analysis::compare_each(
        &store,
        &args.base,
        &args.new,
        options,
        &args.hosts.choice(),
    )?;
    let page = Format::Html.render(&comparisons, Layout::Full);
    crate::output::write_page(args.output.as_deref(), &page)?;
    Ok(0)
}
