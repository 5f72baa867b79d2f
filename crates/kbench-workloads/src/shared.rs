//! Memory shared by the coordinator and its workers, processes or threads alike.
//!
//! Workers record where they ran and what they moved here without a system call,
//! so the record costs nothing inside the timed region; the coordinator reads it
//! after reaping.
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// CPUs representable in a task's mask: 16 words of 64 bits.
const MASK_WORDS: usize = 16;
pub const MAX_TRACKED_CPUS: usize = MASK_WORDS * 64;
/// Per task: the CPU mask, a byte counter, the last CPU seen plus one (0: none yet),
/// the CPU changes seen between samples, `se.nr_migrations` plus one (0: unknown),
/// and the samples taken beside a peer with how many found it on the same CPU.
/// Padded to three whole cache lines, so no two tasks' words share a line.
const WORDS_PER_TASK: usize = 24;
const BYTES: usize = MASK_WORDS;
const LAST_CPU: usize = MASK_WORDS + 1;
const SAMPLED_MIGRATIONS: usize = MASK_WORDS + 2;
const NR_MIGRATIONS: usize = MASK_WORDS + 3;
const PEER_SAMPLES: usize = MASK_WORDS + 4;
const PEER_COLOCATED: usize = MASK_WORDS + 5;

/// An anonymous `MAP_SHARED` mapping of atomic words: `tasks` task slots followed
/// by `scalars` free words (results a helper process hands back).
pub struct SharedStats {
    base: NonNull<AtomicU64>,
    tasks: usize,
    scalars: usize,
}

// SAFETY: the mapping is only ever accessed through `AtomicU64`, which is Sync, and
// it lives until `drop`, which needs `&mut self`.
unsafe impl Send for SharedStats {}
// SAFETY: as above: every access is an atomic operation.
unsafe impl Sync for SharedStats {}

impl SharedStats {
    /// Maps zeroed shared memory for `tasks` task slots and `scalars` extra words.
    pub fn new(tasks: usize, scalars: usize) -> io::Result<Self> {
        let words = (tasks * WORDS_PER_TASK + scalars).max(1);
        let len = words * std::mem::size_of::<AtomicU64>();
        // SAFETY: a fresh anonymous mapping aliases no Rust object; the kernel zero-fills
        // it, and all-zero bytes are a valid `AtomicU64`. It is unmapped only in `drop`.
        let ptr = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
            )?
        };
        let base = NonNull::new(ptr.cast::<AtomicU64>())
            .ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Self {
            base,
            tasks,
            scalars,
        })
    }

    fn words(&self) -> &[AtomicU64] {
        let words = (self.tasks * WORDS_PER_TASK + self.scalars).max(1);
        // SAFETY: `base` points at `words` initialised AtomicU64s mapped in `new` and
        // valid until `drop`; the returned borrow cannot outlive `self`.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), words) }
    }

    /// The slot of task `index` (panics never: out-of-range indices are a bug caught
    /// in debug builds and clamped to the last slot in release).
    pub fn task(&self, index: usize) -> TaskSlot<'_> {
        debug_assert!(index < self.tasks);
        let index = index.min(self.tasks.saturating_sub(1));
        let start = index * WORDS_PER_TASK;
        TaskSlot {
            words: &self.words()[start..start + WORDS_PER_TASK],
        }
    }

    /// Extra word `index`, after the task slots.
    pub fn scalar(&self, index: usize) -> &AtomicU64 {
        debug_assert!(index < self.scalars);
        &self.words()[self.tasks * WORDS_PER_TASK + index.min(self.scalars.saturating_sub(1))]
    }

    pub fn tasks(&self) -> usize {
        self.tasks
    }

    /// Where task `index` ran, named `name`, for the run record.
    pub fn task_record(&self, index: usize, name: impl Into<String>) -> crate::TaskCpus {
        let slot = self.task(index);
        crate::TaskCpus {
            task: name.into(),
            cpus: slot.cpus(),
            sampled_migrations: slot.sampled_migrations(),
            nr_migrations: slot.nr_migrations(),
        }
    }

    /// The sorted union of every task's CPUs.
    pub fn all_cpus(&self) -> Vec<u32> {
        let mut union = [0u64; MASK_WORDS];
        for task in 0..self.tasks {
            for (acc, word) in union.iter_mut().zip(self.task(task).mask()) {
                *acc |= word;
            }
        }
        mask_to_cpus(&union)
    }

    /// Where the tasks ran relative to each other: the kind from each task's CPUs, the
    /// colocated share from the samples taken with [`TaskSlot::note_cpu_beside`].
    pub fn placement(&self) -> Option<kbench_record::ObservedPlacement> {
        let tasks: Vec<crate::TaskCpus> = (0..self.tasks)
            .map(|i| self.task_record(i, String::new()))
            .collect();
        let kind = kbench_record::PlacementKind::of_tasks(&tasks)?;
        let (samples, colocated) = (0..self.tasks)
            .map(|i| self.task(i))
            .map(|t| (t.word(PEER_SAMPLES), t.word(PEER_COLOCATED)))
            .fold((0, 0), |(s, c), (ds, dc)| (s + ds, c + dc));
        Some(kbench_record::ObservedPlacement {
            kind,
            colocated_share: (samples > 0).then(|| colocated as f64 / samples as f64),
        })
    }

    /// Sum of all tasks' byte counters.
    pub fn total_bytes(&self) -> u64 {
        (0..self.tasks).map(|t| self.task(t).bytes()).sum()
    }
}

