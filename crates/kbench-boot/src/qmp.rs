//! Just enough of QEMU's machine protocol (QMP, JSON lines over a Unix socket) to find
//! the threads that run the guest's vCPUs and pin them: an unpinned vCPU wanders over
//! the host's CPUs, and the guest's timings with it.
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// Why the vCPUs could not be pinned: the boot fails with it.
#[derive(Debug, thiserror::Error)]
pub enum QmpError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Os(#[from] rustix::io::Errno),
    #[error("{0}")]
    Qemu(String),
}

/// A `--pin-vcpus` list that cannot be used: the user's mistake.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct PinListError(String);

/// One vCPU thread and the host CPU it now runs on only, as a boot's environment keeps it.
pub use kbench_record::VcpuPin;

/// Host CPUs in the order given (`2,0` pins vCPU 0 to CPU 2), ranges expanded; each
/// one this process may run on, so that a pin cannot fail once qemu runs.
pub fn parse_pin_list(list: &str) -> Result<Vec<u32>, PinListError> {
    let allowed = rustix::thread::sched_getaffinity(None)
        .map_err(|e| PinListError(format!("--pin-vcpus: reading this process's CPUs: {e}")))?;
    let mut cpus = Vec::new();
    for item in list.split(',') {
        let expanded = kbench_sys::parse_cpulist(item)
            .map_err(|e| PinListError(format!("--pin-vcpus: {e}")))?;
        if expanded.is_empty() {
            return Err(PinListError(format!("--pin-vcpus {list}: an empty item")));
        }
        if let Some(cpu) = expanded.iter().find(|&&c| {
            c as usize >= rustix::thread::CpuSet::MAX_CPU || !allowed.is_set(c as usize)
        }) {
            return Err(PinListError(format!(
                "--pin-vcpus {list}: CPU {cpu} is not one this process may run on"
            )));
        }
        cpus.extend(expanded);
    }
    Ok(cpus)
}

/// Connects to qemu's QMP socket (waiting up to `timeout` for qemu to create it, or
/// until `qemu_gone` says why qemu is no longer there), asks for the vCPU threads and
/// pins vCPU i to `cpus[i % cpus.len()]`; what each thread's affinity is afterwards,
/// read back from the kernel.
pub fn pin_vcpus(
    socket: &Path,
    cpus: &[u32],
    timeout: Duration,
    qemu_gone: &mut dyn FnMut() -> Option<String>,
) -> Result<Vec<VcpuPin>, QmpError> {
    let stream = connect(socket, timeout, qemu_gone)?;
    stream.set_read_timeout(Some(timeout))?;
    let mut session = Qmp {
        reader: BufReader::new(stream.try_clone()?),
        writer: stream,
    };
    session.reply()?; // the greeting
    session.execute("qmp_capabilities")?;
    let threads = session.execute("query-cpus-fast")?;
    let mut pins: Vec<VcpuPin> = Vec::new();
    for cpu in threads.as_array().into_iter().flatten() {
        let (Some(vcpu), Some(tid)) = (cpu["cpu-index"].as_u64(), cpu["thread-id"].as_i64()) else {
            continue;
        };
        // Single-threaded TCG runs every vCPU on one thread: pinning it once per vCPU
        // would record pins that do not hold.
        if let Some(other) = pins.iter().find(|p| i64::from(p.thread_id) == tid) {
            return Err(QmpError::Qemu(format!(
                "vCPUs {} and {vcpu} share thread {tid}: pinning needs one thread per vCPU (multi-threaded TCG or KVM)",
                other.vcpu
            )));
        }
        let host_cpu = cpus[vcpu as usize % cpus.len()];
        let pid = rustix::process::Pid::from_raw(tid as i32)
            .ok_or_else(|| QmpError::Qemu(format!("qemu reported thread id {tid}")))?;
        let mut only_host_cpu = rustix::thread::CpuSet::new();
        only_host_cpu.set(host_cpu as usize);
        rustix::thread::sched_setaffinity(Some(pid), &only_host_cpu).map_err(|e| {
            QmpError::Qemu(format!(
                "pinning vCPU {vcpu} (thread {tid}) to CPU {host_cpu}: {e}"
            ))
        })?;
        let now = rustix::thread::sched_getaffinity(Some(pid))?;
        let only = (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| now.is_set(c))
            .collect::<Vec<_>>();
        if only != [host_cpu as usize] {
            return Err(QmpError::Qemu(format!(
                "vCPU {vcpu} (thread {tid}) runs on CPUs {only:?} after pinning to {host_cpu}"
            )));
        }
        pins.push(VcpuPin {
            vcpu: vcpu as u32,
            thread_id: tid as i32,
            host_cpu,
        });
    }
    if pins.is_empty() {
        return Err(QmpError::Qemu("qemu reported no vCPU threads".into()));
    }
    Ok(pins)
}

fn connect(
    socket: &Path,
    timeout: Duration,
    qemu_gone: &mut dyn FnMut() -> Option<String>,
) -> Result<UnixStream, QmpError> {
    let deadline = Instant::now() + timeout;
    loop {
        match UnixStream::connect(socket) {
            Ok(stream) => return Ok(stream),
            Err(_) if qemu_gone().is_some() => {
                return Err(QmpError::Qemu(qemu_gone().unwrap_or_default()))
            }
            Err(e) if Instant::now() >= deadline => {
                return Err(QmpError::Qemu(format!(
                    "qemu's QMP socket {}: {e}",
                    socket.display()
                )))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

struct Qmp {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Qmp {
    fn execute(&mut self, command: &str) -> Result<serde_json::Value, QmpError> {
        let request = serde_json::json!({ "execute": command });
        self.writer.write_all(format!("{request}\n").as_bytes())?;
        let reply = self.reply()?;
        if let Some(error) = reply.get("error") {
            return Err(QmpError::Qemu(format!("qemu refused {command}: {error}")));
        }
        Ok(reply["return"].clone())
    }

    /// The next line that is not an asynchronous event.
    fn reply(&mut self) -> Result<serde_json::Value, QmpError> {
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(QmpError::Qemu("qemu closed its QMP socket".into()));
            }
            let value: serde_json::Value = serde_json::from_str(&line)
                .map_err(|e| QmpError::Qemu(format!("qemu's QMP said {line:?}: {e}")))?;
            if value.get("event").is_none() {
                return Ok(value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_lists_keep_their_order() {
        // The CPUs this test may run on, in reverse: the order written is kept.
        let allowed = rustix::thread::sched_getaffinity(None).unwrap();
        let mut cpus: Vec<u32> = (0..rustix::thread::CpuSet::MAX_CPU as u32)
            .filter(|&c| allowed.is_set(c as usize))
            .collect();
        cpus.reverse();
        let list: Vec<String> = cpus.iter().map(u32::to_string).collect();
        assert_eq!(parse_pin_list(&list.join(",")).unwrap(), cpus);
        // Beyond what a CPU set holds, or not ours: refused before qemu starts.
        assert!(parse_pin_list("65535")
            .unwrap_err()
            .to_string()
            .contains("65535"));
        let absent =
            (0..rustix::thread::CpuSet::MAX_CPU as u32).find(|&c| !allowed.is_set(c as usize));
        if let Some(cpu) = absent {
            assert!(parse_pin_list(&cpu.to_string()).is_err());
        }
        assert!(parse_pin_list("1,,0").is_err());
        assert!(parse_pin_list("x").is_err());
    }
}
