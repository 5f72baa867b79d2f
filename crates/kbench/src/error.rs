//! The exit-status convention: a user mistake is exit 2, a failed workload exit 1.

/// A mistake in what the user gave us (options, files, databases): one line, exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Shorthand for returning a [`UsageError`] from a command.
pub fn usage<T>(msg: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(msg.into()).into())
}

/// A command or format this build left out (the guest build, `--no-default-features`):
/// one line naming what is missing, exit 2.
pub fn built_without<T>(part: &str, what: &str) -> anyhow::Result<T> {
    usage(format!(
        "this kbench was built without {part} (a guest build): {what} needs the full kbench"
    ))
}

/// Whether an error is the user's mistake, asked of each error in its chain: the
/// binary's own [`UsageError`], or a library's error that says so itself (a database
/// they named that is read-only, a revision git does not know, a `--cpus` spec).
fn is_users(cause: &(dyn std::error::Error + 'static)) -> bool {
    if cause.is::<UsageError>() {
        return true;
    }
    if let Some(e) = cause.downcast_ref::<kbench_store::StoreError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_analysis::AnalysisError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_runner::RunnerError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_boot::tree::TreeError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_boot::init::InitError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_boot::stored::StoreBootError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_boot::imported::ConsoleImportError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_boot::lava::LavaJobError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_workloads::WorkloadError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_sys::SysError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_boot::machine::MachineError>() {
        return e.is_usage();
    }
    if let Some(e) = cause.downcast_ref::<kbench_boot::bisect::BisectError>() {
        let wrapped_users = e
            .wrapped()
            .is_some_and(|inner| causes(inner).into_iter().any(is_users));
        return e.is_usage() || wrapped_users;
    }
    false
}

/// The errors of `e`'s chain, outermost first. A sink's error inside the runner's is
/// followed into: it is the sink's own (the store's), which says whose it is.
fn causes(e: &anyhow::Error) -> Vec<&(dyn std::error::Error + 'static)> {
    let mut causes = Vec::new();
    for cause in e.chain() {
        if let Some(
            kbench_runner::RunnerError::Sink(inner) | kbench_runner::RunnerError::Executor(inner),
        ) = cause.downcast_ref()
        {
            // Transparent: the same texts from here on, as the sink's own errors.
            causes.extend(self::causes(inner));
            break;
        }
        causes.push(cause);
    }
    causes
}

/// How a failed command ends, decided once for every command: a user's mistake
/// anywhere in the chain is exit status 2, anything else 1.
pub fn exit_status(e: &anyhow::Error) -> u8 {
    if causes(e).into_iter().any(is_users) {
        2
    } else {
        1
    }
}

/// What is printed of a failed command, as `{e:#}` prints it (each error of the chain,
/// joined by ": "), down to the first that is the user's: that one's text says what is
/// wrong, and what lies under it (the database's own error) it already quotes.
pub fn message(e: &anyhow::Error) -> String {
    let causes = causes(e);
    let end = causes
        .iter()
        .position(|cause| is_users(*cause))
        .map_or(causes.len(), |users| users + 1);
    causes[..end]
        .iter()
        .map(|cause| cause.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}

#[cfg(test)]
mod tests {
    use super::{exit_status, message, UsageError};
    use kbench_store::StoreError;

    fn read_only() -> StoreError {
        StoreError::Sqlite(rusqlite_failure(8, "attempt to write a readonly database"))
    }

    fn rusqlite_failure(code: i32, text: &str) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), Some(text.into()))
    }

    #[test]
    fn a_users_error_under_context_is_exit_2_and_printed_as_before() {
        let e = anyhow::Error::new(StoreError::Unusable("x.db: not a kbench database".into()))
            .context("reading x.db");
        assert_eq!(exit_status(&e), 2);
        assert_eq!(message(&e), "reading x.db: x.db: not a kbench database");
        let e = anyhow::Error::new(read_only()).context("the label");
        assert_eq!(exit_status(&e), 2);
        // The store's text, without the SQLite error's own chain under it.
        assert_eq!(
            message(&e),
            "the label: the database is read-only: attempt to write a readonly database"
        );
        let e = anyhow::Error::new(kbench_analysis::AnalysisError::Store(read_only()));
        assert_eq!(exit_status(&e), 2);
        let e = anyhow::Error::new(UsageError("--runs 0".into())).context("run");
        assert_eq!(exit_status(&e), 2);
        assert_eq!(message(&e), "run: --runs 0");
    }

    #[test]
    fn a_sinks_error_is_classified_as_the_sink_said() {
        let sink = anyhow::Error::new(read_only());
        let e = anyhow::Error::new(kbench_runner::RunnerError::Sink(sink));
        assert_eq!(exit_status(&e), 2);
        assert_eq!(
            message(&e),
            "the database is read-only: attempt to write a readonly database"
        );
        let sink = anyhow::anyhow!("the console went away");
        let e = anyhow::Error::new(kbench_runner::RunnerError::Sink(sink));
        assert_eq!(exit_status(&e), 1);
        assert_eq!(message(&e), "the console went away");
    }

    #[test]
    fn anything_else_is_exit_1_with_its_whole_chain() {
        let e = anyhow::Error::new(StoreError::Sqlite(rusqlite_failure(10, "disk I/O error")))
            .context("writing a run");
        assert_eq!(exit_status(&e), 1);
        assert_eq!(message(&e), format!("{e:#}"));
        let e = anyhow::Error::new(kbench_runner::RunnerError::GaveUp(
            "every arm failed".into(),
        ));
        assert_eq!(exit_status(&e), 1);
    }

    #[test]
    fn a_part_left_out_is_one_line_and_the_users_error() {
        let e = super::built_without::<()>("the shared store", "push").unwrap_err();
        assert!(e.downcast_ref::<super::UsageError>().is_some());
        assert_eq!(
            e.to_string(),
            "this kbench was built without the shared store (a guest build): push needs the full kbench"
        );
    }
}