impl Drop for SharedStats {
    fn drop(&mut self) {
        let words = (self.tasks * WORDS_PER_TASK + self.scalars).max(1);
        // SAFETY: unmaps exactly the mapping made in `new`; no borrow of it outlives
        // `self`, which is being dropped.
        unsafe {
            let _ = rustix::mm::munmap(
                self.base.as_ptr().cast(),
                words * std::mem::size_of::<AtomicU64>(),
            );
        }
    }
}

/// One task's view of its slot.
#[derive(Clone, Copy)]
pub struct TaskSlot<'a> {
    words: &'a [AtomicU64],
}

impl TaskSlot<'_> {
    /// Records the CPU the caller runs on now (getcpu through the vDSO: no context
    /// switch), and counts a migration when it differs from the last sample: a lower
    /// bound of the real count, available on every kernel.
    #[inline]
    pub fn note_current_cpu(&self) {
        let cpu = rustix::thread::sched_getcpu();
        if cpu < MAX_TRACKED_CPUS {
            self.words[cpu / 64].fetch_or(1 << (cpu % 64), Ordering::Relaxed);
        }
        let seen = cpu as u64 + 1;
        let last = self.words[LAST_CPU].swap(seen, Ordering::Relaxed);
        if last != 0 && last != seen {
            self.words[SAMPLED_MIGRATIONS].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// [`note_current_cpu`](Self::note_current_cpu), and counts whether `peer` was last
    /// seen on the same CPU: the colocated share of a run that moved.
    #[inline]
    pub fn note_cpu_beside(&self, peer: &TaskSlot<'_>) {
        self.note_current_cpu();
        let mine = self.words[LAST_CPU].load(Ordering::Relaxed);
        let theirs = peer.words[LAST_CPU].load(Ordering::Relaxed);
        if theirs != 0 {
            self.words[PEER_SAMPLES].fetch_add(1, Ordering::Relaxed);
            if theirs == mine {
                self.words[PEER_COLOCATED].fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn word(&self, index: usize) -> u64 {
        self.words[index].load(Ordering::Relaxed)
    }

    /// Stores the calling thread's `se.nr_migrations` (CONFIG_SCHED_DEBUG kernels).
    /// One small /proc read: call it once, at the end of a worker with few peers. It
    /// reads `/proc/thread-self`, so it makes no gettid call, which the seccomp
    /// supervisor's own filter would trap.
    pub fn note_nr_migrations(&self) {
        let Ok(text) = std::fs::read_to_string("/proc/thread-self/sched") else {
            return;
        };
        if let Some(n) = kbench_sys::SchedStats::parse(&text).nr_migrations {
            self.words[NR_MIGRATIONS].store(n.saturating_add(1), Ordering::Relaxed);
        }
    }

    /// Adds to the task's byte counter.
    pub fn add_bytes(&self, bytes: u64) {
        self.words[BYTES].fetch_add(bytes, Ordering::Relaxed);
    }

    fn bytes(&self) -> u64 {
        self.words[BYTES].load(Ordering::Relaxed)
    }

    /// CPU changes seen between samples.
    pub fn sampled_migrations(&self) -> u64 {
        self.words[SAMPLED_MIGRATIONS].load(Ordering::Relaxed)
    }

    /// The kernel's count, when the task recorded it.
    pub fn nr_migrations(&self) -> Option<u64> {
        self.words[NR_MIGRATIONS]
            .load(Ordering::Relaxed)
            .checked_sub(1)
    }

    fn mask(&self) -> [u64; MASK_WORDS] {
        std::array::from_fn(|i| self.words[i].load(Ordering::Relaxed))
    }

    fn cpus(&self) -> Vec<u32> {
        mask_to_cpus(&self.mask())
    }
}

fn mask_to_cpus(mask: &[u64; MASK_WORDS]) -> Vec<u32> {
    (0..MAX_TRACKED_CPUS)
        .filter(|cpu| mask[cpu / 64] & (1 << (cpu % 64)) != 0)
        .map(|cpu| cpu as u32)
        .collect()
}
