//! One direction of a wake: a stamp line in memory plus the kernel object the wakee
//! blocks on (a private futex, a pipe or an eventfd).
//!
//! The waker writes its t0 and a sequence number into the stamp line immediately before
//! the wake call; the wakee reads them after taking its own t2, so reading the stamp
//! costs the measurement nothing. For futexes the futex word sits on the same cache
//! line as the stamp (as in schbench), so the wakee takes one cache miss, not two.
use crate::clock::now_ns;
use rustix::fd::OwnedFd;
use rustix::thread::futex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// How the waker wakes the wakee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mech {
    /// `FUTEX_WAKE_PRIVATE` / `FUTEX_WAIT_PRIVATE`: the shortest path, schbench's.
    Futex,
    /// A 1-byte pipe write: `pipe_write`'s sync wakeup (WF_SYNC), perf sched pipe's path.
    Pipe,
    /// An eventfd write: a plain (non-sync) wakeup, as event loops and KVM use.
    Eventfd,
}

impl Mech {
    pub const NAMES: &'static str = "futex, pipe or eventfd";

    pub fn parse(name: &str) -> Option<Mech> {
        match name {
            "futex" => Some(Mech::Futex),
            "pipe" => Some(Mech::Pipe),
            "eventfd" => Some(Mech::Eventfd),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mech::Futex => "futex",
            Mech::Pipe => "pipe",
            Mech::Eventfd => "eventfd",
        }
    }
}

/// The stamp line: the futex word, then the waker's sequence number and t0, alone on one
/// cache line so nothing else bounces with it.
#[repr(C, align(64))]
#[derive(Default)]
struct StampLine {
    futex_word: AtomicU32,
    seq: AtomicU64,
    t0_ns: AtomicU64,
}

/// The kernel object of the channel.
enum Blocker {
    Futex,
    Pipe { read: OwnedFd, write: OwnedFd },
    Eventfd(OwnedFd),
}

/// One direction of wakes.
pub struct WakeChannel {
    line: StampLine,
    blocker: Blocker,
}

impl WakeChannel {
    pub fn new(mech: Mech) -> std::io::Result<Self> {
        let blocker = match mech {
            Mech::Futex => Blocker::Futex,
            Mech::Pipe => {
                let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
                Blocker::Pipe { read, write }
            }
            Mech::Eventfd => Blocker::Eventfd(rustix::event::eventfd(
                0,
                rustix::event::EventfdFlags::CLOEXEC,
            )?),
        };
        Ok(Self {
            line: StampLine::default(),
            blocker,
        })
    }

    /// Stamps `seq` and t0, wakes the wakee, and returns `(t0, t1)`: t0 just before the
    /// wake call, t1 just after it returned.
    #[inline]
    pub fn post(&self, seq: u64) -> Result<(u64, u64), String> {
        let t0 = now_ns();
        self.line.t0_ns.store(t0, Ordering::Relaxed);
        // Release: a wakee that sees this sequence number sees this t0.
        self.line.seq.store(seq, Ordering::Release);
        self.signal()?;
        Ok((t0, now_ns()))
    }

    /// Wakes the wakee without a stamp: the abort path, so no thread stays blocked.
    pub fn kick(&self) {
        let _ = self.signal();
    }

    #[inline]
    fn signal(&self) -> Result<(), String> {
        match &self.blocker {
            Blocker::Futex => {
                self.line.futex_word.store(1, Ordering::Release);
                futex::wake(&self.line.futex_word, futex::Flags::PRIVATE, 1)
                    .map(drop)
                    .map_err(|e| format!("futex wake: {e}"))
            }
            Blocker::Pipe { write, .. } => write_all(write, &[1u8]),
            Blocker::Eventfd(fd) => write_all(fd, &1u64.to_ne_bytes()),
        }
    }

    /// Blocks until the waker posts (or kicks).
    #[inline]
    pub fn wait(&self) -> Result<(), String> {
        match &self.blocker {
            Blocker::Futex => loop {
                if self.line.futex_word.load(Ordering::Acquire) != 0 {
                    return Ok(());
                }
                match futex::wait(&self.line.futex_word, futex::Flags::PRIVATE, 0, None) {
                    // AGAIN: the word changed before we slept; INTR: a signal. Both re-check.
                    Ok(()) | Err(rustix::io::Errno::AGAIN) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(format!("futex wait: {e}")),
                }
            },
            Blocker::Pipe { read, .. } => read_exact(read, &mut [0u8; 1]),
            Blocker::Eventfd(fd) => read_exact(fd, &mut [0u8; 8]),
        }
    }

    /// After [`wait`](Self::wait) returned and t2 was taken: re-arms the futex word and
    /// returns the waker's `(seq, t0)`.
    #[inline]
    pub fn take_stamp(&self) -> (u64, u64) {
        self.line.futex_word.store(0, Ordering::Relaxed);
        let seq = self.line.seq.load(Ordering::Acquire);
        (seq, self.line.t0_ns.load(Ordering::Relaxed))
    }
}

fn write_all(fd: &OwnedFd, bytes: &[u8]) -> Result<(), String> {
    loop {
        match rustix::io::write(fd, bytes) {
            Ok(n) if n == bytes.len() => return Ok(()),
            Ok(n) => return Err(format!("write moved {n} bytes instead of {}", bytes.len())),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(format!("write: {e}")),
        }
    }
}

fn read_exact(fd: &OwnedFd, buf: &mut [u8]) -> Result<(), String> {
    loop {
        match rustix::io::read(fd, &mut *buf) {
            Ok(n) if n == buf.len() => return Ok(()),
            Ok(0) => return Err("read: end of file".into()),
            Ok(n) => return Err(format!("read moved {n} bytes instead of {}", buf.len())),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mechanism_passes_stamps_between_threads() {
        for mech in [Mech::Futex, Mech::Pipe, Mech::Eventfd] {
            let channel = WakeChannel::new(mech).unwrap();
            // The waiter's stamps taken so far: the poster waits for it, as the waker
            // waits for `wakee_ready`, so the futex word is re-armed before each post.
            let taken = AtomicU64::new(0);
            std::thread::scope(|s| {
                let waiter = s.spawn(|| {
                    let mut seen = Vec::new();
                    for _ in 0..3 {
                        channel.wait().unwrap();
                        seen.push(channel.take_stamp().0);
                        taken.fetch_add(1, Ordering::Release);
                    }
                    seen
                });
                for seq in 0..3 {
                    while taken.load(Ordering::Acquire) < seq {
                        std::thread::yield_now();
                    }
                    let (t0, t1) = channel.post(seq).unwrap();
                    assert!(t1 >= t0);
                }
                assert_eq!(waiter.join().unwrap(), vec![0, 1, 2], "{mech:?}");
            });
        }
    }
}
