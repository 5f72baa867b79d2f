//! A metric's full name: the comparison key's parts, as a decision's looks name it.
use crate::group::Key;

/// A metric by name: `workload metric`, with the parameters and variant that keep its
/// runs apart from others of the workload. A bisection follows one; a sequential
/// design's first look fixes which it decides.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct MetricName {
    pub workload: String,
    pub params: String,
    pub variant: String,
    pub metric: String,
}

impl MetricName {
    pub(crate) fn of(key: &Key) -> MetricName {
        MetricName {
            workload: key.run.workload.clone(),
            params: key.run.params.clone(),
            variant: key.run.variant.clone(),
            metric: key.metric.clone(),
        }
    }

    /// The metric a recorded sequential look's row is of.
    pub(crate) fn of_look_row(row: &kbench_record::sequential::LookRow) -> MetricName {
        MetricName {
            workload: row.workload.clone(),
            params: row.params.clone(),
            variant: row.variant.clone(),
            metric: row.metric.clone(),
        }
    }

    /// Whether `spec` (`METRIC` or `WORKLOAD:METRIC`, the workload as stored or by its
    /// short name: `pipe`, `sched/pipe`) names this metric.
    pub fn matches(&self, spec: &str) -> bool {
        match spec.split_once(':') {
            Some((workload, metric)) => {
                metric == self.metric
                    && (workload == self.workload
                        || self.workload.rsplit('/').next() == Some(workload))
            }
            None => spec == self.metric,
        }
    }
}

impl std::fmt::Display for MetricName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.workload, self.metric)?;
        if !self.variant.is_empty() {
            write!(f, " ({})", self.variant)?;
        }
        Ok(())
    }
}
