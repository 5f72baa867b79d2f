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
            // RLIMIT_NPROC counts every task of the user, not just ours.
            let mine = user_tasks();
            if mine + tasks > limit {
                return Err(WorkloadError::Usage(format!(
                    "{what} needs {tasks} more tasks but RLIMIT_NPROC is {limit} with {mine} \
                     in use; raise it (ulimit -u {}) or ask for less",
                    mine + tasks
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

/// Tasks (threads included) of this process's real user, from /proc.
fn user_tasks() -> u64 {
    let uid = rustix::process::getuid().as_raw();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .filter(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u32>().ok())
                == Some(uid)
        })
        .map(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(1)
        })
        .sum()
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
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let dir = match controllers {
            "" => format!("/sys/fs/cgroup{path}"),
            c if c.split(',').any(|c| c == "pids") => format!("/sys/fs/cgroup/pids{path}"),
            _ => continue,
        };
        // "max" (unlimited) and a missing file both mean: look at the next hierarchy.
        let Some(max) = read_number(&format!("{dir}/pids.max")) else {
            continue;
        };
        let current = read_number(&format!("{dir}/pids.current")).unwrap_or(0);
        return Some((max, current));
    }
    None
}
