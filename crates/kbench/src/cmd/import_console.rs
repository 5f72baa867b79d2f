//! `kbench import-console LOG --label L`: the boots in a board's serial capture, or in
//! a LAVA job's YAML log, read with the checks `kbench vm-ab` applies to its own.
//! `--label-a A --label-b B` reads the log of a `kbench lava-job` job, whose boots share
//! one kernel command line: a boot's console is what LAVA logged in its namespace, and
//! the namespace says which kernel it booted.
use crate::boots::{config_sha256, store_boot};
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_boot::stored::{BootTarget, HostView};
use kbench_console::lava::{namespace_side, Side};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct ImportConsoleArgs {
    /// A serial capture, or a LAVA job log (YAML, its `lvl: target` lines); `-` reads
    /// standard input.
    pub log: PathBuf,
    /// The label the boots are stored under.
    #[arg(long, conflicts_with_all = ["label_a", "label_b"])]
    pub label: Option<String>,
    /// For the log of a `kbench lava-job` job: the label of kernel A's boots.
    #[arg(long)]
    pub label_a: Option<String>,
    /// For the log of a `kbench lava-job` job: the label of kernel B's boots.
    #[arg(long)]
    pub label_b: Option<String>,
    /// The kernel release every boot must report (with --label).
    #[arg(long, value_name = "RELEASE", conflicts_with_all = ["label_a", "label_b"])]
    pub kernel_release: Option<String>,
    /// The booted kernel's configuration (a .config, or config.gz), stored with every
    /// boot so that compare can list the options two kernels differ in (with --label).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["label_a", "label_b"])]
    pub kernel_config: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ImportConsoleArgs) -> anyhow::Result<i32> {
    let labels = labels(&args)?;
    let config = match &args.kernel_config {
        Some(path) => Some(kbench_sys::kconfig::read_file(path).or_else(|e| usage(e.to_string()))?),
        None => None,
    };
    let bytes = read_log(&args.log)?;
    let text = String::from_utf8_lossy(&bytes);
    match labels {
        Labels::One(label) => import_boots(&args, label, config.as_deref(), &text),
        Labels::PerKernel(labels) => import_ab_job(&args, labels, &text),
    }
}

/// Where the boots go: all under one label, or each under its kernel's.
enum Labels<'a> {
    One(&'a str),
    PerKernel([&'a str; 2]),
}

/// The labels asked for, checked before any log is read.
fn labels(args: &ImportConsoleArgs) -> anyhow::Result<Labels<'_>> {
    let labels = match (&args.label, &args.label_a, &args.label_b) {
        (Some(label), None, None) => Labels::One(label),
        (None, Some(a), Some(b)) if a == b => {
            return usage("the two kernels need different labels (--label-a, --label-b)")
        }
        (None, Some(a), Some(b)) => Labels::PerKernel([a, b]),
        (None, None, None) => return usage(
            "give --label L, or --label-a A and --label-b B for the log of a `kbench lava-job` job",
        ),
        _ => return usage("--label-a and --label-b go together"),
    };
    match &labels {
        Labels::One(label) => session::check_label(label)?,
        Labels::PerKernel(pair) => {
            for label in pair {
                session::check_label(label)?;
            }
        }
    }
    Ok(labels)
}

fn read_log(path: &Path) -> anyhow::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)?;
        Ok(buf)
    } else {
        std::fs::read(path).or_else(|e| usage(format!("{}: {e}", path.display())))
    }
}

