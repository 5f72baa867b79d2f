//! `kbench compare BASE NEW [NEW...]`: the verdict of each NEW against BASE.
use crate::error::usage;
use crate::session::{self, DbArgs};
use crate::verdict::{self, MachineArgs, VerdictArgs};
use kbench_analysis::sequential::{self, AskedDesign};
use kbench_analysis::FailOn;
use kbench_record::sequential::{DesignedBy, RecordedDesign};
use kbench_report::compare::Layout;
use kbench_report::format::Format;
use kbench_stats::sequential::Boundary;
use kbench_store::StoreError;

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

/// The bound of a design `compare --sequential` records, in sessions or boots a side.
const DEFAULT_MAX_UNITS: u32 = 20;

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
    kbench_analysis::compare::check_distinct(&args.new)?;
    let store = args.db.open_existing()?;
    if let Some(code) = decided_sequentially(&store, &args, &options)? {
        return Ok(code);
    }
    let comparisons = kbench_analysis::compare_each(
        &store,
        &args.base,
        &args.new,
        options,
        &args.machines.choice(),
    )?;
    let reports = &comparisons.reports;
    let layout = if args.full {
        Layout::Full
    } else {
        Layout::Compact
    };
    verdict::print_in(&comparisons, args.format, layout)?;
    let compared = comparisons.news.iter().zip(reports);
    for (new, report) in compared.filter(|_| !savings.is_empty()) {
        let plausible = kbench_analysis::plausible::plausible_of(
            &new.label,
            &new.runs,
            &savings,
            Some(report),
        )?;
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
    let recorded = store.sequential_design(&args.base, new)?;
    let asked = asked_design(args);
    let max_units = args.max_units.unwrap_or(DEFAULT_MAX_UNITS) as usize;
    // A design made now takes the default δ of the labels' clock.
    let clock = kbench_analysis::clock::shared_clock(
        (&args.base, &store.sessions(&args.base)?),
        (new, &store.sessions(new)?),
    )?;
    // Nobody declared how many sessions or boots will come: the always-valid rule.
    let fresh = verdict::sequential_options(options, max_units, Boundary::AlwaysValid, clock);
    let design = sequential::options_for(recorded.as_ref(), asked, fresh)?;
    let mut report =
        sequential::sequential_labels(&store, &args.base, new, design, recorded.as_ref())?;
    report.recorded = match record_look(&mut store, recorded.clone(), &report) {
        Ok(recorded) => Some(recorded),
        // A database we may only read still answers; the look is just not kept.
        Err(StoreError::Sqlite(e)) if kbench_store::store::is_read_only(&e) => {
            errln!("kbench: the database is read-only: this look is not recorded");
            recorded
        }
        Err(e) => return Err(e.into()),
    };
    verdict::print_sequential(&report, args.format)?;
    Ok(0)
}

/// Records this look under the labels' design (recording the design first if they
/// have none); the design with its looks. A closed design, or a look at the same
/// units as its last, adds nothing.
fn record_look(
    store: &mut kbench_store::Store,
    recorded: Option<RecordedDesign>,
    report: &sequential::SequentialReport,
) -> Result<RecordedDesign, StoreError> {
    let mut recorded = match recorded {
        Some(recorded) => recorded,
        None => verdict::record_design(
            store,
            (&report.base, &report.new),
            report.options,
            DesignedBy::Compare,
            None,
        )?,
    };
    let look = sequential::look_record(
        report,
        recorded.looks.len() as u64 + 1,
        session::unix_now_ns(),
    );
    if !recorded.is_closed() && sequential::is_new_look(&recorded, &look) {
        store.insert_sequential_look(recorded.id, &look)?;
        recorded.looks.push(look);
    }
    Ok(recorded)
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
    let Some(recorded) = store.sequential_design(&args.base, new)? else {
        return Ok(None);
    };
    let design = recorded.design.options;
    let other_design = !asked_design(args).changes(&design).is_empty();
    let fixed_only = other_design
        || args.full
        || args.fail_on.is_some()
        || !args.saving.is_empty()
        || args.machines.machine.is_some()
        || args.machines.across_machines
        || !matches!(args.format, Format::Text | Format::Json);
    if fixed_only {
        errln!(
            "kbench: {} and {new} were looked at sequentially (`{}`): `kbench compare {} {new} --sequential` gives their verdict; below, the fixed design's, which does not hold its error rate after stopping on the data",
            args.base,
            recorded.design.command_line,
            args.base
        );
        return Ok(None);
    }
    let (base_data, new_data) = (
        kbench_analysis::LabelData::load(store, &args.base)?,
        kbench_analysis::LabelData::load(store, new)?,
    );
    let mut look =
        sequential::sequential_of(store, &base_data, &new_data, design, Some(&recorded))?;
    look.recorded = Some(recorded);
    let fixed = kbench_analysis::compare_loaded(
        store,
        &base_data,
        &new_data,
        *options,
        &args.machines.choice(),
    )?;
    verdict::print_decided(Some(&look), &fixed, args.format, Layout::Compact)?;
    Ok(Some(0))
}
