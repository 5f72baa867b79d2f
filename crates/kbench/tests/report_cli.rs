//! `kbench report` on real runs: the page `compare --format html` prints too, with a
//! plot per primary metric and latency curves from the stored histograms, rendered by
//! Debian's headless Chromium to a PNG that is not blank, with no console message.
mod common;
use common::{kbench_on, utf8_stdout_ok};
use std::path::Path;
use std::process::Command;

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
    render_in_chromium(dir.path());
}

/// Chromium's binary, when installed (scripts/test.sh installs it; there it must run).
fn chromium() -> Option<&'static str> {
    let found = Path::new("/usr/bin/chromium").exists();
    if !found {
        assert!(
            std::env::var_os("KBENCH_REQUIRE_CHROMIUM").is_none(),
            "KBENCH_REQUIRE_CHROMIUM is set, but /usr/bin/chromium is not installed"
        );
        eprintln!("SKIP: no /usr/bin/chromium");
    }
    found.then_some("/usr/bin/chromium")
}

fn render_in_chromium(dir: &Path) {
    let Some(chromium) = chromium() else {
        return;
    };
    let png = dir.join("report.png");
    let profile = dir.join("profile");
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=820,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", dir.join("report.html").display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium: {log}");
    // The page's own console (a CSP violation, a parse error) says CONSOLE.
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let pixels = &pixels[..info.buffer_size()];
    let channels = info.color_type.samples();
    let first = &pixels[..channels];
    let differing = pixels.chunks(channels).filter(|p| p != &first).count();
    let total = pixels.len() / channels;
    assert!(
        differing * 100 > total,
        "the screenshot is blank: {differing} of {total} pixels differ from the first"
    );
}
