//! CPU choice and pinning for workloads that place each thread on an explicit CPU.
use crate::WorkloadError;
use kbench_record::PlacementRequest;
use kbench_sys::{format_cpulist, Sysroot};
use rustix::thread::CpuSet;

/// The CPUs this process may run on now: its affinity mask, which the kernel already
/// intersects with the active (online) CPUs. `kbench bench --cpus` narrows it.
pub fn allowed_cpus() -> Result<Vec<u32>, WorkloadError> {
    let set = rustix::thread::sched_getaffinity(None)
        .map_err(|e| WorkloadError::failed("sched_getaffinity", e))?;
    Ok((0..CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .map(|cpu| cpu as u32)
        .collect())
}

/// A CPU given on the command line as a signed number, checked against `allowed`.
pub fn checked_cpu(option: &str, value: i32, allowed: &[u32]) -> Result<u32, WorkloadError> {
    let cpu = u32::try_from(value)
        .ok()
        .filter(|cpu| allowed.contains(cpu));
    cpu.ok_or_else(|| {
        WorkloadError::Usage(format!(
            "--{option} {value}: CPU {value} is absent, offline or not allowed (usable CPUs: {})",
            format_cpulist(allowed)
        ))
    })
}

/// A partner for `cpu` among `allowed` ([`kbench_sys::Topology::partner`]: not its SMT
/// sibling, of its class). When the topology cannot be read, the first allowed CPU
/// not listed as its sibling, else any other.
pub fn partner_cpu(cpu: u32, allowed: &[u32]) -> Option<u32> {
    let root = Sysroot::from_env();
    if let Ok(topology) = kbench_sys::Topology::read(&root) {
        return topology.partner(cpu, allowed);
    }
    let siblings = root
        .read_cpulist(&format!(
            "/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
        ))
        .unwrap_or_default();
    let others = allowed.iter().copied().filter(|&c| c != cpu);
    others
        .clone()
        .find(|c| !siblings.contains(c))
        .or_else(|| others.clone().next())
}

/// The CPU of option `--long`, if given, checked against `allowed`.
pub fn given_cpu(
    parsed: &crate::perfopt::ParsedOptions,
    long: &str,
    allowed: &[u32],
) -> Result<Option<u32>, WorkloadError> {
    parsed
        .int(long)
        .map(|v| checked_cpu(long, v, allowed))
        .transpose()
}

/// Two CPUs from two optional choices: each as given, else a partner of the other,
/// else the first usable CPU and its partner. `who` names the workload in the error
/// when only one CPU is usable. The two may be equal when both were given equal.
pub fn complete_pair(
    given: (Option<u32>, Option<u32>),
    allowed: &[u32],
    who: &str,
) -> Result<(u32, u32), WorkloadError> {
    let partner = |cpu: u32| {
        partner_cpu(cpu, allowed).ok_or_else(|| {
            WorkloadError::Usage(format!(
                "{who} needs two usable CPUs, only CPU {cpu} is usable"
            ))
        })
    };
    let first = allowed
        .first()
        .copied()
        .ok_or_else(|| WorkloadError::Unsupported("no usable CPU".into()))?;
    match given {
        (Some(a), Some(b)) => Ok((a, b)),
        (Some(a), None) => Ok((a, partner(a)?)),
        (None, Some(b)) => Ok((partner(b)?, b)),
        (None, None) => Ok((first, partner(first)?)),
    }
}

/// The CPUs the two tasks of a run are pinned to for `request` (the first task's,
/// the second's), chosen as wakeup chooses its pair: the first allowed CPU, and for
/// `cross-cpu` its [`partner_cpu`]. `None` for `free`.
pub fn placement_cpus(
    request: PlacementRequest,
    who: &str,
) -> Result<Option<(u32, u32)>, WorkloadError> {
    if request == PlacementRequest::Free {
        return Ok(None);
    }
    let allowed = allowed_cpus()?;
    let first = allowed
        .first()
        .copied()
        .ok_or_else(|| WorkloadError::Unsupported("no usable CPU".into()))?;
    match request {
        PlacementRequest::SameCpu => Ok(Some((first, first))),
        _ => complete_pair((None, None), &allowed, who).map(Some),
    }
}

/// Every online CPU with `role`: the CPUs whose interrupts a run of real IO counts,
/// since a device's completion lands where its vector is routed, not where the task
/// ran.
pub fn online_cpus_with_role(role: &str) -> Vec<(u32, String)> {
    let online = Sysroot::from_env()
        .read_cpulist("/sys/devices/system/cpu/online")
        .or_else(|| allowed_cpus().ok())
        .unwrap_or_default();
    online.into_iter().map(|c| (c, role.to_string())).collect()
}

/// The affinity mask of `cpus`.
pub fn cpu_set(cpus: &[u32]) -> CpuSet {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu as usize);
    }
    set
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: u32) -> Result<(), String> {
    rustix::thread::sched_setaffinity(None, &cpu_set(&[cpu]))
        .map_err(|e| format!("pinning to CPU {cpu}: {e}"))
}

/// Makes the calling thread SCHED_IDLE: it runs only when nothing else wants the CPU,
/// and any SCHED_OTHER wakeup on its CPU preempts it.
pub fn make_current_thread_sched_idle() -> Result<(), String> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler only reads `param`, a valid local; pid 0 is the calling
    // thread (Linux applies the policy per thread).
    let ret = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if ret != 0 {
        return Err(format!(
            "sched_setscheduler(SCHED_IDLE): {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}
