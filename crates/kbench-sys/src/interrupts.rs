//! `/proc/interrupts`: per-CPU counts per row, deltas between two readings, which rows
//! are IPIs of which kind, and which of the others are device IRQs or the local timer.
//!
//! Rows are classified by their description, not their name, because the names differ
//! between architectures and kernels (x86 `RES`/`CAL`/`TLB`, arm64 and riscv `IPI0`..`IPIn`
//! whose numbering has changed over time) while the descriptions are stable.
use crate::Sysroot;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The kind of an interrupt row, as far as IPI accounting cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IpiKind {
    /// Rescheduling IPI (x86 `RES`, arm64 "Rescheduling interrupts").
    Reschedule,
    /// Function call IPI, including single-function-call rows (x86 `CAL`).
    FunctionCall,
    /// TLB shootdown IPI (x86 `TLB`).
    TlbShootdown,
    /// Any other IPI (CPU stop, timer broadcast, IRQ work, backtrace, wake-up...).
    Other,
    /// Not an IPI: device interrupts, local timer, NMIs, errors.
    NotIpi,
}

impl IpiKind {
    /// True for the four IPI kinds.
    pub fn is_ipi(self) -> bool {
        self != IpiKind::NotIpi
    }
}

/// Classifies a row from its name and description.
pub fn classify_row(name: &str, description: &str) -> IpiKind {
    let desc = description.to_ascii_lowercase();
    if desc.contains("resched") {
        IpiKind::Reschedule
    } else if desc.contains("function call") {
        IpiKind::FunctionCall
    } else if desc.contains("tlb shootdown") {
        IpiKind::TlbShootdown
    } else if is_other_ipi(name, &desc) {
        IpiKind::Other
    } else {
        IpiKind::NotIpi
    }
}

/// IPI rows that are neither reschedule, function call nor TLB: arm64/riscv number all
/// their IPIs `IPIn`; x86 sends IRQ work (`IWI`) and platform IPIs with their own names.
fn is_other_ipi(name: &str, desc: &str) -> bool {
    let numbered_ipi = name
        .strip_prefix("IPI")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    numbered_ipi || name == "IWI" || desc.contains("ipi") || desc.contains("irq work")
}

/// The kind of a row that is not an IPI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IrqKind {
    /// The per-CPU timer tick: x86 `LOC`, arm64 `arch_timer`, riscv `riscv-timer`.
    LocalTimer,
    /// A numbered row: an interrupt line of a device (disk, network, serial, PMU).
    Device,
    /// An architecture row that is neither (NMI, PMI, thermal, hypervisor callbacks).
    Other,
}

/// The kind of a non-IPI row from its name and description; `None` for IPI rows and for
/// the rows that hold one system-wide total (x86 `ERR` and `MIS`, arm64 `Err`), which
/// are not per CPU and carry no description.
pub fn classify_irq(name: &str, description: &str) -> Option<IrqKind> {
    if classify_row(name, description).is_ipi() || description.is_empty() {
        return None;
    }
    let desc = description.to_ascii_lowercase();
    if desc.contains("local timer") || desc.contains("arch_timer") || desc.contains("riscv-timer") {
        Some(IrqKind::LocalTimer)
    } else if !name.is_empty() && name.chars().all(|c| c.is_ascii_digit()) {
        Some(IrqKind::Device)
    } else {
        Some(IrqKind::Other)
    }
}

/// One row of `/proc/interrupts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterruptRow {
    /// The label before the colon: an IRQ number (`24`) or a name (`RES`, `IPI0`).
    pub name: String,
    /// The text after the counts: chip, hwirq, trigger and action for device interrupts,
    /// a description for architecture rows (`Rescheduling interrupts`).
    pub description: String,
    /// Counts aligned with [`Interrupts::cpus`]. Rows with a single total (`ERR`, `MIS`)
    /// have one count, attributed to the first CPU.
    pub counts: Vec<u64>,
    /// What kind of IPI the row counts, if any.
    pub kind: IpiKind,
}

impl InterruptRow {
    /// The sum over all CPUs.
    pub fn total(&self) -> u64 {
        saturating_sum(self.counts.iter().copied())
    }

    /// What kind of non-IPI interrupt the row counts, if it is one and per CPU.
    pub fn irq_kind(&self) -> Option<IrqKind> {
        classify_irq(&self.name, &self.description)
    }
}

/// One reading of `/proc/interrupts`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interrupts {
    /// The CPUs of the header (`CPU0 CPU1 ...`): online CPUs only, so not always 0..n.
    pub cpus: Vec<u32>,
    /// The rows in file order.
    pub rows: Vec<InterruptRow>,
}

impl Interrupts {
    /// Reads `/proc/interrupts` under the root; `None` if it is missing.
    pub fn read(root: &Sysroot) -> Option<Interrupts> {
        root.read("/proc/interrupts").map(|t| Interrupts::parse(&t))
    }

