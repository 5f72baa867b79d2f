//! What the commands that draw verdicts share (compare, report, plausible, ab, vm-ab):
//! the argument groups of how verdicts are drawn and on which host's runs, the
//! `--format` parsers, and the wiring of kbench-report's verdicts and kbench-analysis's
//! sequential designs to stdout and the store.
use clap::builder::TypedValueParser;
use kbench_analysis::sequential::SequentialOptions;
use kbench_analysis::{CompareReport, ReportOptions};
use kbench_report::compare::Layout;
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

/// Which host's runs a verdict reads, for labels holding runs of several machines
/// (the hosts they ran on, not the machine `vm-ab` boots: [`crate::vm::QemuArgs`]).
#[derive(Debug, Clone, clap::Args)]
pub struct HostChoiceArgs {
    /// Compare only the runs of this machine (`kbench list --machines` names them)
    /// [default: the one machine both labels ran on].
    #[arg(long, value_name = "NAME", conflicts_with = "across_machines")]
    pub machine: Option<String>,
    /// Compare the runs of every machine, each machine one unit of replication (its
    /// boots and sessions nested in it), instead of refusing to pool them.
    #[arg(long)]
    pub across_machines: bool,
}

impl HostChoiceArgs {
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
        let now = crate::session::unix_now_ns();
        let use_calibration = !self.no_calibration;
        let options = ReportOptions::asked(self.delta, self.alpha, self.seed, use_calibration, now);
        Ok(options?)
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

/// A sequential decision, when there is one, then the fixed-design report of the
/// same units (see [`kbench_report::sequential::decided_in`]); a closed stdout ends
/// the output quietly.
pub fn print_decided(
    sequential: Option<&kbench_analysis::sequential::SequentialReport>,
    fixed: &CompareReport,
    format: Format,
    layout: Layout,
) -> anyhow::Result<()> {
    let text = kbench_report::sequential::decided_in(sequential, fixed, format, layout);
    Ok(crate::output::write_stdout(text.as_bytes())?)
}

/// Records the design of a sequential comparison of `labels` by `by`, with this
/// command line, before its first look: the design, with no looks yet.
pub fn record_design(
    store: &mut kbench_store::Store,
    labels: (&str, &str),
    options: SequentialOptions,
    by: kbench_record::sequential::DesignedBy,
    max_time_s: Option<f64>,
) -> Result<kbench_record::sequential::RecordedDesign, kbench_store::StoreError> {
    let (command_line, now) = (
        crate::session::command_line(),
        crate::session::unix_now_ns(),
    );
    let record = kbench_analysis::sequential::record_design;
    record(store, labels, options, by, &command_line, max_time_s, now)
}
