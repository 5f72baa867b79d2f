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

/// A git or build-tree failure: the user's when it names their input (a directory that
/// is no repository, a revision git does not know), exit 2; kbench's otherwise.
pub fn tree_error(e: kbench_boot::tree::TreeError) -> anyhow::Error {
    if e.is_usage() {
        UsageError(e.to_string()).into()
    } else {
        e.into()
    }
}

#[cfg(test)]
mod tests {
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
