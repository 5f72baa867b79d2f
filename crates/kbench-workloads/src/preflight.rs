//! Checks made before anything is forked: will the limits let the run through?
//!
//! perf discovers a too-low limit half-way through set-up, exits, and leaves the
//! workers it already forked blocked forever. kbench computes what it will need
//! first and refuses with one line naming the limit and the number needed.
use crate::WorkloadError;
use rustix::process::{getrlimit, Resource};

/// File descriptors the process holds now.
pub fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|dir| dir.count().saturating_sub(1) as u64) // the directory's own fd
        .unwrap_or(3)
}

fn soft_limit(resource: Resource) -> Option<u64> {
    getrlimit(resource).current
}

/// Fails unless `needed` descriptors fit under RLIMIT_NOFILE.
pub fn check_nofile(needed: u64, what: &str) -> Result<(), WorkloadError> {
    match soft_limit(Resource::Nofile) {
        Some(limit) if needed > limit => Err(WorkloadError::Usage(format!(
            "{what} needs {needed} open files but RLIMIT_NOFILE is {limit}; \
             raise it (ulimit -n {needed}) or ask for less"
        ))),
        _ => Ok(()),
    }
}

/// Fails unless `tasks` more tasks fit under RLIMIT_NPROC (for non-root), the
/// kernel's pid and thread limits, and the cgroup's pids.max.
pub fn check_tasks(tasks: u64, what: &str) -> Result<(), WorkloadError> {
    let running = running_tasks();
    let needed = running + tasks;
    if !rustix::process::geteuid().is_root() {
        if let Some(limit) = soft_limit(Resource::Nproc) {
            if tasks > limit {
                return Err(WorkloadError::Usage(format!(
                    "{what} needs {tasks} tasks but RLIMIT_NPROC is {limit}; \
                     raise it (ulimit -u {tasks}) or ask for less"
                )));
            }
        }
    }
    for (path, name) in [
        ("/proc/sys/kernel/pid_max", "kernel.pid_max"),
        ("/proc/sys/kernel/threads-max", "kernel.threads-max"),
    ] {
        if let Some(limit) = read_number(path) {
            if needed > limit {
                return Err(WorkloadError::Usage(format!(
                    "{what} needs {tasks} more tasks ({needed} in all) but {name} is {limit}"
                )));
            }
        }
    }
    if let Some((limit, current)) = cgroup_pids_limit() {
        if current + tasks > limit {
            return Err(WorkloadError::Usage(format!(
                "{what} needs {tasks} more tasks but the cgroup's pids.max is {limit} \
                 with {current} in use"
            )));
        }
    }
    Ok(())
}

fn read_number(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Tasks on the system now, from /proc/loadavg's `running/total` field.
fn running_tasks() -> u64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// `(pids.max, pids.current)` of this process's cgroup, v2 or v1, when limited.
fn cgroup_pids_limit() -> Option<(u64, u64)> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let dir = match controllers {
            "" => format!("/sys/fs/cgroup{path}"),
            c if c.split(',').any(|c| c == "pids") => format!("/sys/fs/cgroup/pids{path}"),
            _ => continue,
        };
        let max = std::fs::read_to_string(format!("{dir}/pids.max")).ok()?;
        let max: u64 = max.trim().parse().ok()?; // "max" means unlimited
        let current = read_number(&format!("{dir}/pids.current")).unwrap_or(0);
        return Some((max, current));
    }
    None
}
