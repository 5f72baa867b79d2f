//! `kbench import-console LOG --label L`: the boots in a board's serial capture, or in
//! a LAVA job's YAML log, read with the checks `kbench vm-ab` applies to its own.
use crate::cmd::vm_ab::{store_boot, BootTarget, HostView};
use crate::error::usage;
use crate::session::{self, DbArgs};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ImportConsoleArgs {
    /// A serial capture, or a LAVA job log (YAML, its `lvl: target` lines); `-` reads
    /// standard input.
    pub log: PathBuf,
    /// The label the boots are stored under.
    #[arg(long)]
    pub label: String,
    /// The kernel release every boot must report.
    #[arg(long, value_name = "RELEASE")]
    pub kernel_release: Option<String>,
    /// The booted kernel's configuration (a .config, or config.gz), stored with every
    /// boot so that compare can list the options two kernels differ in.
    #[arg(long, value_name = "FILE")]
    pub kernel_config: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ImportConsoleArgs) -> anyhow::Result<i32> {
    session::check_label(&args.label)?;
    let bytes = if args.log.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)?;
        buf
    } else {
        std::fs::read(&args.log).or_else(|e| usage(format!("{}: {e}", args.log.display())))?
    };
    let text = String::from_utf8_lossy(&bytes);
    let console = if looks_like_lava_log(&text) {
        lava_target_lines(&text)
    } else {
        text.into_owned()
    };
    let split = kbench_console::split_boots(&console);
    if split.boots.is_empty() {
        return usage(format!(
            "{}: no kbench console records in it",
            args.log.display()
        ));
    }
    let config = match &args.kernel_config {
        Some(path) => Some(kbench_sys::kconfig::read_file(path).or_else(|e| usage(e.to_string()))?),
        None => None,
    };
    let mut store = args.db.open()?;
    let target = BootTarget {
        label: &args.label,
        expected_release: args.kernel_release.as_deref().unwrap_or(""),
        accel: None,
        kind: "console",
        shared_log: true,
        kernel_config: config.as_deref(),
    };
    let mut failed = 0;
    // Each boot is judged on its own stretch of the capture: a panic in one boot's
    // kernel fails that boot, not every boot of the job.
    for boot in &split.boots {
        if !store_boot(
            &mut store,
            &target,
            &boot.nonce,
            boot.text,
            &HostView::default(),
        )? {
            failed += 1;
        }
    }
    if let Some(panic) = kbench_console::parse(split.tail, "").panics.first() {
        eprintln!(
            "kbench import-console: after the last boot's records a kernel died (a boot that never reported?): {panic}"
        );
    }
    outln!(
        "kbench import-console: {} boot(s) under {}, {} failed",
        split.boots.len(),
        args.label,
        failed
    );
    Ok(i32::from(failed > 0))
}

/// A LAVA job log: a YAML list of `{dt: ..., lvl: ..., msg: ...}` entries.
fn looks_like_lava_log(text: &str) -> bool {
    text.lines()
        .take(50)
        .any(|l| l.trim_start().starts_with("- {") && l.contains("lvl:"))
}

/// The console lines of a LAVA log: the `msg` of each `lvl: target` entry.
fn lava_target_lines(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if !(line.contains("lvl: target") || line.contains("\"lvl\": \"target\"")) {
            continue;
        }
        if let Some(msg) = yaml_msg(line) {
            out.push_str(&msg);
            out.push('\n');
        }
    }
    out
}

/// The `msg` scalar of one flow-mapping line: single-quoted (`''` is a quote),
/// double-quoted (backslash escapes), or plain up to the closing brace.
fn yaml_msg(line: &str) -> Option<String> {
    let start = line
        .find("msg:")
        .map(|i| i + 4)
        .or_else(|| line.find("\"msg\":").map(|i| i + 6))?;
    let rest = line[start..].trim_start();
    let mut chars = rest.chars().peekable();
    match chars.next()? {
        '\'' => {
            let mut out = String::new();
            while let Some(c) = chars.next() {
                if c == '\'' {
                    if chars.peek() == Some(&'\'') {
                        chars.next();
                        out.push('\'');
                    } else {
                        return Some(out);
                    }
                } else {
                    out.push(c);
                }
            }
            Some(out)
        }
        '"' => {
            let mut out = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' => return Some(out),
                    '\\' => match chars.next()? {
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        other => out.push(other),
                    },
                    c => out.push(c),
                }
            }
            Some(out)
        }
        _ => Some(rest.trim_end_matches('}').trim().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lava_messages_are_unquoted() {
        let log = "- {dt: 2026-12-01T10:00:00.1, lvl: info, msg: 'start'}\n\
                   - {dt: 2026-12-01T10:00:01.2, lvl: target, msg: 'it''s @KB1 x'}\n\
                   - {\"dt\": \"2026\", \"lvl\": \"target\", \"msg\": \"a \\\"b\\\" c\"}\n";
        assert!(looks_like_lava_log(log));
        assert_eq!(lava_target_lines(log), "it's @KB1 x\na \"b\" c\n");
        assert!(!looks_like_lava_log("[    0.000000] Linux version 6.1\n"));
    }
}
