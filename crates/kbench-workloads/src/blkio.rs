//! `blkio`: O_DIRECT reads (or writes) of one block size at one queue depth on a file
//! or a block device, each IO timed from submission to completion, with the device
//! interrupt lines and softirq vectors they raised.
//!
//! A real workload for a patch to the interrupt path: every IO ends in a device
//! interrupt (a virtio-blk request queue's, an NVMe queue's), then the block softirq
//! or an inline completion, then the wakeup of the task that waits for it.
//!
//! - O_DIRECT skips the page cache, so every IO reaches the device. A file on tmpfs
//!   cannot be opened so (the kernel refuses it): use a file on a disk's filesystem,
//!   a loop device backed by one, or a block device.
//! - Engines: `io_uring` keeps `--depth` IOs in flight; `sync` is `pread`/`pwrite`,
//!   one IO at a time (fio's `psync`). `auto` takes io_uring when the kernel offers it
//!   and the synchronous calls otherwise (depth 1 only).
//! - A missing file is made `--size` long and filled with data before the run (holes
//!   would be read without touching the device) and kept for the next run, as fio
//!   keeps its files. Writes go only to regular files, never to a device.
//! - Random offsets come from a seeded generator (`--seed`), so every run reads the
//!   same blocks.
use crate::clock::now_ns;
use crate::counters::RunCounters;
use crate::events::PerOp;
use crate::ipiaccount::SoftirqWindow;
use crate::latency::LatencyRecorder;
use crate::measure::{RegionEnd, TimedRegion};
use crate::perfopt::{OptKind, OptSpec, ParsedOptions};
use crate::shared::SharedStats;
use crate::{cpus, no_check, Instruments, RunRecord, Workload, WorkloadError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FileType, Mode, OFlags};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// On a disk by the FHS (unlike /tmp, often tmpfs, where O_DIRECT is refused).
pub const DEFAULT_PATH: &str = "/var/tmp/kbench-blkio.dat";
const DEFAULT_SIZE: &str = "64M";
const DEFAULT_BLOCK_SIZE: &str = "4k";
const DEFAULT_IOS: i32 = 20_000;
const DEFAULT_WARMUP: i32 = 500;
const MAX_IOS: i32 = 100_000_000;
const MAX_DEPTH: i32 = 1024;
/// O_DIRECT needs buffers, offsets and lengths aligned to the logical block size; a
/// page covers every device kbench meets.
const ALIGN: usize = 4096;
/// The task's CPU is sampled once per this many IOs.
const CPU_SAMPLE_EVERY: u64 = 64;

pub static OPTIONS: &[OptSpec] = &[
    OptSpec {
        short: None,
        long: "path",
        kind: OptKind::Str {
            argh: "FILE|DEVICE",
        },
        help: "File (made when missing) or block device (default /var/tmp/kbench-blkio.dat)",
    },
    OptSpec {
        short: None,
        long: "size",
        kind: OptKind::Str { argh: "BYTES" },
        help: "Size of the file made when missing: 64M, 1G, ... (default 64M)",
    },
    OptSpec {
        short: None,
        long: "block-size",
        kind: OptKind::Str { argh: "BYTES" },
        help: "Bytes per IO, a multiple of 512: 4k, 64k, ... (default 4k)",
    },
    OptSpec {
        short: None,
        long: "depth",
        kind: OptKind::Int,
        help: "IOs in flight (default 1; above 1 needs io_uring)",
    },
    OptSpec {
        short: None,
        long: "rw",
        kind: OptKind::Str {
            argh: "randread|read|randwrite|write",
        },
        help: "Pattern, in fio's words (default randread)",
    },
    OptSpec {
        short: None,
        long: "engine",
        kind: OptKind::Str {
            argh: "auto|io_uring|sync",
        },
        help: "How IOs are issued (default auto: io_uring if the kernel has it)",
    },
    OptSpec {
        short: None,
        long: "ios",
        kind: OptKind::Int,
        help: "Measured IOs per run (default 20000)",
    },
    OptSpec {
        short: None,
        long: "warmup",
        kind: OptKind::Int,
        help: "IOs before the measured ones, discarded (default 500)",
    },
    OptSpec {
        short: None,
        long: "cpu",
        kind: OptKind::Int,
        help: "Pin the submitting task to this CPU (default: free)",
    },
    OptSpec {
        short: None,
        long: "seed",
        kind: OptKind::Int,
        help: "Seed of the random offsets (default 1)",
    },
];

