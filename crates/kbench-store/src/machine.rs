//! Which machine a session ran on, as the store keeps it: a level of replication
//! above boots, never pooled by compare unless asked.
use kbench_record::SessionEnvironment;

/// The machine a session's environment describes ([`SessionEnvironment::machine`]):
/// `None` when the session recorded no environment (most imports). Schema migration 6
/// fills older sessions with the same text in SQL; a test holds the two to one answer.
pub fn machine_of(environment: Option<&SessionEnvironment>) -> Option<String> {
    environment.map(SessionEnvironment::machine)
}
