//! `kbench compare BASE NEW [NEW...]`: the verdict of each NEW against BASE.
use crate::error::usage;
use crate::session::DbArgs;
use kbench_analysis::{CompareReport, ReportOptions};
use kbench_report::compare::Layout;

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
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json", "csv", "html"])]
    pub format: String,
    /// Every row (secondary metrics, percentiles) with every diagnostic, not one screen.
    #[arg(long)]
    pub full: bool,
    /// Exit 1 when a primary row (the table's, per-class and per-placement rows
    /// included) is a regression (or any real change).
    #[arg(long, value_parser = ["regression", "change"])]
    pub fail_on: Option<String>,
    /// A claimed saving per event, `EVENT=NS` (repeatable): after the comparison, whether
    /// it could explain each change (as `kbench plausible NEW --base BASE` says).
    #[arg(long, value_name = "EVENT=NS")]
    pub saving: Vec<String>,
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

/// Which machines' runs a comparison uses, for labels holding runs of several.
#[derive(Debug, Clone, clap::Args)]
pub struct MachineArgs {
    /// Compare only the runs of this machine (`kbench list --machines` names them)
    /// [default: the one machine both labels ran on].
    #[arg(long, value_name = "NAME", conflicts_with = "across_machines")]
    pub machine: Option<String>,
    /// Compare the runs of every machine, each machine one unit of replication (its
    /// boots and sessions nested in it), instead of refusing to pool them.
    #[arg(long)]
    pub across_machines: bool,
}

impl MachineArgs {
    pub fn choice(&self) -> kbench_analysis::Machines {
        match (&self.machine, self.across_machines) {
            (Some(m), _) => kbench_analysis::Machines::Only(m.clone()),
            (None, true) => kbench_analysis::Machines::Across,
            (None, false) => kbench_analysis::Machines::Same,
        }
    }
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
    let savings = crate::cmd::plausible::parse_savings(&args.saving)?;
    if !savings.is_empty() && !matches!(args.format.as_str(), "text" | "markdown") {
        return usage("--saving goes with text or markdown; for JSON, `kbench plausible NEW --base BASE --saving ... --format json`");
    }
    check_distinct(&args.new)?;
    let store = args.db.open_existing()?;
    let reports = compare_each(
        &store,
        &args.base,
        &args.new,
        options,
        &args.machines.choice(),
    )?;
    let layout = if args.full {
        Layout::Full
    } else {
        Layout::Compact
    };
    if args.format == "html" {
        let page = crate::cmd::report::page(&store, &reports)?;
        crate::output::write_stdout(page.as_bytes())?;
    } else {
        print_reports(&reports, &args.format, layout)?;
    }
    for report in reports.iter().filter(|_| !savings.is_empty()) {
        let plausible = kbench_analysis::plausible::plausible(
            &store,
            &report.new.label,
            &savings,
            Some(report),
        )
        .map_err(crate::analysis_error)?;
        crate::output::write_stdout(b"\n")?;
        crate::cmd::plausible::print(&plausible, "text")?;
    }
    let failed = args.fail_on.as_deref().is_some_and(|rule| {
        reports
            .iter()
            .flat_map(|r| &r.rows)
            .filter(|r| r.is_primary())
            .any(|r| kbench_analysis::fails_on(rule, r.verdict))
    });
    Ok(i32::from(failed))
}

/// NEW labels are columns: one named twice is a mistake, refused before anything is read.
pub fn check_distinct(new: &[String]) -> anyhow::Result<()> {
    for (i, label) in new.iter().enumerate() {
        if new[..i].contains(label) {
            return usage(format!("'{label}' is named twice"));
        }
    }
    Ok(())
}

/// The comparison of each NEW label against BASE.
pub fn compare_each(
    store: &kbench_store::Store,
    base: &str,
    new: &[String],
    options: ReportOptions,
    machines: &kbench_analysis::Machines,
) -> anyhow::Result<Vec<CompareReport>> {
    new.iter()
        .map(|new| kbench_analysis::compare_labels_on(store, base, new, options, machines))
        .collect::<Result<Vec<_>, _>>()
        .map_err(crate::analysis_error)
}

/// Prints reports; a closed stdout ends the output quietly.
pub fn print_reports(
    reports: &[CompareReport],
    format: &str,
    layout: Layout,
) -> anyhow::Result<()> {
    if let Some(f) = kbench_report::compare::by_name(format) {
        crate::output::write_stdout(f.render(reports, layout).as_bytes())?;
    }
    Ok(())
}
