//! `kbench list`: every label in the database, or with `--machines`, which machines
//! hold which labels.
use crate::session::DbArgs;

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Per machine (host name and CPU models, and its id where machines of one model
    /// share them), the labels it holds runs of.
    #[arg(long)]
    pub machines: bool,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ListArgs) -> anyhow::Result<i32> {
    let store = args.db.open_existing()?;
    if args.machines {
        return list_machines(&store);
    }
    let labels = store.labels()?;
    let kernels = store.label_kernels()?;
    if labels.is_empty() {
        outln!(
            "no runs in {} yet: kbench run --label NAME",
            store.path().display()
        );
        return Ok(0);
    }
    outln!(
        "{:<28} {:>8} {:>6} {:>5}  {:<19}  {:<19}  kernel",
        "label",
        "sessions",
        "runs",
        "boots",
        "first",
        "last"
    );
    for l in labels {
        let kernel = kernels.get(&l.label).cloned().unwrap_or_default();
        outln!(
            "{:<28} {:>8} {:>6} {:>5}  {:<19}  {:<19}  {}",
            l.label,
            l.sessions,
            l.runs,
            l.boots,
            kbench_report::compare::utc(l.first_unix_ns),
            kbench_report::compare::utc(l.last_unix_ns),
            kbench_report::compare::kernel_text(
                kernel.release.as_deref(),
                kernel.commit.as_deref()
            )
        );
    }
    Ok(0)
}

/// Each machine, then its labels indented under it.
fn list_machines(store: &kbench_store::Store) -> anyhow::Result<i32> {
    let rows = store.machine_labels()?;
    if rows.is_empty() {
        outln!("no runs in {} yet", store.path().display());
        return Ok(0);
    }
    let mut current: Option<&Option<String>> = None;
    for r in &rows {
        if current != Some(&r.machine) {
            outln!(
                "{}",
                r.machine
                    .as_deref()
                    .unwrap_or("(unknown machine: sessions without an environment)")
            );
            current = Some(&r.machine);
        }
        outln!(
            "  {:<28} {:>8} sessions {:>6} runs  {}  {}",
            r.label,
            r.sessions,
            r.runs,
            kbench_report::compare::utc(r.first_unix_ns),
            kbench_report::compare::utc(r.last_unix_ns)
        );
    }
    Ok(0)
}
