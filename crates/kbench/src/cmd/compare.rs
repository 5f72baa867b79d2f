//! `kbench compare BASE NEW [NEW...]`: the verdict of each NEW against BASE.
use crate::error::usage;
use crate::output::write_stdout;
use crate::session::{self, DbArgs};
use crate::verdict::{self, HostChoiceArgs, VerdictArgs};
use kbench_analysis::plausible::{parse_savings, plausible_of};
use kbench_analysis::sequential::{self, AskedDesign, UnderRecorded};
use kbench_analysis::FailOn;
use kbench_report::compare::Layout;
use kbench_report::format::Format;
use kbench_report::sequential::fixed_only_notice;

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
    pub hosts: HostChoiceArgs,
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
    /// A claimed saving per event, `EVENT=AMOUNT` as `kbench plausible` takes it
    /// (repeatable; `ipi=300`, `irq=5ns`, `irq=0.3us`, `ipi=28insns`): after the comparison, whether
    /// it could explain each change (as `kbench plausible NEW --base BASE` says).
    #[arg(long, value_name = "EVENT=AMOUNT")]
    pub saving: Vec<String>,
    /// Look at the two labels with the sequential rule, whose interval holds at every
    /// look: for adding a session or boot at a time and asking again. It answers
    /// "decided: ..." or "continue: about N more a side". The first look records the
    /// design (δ, the bound) with the labels and every look is recorded under it; a
    /// design recorded by `ab` or `vm-ab --until-decided` is used as it was.
    #[arg(long, conflicts_with_all = ["full", "fail_on", "saving", "machine", "across_machines"])]
    pub sequential: bool,
    /// With --sequential: the units (sessions or boots) a side at which it stops
    /// undecided [default: 20, or the recorded design's].
    #[arg(long, value_name = "N", requires = "sequential", value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub max_units: Option<u32>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: CompareArgs) -> anyhow::Result<i32> {
    let options = args.verdict.options()?;
    if args.sequential {
        return sequential(&args, &options);
    }
    let savings = parse_savings(&args.saving)?;
    if !savings.is_empty() && !matches!(args.format, Format::Text | Format::Markdown) {
        return usage("--saving goes with text or markdown; for JSON, `kbench plausible NEW --base BASE --saving ... --format json`");
    }
    if args.format == Format::Html && !cfg!(feature = "html-report") {
        return crate::error::built_without("the HTML report", "--format html");
    }
    kbench_analysis::compare::check_distinct(&args.new)?;
    let store = args.db.open_existing()?;
    if let Some(code) = decided_sequentially(&store, &args, &options)? {
        return Ok(code);
    }
    let hosts = args.hosts.choice();
    let comparisons =
        kbench_analysis::compare_each(&store, &args.base, &args.new, options, &hosts)?;
    let reports = &comparisons.reports;
    let layout = if args.full {
        Layout::Full
    } else {
        Layout::Compact
    };
    write_stdout(args.format.render(&comparisons, layout).as_bytes())?;
    let compared = comparisons.news.iter().zip(reports);
    for (new, report) in compared.filter(|_| !savings.is_empty()) {
        let plausible = plausible_of(&new.label, &new.runs, &savings, Some(report))?;
        write_stdout(format!("\n{}", kbench_report::plausible::text(&plausible)).as_bytes())?;
    }
    let failed = args.fail_on.is_some_and(|rule| rule.fails_any(reports));
    // The process ends here: freeing every loaded run one by one took a twentieth of
    // a large compare (scripts/bench-store.sh), for memory the exit returns anyway.
    std::mem::forget(comparisons);
    Ok(i32::from(failed))
}

/// `--sequential`: one NEW against BASE, every primary metric's decision or how many
/// more units it needs, looked at with the recorded design (recorded now if there is
/// none yet), and the look recorded under it.
fn sequential(args: &CompareArgs, options: &kbench_analysis::ReportOptions) -> anyhow::Result<i32> {
    let [new] = args.new.as_slice() else {
        return usage("--sequential compares one NEW label with BASE");
    };
    let mut store = args.db.open_existing()?;
    let (labels, asked) = ((args.base.as_str(), new.as_str()), asked_design(args));
    let max_units = args.max_units.unwrap_or(sequential::COMPARE_MAX_UNITS) as usize;
    let command_line = session::command_line();
    let made = (command_line.as_str(), session::unix_now_ns());
    let (report, kept) =
        sequential::look_and_record(&mut store, labels, asked, options, max_units, made)?;
    if !kept {
        errln!("kbench: the database is read-only: this look is not recorded");
    }
    write_stdout(kbench_report::sequential::in_format(&report, args.format).as_bytes())?;
    Ok(0)
}

/// What the command line asks of a sequential design.
fn asked_design(args: &CompareArgs) -> AskedDesign {
    AskedDesign {
        alpha: args.verdict.alpha,
        delta_pct: args.verdict.delta,
        max_units_per_side: args.max_units.map(|m| m as usize),
        no_calibration: args.verdict.no_calibration,
    }
}

/// BASE and one NEW looked at under a recorded sequential design (`ab` or `vm-ab
/// --until-decided`, `compare --sequential`): their verdict is the sequential rule's,
/// as it was when they ran, and the fixed design's report follows for its diagnostics.
/// `None` when there is no such design, or the options ask for what only the fixed
/// design gives, another δ included (then a line on stderr says so).
fn decided_sequentially(
    store: &kbench_store::Store,
    args: &CompareArgs,
    options: &kbench_analysis::ReportOptions,
) -> anyhow::Result<Option<i32>> {
    let [new] = args.new.as_slice() else {
        return Ok(None);
    };
    let fixed_only = args.full
        || args.fail_on.is_some()
        || !args.saving.is_empty()
        || args.hosts.machine.is_some()
        || args.hosts.across_machines
        || !matches!(args.format, Format::Text | Format::Json);
    let (labels, asked) = ((args.base.as_str(), new.as_str()), asked_design(args));
    let machines = args.hosts.choice();
    match sequential::under_recorded(store, labels, (asked, fixed_only), *options, &machines)? {
        UnderRecorded::NoDesign => Ok(None),
        UnderRecorded::FixedOnly(recorded) => {
            errln!("{}", fixed_only_notice(&args.base, new, &recorded));
            Ok(None)
        }
        UnderRecorded::Decided(decided) => {
            let (look, fixed) = *decided;
            verdict::print_decided(Some(&look), &fixed, args.format, Layout::Compact)?;
            Ok(Some(0))
        }
    }
}
