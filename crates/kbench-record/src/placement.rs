//! Where the two tasks of a run ran relative to each other: on one CPU, each on its
//! own, or moving between the two. A pipe round trip on one CPU is a context switch;
//! across two CPUs it is a wakeup of another CPU, often an IPI and an idle exit, and
//! costs several times more. Runs of the two kinds are two populations.
use serde::{Deserialize, Serialize};

/// One task of a run (a messaging sender, a pipe worker, ...) and where it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskCpus {
    pub task: String,
    pub cpus: Vec<u32>,
    /// CPU changes seen between the task's own getcpu samples (a lower bound).
    #[serde(default)]
    pub sampled_migrations: u64,
    /// The kernel's `se.nr_migrations`, where the task could read it (sched debug).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_migrations: Option<u64>,
}

/// What a run asked for: `--placement` of pipe and seccomp-notify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementRequest {
    /// The scheduler places the tasks (perf's behaviour).
    #[default]
    Free,
    /// Both tasks pinned to one CPU.
    SameCpu,
    /// Each task pinned to its own CPU, not SMT siblings, of one CPU class.
    CrossCpu,
}

impl PlacementRequest {
    pub const NAMES: &'static str = "free, same-cpu or cross-cpu";

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "free" => Some(Self::Free),
            "same-cpu" => Some(Self::SameCpu),
            "cross-cpu" => Some(Self::CrossCpu),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Free => "free",
            Self::SameCpu => "same-cpu",
            Self::CrossCpu => "cross-cpu",
        }
    }
}

/// Where a run's tasks were seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementKind {
    /// Every task seen on one CPU, the same one.
    SameCpu,
    /// Every task seen on one CPU each, no two on the same.
    CrossCpu,
    /// Some task seen on more than one CPU, or tasks sharing a CPU only part of the time.
    Mixed,
}

impl PlacementKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SameCpu => "same-cpu",
            Self::CrossCpu => "cross-cpu",
            Self::Mixed => "mixed",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "same-cpu" => Some(Self::SameCpu),
            "cross-cpu" => Some(Self::CrossCpu),
            "mixed" => Some(Self::Mixed),
            _ => None,
        }
    }

    /// The kind from the CPUs each task was seen on; `None` with fewer than two tasks
    /// or a task never sampled.
    pub fn of_tasks(tasks: &[TaskCpus]) -> Option<Self> {
        if tasks.len() < 2 || tasks.iter().any(|t| t.cpus.is_empty()) {
            return None;
        }
        if tasks.iter().any(|t| t.cpus.len() > 1) {
            return Some(Self::Mixed);
        }
        let mut cpus: Vec<u32> = tasks.iter().map(|t| t.cpus[0]).collect();
        cpus.sort_unstable();
        cpus.dedup();
        Some(match cpus.len() {
            1 => Self::SameCpu,
            n if n == tasks.len() => Self::CrossCpu,
            _ => Self::Mixed,
        })
    }
}

/// The placement a run had, as observed by its tasks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ObservedPlacement {
    pub kind: PlacementKind,
    /// Of the tasks' CPU samples, the share taken while the peer's last sample was
    /// the same CPU; `None` when nothing was sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colocated_share: Option<f64>,
}

/// The colocated share at or above which a run that moved counts as on one CPU.
const MOSTLY_TOGETHER: f64 = 0.9;
/// The colocated share at or below which a run that moved counts as across CPUs.
const MOSTLY_APART: f64 = 0.1;

impl ObservedPlacement {
    /// The kind that describes most of the run: a run whose tasks were seen on more
    /// than one CPU but sampled together on one CPU at least 90% of the time (a
    /// start-up migration) counts as same-cpu, apart at least 90% as cross-cpu.
    pub fn effective(&self) -> PlacementKind {
        match (self.kind, self.colocated_share) {
            (PlacementKind::Mixed, Some(share)) if share >= MOSTLY_TOGETHER => {
                PlacementKind::SameCpu
            }
            (PlacementKind::Mixed, Some(share)) if share <= MOSTLY_APART => PlacementKind::CrossCpu,
            (kind, _) => kind,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(cpus: &[u32]) -> TaskCpus {
        TaskCpus {
            task: "t".into(),
            cpus: cpus.to_vec(),
            sampled_migrations: 0,
            nr_migrations: None,
        }
    }

    #[test]
    fn kinds_from_task_cpus() {
        use PlacementKind::*;
        for (tasks, kind) in [
            (vec![task(&[1]), task(&[1])], Some(SameCpu)),
            (vec![task(&[0]), task(&[1])], Some(CrossCpu)),
            (vec![task(&[0, 1]), task(&[1])], Some(Mixed)),
            (vec![task(&[0]), task(&[1]), task(&[1])], Some(Mixed)),
            (vec![task(&[0])], None),
            (vec![task(&[0]), task(&[])], None),
        ] {
            assert_eq!(PlacementKind::of_tasks(&tasks), kind, "{tasks:?}");
        }
    }

    #[test]
    fn a_run_that_moved_counts_where_it_mostly_ran() {
        let moved = |share| ObservedPlacement {
            kind: PlacementKind::Mixed,
            colocated_share: share,
        };
        assert_eq!(moved(Some(0.97)).effective(), PlacementKind::SameCpu);
        assert_eq!(moved(Some(0.03)).effective(), PlacementKind::CrossCpu);
        assert_eq!(moved(Some(0.5)).effective(), PlacementKind::Mixed);
        assert_eq!(moved(None).effective(), PlacementKind::Mixed);
        let pinned = ObservedPlacement {
            kind: PlacementKind::CrossCpu,
            colocated_share: Some(0.0),
        };
        assert_eq!(pinned.effective(), PlacementKind::CrossCpu);
    }

    #[test]
    fn names_round_trip() {
        for k in [
            PlacementKind::SameCpu,
            PlacementKind::CrossCpu,
            PlacementKind::Mixed,
        ] {
            assert_eq!(PlacementKind::parse(k.as_str()), Some(k));
        }
        for r in [
            PlacementRequest::Free,
            PlacementRequest::SameCpu,
            PlacementRequest::CrossCpu,
        ] {
            assert_eq!(PlacementRequest::parse(r.as_str()), Some(r));
        }
        assert_eq!(PlacementRequest::parse("both"), None);
    }
}
