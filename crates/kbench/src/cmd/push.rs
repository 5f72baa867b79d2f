//! `kbench push [LABEL...] --to URL`: copies sessions from this database (a board's
//! SQLite, a host's after vm-ab) to a shared one (a lab's PostgreSQL).
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_store::push::push;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// The labels whose sessions to copy [default: every label].
    pub labels: Vec<String>,
    /// The database to copy to: `postgres://USER@HOST/DB` (add `?sslmode=require` for
    /// TLS, `&sslrootcert=FILE` for a lab's own CA), a PostgreSQL socket directory,
    /// or another SQLite file.
    #[arg(long, value_name = "URL")]
    pub to: PathBuf,
    /// Push sessions that have not ended too: a session whose kbench was killed
    /// (its runs so far are all it will have). One still running would be pushed
    /// half, and never completed.
    #[arg(long)]
    pub include_unended: bool,
    /// The database to copy from.
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: PushArgs) -> anyhow::Result<i32> {
    if !cfg!(feature = "shared-store") {
        return crate::error::built_without("the shared store", "push");
    }
    let from = args.db.open_existing()?;
    for label in &args.labels {
        if !from.has_label(label)? {
            return usage(format!(
                "no runs labelled '{label}' in {}",
                from.path().display()
            ));
        }
    }
    let mut to = session::open_store(&args.to)?;
    if to.path() == from.path() {
        return usage("--to names the database pushed from");
    }
    // On a terminal only: a bar of sessions done.
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::new(0)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let result = push(
        &from,
        &mut to,
        &args.labels,
        args.include_unended,
        |done, sessions| {
            bar.set_length(sessions);
            bar.set_position(done.sessions_copied + done.sessions_present);
        },
    );
    bar.finish_and_clear();
    match result {
        Ok(done) => {
            outln!("{}", kbench_report::push::summary(&done, to.path()));
            Ok(0)
        }
        Err(stopped) => usage(kbench_report::push::stopped(&stopped, to.path())),
    }
}