pub static WORKLOAD: Workload = Workload {
    collection: "blkio",
    name: "blkio",
    summary: "O_DIRECT IO latency and IOPS on a file or block device",
    usage: "kbench bench blkio <options>",
    options: OPTIONS,
    comm: "blkio",
    in_perf_all: false,
    check: no_check,
    validate,
    takes_counters: false,
    run: run_parsed,
};

/// fio's `--rw` patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    RandRead,
    Read,
    RandWrite,
    Write,
}

impl Pattern {
    const ALL: [Pattern; 4] = [
        Pattern::RandRead,
        Pattern::Read,
        Pattern::RandWrite,
        Pattern::Write,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::RandRead => "randread",
            Pattern::Read => "read",
            Pattern::RandWrite => "randwrite",
            Pattern::Write => "write",
        }
    }

    fn parse(text: &str) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.as_str() == text)
    }

    pub fn writes(self) -> bool {
        matches!(self, Pattern::RandWrite | Pattern::Write)
    }

    fn random(self) -> bool {
        matches!(self, Pattern::RandRead | Pattern::RandWrite)
    }
}

/// How IOs are issued, as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    Auto,
    IoUring,
    Sync,
}

impl EngineChoice {
    fn parse(text: &str) -> Option<EngineChoice> {
        match text {
            "auto" => Some(EngineChoice::Auto),
            "io_uring" => Some(EngineChoice::IoUring),
            "sync" => Some(EngineChoice::Sync),
            _ => None,
        }
    }
}

/// The parameters of one run, defaults resolved and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub path: PathBuf,
    pub size_bytes: u64,
    pub block_size: u64,
    pub depth: u32,
    pub pattern: Pattern,
    pub engine: EngineChoice,
    pub ios: u32,
    pub warmup: u32,
    pub cpu: Option<u32>,
    pub seed: u64,
}

impl Params {
    pub fn from_parsed(parsed: &ParsedOptions) -> Result<Self, WorkloadError> {
        let text = |long: &str, default: &str| {
            parsed
                .str(long)
                .flatten()
                .unwrap_or_else(|| default.to_string())
        };
        let block_size = size_option("block-size", &text("block-size", DEFAULT_BLOCK_SIZE))?;
        if block_size % 512 != 0 || block_size > 64 << 20 {
            return Err(WorkloadError::Usage(format!(
                "--block-size {block_size}: O_DIRECT needs a multiple of 512 bytes, at most 64M"
            )));
        }
        let size_bytes = size_option("size", &text("size", DEFAULT_SIZE))?;
        if size_bytes < block_size {
            return Err(WorkloadError::Usage(format!(
                "--size {size_bytes}: smaller than one block of {block_size} bytes"
            )));
        }
        let pattern_text = text("rw", "randread");
        let pattern = Pattern::parse(&pattern_text).ok_or_else(|| {
            WorkloadError::Usage(format!(
                "--rw {pattern_text}: expected randread, read, randwrite or write"
            ))
        })?;
        let engine_text = text("engine", "auto");
        let engine = EngineChoice::parse(&engine_text).ok_or_else(|| {
            WorkloadError::Usage(format!(
                "--engine {engine_text}: expected auto, io_uring or sync"
            ))
        })?;
        let depth = crate::wakeup::bounded(parsed, "depth", 1, 1, MAX_DEPTH)?;
        if engine == EngineChoice::Sync && depth > 1 {
            return Err(WorkloadError::Usage(format!(
                "--depth {depth} with --engine sync: synchronous calls keep one IO in flight"
            )));
        }
        let cpu = match parsed.int("cpu") {
            Some(cpu) => Some(cpus::checked_cpu("cpu", cpu, &cpus::allowed_cpus()?)?),
            None => None,
        };
        Ok(Params {
            path: PathBuf::from(text("path", DEFAULT_PATH)),
            size_bytes,
            block_size,
            depth,
            pattern,
            engine,
            ios: crate::wakeup::bounded(parsed, "ios", DEFAULT_IOS, 1, MAX_IOS)?,
            warmup: crate::wakeup::bounded(parsed, "warmup", DEFAULT_WARMUP, 0, MAX_IOS)?,
            cpu,
            seed: u64::from(crate::wakeup::bounded(parsed, "seed", 1, 0, i32::MAX)?),
        })
    }

