//! What `kbench push` says: what it copied, or where it stopped.
use kbench_store::push::{PushCounts, PushStopped};
use std::path::Path;

/// The line of a push that ended: what it copied to `to`, and what it left.
pub fn summary(done: &PushCounts, to: &Path) -> String {
    let mut line = format!(
        "pushed {} sessions ({} runs) to {}; {} were there already",
        done.sessions_copied,
        done.runs_copied,
        to.display(),
        done.sessions_present
    );
    if done.sessions_unended > 0 {
        line.push_str(&format!(
            "; {} not ended were left (still running, or killed: --include-unended pushes them)",
            done.sessions_unended
        ));
    }
    line
}

/// The error of a push to `to` that stopped: how far it got, why, and that running it
/// again copies the rest.
pub fn stopped(stopped: &PushStopped, to: &Path) -> String {
    let done = &stopped.done;
    format!(
        "push to {} stopped after {} of {} sessions ({} runs copied): {}; \
         the same push run again copies the rest",
        to.display(),
        done.sessions_copied + done.sessions_present + done.sessions_unended,
        stopped.sessions,
        done.runs_copied,
        stopped.error
    )
}
