//! What the commands that draw verdicts share (compare, report, plausible, ab, vm-ab):
//! the argument groups of how verdicts are drawn and on which machines' runs, the
//! `--format` parsers, and the printing of verdicts.
use crate::error::usage;
use clap::builder::TypedValueParser;
use kbench_analysis::plausible::{PlausibleReport, Saving};
use kbench_analysis::{CompareReport, ReportOptions};
use kbench_report::compare::{Compared, Layout};
use kbench_report::format::Format;

/// How verdicts are drawn, shared by compare and ab.
#[derive(Debug, Clone, clap::Args)]
pub struct VerdictArgs {
    /// The smallest change that matters, in percent [default: 1, or what this
    /// machine's calibration says it resolves with the runs at hand, if larger].
    #[arg(long, allow_hyphen_values = true)]
    pub delta: Option<f64>,
    /// The false-claim rate each verdict promises; a sequential design splits it among
    /// its primary metrics [default: 0.05].
    #[arg(long, allow_hyphen_values = true)]
    pub alpha: Option<f64>,
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
        if let Some(alpha) = self.alpha {
            if !(alpha > 0.0 && alpha < 1.0) {
                return usage("--alpha takes a rate in (0, 1)");
            }
        }
        Ok(ReportOptions {
            delta_pct: self.delta,
            alpha: self.alpha.unwrap_or(kbench_analysis::ALPHA),
            seed: self.seed,
            use_calibration: !self.no_calibration,
            now_unix_ns: crate::session::unix_now_ns(),
        })
    }
}

/// A `--format` of `allowed` formats, parsed into a [`Format`]; clap lists and
/// refuses the names as it does any list of possible values.
pub fn format_parser(allowed: &'static [Format]) -> impl TypedValueParser<Value = Format> {
    clap::builder::PossibleValuesParser::new(allowed.iter().map(|f| f.name()))
        .try_map(|name| name.parse::<Format>())
}

/// A `--fail-on` rule, parsed into a [`kbench_analysis::FailOn`].
pub fn fail_on_parser() -> impl TypedValueParser<Value = kbench_analysis::FailOn> {
    clap::builder::PossibleValuesParser::new(kbench_analysis::FailOn::ALL.map(|r| r.name()))
        .try_map(|name| name.parse::<kbench_analysis::FailOn>())
}

/// The formats of a verdict printed after runs (`ab`, `vm-ab`): all but the page.
pub const VERDICT_FORMATS: [Format; 4] =
    [Format::Text, Format::Markdown, Format::Json, Format::Csv];

/// Prints comparisons in `format`: reports alone, or what the comparisons read, whose
/// plots the page draws; a closed stdout ends the output quietly.
pub fn print_in<'a>(
    compared: impl Into<Compared<'a>>,
    format: Format,
    layout: Layout,
) -> anyhow::Result<()> {
    crate::output::write_stdout(format.render(compared, layout).as_bytes())?;
    Ok(())
}

/// A sequential decision, when there is one, then the fixed-design report of the
/// same units; in JSON the decision alone, as the verdict.
pub fn print_decided(
    sequential: Option<&kbench_analysis::sequential::SequentialReport>,
    fixed: &CompareReport,
    format: Format,
    layout: Layout,
) -> anyhow::Result<()> {
    if let Some(decided) = sequential {
        print_sequential(decided, format)?;
        if format != Format::Text {
            return Ok(());
        }
        crate::output::write_stdout(
            b"\nBelow, the fixed-design comparison of the same units, for its diagnostics:\n\n",
        )?;
    }
    print_in(std::slice::from_ref(fixed), format, layout)
}

/// The sequential design of a verdict's options: its α and δ (when not given, the
/// default of the figures' clock: 1% timed, less counted), stopping undecided at
/// `max_units_per_side`, read against `boundary` (a declared maximum, or none).
pub fn sequential_options(
    options: &ReportOptions,
    max_units_per_side: usize,
    boundary: kbench_stats::sequential::Boundary,
    clock: kbench_record::Clock,
) -> kbench_analysis::sequential::SequentialOptions {
    kbench_analysis::sequential::SequentialOptions {
        boundary,
        alpha: options.alpha,
        delta_pct: options
            .delta_pct
            .unwrap_or(kbench_analysis::clock::default_delta_pct(clock)),
        max_units_per_side,
        use_calibration: options.use_calibration,
    }
}

/// Records the design of a sequential comparison of `labels` by `by`, with this
/// command line, before its first look: the design, with no looks yet.
pub fn record_design(
    store: &mut kbench_store::Store,
    labels: (&str, &str),
    options: kbench_analysis::sequential::SequentialOptions,
    by: kbench_record::sequential::DesignedBy,
    max_time_s: Option<f64>,
) -> Result<kbench_record::sequential::RecordedDesign, kbench_store::StoreError> {
    let design = kbench_analysis::sequential::design_record(
        labels,
        options,
        by,
        &crate::session::command_line(),
        max_time_s,
        crate::session::unix_now_ns(),
    );
    let id = store.insert_sequential_design(&design)?;
    Ok(kbench_record::sequential::RecordedDesign {
        id,
        design,
        looks: Vec::new(),
    })
}

/// Prints a sequential comparison (JSON, or text for any other format); a closed
/// stdout ends the output quietly.
pub fn print_sequential(
    report: &kbench_analysis::sequential::SequentialReport,
    format: Format,
) -> anyhow::Result<()> {
    let text = match format {
        Format::Json => kbench_report::sequential::json(report),
        _ => kbench_report::sequential::text(report),
    };
    crate::output::write_stdout(text.as_bytes())?;
    Ok(())
}

/// Every `--saving`, checked before anything is read.
pub fn parse_savings(texts: &[String]) -> anyhow::Result<Vec<Saving>> {
    texts
        .iter()
        .map(|t| Saving::parse(t).or_else(usage))
        .collect()
}

/// Prints a plausibility report (JSON, or text for any other format); a closed stdout
/// ends the output quietly.
pub fn print_plausible(report: &PlausibleReport, format: Format) -> anyhow::Result<()> {
    let text = match format {
        Format::Json => kbench_report::plausible::json(report),
        _ => kbench_report::plausible::text(report),
    };
    crate::output::write_stdout(text.as_bytes())?;
    Ok(())
}