    fn params_map(&self, engine: Engine) -> BTreeMap<String, serde_json::Value> {
        let mut map = BTreeMap::from([
            ("path".into(), self.path.display().to_string().into()),
            ("block-size".into(), self.block_size.into()),
            ("depth".into(), self.depth.into()),
            ("rw".into(), self.pattern.as_str().into()),
            ("engine".into(), engine.as_str().into()),
            ("ios".into(), self.ios.into()),
            ("warmup".into(), self.warmup.into()),
        ]);
        if self.pattern.random() {
            map.insert("seed".into(), self.seed.into());
        }
        if let Some(cpu) = self.cpu {
            map.insert("cpu".into(), cpu.into());
        }
        map
    }
}

/// A byte count: digits with an optional k, m or g (powers of 1024), as fio takes it.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last()? {
        (i, 'k' | 'K') => (&text[..i], 10),
        (i, 'm' | 'M') => (&text[..i], 20),
        (i, 'g' | 'G') => (&text[..i], 30),
        _ => (text, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

fn size_option(long: &str, text: &str) -> Result<u64, WorkloadError> {
    parse_size(text).filter(|&n| n > 0).ok_or_else(|| {
        WorkloadError::Usage(format!(
            "--{long} {text}: expected a positive byte count such as 4096, 4k, 64M"
        ))
    })
}

fn validate(parsed: &ParsedOptions) -> Result<(), String> {
    Params::from_parsed(parsed)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn run_parsed(parsed: &ParsedOptions, _: Instruments) -> Result<RunRecord, WorkloadError> {
    run(&Params::from_parsed(parsed)?)
}

/// How IOs were issued in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A ring set up as fio 3.33 sets its own: completions run when the task waits
    /// (DEFER_TASKRUN, 6.1 and later), not as task work that interrupts it.
    IoUring,
    /// A ring without those flags, on a kernel that refuses them.
    IoUringPlain,
    Sync,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::IoUring => "io_uring",
            Engine::IoUringPlain => "io_uring-plain",
            Engine::Sync => "sync",
        }
    }
}

/// The file or device a run issues its IOs to.
struct Target {
    fd: OwnedFd,
    blocks: u64,
    is_device: bool,
}

/// `statfs` magic numbers of the filesystems that live in memory.
const TMPFS_MAGIC: u64 = 0x0102_1994;
const RAMFS_MAGIC: u64 = 0x8584_58f6;

/// Refuses a file on a filesystem in memory: since 6.6 tmpfs takes O_DIRECT, and its
/// IOs are memory copies that never reach a device. (Not for device nodes, which
/// live on devtmpfs.)
fn refuse_memory_filesystem(path: &Path) -> Result<(), WorkloadError> {
    // A file yet to be made is judged by its directory.
    let probe = match path.exists() {
        true => path.to_path_buf(),
        false => match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        },
    };
    let Ok(fs) = rustix::fs::statfs(&probe) else {
        return Ok(());
    };
    let magic = fs.f_type as u64;
    if magic == TMPFS_MAGIC || magic == RAMFS_MAGIC {
        return Err(WorkloadError::Usage(format!(
            "{} is on a filesystem in memory (tmpfs or ramfs): its IOs never reach a device; give --path a file on a disk, a loop device or a block device",
            path.display()
        )));
    }
    Ok(())
}

