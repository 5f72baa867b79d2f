//! The plain data a workload hands back, defined in `kbench-record` (serde only, so the
//! store and the renderers read records without linking the workloads).
pub use kbench_record::{Direction, MetricValue, Role, RunRecord, RusageDelta, TaskCpus};
