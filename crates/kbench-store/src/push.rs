//! `kbench push`: copy sessions from one database (a board's SQLite, a host's after
//! vm-ab) to another (the lab's PostgreSQL). A session is known by its UUID: pushing
//! twice copies nothing the second time, a push cut off half-way completes when run
//! again, and sessions are stored in transactions of whole sessions, so none is ever
//! half there.
use crate::export::whole_sessions;
use crate::store::{Backend, PushedSession, Store, StoreError};
use std::collections::{BTreeSet, HashMap};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};

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
///
/// Sessions are read on this thread and stored, a [`Batch`] at a time, by writers on
/// threads and connections of their own, so that reading the next batch and storing
/// the last overlap: on PostgreSQL one server process stores a connection's batches,
/// at about 0.13 ms of its CPU a run of 4.4 KB, so each writer brings one more of the
/// server's CPUs. SQLite takes one writer at a time, and gets one.
pub fn push(
    from: &Store,
    to: &mut Store,
    labels: &[String],
    include_unended: bool,
    mut progress: impl FnMut(&PushCounts, u64),
) -> Result<PushCounts, PushStopped> {
    let done = PushCounts::default();
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
    let mut present = Vec::with_capacity(labels.len());
    for label in &labels {
        local_sessions.push(from.sessions(label).map_err(|e| stopped(done, 0, e))?);
        present.push(to.session_uuids(label).map_err(|e| stopped(done, 0, e))?);
    }
    let sessions: u64 = local_sessions.iter().map(|s| s.len() as u64).sum();
    let extra_writers = match to.backend() {
        Backend::Postgres => std::thread::available_parallelism().map_or(0, |n| n.get().min(4) - 1),
        Backend::Sqlite => 0,
    };
    let (batches, batches_out) = sync_channel::<Batch>(1 + extra_writers);
    let (stored_in, stored) = channel::<Result<PushCounts, StoreError>>();
    let batches_out = Arc::new(Mutex::new(batches_out));
    let mut outcome = Outcome {
        done,
        error: None,
        sessions,
        progress: &mut progress,
    };
    let reopen: Vec<_> = (0..extra_writers).map(|_| to.reopener()).collect();
    std::thread::scope(|scope| {
        for open in reopen {
            let (batches_out, stored_in) = (Arc::clone(&batches_out), stored_in.clone());
            // A writer the server does not let connect (a role's connection limit)
            // leaves the batches to the others.
            scope.spawn(move || {
                if let Ok(mut to) = open() {
                    write_batches(&mut to, &batches_out, &stored_in);
                }
            });
        }
        // The writers hold the only receiver and senders: a send fails once every
        // writer has stopped, and the results end when the last one has.
        let to = &mut *to;
        scope.spawn(move || write_batches(to, &batches_out, &stored_in));
        let mut reading = Reading {
            from,
            include_unended,
            batches,
            stored: &stored,
            outcome: &mut outcome,
        };
        if let Err(e) = reading.read(&labels, local_sessions, &present) {
            reading.outcome.error.get_or_insert(e);
        }
        drop(reading);
        for result in stored.iter() {
            outcome.take(result);
        }
    });
    let done = outcome.done;
    if let Some(error) = outcome.error {
        return Err(stopped(done, sessions, error));
    }
    if done.sessions_copied > 0 {
        to.refresh_statistics()
            .map_err(|e| stopped(done, sessions, e))?;
    }
    progress(&done, sessions);
    Ok(done)
}

/// What a push has done so far, and the first error of any writer or of the
/// reading.
struct Outcome<'p> {
    done: PushCounts,
    error: Option<StoreError>,
    sessions: u64,
    progress: &'p mut dyn FnMut(&PushCounts, u64),
}

impl Outcome<'_> {
    /// A writer's result for one batch.
    fn take(&mut self, result: Result<PushCounts, StoreError>) {
        match result {
            Ok(batch) => self.done.add(&batch),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self.tell();
    }

    fn tell(&mut self) {
        (self.progress)(&self.done, self.sessions);
    }
}

/// The reading side of a push: the sessions of `from` that the destination lacks,
/// in batches to the writers.
struct Reading<'a, 'p> {
    from: &'a Store,
    include_unended: bool,
    batches: SyncSender<Batch>,
    stored: &'a Receiver<Result<PushCounts, StoreError>>,
    outcome: &'a mut Outcome<'p>,
}