/// Opens `p.path` for O_DIRECT IO, making the file first when it is missing.
fn open_target(p: &Params) -> Result<Target, WorkloadError> {
    let shown = p.path.display();
    let stat = match rustix::fs::stat(&p.path) {
        Ok(stat) => Some(stat),
        Err(rustix::io::Errno::NOENT) => None,
        Err(e) => return Err(WorkloadError::failed(&format!("{shown}"), e)),
    };
    let is_device = match stat.map(|s| FileType::from_raw_mode(s.st_mode)) {
        None => {
            refuse_memory_filesystem(&p.path)?;
            make_data_file(&p.path, p.size_bytes)?;
            false
        }
        Some(FileType::BlockDevice) if p.pattern.writes() => {
            return Err(WorkloadError::Usage(format!(
                "{shown} is a block device: blkio writes only to files, never over a device's data"
            )))
        }
        Some(FileType::BlockDevice) => true,
        Some(FileType::RegularFile) => {
            refuse_memory_filesystem(&p.path)?;
            false
        }
        Some(_) => {
            return Err(WorkloadError::Usage(format!(
                "{shown}: neither a regular file nor a block device"
            )))
        }
    };
    let access = if p.pattern.writes() {
        OFlags::RDWR
    } else {
        OFlags::RDONLY
    };
    let fd = rustix::fs::open(&p.path, access | OFlags::DIRECT | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| match e {
            rustix::io::Errno::INVAL => WorkloadError::Unsupported(format!(
                "{shown}: its filesystem refuses O_DIRECT (tmpfs does): give --path a file on a disk, a loop device or a block device"
            )),
            e => WorkloadError::failed(&format!("opening {shown}"), e),
        })?;
    let bytes = rustix::fs::seek(&fd, rustix::fs::SeekFrom::End(0))
        .map_err(|e| WorkloadError::failed(&format!("size of {shown}"), e))?;
    let blocks = bytes / p.block_size;
    if blocks == 0 {
        return Err(WorkloadError::Usage(format!(
            "{shown} holds {bytes} bytes, less than one block of {}",
            p.block_size
        )));
    }
    Ok(Target {
        fd,
        blocks,
        is_device,
    })
}

/// Writes `size` bytes of data to a new file at `path` (seeded random bytes: no
/// holes, which a filesystem reads without the device): under a temporary name,
/// synced, then renamed, so a run stopped half-way leaves no short file to be read
/// later. vm-ab makes its guests' scratch disk with it.
pub fn make_data_file(path: &Path, size: u64) -> Result<(), WorkloadError> {
    let partial = path.with_extension(format!("partial-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::create(&partial)?;
        let mut rng = ChaCha8Rng::seed_from_u64(size);
        let mut chunk = vec![0u8; 1 << 20];
        let mut left = size;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            rng.fill(&mut chunk[..n]);
            file.write_all(&chunk[..n])?;
            left -= n as u64;
        }
        file.sync_all()?;
        std::fs::rename(&partial, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        WorkloadError::failed(&format!("making {}", path.display()), e)
    })
}

