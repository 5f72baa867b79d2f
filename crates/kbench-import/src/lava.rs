//! A LAVA job's log (the YAML LAVA writes: one `{dt, lvl, msg}` entry a line) read
//! for kbench's boots: the console lines of a serial capture, or the boots of a
//! `kbench lava-job` job, each with the kernel its namespace names. Pure: the binary's
//! `import-console` stores what these return.
use kbench_console::lava::{namespace_side, KernelSide};
use std::borrow::Cow;

/// The boots of a `kbench lava-job` job, as its log holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct LavaJob {
    /// The nonce of the job's framed console lines (every boot shares its kernel command
    /// line); empty when no boot printed a framed line.
    pub nonce: String,
    /// In the order LAVA ran them.
    pub boots: Vec<LavaBoot>,
}

/// The boots of the `kbench lava-job` job whose LAVA log is `text`; `None` when the text
/// is not a LAVA log or names no namespace `kbench-NN-a` or `kbench-NN-b`.
pub fn read_lava_job(text: &str) -> Option<LavaJob> {
    if !looks_like_lava_log(text) {
        return None;
    }
    let mut boots = lava_job_boots(text);
    if boots.is_empty() {
        return None;
    }
    let nonce = nonce_of_job(&boots);
    let mut boot_ids = Vec::new();
    for boot in &mut boots {
        boot.repeats = repeated_boot(boot, &nonce, &mut boot_ids);
    }
    Some(LavaJob { nonce, boots })
}

/// The console capture in a log: the `target` lines of a LAVA log, any other text as
/// it is (a board's serial capture).
pub fn console_text(text: &str) -> Cow<'_, str> {
    if looks_like_lava_log(text) {
        Cow::Owned(lava_target_lines(text))
    } else {
        Cow::Borrowed(text)
    }
}

/// One boot of a `kbench lava-job` job: the console lines LAVA logged in its namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct LavaBoot {
    /// `kbench-NN-a` or `kbench-NN-b`.
    pub namespace: String,
    /// The kernel its namespace names.
    pub side: KernelSide,
    pub console: String,
    /// The namespace of an earlier boot whose boot id this boot's BEGIN names again: a
    /// replay of that boot's results, not a boot of its own.
    pub repeats: Option<String>,
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
                                repeats: None,
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
pub fn looks_like_lava_log(text: &str) -> bool {
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
pub fn lava_target_lines(text: &str) -> String {
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
        let seen: Vec<(&str, KernelSide, &str)> = boots
            .iter()
            .map(|b| (b.namespace.as_str(), b.side, b.console.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("kbench-01-a", KernelSide::A, "first\nsecond\n"),
                ("kbench-02-b", KernelSide::B, "third\nfourth\n"),
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

    /// The console of one boot whose BEGIN names `boot_id`, as LAVA logs it in
    /// `namespace`.
    fn boot_entries(namespace: &str, nonce: &str, boot_id: &str) -> String {
        let mut emitter = kbench_console::Emitter::new(nonce);
        let begin = format!(r#"{{"version":1,"session":{{"boot_id":"{boot_id}"}}}}"#);
        let mut log = entry(
            "info",
            &format!("start: 1 tftp-deploy (timeout 00:10:00) [{namespace}]"),
        );
        for line in emitter.lines(kbench_console::Kind::Begin, begin.as_bytes()) {
            log += &entry("target", &line);
        }
        log
    }

    #[test]
    fn a_boot_naming_an_earlier_boots_id_is_a_replay_of_it() {
        let nonce = "lava18ed24c28433b3131578";
        let log = boot_entries("kbench-01-a", nonce, "boot-0")
            + &boot_entries("kbench-02-b", nonce, "boot-1")
            + &boot_entries("kbench-03-b", nonce, "boot-0");
        let job = read_lava_job(&log).expect("a kbench lava-job log");
        assert_eq!(job.nonce, nonce);
        let repeats: Vec<Option<&str>> = job.boots.iter().map(|b| b.repeats.as_deref()).collect();
        assert_eq!(repeats, [None, None, Some("kbench-01-a")]);
    }

    #[test]
    fn a_log_without_kbench_namespaces_is_no_job_and_its_console_is_its_target_lines() {
        let log = entry("info", "start: 1 tftp-deploy (timeout 00:10:00) [common]")
            + &entry("target", "U-Boot 2024.01");
        assert_eq!(read_lava_job(&log), None);
        assert_eq!(console_text(&log), "U-Boot 2024.01\n");
        let serial = "[    0.000000] Linux version 6.1\n";
        assert_eq!(read_lava_job(serial), None);
        assert!(matches!(console_text(serial), Cow::Borrowed(s) if s == serial));
    }
}