impl Reading<'_, '_> {
    /// Reads until every label is read or a writer has failed. `present`: per label,
    /// the UUIDs the destination holds.
    fn read(
        &mut self,
        labels: &[String],
        local_sessions: Vec<Vec<crate::SessionRow>>,
        present: &[BTreeSet<String>],
    ) -> Result<(), StoreError> {
        let mut batch = Batch::default();
        let mut configs = ConfigCache::default();
        for ((label, local), present) in labels.iter().zip(local_sessions).zip(present) {
            // Pushed before: the label's runs are not even read.
            if local.iter().all(|s| present.contains(&s.uuid)) {
                self.outcome.done.sessions_present += local.len() as u64;
                self.outcome.tell();
                continue;
            }
            for (row, session) in whole_sessions(self.from, label)? {
                if present.contains(&row.uuid) {
                    self.outcome.done.sessions_present += 1;
                } else if row.ended_unix_ns.is_none() && !self.include_unended {
                    self.outcome.done.sessions_unended += 1;
                } else {
                    let pushed = with_extras(self.from, &row, session, &mut configs)?;
                    batch.runs += pushed.whole.runs.len();
                    batch.sessions.push(pushed);
                    if batch.is_full() && !self.send(std::mem::take(&mut batch)) {
                        return Ok(());
                    }
                }
                self.outcome.tell();
            }
        }
        if !batch.sessions.is_empty() {
            self.send(batch);
        }
        Ok(())
    }

    /// Hands `batch` to the writers, waiting while they are all busy, and takes what
    /// they have stored meanwhile; `false` once one has failed.
    fn send(&mut self, batch: Batch) -> bool {
        // A send fails only when every writer has stopped: the results say why.
        let sent = self.batches.send(batch).is_ok();
        while let Ok(result) = self.stored.try_recv() {
            self.outcome.take(result);
        }
        sent && self.outcome.error.is_none()
    }
}

/// A writer: stores each batch it takes on `to` until there are none or one fails,
/// and says what each did.
fn write_batches(
    to: &mut Store,
    batches: &Mutex<Receiver<Batch>>,
    stored: &Sender<Result<PushCounts, StoreError>>,
) {
    loop {
        // The lock is held while waiting: the other writers wait for it instead.
        let next = match batches.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok(batch) = next else {
            return;
        };
        let result = batch.store(to);
        let failed = result.is_err();
        if stored.send(result).is_err() || failed {
            return;
        }
    }
}

impl PushCounts {
    fn add(&mut self, other: &PushCounts) {
        self.sessions_copied += other.sessions_copied;
        self.runs_copied += other.runs_copied;
        self.sessions_present += other.sessions_present;
        self.sessions_unended += other.sessions_unended;
    }
}

/// Sessions read and not yet stored: stored together, in one transaction, once they
/// hold [`Batch::RUNS`] runs or [`Batch::SESSIONS`] sessions. A server round trip
/// per run bounds a push to about 1,600 runs a second; a batch takes a handful
/// whatever its size (its sessions 200 to a statement, its runs' ids in one query,
/// its runs and its values one bulk load each). A push cut off loses the batches in
/// flight and nothing else: their sessions are not there, and the next push copies
/// them.
#[derive(Default)]
struct Batch {
    sessions: Vec<PushedSession>,
    runs: usize,
}

impl Batch {
    const RUNS: usize = 1_000;
    const SESSIONS: usize = 500;

    fn is_full(&self) -> bool {
        self.runs >= Self::RUNS || self.sessions.len() >= Self::SESSIONS
    }

    /// Stores the batch: what was copied, and what another push had stored since
    /// we looked.
    fn store(&self, to: &mut Store) -> Result<PushCounts, StoreError> {
        let mut done = PushCounts::default();
        let stored = to.insert_pushed_batch(&self.sessions)?;
        for (session, stored) in self.sessions.iter().zip(stored) {
            if stored {
                done.sessions_copied += 1;
                done.runs_copied += session.whole.runs.len() as u64;
            } else {
                done.sessions_present += 1;
            }
        }
        Ok(done)
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