/// A buffer aligned for O_DIRECT, inside an ordinary vector.
struct AlignedBuffer {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuffer {
    fn new(len: usize) -> AlignedBuffer {
        let storage = vec![0xa5u8; len + ALIGN];
        let start = storage.as_ptr().align_offset(ALIGN);
        AlignedBuffer {
            storage,
            start,
            len,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// The offsets of a run's IOs, in block-size steps within the target.
struct Offsets {
    rng: ChaCha8Rng,
    random: bool,
    blocks: u64,
    block_size: u64,
    next_block: u64,
}

impl Offsets {
    fn next(&mut self) -> u64 {
        let block = if self.random {
            self.rng.random_range(0..self.blocks)
        } else {
            let b = self.next_block;
            self.next_block = (b + 1) % self.blocks;
            b
        };
        block * self.block_size
    }
}

/// The IOs of one phase (warm-up, measured) and where their latencies go.
struct Phase<'a> {
    ios: u64,
    recorder: Option<&'a mut LatencyRecorder>,
    stats: &'a SharedStats,
}

/// One IO engine over a target.
trait Issuer {
    /// Issues `phase.ios` IOs; returns the system calls it made.
    fn run(&mut self, phase: Phase<'_>, offsets: &mut Offsets) -> Result<u64, String>;
}

/// `pread`/`pwrite`, one IO at a time.
struct SyncIssuer<'a> {
    fd: BorrowedFd<'a>,
    buffer: AlignedBuffer,
    writes: bool,
}

impl Issuer for SyncIssuer<'_> {
    fn run(&mut self, mut phase: Phase<'_>, offsets: &mut Offsets) -> Result<u64, String> {
        let slot = phase.stats.task(0);
        for i in 0..phase.ios {
            if i.is_multiple_of(CPU_SAMPLE_EVERY) {
                slot.note_current_cpu();
            }
            let offset = offsets.next();
            let buf = self.buffer.as_mut_slice();
            let wanted = buf.len();
            let t0 = now_ns();
            let done = if self.writes {
                rustix::io::pwrite(self.fd, buf, offset)
            } else {
                rustix::io::pread(self.fd, buf, offset)
            }
            .map_err(|e| format!("IO at offset {offset}: {e}"))?;
            let t1 = now_ns();
            if done != wanted {
                return Err(format!(
                    "short IO at offset {offset}: {done} of {wanted} bytes"
                ));
            }
            if let Some(recorder) = phase.recorder.as_deref_mut() {
                recorder.record(t1.saturating_sub(t0));
            }
        }
        Ok(phase.ios)
    }
}

/// io_uring with `depth` IOs in flight, each timed from its queueing to its completion.
struct UringIssuer<'a> {
    ring: io_uring::IoUring,
    fd: BorrowedFd<'a>,
    buffers: Vec<AlignedBuffer>,
    writes: bool,
    /// IOs queued and not yet seen complete.
    in_flight: u64,
}

impl Drop for UringIssuer<'_> {
    fn drop(&mut self) {
        // After an error with IOs in flight the kernel may still write into their
        // buffers (closing the ring cancels them asynchronously): keep the buffers for
        // the life of the process rather than free memory a transfer may reach.
        if self.in_flight > 0 {
            std::mem::forget(std::mem::take(&mut self.buffers));
        }
    }
}

impl<'a> UringIssuer<'a> {
    /// The issuer and the kind of ring it got: fio's flags where the kernel takes
    /// them (so the two compare), a plain ring where it does not.
    fn new(
        fd: BorrowedFd<'a>,
        depth: u32,
        block_size: u64,
        writes: bool,
    ) -> std::io::Result<(Self, Engine)> {
        let entries = depth.next_power_of_two();
        let (ring, engine) = match io_uring::IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
        {
            Ok(ring) => (ring, Engine::IoUring),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                (io_uring::IoUring::new(entries)?, Engine::IoUringPlain)
            }
            Err(e) => return Err(e),
        };
        let buffers = (0..depth)
            .map(|_| AlignedBuffer::new(block_size as usize))
            .collect();
        let issuer = UringIssuer {
            ring,
            fd,
            buffers,
            writes,
            in_flight: 0,
        };
        Ok((issuer, engine))
    }

    /// Queues one IO of `slot`'s buffer at `offset`.
    fn queue(&mut self, slot: usize, offset: u64) -> Result<(), String> {
        let fd = io_uring::types::Fd(std::os::fd::AsRawFd::as_raw_fd(&self.fd));
        let buf = self.buffers[slot].as_mut_slice();
        let len = buf.len() as u32;
        let entry = if self.writes {
            io_uring::opcode::Write::new(fd, buf.as_ptr(), len)
                .offset(offset)
                .build()
        } else {
            io_uring::opcode::Read::new(fd, buf.as_mut_ptr(), len)
                .offset(offset)
                .build()
        };
        // SAFETY: the buffer belongs to `self` and outlives the ring's use of it: each
        // slot has at most one IO in flight (a slot is queued again only after its
        // completion was reaped), `run` reaps every IO it queued before it returns
        // Ok, and after an error the drop keeps the buffers of IOs still in flight.
        unsafe { self.ring.submission().push(&entry.user_data(slot as u64)) }
            .map_err(|_| "io_uring submission queue full".to_string())?;
        self.in_flight += 1;
        Ok(())
    }
}