/// Every boot in the log under one label.
fn import_boots(
    args: &ImportConsoleArgs,
    label: &str,
    config: Option<&str>,
    text: &str,
) -> anyhow::Result<i32> {
    let lava = looks_like_lava_log(text);
    if lava && !lava_job_boots(text).is_empty() {
        // Its boots share one nonce: read as one capture they would be one broken boot.
        return usage(format!(
            "{} is the log of a `kbench lava-job` job: import it with --label-a and --label-b",
            args.log.display()
        ));
    }
    let console = if lava {
        lava_target_lines(text)
    } else {
        text.to_string()
    };
    let split = kbench_console::split_boots(&console);
    if split.boots.is_empty() {
        return usage(format!(
            "{}: no kbench console records in it",
            args.log.display()
        ));
    }
    let mut store = args.db.open()?;
    let command_line = session::command_line();
    let config_sha256 = config_sha256(config);
    let target = BootTarget {
        label,
        expected_release: args.kernel_release.as_deref().unwrap_or(""),
        accel: None,
        kind: "console",
        shared_log: true,
        kernel_config_sha256: config_sha256.as_deref(),
        command_line: &command_line,
    };
    let mut failed = 0;
    // Each boot is judged on its own stretch of the capture: a panic in one boot's
    // kernel fails that boot, not every boot of the job.
    for boot in &split.boots {
        let judged = boot.judged_text();
        if !store_boot(
            &mut store,
            &target,
            config,
            &boot.nonce,
            judged,
            &HostView::default(),
        )? {
            failed += 1;
        }
        warn_of_deaths_between_boots(boot.after_end());
    }
    warn_of_deaths_between_boots(split.head);
    for nonce in &split.replayed {
        errln!(
            "kbench import-console: lines of boot {nonce} appear again after another boot's (a serial line replaying old output); they were not read again"
        );
    }
    outln!(
        "kbench import-console: {} boot(s) under {}, {} failed",
        split.boots.len(),
        label,
        failed
    );
    Ok(i32::from(failed > 0))
}

/// A kernel that died where no boot was reporting: one that never reached /init, or
/// one dying after its results were complete. No boot is blamed; it is said.
fn warn_of_deaths_between_boots(text: &str) {
    if let Some(panic) = kbench_console::parse(text, "").panics.first() {
        errln!(
            "kbench import-console: a kernel died between boots (one that never reported?): {panic}"
        );
    }
}

/// The boots of a `kbench lava-job` job, each under its kernel's label: every boot LAVA
/// started is stored, a boot that printed nothing of kbench's as failed.
fn import_ab_job(args: &ImportConsoleArgs, labels: [&str; 2], text: &str) -> anyhow::Result<i32> {
    let boots = if looks_like_lava_log(text) {
        lava_job_boots(text)
    } else {
        Vec::new()
    };
    if boots.is_empty() {
        return usage(format!(
            "{}: not the LAVA log of a `kbench lava-job` job (no namespace kbench-NN-a or kbench-NN-b in it)",
            args.log.display()
        ));
    }
    let nonce = nonce_of_job(&boots);
    let mut store = args.db.open()?;
    let command_line = session::command_line();
    let mut boot_ids = Vec::new();
    let mut per_side = [0usize; 2];
    let mut failed = 0;
    for boot in &boots {
        let side = usize::from(boot.side == Side::B);
        let label = labels[side];
        per_side[side] += 1;
        // A replay is kept as a failed boot with its log, as every failed boot is.
        let host = HostView {
            failure: repeated_boot(boot, &nonce, &mut boot_ids).map(|first| {
                format!(
                    "boot {} repeats the boot id of {first}: its results are another boot's",
                    boot.namespace
                )
            }),
            ..HostView::default()
        };
        let target = BootTarget {
            label,
            expected_release: "",
            accel: None,
            kind: "lava",
            shared_log: false,
            kernel_config_sha256: None,
            command_line: &command_line,
        };
        if !store_boot(&mut store, &target, None, &nonce, &boot.console, &host)? {
            failed += 1;
        }
    }
    outln!(
        "kbench import-console: {} boot(s): {} of {}, {} of {}, {} failed",
        boots.len(),
        per_side[0],
        labels[0],
        per_side[1],
        labels[1],
        failed
    );
    Ok(i32::from(failed > 0))
}

/// One boot of a `kbench lava-job` job: the console lines LAVA logged in its namespace.
struct LavaBoot {
    namespace: String,
    side: Side,
    console: String,
}

/// The boots of a `kbench lava-job` job in its LAVA log, in the order LAVA ran them.
/// LAVA names an action's namespace in the line that starts it (`start: 2.1
/// bootloader-commands (timeout 00:05:00) [kbench-02-b]`); the console lines that
/// follow, until an action of another namespace starts, are that boot's. Output LAVA
/// read on another namespace's connection is logged as `feedback`, and not read.
fn lava_job_boots(text: &str) -> Vec<LavaBoot> {
    let mut boots: Vec<LavaBoot> = Vec::new();
    let mut current: Option<usize> = None;
    for line in text.lines() {
        match lava_level(line) {
            Some("target") => {
                if let (Some(i), Some(msg)) = (current, yaml_msg(line)) {
                    boots[i].console.push_str(&msg);
                    boots[i].console.push('\n');
                }
            }
            Some("info" | "debug") => {
                let Some(namespace) = yaml_msg(line).and_then(|m| action_namespace(&m)) else {
                    continue;
                };
                current = namespace_side(&namespace).map(|side| {
                    boots
                        .iter()
                        .position(|b| b.namespace == namespace)
                        .unwrap_or_else(|| {
                            boots.push(LavaBoot {
                                namespace,
                                side,
                                console: String::new(),
                            });
                            boots.len() - 1
                        })
                });
            }
            _ => {}
        }
    }
    boots
}

