//! `kbench push`: copy sessions from one database (a board's SQLite, a host's after
//! vm-ab) to another (the lab's PostgreSQL). A session is known by its UUID: pushing
//! twice copies nothing the second time, a push cut off half-way completes when run
//! again, and sessions are stored in transactions of whole sessions, so none is ever
//! half there.
use crate::export::whole_sessions;
use crate::store::{PushedSession, Store, StoreError};
use std::collections::HashMap;
use std::sync::Arc;

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
    let mut batch = Batch::default();
    let mut configs = ConfigCache::default();
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
            let pushed = with_extras(from, &row, session, &mut configs)
                .map_err(|e| stopped(done, sessions, e))?;
            batch.runs += pushed.whole.runs.len();
            batch.sessions.push(pushed);
            if batch.is_full() {
                batch
                    .store(to, &mut done)
                    .map_err(|e| stopped(done, sessions, e))?;
                progress(&done, sessions);
            }
        }
    }
    batch
        .store(to, &mut done)
        .map_err(|e| stopped(done, sessions, e))?;
    if done.sessions_copied > 0 {
        to.refresh_statistics()
            .map_err(|e| stopped(done, sessions, e))?;
    }
    progress(&done, sessions);
    Ok(done)
}

/// Sessions read and not yet stored: stored together, in one transaction, once they
/// hold [`Batch::RUNS`] runs or [`Batch::SESSIONS`] sessions. A server round trip
/// per run bounds a push to about 1,600 runs a second; a batch takes a handful
/// whatever its size (its sessions 200 to a statement, its runs' ids in one query,
/// its runs and its values one bulk load each). A push cut off loses the batch in
/// flight and nothing else: its sessions are not there, and the next push copies
/// them.
#[derive(Default)]
struct Batch {
    sessions: Vec<PushedSession>,
    runs: usize,
}

impl Batch {
    const RUNS: usize = 5_000;
    const SESSIONS: usize = 500;

    fn is_full(&self) -> bool {
        self.runs >= Self::RUNS || self.sessions.len() >= Self::SESSIONS
    }

    /// Stores the batch and empties it, counting what was copied and what another
    /// push had stored since we looked.
    fn store(&mut self, to: &mut Store, done: &mut PushCounts) -> Result<(), StoreError> {
        if self.sessions.is_empty() {
            return Ok(());
        }
        let stored = to.insert_pushed_batch(&self.sessions)?;
        for (session, stored) in self.sessions.iter().zip(stored) {
            if stored {
                done.sessions_copied += 1;
                done.runs_copied += session.whole.runs.len() as u64;
            } else {
                done.sessions_present += 1;
            }
        }
        *self = Batch::default();
        Ok(())
    }
}

/// The kernel configs read so far, by hash: a lab's sessions share a few configs,
/// and each is decompressed once, not once a session.
#[derive(Default)]
struct ConfigCache(HashMap<String, Option<Arc<str>>>);

/// The session `whole` to push, with its console log (gzip) and kernel config, which
/// whole_sessions leaves out.
fn with_extras(
    from: &Store,
    row: &crate::SessionRow,
    whole: crate::SessionWithRuns,
    configs: &mut ConfigCache,
) -> Result<PushedSession, StoreError> {
    let console_log_gzip = from.console_log(row.id)?;
    let kernel_config = match &row.kernel_config_hash {
        Some(hash) => match configs.0.get(hash) {
            Some(config) => config.clone(),
            None => {
                let config: Option<Arc<str>> = from.kernel_config_by_hash(hash)?.map(Arc::from);
                configs.0.insert(hash.clone(), config.clone());
                config
            }
        },
        None => None,
    };
    Ok(PushedSession {
        whole,
        console_log_gzip,
        kernel_config,
    })
}
