//! `--placement free|same-cpu|cross-cpu` of the two-task workloads (pipe,
//! seccomp-notify): kbench's own option; `free` is perf's behaviour and the default.
use crate::perfopt::{OptKind, OptSpec, ParsedOptions};
use crate::{cpus, OptionProblem, WorkloadError};
use kbench_record::PlacementRequest;

pub const OPTION: OptSpec = OptSpec {
    short: None,
    long: "placement",
    kind: OptKind::Str {
        argh: "free|same-cpu|cross-cpu",
    },
    help: "Pin both tasks to one CPU, or each to its own (kbench)",
};

/// The placement asked for; an unknown name is caught by [`check`] first.
pub fn requested(parsed: &ParsedOptions) -> PlacementRequest {
    parsed
        .str("placement")
        .flatten()
        .and_then(|name| PlacementRequest::parse(&name))
        .unwrap_or_default()
}

/// An unknown placement is an option error, printed as perf prints its own.
pub fn check(parsed: &ParsedOptions) -> Result<(), OptionProblem> {
    match parsed.str("placement").flatten() {
        Some(name) if PlacementRequest::parse(&name).is_none() => Err(OptionProblem {
            long: "placement",
            message: format!(
                "unknown placement '{name}' (expected {})",
                PlacementRequest::NAMES
            ),
        }),
        _ => Ok(()),
    }
}

/// The CPUs of the two tasks for `request`, or `None` when they are left free.
pub fn task_cpus(
    request: PlacementRequest,
    workload: &str,
) -> Result<Option<[u32; 2]>, WorkloadError> {
    let who = format!("{workload} --placement {}", request.as_str());
    Ok(cpus::placement_cpus(request, &who)?.map(|(a, b)| [a, b]))
}

/// The parameter a pinned placement adds to the run's key; none for `free`, so runs
/// stored before the option existed still compare with new unpinned ones.
pub fn param(request: PlacementRequest) -> Option<(String, serde_json::Value)> {
    (request != PlacementRequest::Free).then(|| ("placement".to_string(), request.as_str().into()))
}

/// Restores the calling thread's CPU mask when dropped: a process-mode pipe run pins
/// the coordinator itself, which must not stay pinned for the next run.
pub struct AffinityGuard(Option<rustix::thread::CpuSet>);

impl AffinityGuard {
    pub fn save() -> Self {
        Self(rustix::thread::sched_getaffinity(None).ok())
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        if let Some(set) = &self.0 {
            let _ = rustix::thread::sched_setaffinity(None, set);
        }
    }
}
