//! tracefs for one traced run: found where it is mounted, or mounted as a detached
//! mount (fsopen/fsmount) that no other process sees and that goes away with its file
//! descriptor; the run's settings live in its own instance (`instances/NAME`), with its
//! own buffer, clock, events and pid filter, so nothing global is changed and removing
//! the instance undoes everything.
//!
//! Every path is opened relative to the tracefs root's descriptor, so it works from
//! any thread and whatever the mount namespace.
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags};
use std::io;
use std::time::Duration;

/// Why tracing cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum TracefsError {
    /// tracefs is only writable by root.
    #[error("tracing needs root (tracefs is writable by root only)")]
    NotRoot,
    /// The kernel has no tracefs, or it cannot be mounted.
    #[error("tracefs is not available: {0}")]
    Unavailable(String),
    /// A tracefs file could not be read or written.
    #[error("tracefs {path}: {source}")]
    Io {
        /// The file, relative to the tracefs root.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

fn io_error(path: &str) -> impl FnOnce(rustix::io::Errno) -> TracefsError + '_ {
    move |errno| TracefsError::Io {
        path: path.to_string(),
        source: errno.into(),
    }
}

/// The tracefs root.
#[derive(Debug)]
pub struct Tracefs {
    root: OwnedFd,
}

impl Tracefs {
    /// The mounted tracefs, or a private detached mount of it when none is mounted;
    /// under a `$KBENCH_SYSROOT` other than /, its `sys/kernel/tracing` (see
    /// [`Tracefs::open_in`]).
    pub fn open() -> Result<Tracefs, TracefsError> {
        Tracefs::open_in(&crate::Sysroot::from_env())
    }

    /// tracefs as [`Tracefs::open`] finds it on the host; under another machine root,
    /// the tree at its `sys/kernel/tracing`, never a mount: a root without one stands
    /// for a kernel without tracefs.
    pub fn open_in(sysroot: &crate::Sysroot) -> Result<Tracefs, TracefsError> {
        if !rustix::process::geteuid().is_root() {
            return Err(TracefsError::NotRoot);
        }
        if !sysroot.is_host() {
            let path = sysroot.path("/sys/kernel/tracing");
            let root = rustix::fs::open(
                &path,
                OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| TracefsError::Unavailable(format!("{}: {e}", path.display())))?;
            return Ok(Tracefs { root });
        }
        let root = match mounted_tracefs() {
            Some(path) => rustix::fs::open(
                &path,
                OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| TracefsError::Unavailable(format!("{path}: {e}")))?,
            None => detached_mount()?,
        };
        Ok(Tracefs { root })
    }

    /// Whether the kernel has event `system/name` (`sched/sched_waking`).
    pub fn has_event(&self, event: &str) -> bool {
        rustix::fs::accessat(
            &self.root,
            format!("events/{event}/enable"),
            rustix::fs::Access::EXISTS,
            AtFlags::empty(),
        )
        .is_ok()
    }

    /// Reads a file relative to the root (`trace_clock`, `instances/X/trace`).
    pub fn read(&self, path: &str) -> Result<String, TracefsError> {
        read_at(&self.root, path)
    }

