//! `kbench report` on real runs: the page `compare --format html` prints too, with a
//! plot per primary metric and latency curves from the stored histograms, rendered by
//! Debian's headless Chromium to a PNG that is not blank, with no console message.
mod common;
use common::{kbench_on, utf8_stdout_ok};
use std::path::Path;

/// What kbench `args` on `db` prints, which must be UTF-8: the page is compared as text.
fn ok(db: &Path, args: &[&str]) -> String {
    utf8_stdout_ok(kbench_on(db, args), args)
}

/// Two short sessions with a latency workload, and their report.
fn report(dir: &Path) -> String {
    let db = dir.join("k.db");
    for label in ["before", "after"] {
        ok(
            &db,
            &[
                "run",
                "--label",
                label,
                "--runs",
                "6",
                "--warmup",
                "0",
                "pipe:-l 500",
                "wakeup:--wakes 200",
            ],
        );
    }
    let file = dir.join("report.html");
    let said = ok(
        &db,
        &["report", "before", "after", "-o", file.to_str().unwrap()],
    );
    assert!(said.starts_with("wrote "), "{said}");
    let page = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        page,
        ok(&db, &["compare", "before", "after", "--format", "html"])
    );
    page
}

#[test]
fn a_report_of_real_runs_has_every_plot_and_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path());
    assert!(page.len() < 1_000_000, "{} bytes", page.len());
    assert!(!page.to_lowercase().contains("<script"));
    // The verdict plot, run order and distribution for each of the two primary
    // metrics, and at least one latency curve of wakeup's series.
    assert!(
        page.matches("<svg").count() >= 6,
        "{} plots",
        page.matches("<svg").count()
    );
    assert!(page.contains("seconds since the first run"));
    assert!(page.contains("latency percentiles"));
    assert!(page.contains("<title>after run 6:"), "a tooltip per run");
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert!(
        page.contains(&format!("kernel {}", release.trim())),
        "the header names the kernel"
    );
    common::render_in_chromium(&dir.path().join("report.html"));
}
