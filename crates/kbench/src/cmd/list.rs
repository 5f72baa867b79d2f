//! `kbench list`: every label in the database, or with `--machines`, which machines
//! hold which labels.
use crate::session::DbArgs;

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Per machine (host name and CPU models), the labels it holds runs of.
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
    let labels = store.labels().map_err(crate::session::store_error)?;
    if labels.is_empty() {
        outln!(
            "no runs in {} yet: kbench run --label NAME",
            store.path().display()
        );
        return Ok(0);
    }
    outln!(
        "{:<28} {:>8} {:>6} {:>5}  {:<19}  last",
        "label",
        "sessions",
        "runs",
        "boots",
        "first"
    );
    for l in labels {
        outln!(
            "{:<28} {:>8} {:>6} {:>5}  {:<19}  {}",
            l.label,
            l.sessions,
            l.runs,
            l.boots,
            utc(l.first_unix_ns),
            utc(l.last_unix_ns)
        );
    }
    Ok(0)
}

/// Each machine, then its labels indented under it.
fn list_machines(store: &kbench_store::Store) -> anyhow::Result<i32> {
    let rows = store
        .machine_labels()
        .map_err(crate::session::store_error)?;
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
            utc(r.first_unix_ns),
            utc(r.last_unix_ns)
        );
    }
    Ok(0)
}

/// `YYYY-MM-DD HH:MM:SS` in UTC.
pub fn utc(unix_ns: u64) -> String {
    let rem = unix_ns / 1_000_000_000 % 86_400;
    format!(
        "{} {:02}:{:02}:{:02}",
        kbench_report::compare::civil_date(unix_ns),
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc(0), "1970-01-01 00:00:00");
        assert_eq!(super::utc(1_796_001_643_000_000_000), "2026-11-30 01:20:43");
        assert_eq!(super::utc(951_782_400_000_000_000), "2000-02-29 00:00:00");
    }
}