    /// The names of the instances under `instances/`.
    pub fn instance_names(&self) -> Result<Vec<String>, TracefsError> {
        let dir = rustix::fs::openat(
            &self.root,
            "instances",
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io_error("instances"))?;
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::new(dir).map_err(io_error("instances"))? {
            let entry = entry.map_err(io_error("instances"))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != "." && name != ".." {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    /// Removes instances `PREFIX<pid>` whose process is gone (a run killed by SIGKILL
    /// cannot remove its own).
    pub fn remove_stale_instances(&self, prefix: &str) {
        for name in self.instance_names().unwrap_or_default() {
            let pid = name
                .strip_prefix(prefix)
                .and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists()) {
                if let Ok(instance) = self.attach(&name) {
                    let _ = instance.remove();
                }
            }
        }
    }

    /// Creates instance `name`: a buffer and settings of its own, tracing off.
    pub fn create_instance(&self, name: &str) -> Result<Instance, TracefsError> {
        let path = format!("instances/{name}");
        rustix::fs::mkdirat(&self.root, &path, Mode::from_raw_mode(0o750))
            .map_err(io_error(&path))?;
        let instance = self.attach(name)?;
        instance.write("tracing_on", "0")?;
        Ok(instance)
    }

    fn attach(&self, name: &str) -> Result<Instance, TracefsError> {
        let path = format!("instances/{name}");
        let dir = rustix::fs::openat(
            &self.root,
            &path,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io_error(&path))?;
        let root = self.root.try_clone().map_err(|e| TracefsError::Io {
            path: ".".into(),
            source: e,
        })?;
        Ok(Instance {
            root,
            dir,
            name: name.to_string(),
            marker: None,
            removed: false,
        })
    }
}

/// Where tracefs is mounted, from `/proc/self/mountinfo`.
fn mounted_tracefs() -> Option<String> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mountinfo.lines().find_map(|line| {
        let (fields, fs) = line.split_once(" - ")?;
        (fs.split(' ').next()? == "tracefs")
            .then(|| unescape_mount_path(fields.split(' ').nth(4)?))?
    })
}

/// mountinfo writes space, tab, newline and backslash as octal escapes.
fn unescape_mount_path(text: &str) -> Option<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && bytes.len() >= i + 4 {
            let octal = std::str::from_utf8(&bytes[i + 1..i + 4]).ok()?;
            out.push(u8::from_str_radix(octal, 8).ok()?);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A tracefs mount attached nowhere: only this process can reach it, through the
/// returned descriptor, and it is gone when the descriptor closes.
fn detached_mount() -> Result<OwnedFd, TracefsError> {
    use rustix::mount::{
        fsconfig_create, fsmount, fsopen, FsMountFlags, FsOpenFlags, MountAttrFlags,
    };
    let unavailable = |step: &str, e: rustix::io::Errno| {
        TracefsError::Unavailable(format!(
            "not mounted, and a private mount failed ({step}: {e}); mount it with `mount -t tracefs nodev /sys/kernel/tracing`"
        ))
    };
    let fs =
        fsopen("tracefs", FsOpenFlags::FSOPEN_CLOEXEC).map_err(|e| unavailable("fsopen", e))?;
    fsconfig_create(&fs).map_err(|e| unavailable("fsconfig", e))?;
    fsmount(&fs, FsMountFlags::FSMOUNT_CLOEXEC, MountAttrFlags::empty())
        .map_err(|e| unavailable("fsmount", e))
}

fn read_at(dir: impl AsFd, path: &str) -> Result<String, TracefsError> {
    let fd = rustix::fs::openat(dir, path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(io_error(path))?;
    let mut text = String::new();
    io::Read::read_to_string(&mut std::fs::File::from(fd), &mut text).map_err(|e| {
        TracefsError::Io {
            path: path.to_string(),
            source: e,
        }
    })?;
    Ok(text)
}

/// One tracefs instance; removed when dropped (or by [`Instance::remove`]).
#[derive(Debug)]
pub struct Instance {
    root: OwnedFd,
    dir: OwnedFd,
    name: String,
    marker: Option<OwnedFd>,
    removed: bool,
}

impl Instance {
    /// The instance directory's name under `instances/`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes `value` to a file of the instance, replacing what it held.
    pub fn write(&self, path: &str, value: &str) -> Result<(), TracefsError> {
        let fd = rustix::fs::openat(
            &self.dir,
            path,
            OFlags::WRONLY | OFlags::TRUNC | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io_error(path))?;
        write_all(&fd, value.as_bytes()).map_err(io_error(path))
    }

    /// Reads a file of the instance (`trace`, `per_cpu/cpu0/stats`).
    pub fn read(&self, path: &str) -> Result<String, TracefsError> {
        read_at(&self.dir, path)
    }

    /// Opens `trace_marker` once, so a mark costs one write(2).
    pub fn open_marker(&mut self) -> Result<(), TracefsError> {
        let fd = rustix::fs::openat(
            &self.dir,
            "trace_marker",
            OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io_error("trace_marker"))?;
        self.marker = Some(fd);
        Ok(())
    }

    /// Writes `text` into the instance's buffer as a marker.
    pub fn mark(&self, text: &str) -> Result<(), TracefsError> {
        let fd = self.marker.as_ref().ok_or_else(|| TracefsError::Io {
            path: "trace_marker".into(),
            source: io::Error::other("not opened"),
        })?;
        write_all(fd, text.as_bytes()).map_err(io_error("trace_marker"))
    }

    /// Stops tracing, disables the events and removes the instance with its buffer.
    pub fn remove(mut self) -> Result<(), TracefsError> {
        self.remove_now()
    }

    fn remove_now(&mut self) -> Result<(), TracefsError> {
        if self.removed {
            return Ok(());
        }
        let _ = self.write("tracing_on", "0");
        let _ = self.write("events/enable", "0");
        self.marker = None;
        let path = format!("instances/{}", self.name);
        let mut attempts = 0;
        loop {
            match rustix::fs::unlinkat(&self.root, &path, AtFlags::REMOVEDIR) {
                Ok(()) => break,
                // A reader of one of its files may still be closing it.
                Err(rustix::io::Errno::BUSY) if attempts < 50 => {
                    attempts += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(io_error(&path)(e)),
            }
        }
        self.removed = true;
        Ok(())
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.remove_now();
    }
}

fn write_all(fd: &OwnedFd, mut bytes: &[u8]) -> rustix::io::Result<()> {
    while !bytes.is_empty() {
        let n = rustix::io::write(fd, bytes)?;
        if n == 0 {
            return Err(rustix::io::Errno::IO);
        }
        bytes = &bytes[n..];
    }
    Ok(())
}

/// The kernel's hex CPU mask (`tracing_cpumask`): 32-bit groups, most significant
/// first, comma-separated.
pub fn cpumask_hex(cpus: &[u32]) -> String {
    let groups = cpus.iter().map(|&c| c as usize / 32 + 1).max().unwrap_or(1);
    let mut words = vec![0u32; groups];
    for &cpu in cpus {
        words[cpu as usize / 32] |= 1 << (cpu % 32);
    }
    words
        .iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumasks_in_the_kernel_layout() {
        assert_eq!(cpumask_hex(&[0, 1]), "00000003");
        assert_eq!(cpumask_hex(&[1, 33]), "00000002,00000002");
        assert_eq!(cpumask_hex(&[]), "00000000");
    }

    #[test]
    fn mountinfo_paths_are_unescaped() {
        assert_eq!(
            unescape_mount_path("/sys/kernel/tracing").as_deref(),
            Some("/sys/kernel/tracing")
        );
        assert_eq!(unescape_mount_path("/a\\040b").as_deref(), Some("/a b"));
    }
}