/// The namespace of LAVA's `start: LEVEL NAME (timeout T) [NAMESPACE]` line.
fn action_namespace(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("start: ")?.strip_suffix(']')?;
    let (_, namespace) = rest.rsplit_once('[')?;
    Some(namespace.to_string())
}

/// The job's nonce: every boot of a job shares its kernel command line, so a framed
/// line with another nonce in a boot's console is not of this job.
fn nonce_of_job(boots: &[LavaBoot]) -> String {
    // The nonce most boots show: a stray line left on the serial by an earlier job
    // names another, in one boot at most.
    let mut counts: Vec<(String, usize)> = Vec::new();
    for nonce in boots.iter().flat_map(|b| boots_in(&b.console)) {
        match counts.iter_mut().find(|(n, _)| *n == nonce) {
            Some((_, count)) => *count += 1,
            None => counts.push((nonce, 1)),
        }
    }
    // The first of the most frequent, so that a tie keeps the log's order.
    let most = counts.iter().map(|(_, c)| *c).max().unwrap_or(0);
    counts
        .into_iter()
        .find(|(_, c)| *c == most)
        .map(|(n, _)| n)
        .unwrap_or_default()
}

/// Where a boot's BEGIN names the boot id of an earlier boot: the namespace of that
/// one. With a nonce shared by the job's boots, the boot id is what tells a boot from
/// a replay of another's results.
fn repeated_boot(boot: &LavaBoot, nonce: &str, seen: &mut Vec<(String, String)>) -> Option<String> {
    let parsed = kbench_console::parse(&boot.console, nonce);
    let begin = parsed
        .messages
        .iter()
        .find(|m| m.kind == kbench_console::Kind::Begin)?;
    let payload: serde_json::Value = serde_json::from_slice(&begin.payload).ok()?;
    let boot_id = payload["session"]["boot_id"].as_str()?.to_string();
    if let Some((_, first)) = seen.iter().find(|(id, _)| *id == boot_id) {
        return Some(first.clone());
    }
    seen.push((boot_id, boot.namespace.clone()));
    None
}

/// The boots whose framed lines the log holds, in order of first appearance: every
/// intact line names its boot's nonce, and none is this empty one.
fn boots_in(console: &str) -> Vec<String> {
    kbench_console::parse(console, "").other_nonces
}

/// A LAVA job log: a YAML list of `{dt: ..., lvl: ..., msg: ...}` entries (LAVA itself
/// writes them double-quoted: `- {"dt": "...", "lvl": "target", "msg": "..."}`).
fn looks_like_lava_log(text: &str) -> bool {
    text.lines()
        .take(50)
        .any(|l| l.trim_start().starts_with("- {") && lava_level(l).is_some())
}

/// The `lvl` of one log entry: `target` for console lines, `info`, `debug`, ...
fn lava_level(line: &str) -> Option<&str> {
    let at = line
        .find("\"lvl\":")
        .map(|i| i + 6)
        .or_else(|| line.find("lvl:").map(|i| i + 4))?;
    let value = line[at..].trim_start().trim_start_matches(['"', '\'']);
    let end = value
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(value.len());
    (end > 0).then(|| &value[..end])
}

/// The console lines of a LAVA log: the `msg` of each `lvl: target` entry.
fn lava_target_lines(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if lava_level(line) != Some("target") {
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
    // The quoted key first: in a double-quoted entry, console text may hold `msg:`.
    let start = line
        .find("\"msg\":")
        .map(|i| i + 6)
        .or_else(|| line.find("msg:").map(|i| i + 4))?;
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
                    '\\' => out.push(yaml_escape(&mut chars)?),
                    c => out.push(c),
                }
            }
            Some(out)
        }
        _ => Some(rest.trim_end_matches('}').trim().to_string()),
    }
}

