//! `kbench show LABEL`: the sessions of a label and what they measured.
use crate::cmd::list::utc;
use crate::session::DbArgs;
use std::collections::BTreeMap;

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    pub label: String,
    #[command(flatten)]
    pub db: DbArgs,
}

/// (workload, variant, metric).
type GroupKey = (String, String, String);
/// (measured values, unit, failed runs).
type GroupValues = (Vec<f64>, String, usize);

pub fn run(args: ShowArgs) -> anyhow::Result<i32> {
    let store = args.db.open()?;
    let map = crate::session::store_error;
    if !store.has_label(&args.label).map_err(map)? {
        return crate::error::usage(format!("no runs labelled '{}'", args.label));
    }
    println!("label {}\n", args.label);
    for s in store.sessions(&args.label).map_err(map)? {
        let kernel = s
            .environment
            .as_ref()
            .and_then(|e| e.get("kernel_release"))
            .and_then(|k| k.as_str())
            .unwrap_or("?")
            .to_string();
        let boot = s
            .boot_id
            .as_deref()
            .map(|b| &b[..b.len().min(8)])
            .unwrap_or("?");
        println!(
            "session {} ({}) {}  boot {boot}  kernel {kernel}  {} runs",
            s.id,
            s.kind,
            utc(s.started_unix_ns),
            s.runs
        );
        println!("  {}", s.source.as_deref().unwrap_or(&s.command_line));
    }
    let mut groups: BTreeMap<GroupKey, GroupValues> = BTreeMap::new();
    for r in store.runs(&args.label).map_err(map)? {
        if r.run.warmup {
            continue;
        }
        let failed = !matches!(r.run.exit_status, Some(0) | None) || r.run.variant == "failed";
        for v in &r.run.values {
            let key = (
                r.run.workload.clone(),
                r.run.variant.clone(),
                v.metric.clone(),
            );
            let entry = groups.entry(key).or_insert((Vec::new(), v.unit.clone(), 0));
            if failed {
                entry.2 += 1;
            } else {
                entry.0.push(v.value);
            }
        }
    }
    println!(
        "\n{:<22} {:<12} {:<14} {:>4} {:>12} {:>7} {:>6}",
        "workload", "variant", "metric", "n", "median", "CV%", "failed"
    );
    for ((workload, variant, metric), (values, unit, failed)) in groups {
        let d = kbench_stats::describe(&values);
        println!(
            "{:<22} {:<12} {:<14} {:>4} {:>12} {:>7} {:>6}  {unit}",
            workload,
            variant,
            metric,
            d.n,
            kbench_report::compare::figure(d.median),
            d.cv_pct
                .map(|c| format!("{c:.2}"))
                .unwrap_or_else(|| "-".into()),
            failed
        );
    }
    for s in store.summaries(&args.label).map_err(map)? {
        println!(
            "{:<22} {:<12} {:<14} {:>4} {:>12} (mean, +- {:.3} SE, summary)",
            s.workload,
            "summary",
            s.metric,
            s.n,
            kbench_report::compare::figure(Some(s.mean)),
            s.std_error
        );
    }
    Ok(0)
}
