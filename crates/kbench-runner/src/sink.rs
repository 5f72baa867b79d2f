//! Where finished runs go.
use kbench_record::StoredRun;

/// Takes every run of a schedule, warm-ups and failed ones included, as soon as it
/// finished and before the next one starts, so that a schedule that dies has handed
/// over everything it did.
pub trait RunSink {
    fn accept(&mut self, arm: usize, run: StoredRun) -> anyhow::Result<()>;
}

/// Keeps the runs in memory, in the order they came, with their arm.
#[derive(Debug, Default)]
pub struct MemorySink {
    pub runs: Vec<(usize, StoredRun)>,
}

impl RunSink for MemorySink {
    fn accept(&mut self, arm: usize, run: StoredRun) -> anyhow::Result<()> {
        self.runs.push((arm, run));
        Ok(())
    }
}

/// A sink as a closure, for a caller with one place to put runs.
impl<F: FnMut(usize, StoredRun) -> anyhow::Result<()>> RunSink for F {
    fn accept(&mut self, arm: usize, run: StoredRun) -> anyhow::Result<()> {
        self(arm, run)
    }
}
