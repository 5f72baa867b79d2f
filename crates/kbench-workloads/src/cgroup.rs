//! Entering a cgroup for pipe's `-G SEND,RECV`, as perf does: names are relative to
//! the cgroup2 mount (or, on a v1 system, the perf_event hierarchy); a process
//! writes its pid to `cgroup.procs`, a thread its tid to `cgroup.threads`, falling
//! back to `tasks` on v1. kbench never creates or removes cgroups.
use crate::WorkloadError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A cgroup directory a worker will enter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub dir: PathBuf,
    pub threaded: bool,
}

/// The mount point of the cgroup hierarchy perf would use.
fn cgroup_mount() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut v1_perf_event = None;
    for line in mountinfo.lines() {
        let (left, right) = line.split_once(" - ")?;
        let mount_point = left.split_whitespace().nth(4)?;
        let mut right = right.split_whitespace();
        let fstype = right.next()?;
        let super_options = right.nth(1).unwrap_or("");
        if fstype == "cgroup2" {
            return Some(PathBuf::from(mount_point));
        }
        if fstype == "cgroup" && super_options.split(',').any(|o| o == "perf_event") {
            v1_perf_event = Some(PathBuf::from(mount_point));
        }
    }
    v1_perf_event
}

impl Target {
    /// Finds `name` under the cgroup mount and checks now (outside the timed region)
    /// that its membership file can be opened for writing.
    pub fn resolve(name: &str, threaded: bool) -> Result<Self, WorkloadError> {
        let mount = cgroup_mount().ok_or_else(|| {
            WorkloadError::Unsupported(
                "-G/--cgroups: no cgroup2 or perf_event cgroup hierarchy is mounted".into(),
            )
        })?;
        let target = Target {
            name: name.to_string(),
            dir: mount.join(name.trim_start_matches('/')),
            threaded,
        };
        target.open_membership().map_err(|e| {
            let hint = match e.kind() {
                std::io::ErrorKind::NotFound => format!(
                    " (Hint: create the cgroup first, like 'mkdir {}')",
                    target.dir.display()
                ),
                std::io::ErrorKind::PermissionDenied => " (Hint: try to run as root)".into(),
                _ => format!(" ({e})"),
            };
            WorkloadError::Failed(format!("Failed to open cgroup file in {name}{hint}"))
        })?;
        Ok(target)
    }

    /// The cgroup this process is in now, to come back to after the run.
    pub fn current() -> Result<Self, WorkloadError> {
        let mount = cgroup_mount()
            .ok_or_else(|| WorkloadError::Unsupported("no cgroup hierarchy mounted".into()))?;
        let membership = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| WorkloadError::failed("/proc/self/cgroup", e))?;
        let v2 = mount_is_v2(&mount);
        let path = membership
            .lines()
            .filter_map(|l| {
                let mut f = l.splitn(3, ':');
                Some((f.next()?, f.next()?, f.next()?))
            })
            .find(|(_, controllers, _)| {
                if v2 {
                    controllers.is_empty()
                } else {
                    controllers.split(',').any(|c| c == "perf_event")
                }
            })
            .map(|(_, _, path)| path.to_string())
            .ok_or_else(|| WorkloadError::Failed("cannot find this process's cgroup".into()))?;
        Ok(Target {
            name: path.clone(),
            dir: mount.join(path.trim_start_matches('/')),
            threaded: false,
        })
    }

    fn membership_file(&self, threaded: bool) -> PathBuf {
        let name = if threaded {
            "cgroup.threads"
        } else {
            "cgroup.procs"
        };
        let file = self.dir.join(name);
        if file.exists() {
            file
        } else {
            self.dir.join("tasks")
        }
    }

    fn open_membership(&self) -> std::io::Result<std::fs::File> {
        std::fs::OpenOptions::new()
            .write(true)
            .open(self.membership_file(self.threaded))
    }

    /// Moves the calling worker in: its pid (process mode) or tid (thread mode).
    pub fn enter_worker(&self) -> std::io::Result<()> {
        let id = if self.threaded {
            rustix::thread::gettid().as_raw_nonzero().get()
        } else {
            rustix::process::getpid().as_raw_nonzero().get()
        };
        self.write_id(self.threaded, id).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("Cannot enter to cgroup: {} ({e})", self.name),
            )
        })
    }

    /// Moves the whole calling process in.
    pub fn enter_self(&self) -> std::io::Result<()> {
        self.write_id(false, rustix::process::getpid().as_raw_nonzero().get())
    }

    fn write_id(&self, threaded: bool, id: i32) -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(self.membership_file(threaded))?;
        file.write_all(format!("{id}\n").as_bytes())
    }
}

fn mount_is_v2(mount: &Path) -> bool {
    mount.join("cgroup.controllers").exists()
}