/// The character a YAML double-quoted escape stands for (after its backslash), as
/// PyYAML writes them for control and non-ASCII bytes.
fn yaml_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<char> {
    fn hex(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, digits: usize) -> Option<char> {
        let code: String = chars.by_ref().take(digits).collect();
        char::from_u32(u32::from_str_radix(&code, 16).ok()?)
    }
    Some(match chars.next()? {
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        '0' => '\0',
        'a' => '\x07',
        'b' => '\x08',
        'e' => '\x1b',
        'f' => '\x0c',
        'v' => '\x0b',
        'N' => '\u{85}',
        '_' => '\u{a0}',
        'L' => '\u{2028}',
        'P' => '\u{2029}',
        'x' => hex(chars, 2)?,
        'u' => hex(chars, 4)?,
        'U' => hex(chars, 8)?,
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_quoted_messages_keep_their_escapes_and_colons() {
        let line =
            r#"- {"dt": "2026", "lvl": "target", "msg": "a msg: \x1b[0m\u00e9 \"q\" \\ end"}"#;
        assert_eq!(yaml_msg(line).unwrap(), "a msg: \x1b[0m\u{e9} \"q\" \\ end");
    }

    #[test]
    fn lava_messages_are_unquoted() {
        let log = "- {dt: 2026-12-01T10:00:00.1, lvl: info, msg: 'start'}\n\
                   - {dt: 2026-12-01T10:00:01.2, lvl: target, msg: 'it''s @KB1 x'}\n\
                   - {\"dt\": \"2026\", \"lvl\": \"target\", \"msg\": \"a \\\"b\\\" c\"}\n";
        assert!(looks_like_lava_log(log));
        assert_eq!(lava_target_lines(log), "it's @KB1 x\na \"b\" c\n");
        assert!(!looks_like_lava_log("[    0.000000] Linux version 6.1\n"));
    }

    /// As LAVA writes its log: every key and value double-quoted.
    fn entry(level: &str, msg: &str) -> String {
        format!("- {{\"dt\": \"2026-12-01T10:00:00.000000+00:00\", \"lvl\": \"{level}\", \"msg\": {msg:?}}}\n")
    }

    #[test]
    fn a_double_quoted_log_is_a_lava_log() {
        let log = entry("info", "start: 1 tftp-deploy (timeout 00:10:00) [common]")
            + &entry("target", "U-Boot 2024.01");
        assert!(looks_like_lava_log(&log));
        assert_eq!(lava_target_lines(&log), "U-Boot 2024.01\n");
    }

    #[test]
    fn console_lines_belong_to_the_namespace_of_the_last_action_started() {
        let log = [
            entry(
                "info",
                "start: 1 tftp-deploy (timeout 00:10:00) [kbench-01-a]",
            ),
            entry("target", "first"),
            entry(
                "debug",
                "start: 2.1 bootloader-commands (timeout 00:05:00) [kbench-01-a]",
            ),
            entry("target", "second"),
            entry(
                "info",
                "start: 4 tftp-deploy (timeout 00:10:00) [kbench-02-b]",
            ),
            entry(
                "info",
                "end: 4 tftp-deploy (duration 00:00:03) [kbench-02-b]",
            ),
            entry("target", "third"),
            entry("feedback", "not this boot's"),
            entry("info", "start: 7 finalize (timeout 00:10:00) [common]"),
            entry("target", "after the boots"),
            entry(
                "info",
                "start: 8 tftp-deploy (timeout 00:10:00) [kbench-02-b]",
            ),
            entry("target", "fourth"),
        ]
        .concat();
        let boots = lava_job_boots(&log);
        let seen: Vec<(&str, Side, &str)> = boots
            .iter()
            .map(|b| (b.namespace.as_str(), b.side, b.console.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("kbench-01-a", Side::A, "first\nsecond\n"),
                ("kbench-02-b", Side::B, "third\nfourth\n"),
            ]
        );
        assert_eq!(
            action_namespace("start: 3 lava-test-monitor (timeout 00:30:00) [x]"),
            Some("x".into())
        );
        assert_eq!(
            action_namespace("end: 3 lava-test-monitor (duration 00:30:00) [x]"),
            None
        );
    }
}
