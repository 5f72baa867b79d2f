//! What a run of the suite gave for one workload (`kbench run`'s closing table, the
//! calibration's sessions): each measured run's primary value and placement, and the
//! failures.
use kbench_record::PlacementKind;

/// What happened to one workload.
#[derive(Debug, Clone)]
pub struct WorkloadOutcome {
    pub spec: String,
    pub metric: String,
    pub unit: String,
    /// The primary metric of each measured run, in run order.
    pub values: Vec<f64>,
    /// Where each measured run's two tasks mostly ran (pipe, seccomp-notify).
    pub placements: Vec<Option<PlacementKind>>,
    pub failures: Vec<String>,
}

impl WorkloadOutcome {
    /// Half-width of the 95% CI of the median, as a percentage of the median.
    pub fn precision_pct(&self) -> Option<f64> {
        kbench_stats::descriptive::precision_pct(&self.values)
    }

    /// The outcome of the runs that mostly ran with placement `kind`.
    pub fn only_placement(&self, kind: PlacementKind) -> WorkloadOutcome {
        let keep = |i: &usize| self.placements[*i] == Some(kind);
        let kept: Vec<usize> = (0..self.values.len()).filter(keep).collect();
        WorkloadOutcome {
            spec: self.spec.clone(),
            metric: self.metric.clone(),
            unit: self.unit.clone(),
            values: kept.iter().map(|&i| self.values[i]).collect(),
            placements: kept.iter().map(|&i| self.placements[i]).collect(),
            failures: Vec::new(),
        }
    }
}
