//! `kbench push`: copy sessions from one database (a board's SQLite, a host's after
//! vm-ab) to another (the lab's PostgreSQL). A session is known by its UUID: pushing
//! twice copies nothing the second time, a push cut off half-way completes when run
//! again, and each session is one transaction, so none is ever half there.
use crate::export::whole_sessions;
use crate::store::{PushedSession, Store, StoreError};

/// What a push did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushCounts {
    /// Sessions copied now, and their runs.
    pub sessions_copied: u64,
    pub runs_copied: u64,
    /// Sessions the destination held already.
    pub sessions_present: u64,
    /// Sessions left out because they have not ended: still running, or their kbench
    /// was killed (see [`push`]'s `include_unended`).
    pub sessions_unended: u64,
}

/// A push that stopped: what it had copied, and why it stopped.
#[derive(Debug)]
pub struct PushStopped {
    pub done: PushCounts,
    /// Sessions it was to look at in all.
    pub sessions: u64,
    pub error: StoreError,
}

/// Copies every session of `labels` (every label when empty) that `to` lacks.
/// A session that has not ended is left out unless `include_unended`: one still
/// running would be copied with the runs it has so far, and never completed, since
/// its UUID is then there. `progress` hears of each session as it is done, with the
/// sessions in all.
pub fn push(
    from: &Store,
    to: &mut Store,
    labels: &[String],
    include_unended: bool,
    mut progress: impl FnMut(&PushCounts, u64),
) -> Result<PushCounts, PushStopped> {
    let mut done = PushCounts::default();
    let stopped = |done: PushCounts, sessions: u64, error: StoreError| PushStopped {
        done,
        sessions,
        error,
    };
    let labels = match labels {
        [] => match from.labels() {
            Ok(all) => all.into_iter().map(|l| l.label).collect(),
            Err(e) => return Err(stopped(done, 0, e)),
        },
        named => named.to_vec(),
    };
    let mut local_sessions = Vec::with_capacity(labels.len());
    for label in &labels {
        local_sessions.push(from.sessions(label).map_err(|e| stopped(done, 0, e))?);
    }
    let sessions: u64 = local_sessions.iter().map(|s| s.len() as u64).sum();
    for (label, local) in labels.iter().zip(local_sessions) {
        let present = to
            .session_uuids(label)
            .map_err(|e| stopped(done, sessions, e))?;
        // Pushed before: the label's runs are not even read.
        if local.iter().all(|s| present.contains(&s.uuid)) {
            done.sessions_present += local.len() as u64;
            progress(&done, sessions);
            continue;
        }
        let whole = whole_sessions(from, label).map_err(|e| stopped(done, sessions, e))?;
        for (row, session) in whole {
            if present.contains(&row.uuid) {
                done.sessions_present += 1;
                progress(&done, sessions);
                continue;
            }
            if row.ended_unix_ns.is_none() && !include_unended {
                done.sessions_unended += 1;
                progress(&done, sessions);
                continue;
            }
            let pushed = read_extras(from, &row)
                .map(|(console_log_gzip, kernel_config)| PushedSession {
                    whole: session,
                    console_log_gzip,
                    kernel_config,
                })
                .map_err(|e| stopped(done, sessions, e))?;
            match to.insert_pushed(&pushed) {
                Ok(true) => {
                    done.sessions_copied += 1;
                    done.runs_copied += pushed.whole.runs.len() as u64;
                }
                // Another push stored it since we looked.
                Ok(false) => done.sessions_present += 1,
                Err(e) => return Err(stopped(done, sessions, e)),
            }
            progress(&done, sessions);
        }
    }
    Ok(done)
}

/// A session's console log (gzip) and kernel config, which whole_sessions leaves out.
fn read_extras(
    from: &Store,
    row: &crate::SessionRow,
) -> Result<(Option<Vec<u8>>, Option<String>), StoreError> {
    let console_log = from.console_log(row.id)?;
    let kernel_config = match &row.kernel_config_hash {
        Some(hash) => from.kernel_config_by_hash(hash)?,
        None => None,
    };
    Ok((console_log, kernel_config))
}
