//! `kbench show LABEL`: the sessions of a label and what they measured.
use crate::session::DbArgs;
use kbench_report::compare::utc;
use std::collections::BTreeMap;

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    pub label: String,
    /// Print, in full, the console log kept with the label's session ID (a boot of
    /// vm-ab or bisect, or one read by import-console): what a failed boot printed.
    #[arg(long, value_name = "ID")]
    pub console: Option<i64>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// (workload, parameters, variant, metric): what is never pooled.
type GroupKey = (String, String, String, String);

pub fn run(args: ShowArgs) -> anyhow::Result<i32> {
    let store = args.db.open_existing()?;
    if !store.has_label(&args.label)? {
        return crate::error::usage(format!("no runs labelled '{}'", args.label));
    }
    let sessions = store.sessions(&args.label)?;
    if let Some(id) = args.console {
        return print_console_log(&store, &args.label, &sessions, id);
    }
    outln!("label {}\n", args.label);
    for s in sessions {
        let kernel = s
            .environment
            .as_ref()
            .and_then(|e| e.snapshot.as_ref()?.kernel_release.as_deref())
            .unwrap_or("?")
            .to_string();
        let boot = s
            .boot_id
            .as_deref()
            .map(|b| b.chars().take(8).collect::<String>())
            .unwrap_or_else(|| "?".into());
        outln!(
            "session {} ({}) {}  boot {boot}  kernel {kernel}  {} runs",
            s.id,
            s.kind,
            utc(s.started_unix_ns),
            s.runs
        );
        match &s.source {
            Some(source) => outln!("  {} ({})", source.file, source.format),
            None => outln!("  {}", s.command_line),
        }
        if s.runs == 0 && store.console_log(s.id)?.is_some() {
            outln!(
                "  no measured run: its console log is `kbench show {} --console {}`",
                args.label,
                s.id
            );
        }
    }
    let mut groups: BTreeMap<GroupKey, (Vec<f64>, String)> = BTreeMap::new();
    // Per workload: how many runs failed, and the first reason stored.
    let mut failed: BTreeMap<String, (usize, Option<String>)> = BTreeMap::new();
    for r in store.runs(&args.label)? {
        if r.run.warmup {
            continue;
        }
        if !r.is_measured() {
            let entry = failed.entry(r.run.workload.clone()).or_default();
            entry.0 += 1;
            entry.1 = entry.1.take().or_else(|| r.run.error.clone());
            continue;
        }
        let params = kbench_analysis::group::params_text(&r.run.params);
        for v in &r.run.values {
            let key = (
                r.run.workload.clone(),
                params.clone(),
                r.run.variant.clone(),
                v.metric.clone(),
            );
            groups
                .entry(key)
                .or_insert((Vec::new(), v.unit.clone()))
                .0
                .push(v.value);
        }
    }
    let mut last_params: Option<(String, String)> = None;
    for ((workload, params, variant, metric), (values, unit)) in groups {
        let heading = (workload.clone(), params.clone());
        if last_params.as_ref() != Some(&heading) {
            outln!("\n{workload} [{variant}] {params}");
            outln!(
                "  {:<28} {:>5} {:>12} {:>8}",
                "metric",
                "n",
                "median",
                "CV%"
            );
            last_params = Some(heading);
        }
        let d = kbench_stats::describe(&values);
        outln!(
            "  {:<28} {:>5} {:>12} {:>8}  {unit}",
            metric,
            d.n,
            kbench_report::compare::figure(d.median),
            d.cv_pct
                .map(|c| format!("{c:.2}"))
                .unwrap_or_else(|| "-".into()),
        );
    }
    for (workload, (n, error)) in failed {
        let first = error.map(|e| format!(" (first: {e})")).unwrap_or_default();
        outln!("\n{workload}: {n} failed run(s), recorded and not counted{first}");
    }
    for s in store.summaries(&args.label)? {
        outln!(
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

/// `--console ID`: the log kept with session `id` of `label`, whole, to stdout.
fn print_console_log(
    store: &kbench_store::Store,
    label: &str,
    sessions: &[kbench_store::SessionRow],
    id: i64,
) -> anyhow::Result<i32> {
    if !sessions.iter().any(|s| s.id == id) {
        let ids: Vec<String> = sessions.iter().map(|s| s.id.to_string()).collect();
        return crate::error::usage(format!(
            "'{label}' has no session {id} (its sessions: {})",
            ids.join(", ")
        ));
    }
    match store
        .console_log_text(id)?
    {
        Some(log) => {
            crate::output::write_stdout(log.as_bytes())?;
            Ok(0)
        }
        None => crate::error::usage(format!(
            "session {id} of '{label}' has no console log: only boots (vm-ab, bisect, import-console) keep one"
        )),
    }
}
