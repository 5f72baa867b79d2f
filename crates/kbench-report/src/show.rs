//! `kbench show LABEL` as text: the label's sessions, then each metric's runs
//! described under its workload, the failed runs and imported summary rows.
use crate::words::{figure, utc};
use kbench_analysis::shown::LabelShown;
use std::fmt::Write;

/// The whole of `kbench show`'s output for `shown`.
pub fn text(shown: &LabelShown) -> String {
    let label = &shown.label;
    let mut out = format!("label {label}\n\n");
    for session in &shown.sessions {
        let s = &session.row;
        let kernel = s
            .environment
            .as_ref()
            .and_then(|e| e.snapshot.as_ref()?.kernel_release.as_deref())
            .unwrap_or("?");
        let boot = s
            .boot_id
            .as_deref()
            .map(|b| b.chars().take(8).collect::<String>())
            .unwrap_or_else(|| "?".into());
        let (id, kind, started) = (s.id, &s.kind, utc(s.started_unix_ns));
        let _ = writeln!(
            out,
            "session {id} ({kind}) {started}  boot {boot}  kernel {kernel}  {} runs",
            s.runs
        );
        let _ = match &s.source {
            Some(source) => writeln!(out, "  {} ({})", source.file, source.format),
            None => writeln!(out, "  {}", s.command_line),
        };
        if session.console_log_only {
            let _ = writeln!(
                out,
                "  no measured run: its console log is `kbench show {label} --console {id}`"
            );
        }
    }
    let mut last_heading: Option<(&str, &str)> = None;
    for f in &shown.figures {
        let heading = (f.workload.as_str(), f.params.as_str());
        if last_heading != Some(heading) {
            let _ = writeln!(out, "\n{} [{}] {}", f.workload, f.variant, f.params);
            let _ = writeln!(
                out,
                "  {:<28} {:>5} {:>12} {:>8}",
                "metric", "n", "median", "CV%"
            );
            last_heading = Some(heading);
        }
        let d = &f.summary;
        let cv = d.cv_pct.map(|c| format!("{c:.2}"));
        let _ = writeln!(
            out,
            "  {:<28} {:>5} {:>12} {:>8}  {}",
            f.metric,
            d.n,
            figure(d.median),
            cv.as_deref().unwrap_or("-"),
            f.unit
        );
    }
    for failed in &shown.failed {
        let first = failed.first_error.as_ref();
        let first = first.map(|e| format!(" (first: {e})")).unwrap_or_default();
        let _ = writeln!(
            out,
            "\n{}: {} failed run(s), recorded and not counted{first}",
            failed.workload, failed.runs
        );
    }
    for s in &shown.summaries {
        let _ = writeln!(
            out,
            "{:<22} {:<12} {:<14} {:>4} {:>12} (mean, +- {:.3} SE, summary)",
            s.workload,
            "summary",
            s.metric,
            s.n,
            figure(Some(s.mean)),
            s.std_error
        );
    }
    out
}
