//! `kbench plausible LABEL --saving EVENT=AMOUNT...`: whether a claimed saving per event
//! could explain a change of the label's primary metrics; with `--base BASE`, against
//! the change observed from BASE to LABEL.
use crate::session::DbArgs;
use crate::verdict::{self, VerdictArgs};
use kbench_report::format::Format;

#[derive(Debug, clap::Args)]
pub struct PlausibleArgs {
    /// The label whose runs give the events per op and the time per op (the patched
    /// kernel's, or either: the counts rarely move).
    pub label: String,
    /// A saving per event, `EVENT=AMOUNT` (repeatable): EVENT one of irq, ipi,
    /// ipi:call, ipi:resched, csw, syscall, migration, wake, softirq; AMOUNT a time, ns
    /// when no unit is given (`ipi=300`, `irq=5ns`, `irq=0.3us` or `0.3µs`,
    /// `irq=1ms`), or instructions for counted runs (`ipi=28insns`).
    #[arg(long, required = true, value_name = "EVENT=AMOUNT")]
    pub saving: Vec<String>,
    /// Also the change observed from BASE to LABEL, and the saving it would need.
    #[arg(long, value_name = "BASE")]
    pub base: Option<String>,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = verdict::format_parser(&[Format::Text, Format::Json]))]
    pub format: Format,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: PlausibleArgs) -> anyhow::Result<i32> {
    let savings = kbench_analysis::plausible::parse_savings(&args.saving)?;
    let options = args.verdict.options()?;
    let store = args.db.open_existing()?;
    let observed = match &args.base {
        Some(base) => Some(kbench_analysis::compare_labels(
            &store,
            base,
            &args.label,
            options,
        )?),
        None => None,
    };
    let report =
        kbench_analysis::plausible::plausible(&store, &args.label, &savings, observed.as_ref())?;
    let text = kbench_report::plausible::in_format(&report, args.format);
    crate::output::write_stdout(text.as_bytes())?;
    Ok(0)
}
