//! `kbench export LABEL --format json|csv`: everything under a label, to stdout.
use crate::session::DbArgs;

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    pub label: String,
    /// `json` is complete and re-importable; `csv` is one line per value.
    #[arg(long, default_value = "json", value_parser = ["json", "csv"])]
    pub format: String,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ExportArgs) -> anyhow::Result<i32> {
    let store = args.db.open_existing()?;
    if !store.has_label(&args.label)? {
        return crate::error::usage(format!("no runs labelled '{}'", args.label));
    }
    let export = kbench_store::export::export_label(&store, &args.label)?;
    if args.format == "csv" {
        out!("{}", kbench_store::export::export_csv(&export));
    } else {
        outln!("{}", serde_json::to_string_pretty(&export)?);
    }
    Ok(0)
}
