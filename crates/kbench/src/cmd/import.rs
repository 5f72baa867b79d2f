//! `kbench import FILE --label NAME`: perf bench, `perf stat -r`, hackbench or
//! cyclictest output, hyperfine JSON, `kbench bench --json` run records or a kbench
//! export, in one transaction: a malformed file imports nothing and names its line.
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_import::export::parse_export;

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The file to read (`-` for standard input).
    pub file: String,
    /// The label the runs are stored under.
    #[arg(long)]
    pub label: String,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ImportArgs) -> anyhow::Result<i32> {
    session::check_label(&args.label)?;
    let text = crate::input::read_text(&args.file)?;
    let mut store = args.db.open()?;
    if let Some(export) = parse_export(&text) {
        let mut export = export.or_else(|e| usage(format!("{}: {e}", args.file)))?;
        let sessions = store.import_export(&args.file, &mut export, &args.label)?;
        let (from, to) = (&export.label, &args.label);
        outln!("imported {sessions} session(s) of kbench export '{from}' as {to}");
        return Ok(0);
    }
    let imported =
        kbench_import::parse_file_text(&args.file, &text).or_else(|e| usage(e.to_string()))?;
    let format = &imported.source_format;
    let new = session::new_session(&args.label, "import", None);
    let new = new.measured_elsewhere(&args.file, format, &text);
    store.refuse_imported(&new, "runs")?;
    store.import(&new, &imported)?;
    outln!(
        "imported {} run(s) and {} summary row(s) from {} ({format}) as {}",
        imported.runs.len(),
        imported.summaries.len(),
        args.file,
        args.label
    );
    Ok(0)
}
