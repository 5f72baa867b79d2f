//! A command's standard output and error, kept while it runs so that its figures can be
//! read afterwards, and echoed as they come when the user wants to see them.
use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags, Timespec};
use rustix::fd::OwnedFd;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a command printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CapturedOutput {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Whether a stream passed [`CAPTURE_LIMIT_BYTES`]: only its start was kept (a build
    /// log can be huge, and no tool's figures are that long).
    pub truncated: bool,
}

/// How much of each stream is kept.
pub const CAPTURE_LIMIT_BYTES: usize = 16 << 20;

/// How long the readers keep reading after the command exited: what it wrote before
/// it exited is in the pipe already; a process it left behind may write forever.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(200);

/// Which of our streams a captured one is echoed to.
#[derive(Debug, Clone, Copy)]
enum Echo {
    Nowhere,
    Stdout,
    Stderr,
}

/// The reader threads of one command's two pipes.
pub struct Capture {
    stdout: JoinHandle<(Vec<u8>, bool)>,
    stderr: JoinHandle<(Vec<u8>, bool)>,
    /// Signalled by [`Capture::finish`]: the readers block on it and on their pipe, so
    /// they never wake while the command runs unless it writes.
    exited: Option<Arc<OwnedFd>>,
}

impl Capture {
    /// Starts reading both pipes of a spawned child; `show` echoes them to ours.
    pub fn start(child: &mut std::process::Child, show: bool) -> Capture {
        let exited = eventfd(0, EventfdFlags::CLOEXEC).ok().map(Arc::new);
        let (out, err) = if show {
            (Echo::Stdout, Echo::Stderr)
        } else {
            (Echo::Nowhere, Echo::Nowhere)
        };
        Capture {
            stdout: read_pipe(child.stdout.take(), out, exited.clone()),
            stderr: read_pipe(child.stderr.take(), err, exited.clone()),
            exited,
        }
    }

    /// Everything printed, once the command has exited. A background process it left
    /// holding the pipes open would keep them from ending, so the readers stop when the
    /// pipes are empty after the exit rather than waiting for their end.
    pub fn finish(self) -> CapturedOutput {
        if let Some(fd) = &self.exited {
            let _ = rustix::io::write(fd.as_fd(), &1u64.to_ne_bytes());
        }
        let (stdout, cut_out) = self.stdout.join().unwrap_or_default();
        let (stderr, cut_err) = self.stderr.join().unwrap_or_default();
        CapturedOutput {
            stdout,
            stderr,
            truncated: cut_out || cut_err,
        }
    }
}

/// Reads a pipe until its end, or, once `exited` is signalled, until it is empty or
/// [`DRAIN_AFTER_EXIT`] has passed; returns the kept bytes and whether some were
/// dropped past the limit. Without an eventfd it reads until the pipe's end.
fn read_pipe<R: Read + AsFd + Send + 'static>(
    pipe: Option<R>,
    echo: Echo,
    exited: Option<Arc<OwnedFd>>,
) -> JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut cut = false;
        let Some(mut pipe) = pipe else {
            return (kept, cut);
        };
        let mut chunk = vec![0u8; 64 << 10];
        let mut deadline: Option<Instant> = None;
        let no_wait = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        loop {
            let (pipe_ready, exit_signalled) = {
                let mut fds = vec![PollFd::new(&pipe, PollFlags::IN)];
                if let (Some(fd), None) = (&exited, deadline) {
                    fds.push(PollFd::new(fd.as_ref(), PollFlags::IN));
                }
                let timeout = deadline.map(|_| &no_wait);
                match poll(&mut fds, timeout) {
                    Ok(_) => (
                        !fds[0].revents().is_empty(),
                        fds.get(1).is_some_and(|f| !f.revents().is_empty()),
                    ),
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => break,
                }
            };
            if exit_signalled {
                deadline = Some(Instant::now() + DRAIN_AFTER_EXIT);
            }
            if !pipe_ready {
                if deadline.is_some() && !exit_signalled {
                    break; // empty after the exit
                }
                continue;
            }
            if deadline.is_some_and(|d| Instant::now() > d) {
                break;
            }
            let n = match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            echo_chunk(echo, &chunk[..n]);
            let room = CAPTURE_LIMIT_BYTES.saturating_sub(kept.len());
            cut |= n > room;
            kept.extend_from_slice(&chunk[..n.min(room)]);
        }
        (kept, cut)
    })
}

fn echo_chunk(echo: Echo, bytes: &[u8]) {
    // A closed terminal is no reason to stop measuring.
    let _ = match echo {
        Echo::Nowhere => Ok(()),
        Echo::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        }
        Echo::Stderr => std::io::stderr().write_all(bytes),
    };
}