impl Issuer for UringIssuer<'_> {
    fn run(&mut self, mut phase: Phase<'_>, offsets: &mut Offsets) -> Result<u64, String> {
        let slot_stats = phase.stats.task(0);
        let mut queued_at_ns = vec![0u64; self.buffers.len()];
        let mut queued = 0u64;
        let mut completed = 0u64;
        let mut syscalls = 0u64;
        let first = self.buffers.len().min(phase.ios as usize);
        for (slot, queued_at) in queued_at_ns.iter_mut().enumerate().take(first) {
            *queued_at = now_ns();
            self.queue(slot, offsets.next())?;
            queued += 1;
        }
        let mut failure = None;
        while completed < queued {
            if completed.is_multiple_of(CPU_SAMPLE_EVERY) {
                slot_stats.note_current_cpu();
            }
            // Once an IO failed, nothing more is queued, but every IO in flight is
            // reaped before the buffers may go.
            if let Err(e) = self.ring.submit_and_wait(1) {
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(format!("io_uring_enter: {e}"));
            }
            syscalls += 1;
            let done: Vec<(usize, i32)> = self
                .ring
                .completion()
                .map(|cqe| (cqe.user_data() as usize, cqe.result()))
                .collect();
            let now = now_ns();
            for (slot, result) in done {
                completed += 1;
                self.in_flight -= 1;
                let wanted = self.buffers[slot].len;
                if result < 0 {
                    failure.get_or_insert(format!(
                        "IO failed: {}",
                        std::io::Error::from_raw_os_error(-result)
                    ));
                } else if result as usize != wanted {
                    failure.get_or_insert(format!("short IO: {result} of {wanted} bytes"));
                }
                if let Some(recorder) = phase.recorder.as_deref_mut() {
                    recorder.record(now.saturating_sub(queued_at_ns[slot]));
                }
                if failure.is_none() && queued < phase.ios {
                    queued_at_ns[slot] = now_ns();
                    self.queue(slot, offsets.next())?;
                    queued += 1;
                    // Each IO goes to the device as soon as its slot is free, as fio
                    // submits (iodepth_batch_submit=1): held back to go with the
                    // batch, the device sees bursts and serves fewer IOs a second.
                    self.ring
                        .submit()
                        .map_err(|e| format!("io_uring_enter: {e}"))?;
                    syscalls += 1;
                }
            }
        }
        match failure {
            Some(message) => Err(message),
            None => Ok(syscalls),
        }
    }
}

/// The engine a run uses: io_uring when asked or available, else the synchronous calls.
fn issuer<'a>(
    p: &Params,
    fd: BorrowedFd<'a>,
) -> Result<(Box<dyn Issuer + 'a>, Engine), WorkloadError> {
    let writes = p.pattern.writes();
    let sync = || -> (Box<dyn Issuer + 'a>, Engine) {
        let buffer = AlignedBuffer::new(p.block_size as usize);
        (Box::new(SyncIssuer { fd, buffer, writes }), Engine::Sync)
    };
    if p.engine == EngineChoice::Sync {
        return Ok(sync());
    }
    match UringIssuer::new(fd, p.depth, p.block_size, writes) {
        Ok((uring, engine)) => Ok((Box::new(uring), engine)),
        Err(_) if p.engine == EngineChoice::Auto && p.depth == 1 => Ok(sync()),
        Err(e) => Err(WorkloadError::Unsupported(format!(
            "io_uring is not available here ({e}): --depth {} needs it; --engine sync runs depth 1",
            p.depth
        ))),
    }
}

/// Runs one blkio benchmark.
pub fn run(p: &Params) -> Result<RunRecord, WorkloadError> {
    let target = open_target(p)?;
    let _affinity = p.cpu.map(|_| crate::placement::AffinityGuard::save());
    if let Some(cpu) = p.cpu {
        cpus::pin_current_thread(cpu).map_err(WorkloadError::Failed)?;
    }
    let stats = SharedStats::new(1, 0).map_err(|e| WorkloadError::failed("mmap", e))?;
    let (mut issuer, engine) = issuer(p, target.fd.as_fd())?;
    let mut offsets = Offsets {
        rng: ChaCha8Rng::seed_from_u64(p.seed),
        random: p.pattern.random(),
        blocks: target.blocks,
        block_size: p.block_size,
        next_block: 0,
    };
    let failed = |e: String| WorkloadError::Failed(format!("blkio {}: {e}", p.path.display()));
    let warmup = Phase {
        ios: u64::from(p.warmup),
        recorder: None,
        stats: &stats,
    };
    issuer.run(warmup, &mut offsets).map_err(failed)?;
    let mut recorder = LatencyRecorder::new().map_err(WorkloadError::Failed)?;
    let mut counters = RunCounters::none();
    let softirqs = SoftirqWindow::open();
    let region = TimedRegion::start(&mut counters);
    let measured = Phase {
        ios: u64::from(p.ios),
        recorder: Some(&mut recorder),
        stats: &stats,
    };
    let syscalls = issuer.run(measured, &mut offsets);
    let end = region.stop();
    let softirqs = softirqs.close(u64::from(p.ios));
    let syscalls = syscalls.map_err(failed)?;
    let mut rec = record(p, engine, &target, end, &recorder, &stats, syscalls);
    rec.interrupt_sources.extend(softirqs);
    rec.metrics = crate::metrics::io_latency(&rec, "iops", "IO/s");
    Ok(rec)
}

