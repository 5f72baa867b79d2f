//! Where finished runs go.
use kbench_record::sequential::SequentialLook;
use kbench_record::StoredRun;

/// Takes every unit of a schedule (a run, or a boot), warm-ups and failed ones
/// included, as soon as it finished and before the next one starts, so that a schedule
/// that dies has handed over everything it did; and every look its stop rule made.
pub trait RunSink<K = StoredRun> {
    fn accept(&mut self, arm: usize, unit: K) -> anyhow::Result<()>;

    /// A look of the schedule's sequential decision, kept with its design.
    fn keep_look(&mut self, _look: &SequentialLook) -> anyhow::Result<()> {
        Ok(())
    }
}

/// Keeps the units in memory, in the order they came, with their arm.
#[derive(Debug)]
pub struct MemorySink<K = StoredRun> {
    pub runs: Vec<(usize, K)>,
}

impl<K> Default for MemorySink<K> {
    fn default() -> Self {
        MemorySink { runs: Vec::new() }
    }
}

impl<K> RunSink<K> for MemorySink<K> {
    fn accept(&mut self, arm: usize, unit: K) -> anyhow::Result<()> {
        self.runs.push((arm, unit));
        Ok(())
    }
}

/// A sink as a closure, for a caller with one place to put runs.
impl<K, F: FnMut(usize, K) -> anyhow::Result<()>> RunSink<K> for F {
    fn accept(&mut self, arm: usize, unit: K) -> anyhow::Result<()> {
        self(arm, unit)
    }
}

/// Runs stored as the runner hands them over, each in its own transaction.
pub struct StoreSink<'a> {
    store: &'a mut kbench_store::Store,
    /// The session of each arm; one for all when it holds one.
    session_ids: Vec<i64>,
}

impl<'a> StoreSink<'a> {
    /// Every arm's runs into `session_id`.
    pub fn one(store: &'a mut kbench_store::Store, session_id: i64) -> StoreSink<'a> {
        StoreSink {
            store,
            session_ids: vec![session_id],
        }
    }

    /// Arm `i`'s runs into `session_ids[i]`.
    pub fn per_arm(store: &'a mut kbench_store::Store, session_ids: Vec<i64>) -> StoreSink<'a> {
        StoreSink { store, session_ids }
    }
}

impl RunSink for StoreSink<'_> {
    fn accept(&mut self, arm: usize, run: StoredRun) -> anyhow::Result<()> {
        let session_id = match self.session_ids.as_slice() {
            [one] => *one,
            ids => ids[arm],
        };
        self.store.insert_run(session_id, &run)?;
        Ok(())
    }
}
