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
