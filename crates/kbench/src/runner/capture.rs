//! A command's standard output and error, kept while it runs so that its figures can be
//! read afterwards, and echoed as they come when the user wants to see them.
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

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

/// How often a reader looks whether the command has exited (see [`Capture::finish`]).
const EXIT_CHECK_MS: i64 = 20;

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
    exited: Arc<AtomicBool>,
}

impl Capture {
    /// Starts reading both pipes of a spawned child; `show` echoes them to ours.
    pub fn start(child: &mut std::process::Child, show: bool) -> Capture {
        let exited = Arc::new(AtomicBool::new(false));
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
        self.exited.store(true, Ordering::Release);
        let (stdout, cut_out) = self.stdout.join().unwrap_or_default();
        let (stderr, cut_err) = self.stderr.join().unwrap_or_default();
        CapturedOutput {
            stdout,
            stderr,
            truncated: cut_out || cut_err,
        }
    }
}

/// Reads a pipe until its end, or until it is empty after `exited` is set; returns the
/// kept bytes and whether some were dropped past the limit.
fn read_pipe<R: Read + AsFd + Send + 'static>(
    pipe: Option<R>,
    echo: Echo,
    exited: Arc<AtomicBool>,
) -> JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut cut = false;
        let Some(mut pipe) = pipe else {
            return (kept, cut);
        };
        let mut chunk = vec![0u8; 64 << 10];
        let wait = Timespec {
            tv_sec: 0,
            tv_nsec: EXIT_CHECK_MS * 1_000_000,
        };
        loop {
            // Read the flag before polling: data written before the exit is then seen.
            let done = exited.load(Ordering::Acquire);
            let mut fds = [PollFd::new(&pipe, PollFlags::IN)];
            let ready = match poll(&mut fds, Some(&wait)) {
                Ok(n) => n > 0,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => break,
            };
            if !ready {
                if done {
                    break;
                }
                continue;
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
