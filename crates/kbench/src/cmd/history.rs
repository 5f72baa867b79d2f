//! `kbench history [LABEL...]`: each metric's unit means per label in order, per
//! machine, and where the series changes (docs/history.md).
use crate::session::DbArgs;
use crate::verdict;
use kbench_analysis::history::{self, HistoryOptions, HistoryOrder};
use kbench_report::format::Format;
use kbench_stats::changepoint::ChangePointOptions;

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// The labels of the history [default: every label in the database].
    pub labels: Vec<String>,
    /// Only this machine's sessions (as `kbench list` names it); every machine, each
    /// its own history, otherwise.
    #[arg(long, value_name = "MACHINE")]
    pub machine: Option<String>,
    /// Only this metric, `METRIC` or `WORKLOAD:METRIC` (repeatable) [default: the
    /// primary metrics].
    #[arg(long, value_name = "SPEC")]
    pub metric: Vec<String>,
    /// The order of the labels: by their first session's date; as named (name order
    /// when none is named); or by where the commit each label recorded (`run --commit`,
    /// a bisection's) stands in the history of the git tree `--tree` names.
    #[arg(long, default_value = "date", value_parser = ["date", "label", "commit"])]
    pub by: String,
    /// The git tree whose history `--by commit` follows.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub tree: std::path::PathBuf,
    /// A change point is shown when its permutation p-value is at most this; an A/A
    /// history shows one with at most this probability.
    #[arg(long, default_value_t = 0.01)]
    pub significance: f64,
    /// Labels on each side of a change point, at least.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub min_labels: u32,
    /// Permutations per test.
    #[arg(long, default_value_t = 499, value_parser = clap::value_parser!(u32).range(19..=100_000))]
    pub permutations: u32,
    /// The permutations' seed.
    #[arg(long, default_value_t = ChangePointOptions::default().seed)]
    pub seed: u64,
    /// Output format: html is a page with a plot of each history.
    #[arg(long, default_value = "text", value_parser = verdict::format_parser(&[Format::Text, Format::Json, Format::Html]))]
    pub format: Format,
    /// The file to write [default: standard output].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: HistoryArgs) -> anyhow::Result<i32> {
    let mut options = HistoryOptions {
        order: HistoryOrder::named(&args.by),
        machine: args.machine.clone(),
        metrics: args.metric.clone(),
        change: ChangePointOptions {
            significance: args.significance,
            min_labels: args.min_labels as usize,
            permutations: args.permutations as usize,
            seed: args.seed,
        },
        ..HistoryOptions::default()
    };
    options.check()?;
    let store = args.db.open_existing()?;
    let labels = history::load_labels(&store, &args.labels, args.machine.as_deref())?;
    if options.order == HistoryOrder::Commit {
        let commits = history::recorded_commits(&labels)?;
        options.commit_positions = kbench_boot::tree::history_positions(&args.tree, &commits)?;
    }
    let report = history::history_report(&labels, &options).checked()?;
    if args.format == Format::Html && !cfg!(feature = "html-report") {
        return crate::error::built_without("the HTML report", "history");
    }
    let text = kbench_report::format::history_in_format(&report, args.format);
    crate::output::write_page(args.output.as_deref(), &text)?;
    Ok(0)
}
