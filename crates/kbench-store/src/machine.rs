//! Which machine a session ran on, as the store keeps it: a level of replication
//! above boots, never pooled by compare unless asked.
//!
//! A machine is named by its host name and CPU models (`host: model + model`), kept in
//! the `machine` column, and told apart from others of that name by its id
//! (`kbench_sys::machine_id`), kept in `machine_id`. The name alone is shown while one
//! id at most has been seen under it, so the sessions stored before ids existed keep
//! their machine; once two machines share a name, each is shown as `name [id]`, and
//! the sessions without an id stay under the bare name: nothing says which board
//! they ran on.
use kbench_record::SessionEnvironment;

/// The machine a session's environment describes ([`SessionEnvironment::machine`]):
/// `None` when the session recorded no environment (most imports). Schema migration 6
/// fills older sessions with the same text in SQL; a test holds the two to one answer.
pub fn machine_of(environment: Option<&SessionEnvironment>) -> Option<String> {
    environment.map(SessionEnvironment::machine)
}

/// The machine id a session's environment records ([`SessionEnvironment::machine_id`]).
pub fn machine_id_of(environment: Option<&SessionEnvironment>) -> Option<String> {
    environment?.machine_id().map(str::to_string)
}

/// The machine as a session of it knows itself: `name [id]`, or the name without an
/// id. A store shows it bare while one id is seen under the name; `--machine` takes
/// either form (`kbench_analysis::compare::resolve_machine`).
pub fn machine_with_id(environment: Option<&SessionEnvironment>) -> Option<String> {
    let name = machine_of(environment)?;
    Some(match machine_id_of(environment) {
        Some(id) => machine_key(&name, &id),
        None => name,
    })
}

/// A machine of `name` told apart by `id`, as it is shown: `name [id]` ([`MACHINE_SQL`]
/// writes the same in SQL).
pub fn machine_key(name: &str, id: &str) -> String {
    format!("{name} [{id}]")
}

/// The name and the id of a machine shown as `name [id]` ([`machine_key`]); `None` for
/// a bare name.
pub fn split_machine_key(key: &str) -> Option<(&str, &str)> {
    key.strip_suffix(']')?.rsplit_once(" [")
}

/// SQL for the machine of session `s` as kbench shows it (the module's rule): its name,
/// with its id in brackets ([`machine_key`]) when another id was seen under that name.
/// One index probe a session (`sessions_by_machine_id`).
pub const MACHINE_SQL: &str = "CASE WHEN s.machine_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM sessions o WHERE o.machine = s.machine
        AND o.machine_id IS NOT NULL AND o.machine_id <> s.machine_id)
    THEN s.machine || ' [' || s.machine_id || ']' ELSE s.machine END";
