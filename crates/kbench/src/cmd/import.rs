//! `kbench import FILE --label NAME`: perf bench, `perf stat -r`, hackbench or
//! cyclictest output, hyperfine JSON, `kbench bench --json` run records or a kbench
//! export, in one transaction: a malformed file imports nothing and names its line.
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_import::export::parse_export;
use kbench_import::fnv1a;
use kbench_store::{ImportSource, NewSession};

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
        if export
            .sessions
            .iter()
            .all(|s| s.runs.is_empty() && s.summaries.is_empty())
        {
            return usage(format!("{}: a kbench export with no runs", args.file));
        }
        for s in &mut export.sessions {
            // Under another label than the export's it is a copy, a session of its
            // own with an identity of its own: a push then copies both.
            if s.session.label != args.label {
                s.session.uuid = None;
            }
            s.session.label = args.label.clone();
            let seen = store.has_session(
                &args.label,
                s.session.started_unix_ns,
                s.session.boot_id.as_deref(),
            )?;
            if seen {
                return usage(format!(
                    "{}: its session of {} is already in label {}; importing it again would count its runs twice",
                    args.file,
                    kbench_report::compare::utc(s.session.started_unix_ns),
                    args.label
                ));
            }
            // Its session is here under another label: this copy is one of its own.
            if let Some(uuid) = &s.session.uuid {
                if store.has_uuid(uuid)? {
                    s.session.uuid = None;
                }
            }
        }
        let ids = store.insert_sessions(&export.sessions, &export.kernel_configs)?;
        outln!(
            "imported {} session(s) of kbench export '{}' as {}",
            ids.len(),
            export.label,
            args.label
        );
        return Ok(0);
    }
    let imported =
        kbench_import::parse_file_text(&args.file, &text).or_else(|e| usage(e.to_string()))?;
    // The content's hash is part of the source, so the same file imported twice is refused.
    let content_hash = format!("{:016x}", fnv1a(text.as_bytes()));
    if store.has_source_content(&args.label, &content_hash)? {
        return usage(format!(
            "{}: already imported into label {}; importing it again would count its runs twice",
            args.file, args.label
        ));
    }
    let source = ImportSource {
        file: args.file.clone(),
        format: imported.source_format.clone(),
        content_hash: Some(content_hash),
    };
    let new = NewSession {
        source: Some(source),
        ..session::new_session(&args.label, "import", None)
    };
    // An imported file was measured elsewhere: this machine's boot and environment
    // do not describe it.
    let new = NewSession {
        boot_id: None,
        environment: None,
        ..new
    };
    store.import(&new, &imported)?;
    outln!(
        "imported {} run(s) and {} summary row(s) from {} ({}) as {}",
        imported.runs.len(),
        imported.summaries.len(),
        args.file,
        imported.source_format,
        args.label
    );
    Ok(0)
}
