//! The figures a run declares for comparison: each with its unit, which way is better,
//! and whether it is the run's headline figure.
use serde::{Deserialize, Serialize};

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Times, costs, context switches.
    LowerIsBetter,
    /// Throughputs.
    HigherIsBetter,
}

impl Direction {
    pub fn higher_is_better(self) -> bool {
        self == Direction::HigherIsBetter
    }

    /// `HigherIsBetter` when `higher_is_better`, else `LowerIsBetter`.
    pub fn from_higher_is_better(higher_is_better: bool) -> Direction {
        if higher_is_better {
            Direction::HigherIsBetter
        } else {
            Direction::LowerIsBetter
        }
    }
}

/// A metric's place in the run: one primary metric per run (the figure perf prints, the
/// first series' p50), every other one secondary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Primary,
    Secondary,
}

/// One figure of a run, as the workload (or importer) that produced it declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    /// `usecs_per_op`, `total_sec`, `wake_latency_p50_ns`, ...
    pub name: String,
    pub value: f64,
    /// `us/op`, `s`, `ns`, `csw/op`, ...
    pub unit: String,
    pub direction: Direction,
    pub role: Role,
}

impl MetricValue {
    pub fn new(
        name: impl Into<String>,
        value: f64,
        unit: impl Into<String>,
        direction: Direction,
        role: Role,
    ) -> MetricValue {
        MetricValue {
            name: name.into(),
            value,
            unit: unit.into(),
            direction,
            role,
        }
    }

    /// The run's primary metric.
    pub fn primary(
        name: impl Into<String>,
        value: f64,
        unit: impl Into<String>,
        direction: Direction,
    ) -> MetricValue {
        MetricValue::new(name, value, unit, direction, Role::Primary)
    }

    /// A secondary metric.
    pub fn secondary(
        name: impl Into<String>,
        value: f64,
        unit: impl Into<String>,
        direction: Direction,
    ) -> MetricValue {
        MetricValue::new(name, value, unit, direction, Role::Secondary)
    }

    pub fn is_primary(&self) -> bool {
        self.role == Role::Primary
    }

    pub fn higher_is_better(&self) -> bool {
        self.direction.higher_is_better()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names() {
        let m = MetricValue::primary("usecs_per_op", 4.5, "us/op", Direction::LowerIsBetter);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["direction"], "lower_is_better");
        assert_eq!(json["role"], "primary");
        let back: MetricValue = serde_json::from_value(json).unwrap();
        assert_eq!(back, m);
        let s = serde_json::to_value(MetricValue::secondary(
            "ops_per_sec",
            1.0,
            "ops/s",
            Direction::HigherIsBetter,
        ))
        .unwrap();
        assert_eq!(s["direction"], "higher_is_better");
        assert_eq!(s["role"], "secondary");
    }
}