    /// Parses the text of `/proc/interrupts`. Never fails; lines it cannot read are skipped.
    pub fn parse(text: &str) -> Interrupts {
        let mut lines = text.lines();
        let cpus: Vec<u32> = lines
            .next()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("CPU")?.parse().ok())
            .collect();
        let rows = lines
            .filter_map(|line| parse_row(line, cpus.len()))
            .collect();
        Interrupts { cpus, rows }
    }

    /// The row with this name (`RES`, `IPI0`, `24`).
    pub fn row(&self, name: &str) -> Option<&InterruptRow> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// The count of one row on one CPU.
    pub fn count(&self, name: &str, cpu: u32) -> Option<u64> {
        let column = self.cpus.iter().position(|&c| c == cpu)?;
        self.row(name)?.counts.get(column).copied()
    }

    /// `later - self`, row by row (matched by name and description) and CPU by CPU (matched
    /// by number; CPUs missing from either reading, i.e. hot-plugged in between, are left
    /// out). Counters that went backwards count as 0.
    pub fn delta(&self, later: &Interrupts) -> InterruptsDelta {
        // Each shared CPU with its column in both readings, found once: looked up per row
        // and CPU, a reading of thousands of CPUs took minutes.
        let before_columns = first_columns(&self.cpus);
        let later_columns = first_columns(&later.cpus);
        let shared: Vec<(u32, usize, usize)> = self
            .cpus
            .iter()
            .filter_map(|cpu| Some((*cpu, before_columns[cpu], *later_columns.get(cpu)?)))
            .collect();
        let mut old_rows = HashMap::new();
        for row in &self.rows {
            old_rows
                .entry((row.name.as_str(), row.description.as_str()))
                .or_insert(row);
        }
        let rows = later
            .rows
            .iter()
            .filter_map(|new| {
                let old = old_rows.get(&(new.name.as_str(), new.description.as_str()))?;
                let counts = shared
                    .iter()
                    .map(|&(_, before, after)| {
                        let a = old.counts.get(before).copied().unwrap_or(0);
                        let b = new.counts.get(after).copied().unwrap_or(0);
                        b.saturating_sub(a)
                    })
                    .collect();
                Some(InterruptRow {
                    counts,
                    ..new.clone()
                })
            })
            .collect();
        InterruptsDelta {
            cpus: shared.iter().map(|&(cpu, _, _)| cpu).collect(),
            rows,
        }
    }
}

/// The column of each CPU of a header; the first when the header repeats one.
fn first_columns(cpus: &[u32]) -> HashMap<u32, usize> {
    let mut columns = HashMap::new();
    for (column, cpu) in cpus.iter().enumerate() {
        columns.entry(*cpu).or_insert(column);
    }
    columns
}

/// Splits `NAME: c0 c1 ... description` into a row. At most `ncpus` counts are taken, so
/// a description that starts with a number (`IO-APIC 5-edge` does not, `GICv3 27 Level`
/// does not, but vendors vary) is cut only after the count columns.
fn parse_row(line: &str, ncpus: usize) -> Option<InterruptRow> {
    let (name, rest) = line.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let mut counts = Vec::new();
    let mut remaining = rest;
    while counts.len() < ncpus.max(1) {
        let trimmed = remaining.trim_start();
        let end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
        match trimmed[..end].parse::<u64>() {
            Ok(n) if end > 0 => {
                counts.push(n);
                remaining = &trimmed[end..];
            }
            _ => break,
        }
    }
    let description = remaining.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(InterruptRow {
        kind: classify_row(name, &description),
        name: name.to_string(),
        description,
        counts,
    })
}

/// The sum of counts, held at `u64::MAX`: the kernel's counts are 32-bit and never get
/// there, but a file under a sysroot may say anything, and an overflow must not panic.
fn saturating_sum(counts: impl Iterator<Item = u64>) -> u64 {
    counts.fold(0, u64::saturating_add)
}

/// The difference between two readings; same layout as [`Interrupts`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterruptsDelta {
    /// CPUs present in both readings.
    pub cpus: Vec<u32>,
    /// Per-row deltas aligned with `cpus`.
    pub rows: Vec<InterruptRow>,
}

impl InterruptsDelta {
    /// Total IPIs of one kind over all CPUs.
    pub fn total(&self, kind: IpiKind) -> u64 {
        saturating_sum(
            self.rows
                .iter()
                .filter(|r| r.kind == kind)
                .map(|r| r.total()),
        )
    }

    /// IPIs of one kind received by one CPU.
    pub fn on_cpu(&self, kind: IpiKind, cpu: u32) -> u64 {
        let Some(column) = self.cpus.iter().position(|&c| c == cpu) else {
            return 0;
        };
        saturating_sum(
            self.rows
                .iter()
                .filter(|r| r.kind == kind)
                .filter_map(|r| r.counts.get(column).copied()),
        )
    }

    /// Non-IPI interrupts of one kind received by one CPU.
    pub fn irqs_on_cpu(&self, kind: IrqKind, cpu: u32) -> u64 {
        let Some(column) = self.cpus.iter().position(|&c| c == cpu) else {
            return 0;
        };
        saturating_sum(
            self.rows
                .iter()
                .filter(|r| r.irq_kind() == Some(kind))
                .filter_map(|r| r.counts.get(column).copied()),
        )
    }

    /// Total of all IPI kinds together.
    pub fn total_ipis(&self) -> u64 {
        saturating_sum(
            self.rows
                .iter()
                .filter(|r| r.kind.is_ipi())
                .map(|r| r.total()),
        )
    }

    /// The delta of a named row summed over CPUs.
    pub fn row_total(&self, name: &str) -> Option<u64> {
        self.rows.iter().find(|r| r.name == name).map(|r| r.total())
    }
}
