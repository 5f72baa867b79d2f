//! `kbench calibrate`'s answer: the smallest change this machine resolves, per metric,
//! as text or JSON.
use crate::words::{civil_date, spread_pct, wrap};
use kbench_analysis::calibration::{self, Calibration};
use kbench_analysis::outcome::WorkloadOutcome;
use std::time::Duration;

/// The resolvable changes, one line per metric, in at most 80 columns.
pub fn resolvable_text(cal: &Calibration) -> String {
    let lines = calibration::resolvable(cal, kbench_analysis::ALPHA);
    let level = lines.first().map_or("session", |l| l.level.as_str());
    let mut out = wrap(&format!(
        "kbench calibrate: calibration {} of this machine, {} ({} session{} in {} boot{}, kernel {})",
        cal.row.id,
        civil_date(cal.row.created_unix_ns),
        cal.row.sessions,
        if cal.row.sessions == 1 { "" } else { "s" },
        cal.row.boots,
        if cal.row.boots == 1 { "" } else { "s" },
        cal.fingerprint.kernel_text(),
    ), "  ");
    out.push_str(&format!(
        "the smallest change resolved (95% half-width) with 1, 3 and 10 {level}s a side;\nwithin = run-to-run CV, between = {level}-to-{level} CV beyond it\n\n"
    ));
    out.push_str(&format!(
        "{:<34} {:>7} {:>7} {:>8} {:>8} {:>8}\n",
        "metric", "within", "between", "1", "3", "10"
    ));
    let mut last_key = String::new();
    for l in &lines {
        let key = format!("{} {} [{}]", l.workload, l.params, l.variant);
        if key != last_key {
            out.push_str(&wrap(&key, "  "));
            last_key = key;
        }
        let metric = match l.pooled_quantile {
            Some(q) => format!("{} {} pooled", l.metric, calibration::quantile_name(q)),
            None => l.metric.clone(),
        };
        let between = if l.level == kbench_stats::Level::Boot {
            l.between_boot_cv_pct
        } else {
            l.between_session_cv_pct
        };
        let mut name = format!("  {metric}");
        if name.chars().count() > 34 {
            name = name.chars().take(33).collect::<String>() + "~";
        }
        out.push_str(&format!(
            "{:<34} {:>7} {:>7} {:>8} {:>8} {:>8}\n",
            name,
            spread_pct(l.within_cv_pct),
            spread_pct(between),
            spread_pct(l.resolvable_pct[0]),
            spread_pct(l.resolvable_pct[1]),
            spread_pct(l.resolvable_pct[2]),
        ));
    }
    if cal.row.boots < 2 {
        out.push_str(
            "\none boot: boot-to-boot noise is not calibrated; run kbench calibrate again\nafter a reboot to add a boot\n",
        );
    }
    out
}

/// The calibration as `calibrate --show --json` prints it.
pub fn json(cal: &Calibration) -> serde_json::Value {
    let lines = calibration::resolvable(cal, kbench_analysis::ALPHA);
    serde_json::json!({
        "calibration_id": cal.row.id,
        "created_unix_ns": cal.row.created_unix_ns,
        "sessions": cal.row.sessions,
        "boots": cal.row.boots,
        "fingerprint": cal.fingerprint,
        "metrics": lines,
    })
}

/// The line said after the `index`-th of `of` sessions of the calibration's suite.
pub fn session_line(
    index: u32,
    of: u32,
    outcomes: &[WorkloadOutcome],
    elapsed: Duration,
) -> String {
    let runs: usize = outcomes.iter().map(|o| o.values.len()).sum();
    format!(
        "kbench calibrate: session {index}/{of}: {runs} runs in {:.1} s",
        elapsed.as_secs_f64()
    )
}
