//! `kbench compare BASE NEW [NEW...]`: the verdict of each NEW against BASE.
use crate::error::usage;
use crate::session::DbArgs;
use crate::verdict::{self, MachineArgs, VerdictArgs};
use kbench_analysis::FailOn;
use kbench_report::compare::{Format, Layout};

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The label of the reference side (before).
    pub base: String,
    /// The labels judged against it (after), one column each.
    #[arg(required = true, value_name = "NEW")]
    pub new: Vec<String>,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    #[command(flatten)]
    pub machines: MachineArgs,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = verdict::format_parser(&Format::ALL))]
    pub format: Format,
    /// Every row (secondary metrics, percentiles) with every diagnostic, not one screen.
    #[arg(long)]
    pub full: bool,
    /// Exit 1 when a primary row (the table's, per-class and per-placement rows
    /// included) is a regression (or any real change).
    #[arg(long, value_parser = verdict::fail_on_parser())]
    pub fail_on: Option<FailOn>,
    /// A claimed saving per event, `EVENT=NS` (repeatable): after the comparison, whether
    /// it could explain each change (as `kbench plausible NEW --base BASE` says).
    #[arg(long, value_name = "EVENT=NS")]
    pub saving: Vec<String>,
    /// Look at the two labels with the sequential rule, whose interval holds at every
    /// look: for adding a session or boot at a time and asking again. It answers
    /// "decided: ..." or "continue: about N more a side".
    #[arg(long, conflicts_with_all = ["full", "fail_on", "saving", "machine", "across_machines"])]
    pub sequential: bool,
    /// With --sequential: the units (sessions or boots) a side at which it stops
    /// undecided.
    #[arg(long, value_name = "N", default_value_t = 20, requires = "sequential", value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub max_units: u32,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: CompareArgs) -> anyhow::Result<i32> {
    let options = args.verdict.options()?;
    if args.sequential {
        return sequential(&args, &options);
    }
    let savings = verdict::parse_savings(&args.saving)?;
    if !savings.is_empty() && !matches!(args.format, Format::Text | Format::Markdown) {
        return usage("--saving goes with text or markdown; for JSON, `kbench plausible NEW --base BASE --saving ... --format json`");
    }
    if args.format == Format::Html && !cfg!(feature = "html-report") {
        return crate::error::built_without("the HTML report", "--format html");
    }
    kbench_analysis::compare::check_distinct(&args.new).map_err(crate::analysis_error)?;
    let store = args.db.open_existing()?;
    let comparisons = kbench_analysis::compare_each(
        &store,
        &args.base,
        &args.new,
        options,
        &args.machines.choice(),
    )
    .map_err(crate::analysis_error)?;
    let reports = &comparisons.reports;
    let layout = if args.full {
        Layout::Full
    } else {
        Layout::Compact
    };
    if args.format == Format::Html && cfg!(feature = "html-report") {
        let page = kbench_report::html::render_loaded(&comparisons);
        crate::output::write_stdout(page.as_bytes())?;
    } else {
        verdict::print_in(reports, args.format, layout)?;
    }
    let compared = comparisons.news.iter().zip(reports);
    for (new, report) in compared.filter(|_| !savings.is_empty()) {
        let plausible =
            kbench_analysis::plausible::plausible_of(&new.label, &new.runs, &savings, Some(report))
                .map_err(crate::analysis_error)?;
        crate::output::write_stdout(b"\n")?;
        verdict::print_plausible(&plausible, Format::Text)?;
    }
    let failed = args.fail_on.is_some_and(|rule| {
        reports
            .iter()
            .flat_map(|r| &r.rows)
            .filter(|r| r.is_primary())
            .any(|r| rule.fails(r.verdict))
    });
    Ok(i32::from(failed))
}

/// `--sequential`: one NEW against BASE, every primary metric's decision or how many
/// more units it needs.
fn sequential(args: &CompareArgs, options: &kbench_analysis::ReportOptions) -> anyhow::Result<i32> {
    let [new] = args.new.as_slice() else {
        return usage("--sequential compares one NEW label with BASE");
    };
    let store = args.db.open_existing()?;
    let report = kbench_analysis::sequential::sequential_labels(
        &store,
        &args.base,
        new,
        verdict::sequential_options(options, args.max_units as usize),
    )
    .map_err(crate::analysis_error)?;
    verdict::print_sequential(&report, args.format)?;
    Ok(0)
}
