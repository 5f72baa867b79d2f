//! `kbench list` as text: every label at a glance, or per machine the labels it holds.
use crate::compare::kernel_text;
use crate::words::utc;
use kbench_store::{LabelInfo, LabelKernel, MachineLabel};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// Every label of the database at `db`, with the kernel its last session ran.
pub fn labels_text(
    db: &Path,
    labels: &[LabelInfo],
    kernels: &BTreeMap<String, LabelKernel>,
) -> String {
    if labels.is_empty() {
        return format!("no runs in {} yet: kbench run --label NAME\n", db.display());
    }
    let mut out = format!(
        "{:<28} {:>8} {:>6} {:>5}  {:<19}  {:<19}  kernel\n",
        "label", "sessions", "runs", "boots", "first", "last"
    );
    for l in labels {
        let kernel = kernels.get(&l.label).cloned().unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:>6} {:>5}  {:<19}  {:<19}  {}",
            l.label,
            l.sessions,
            l.runs,
            l.boots,
            utc(l.first_unix_ns),
            utc(l.last_unix_ns),
            kernel_text(kernel.release.as_deref(), kernel.commit.as_deref())
        );
    }
    out
}

/// Each machine of the database at `db`, then its labels indented under it.
pub fn machines_text(db: &Path, rows: &[MachineLabel]) -> String {
    if rows.is_empty() {
        return format!("no runs in {} yet\n", db.display());
    }
    let mut out = String::new();
    let mut current: Option<&Option<String>> = None;
    for r in rows {
        if current != Some(&r.machine) {
            let machine = r.machine.as_deref();
            let machine = machine.unwrap_or("(unknown machine: sessions without an environment)");
            let _ = writeln!(out, "{machine}");
            current = Some(&r.machine);
        }
        let _ = writeln!(
            out,
            "  {:<28} {:>8} sessions {:>6} runs  {}  {}",
            r.label,
            r.sessions,
            r.runs,
            utc(r.first_unix_ns),
            utc(r.last_unix_ns)
        );
    }
    out
}