fn record(
    p: &Params,
    engine: Engine,
    target: &Target,
    end: RegionEnd,
    recorder: &LatencyRecorder,
    stats: &SharedStats,
    syscalls: u64,
) -> RunRecord {
    let RegionEnd {
        elapsed,
        usage,
        interrupts,
    } = end;
    let ios = u64::from(p.ios);
    let what = if target.is_device { "device" } else { "file" };
    let mut rec = RunRecord {
        workload: WORKLOAD.key(),
        params: p.params_map(engine),
        variant: p.pattern.as_str().into(),
        total_ns: elapsed.total_ns,
        bytes_transferred: Some(ios * p.block_size),
        rusage: usage,
        tasks: vec![stats.task_record(0, "submitter")],
        cpus_used: stats.all_cpus(),
        start_unix_ns: elapsed.start_unix_ns,
        end_unix_ns: elapsed.end_unix_ns,
        header_lines: vec![format!(
            "# {} O_DIRECT {} IOs of {} bytes at depth {} ({}) on {what} {}",
            p.ios,
            p.pattern.as_str(),
            p.block_size,
            p.depth,
            engine.as_str(),
            p.path.display()
        )],
        series: vec![recorder.summary(
            "io_latency",
            "one IO, from its submission to its completion",
        )],
        ..RunRecord::default()
    }
    .with_per_op(ios);
    let per_op = PerOp {
        per: "io",
        ops: ios,
        syscalls_per_op: syscalls as f64 / ios as f64,
    };
    crate::events::record_events(
        &mut rec,
        per_op,
        &interrupts,
        &cpus::online_cpus_with_role("any"),
        Vec::new(),
    );
    rec.interrupt_sources = interrupts.device_sources(ios);
    let device_irqs_per_io: f64 = rec.interrupt_sources.iter().map(|s| s.per_op).sum();
    // Batched completions at depth take fewer than one IRQ an IO, but not this few.
    if !rec.ipis.is_empty() && device_irqs_per_io < 0.05 {
        rec.warnings.push(format!(
            "{device_irqs_per_io:.3} device interrupts per IO: the IOs to {} hardly reached a device (a polled queue, or a filesystem that serves O_DIRECT from memory)",
            p.path.display()
        ));
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_fio_writes_them() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        for bad in ["", "k", "4kb", "-4k", "4.5k", "99999999999999999999g"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn sequential_offsets_wrap_and_random_ones_stay_inside() {
        let mut seq = Offsets {
            rng: ChaCha8Rng::seed_from_u64(1),
            random: false,
            blocks: 3,
            block_size: 4096,
            next_block: 0,
        };
        let got: Vec<u64> = (0..4).map(|_| seq.next()).collect();
        assert_eq!(got, [0, 4096, 8192, 0]);
        let mut random = Offsets {
            random: true,
            blocks: 10,
            ..seq
        };
        assert!((0..1000).all(|_| random.next() < 10 * 4096));
    }

    #[test]
    fn aligned_buffers_are_aligned() {
        for len in [512, 4096, 65536] {
            let mut b = AlignedBuffer::new(len);
            let slice = b.as_mut_slice();
            assert_eq!(slice.len(), len);
            assert_eq!(slice.as_ptr() as usize % ALIGN, 0);
        }
    }
}
