//! `kbench show LABEL`: the sessions of a label and what they measured.
use crate::session::DbArgs;
use kbench_analysis::shown::{self, LabelShown};

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    pub label: String,
    /// Print, in full, the console log kept with the label's session ID (a boot of
    /// vm-ab or bisect, or one read by import-console): what a failed boot printed.
    #[arg(long, value_name = "ID")]
    pub console: Option<i64>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ShowArgs) -> anyhow::Result<i32> {
    let store = args.db.open_existing()?;
    let sessions = shown::label_sessions(&store, &args.label)?;
    let text = match args.console {
        Some(id) => shown::console_log(&store, &args.label, &sessions, id)?,
        None => kbench_report::show::text(&LabelShown::load(&store, &args.label, sessions)?),
    };
    crate::output::write_stdout(text.as_bytes())?;
    Ok(0)
}
