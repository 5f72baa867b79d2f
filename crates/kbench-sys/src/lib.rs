//! kbench-sys: the machine as kbench sees it.
//!
//! Everything here reads `/sys` and `/proc` through a [`Sysroot`], so every parser can be
//! exercised on the fixture trees under `fixtures/` as well as on the running machine.
//! Missing files are normal (VMs have no cpufreq, old kernels no `cluster_id`, offline CPUs
//! no topology): every field is optional and nothing here panics on odd input.
//!
//! Main entry points:
//! - [`Topology::read`]: CPUs, their topology and their [`CpuClass`] (big/little, P/E cores...);
//! - [`Topology::resolve_cpus`]: a `--cpus` spec (`0-3,6`, `class:big`, `class:Cortex-A53`);
//! - [`parse_cpulist`] / [`format_cpulist`]: the kernel's cpulist form;
//! - [`EnvSnapshot::capture`]: the environment record stored with every session;
//! - [`machine_id::detect`]: which of several machines of one model this is;
//! - [`checklist::checklist`]: the noise checklist shown by `kbench env`;
//! - [`tune`]: `kbench env --tune/--reset`;
//! - [`kconfig`]: kernel configs read into options, their differences, the running one's;
//! - [`Interrupts::read`]: `/proc/interrupts` with IPI classification and deltas;
//! - [`nr_migrations`] / [`SchedStats`]: per-task scheduler counters;
//! - [`tracefs`]: a tracefs instance for one traced run, removed afterwards.

#![warn(missing_docs)]

pub mod checklist;
pub mod classes;
pub mod cmdline;
pub mod cpu;
pub mod cpufreq;
pub mod cpuidle;
pub mod cpuinfo;
pub mod cpulist;
pub mod cpuspec;
mod error;
pub mod interrupts;
pub mod kconfig;
pub mod machine_id;
pub mod midr;
pub mod sched;
pub mod snapshot;
pub mod softirqs;
mod sysroot;
pub mod topology;
pub mod tracefs;
pub mod tune;
pub mod virt;

pub use classes::CpuClass;
pub use cpulist::{format_cpulist, parse_cpulist};
pub use error::SysError;
pub use interrupts::{Interrupts, InterruptsDelta, IpiKind, IrqKind};
pub use sched::{nr_migrations, SchedStats};
pub use snapshot::EnvSnapshot;
pub use softirqs::Softirqs;
pub use sysroot::Sysroot;
pub use topology::{Arch, Cpu, Topology};

/// True when the process runs with an effective uid of 0 (needed by `--tune` on the host).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}
