//! Property tests: a capture mangled the ways serial consoles mangle them yields
//! exactly the messages whose every line survived unmodified, and an exact account
//! of the rest.

use kbench_console::{parse, Emitter, Kind, Message, Parsed};
use proptest::prelude::*;
use proptest::sample::Index;

/// One message as emitted, with the lines that carried it.
struct Sent {
    seq: u64,
    message: Message,
    lines: Vec<String>,
}

/// What a console can do to the lines of a capture.
#[derive(Debug, Clone)]
enum LineDamage {
    /// A printk line between two of ours.
    InsertPrintk(Index, String),
    /// printk text before ours on the same line.
    PrefixPrintk(Index, String),
    /// printk text in the middle of one of our lines, on the same line.
    SpliceInline(Index, Index, String),
    /// printk text in the middle of one of our lines, on lines of its own.
    SpliceBroken(Index, Index, String),
    Duplicate(Index),
    Drop(Index),
    SwapWithNext(Index),
}

fn printk_text() -> impl Strategy<Value = String> {
    "\\[ {0,4}[0-9]{1,4}\\.[0-9]{6}\\] [a-z0-9 :=_.]{0,40}"
}

fn line_damage() -> impl Strategy<Value = LineDamage> {
    prop_oneof![
        (any::<Index>(), printk_text()).prop_map(|(i, t)| LineDamage::InsertPrintk(i, t)),
        (any::<Index>(), printk_text()).prop_map(|(i, t)| LineDamage::PrefixPrintk(i, t)),
        (any::<Index>(), any::<Index>(), printk_text())
            .prop_map(|(i, cut, t)| LineDamage::SpliceInline(i, cut, t)),
        (any::<Index>(), any::<Index>(), printk_text())
            .prop_map(|(i, cut, t)| LineDamage::SpliceBroken(i, cut, t)),
        any::<Index>().prop_map(LineDamage::Duplicate),
        any::<Index>().prop_map(LineDamage::Drop),
        any::<Index>().prop_map(LineDamage::SwapWithNext),
    ]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::Begin), Just(Kind::Record), Just(Kind::Error)]
}

fn messages() -> impl Strategy<Value = Vec<(Kind, Vec<u8>)>> {
    prop::collection::vec((kind(), prop::collection::vec(any::<u8>(), 0..600)), 0..6)
}

/// Every message through the emitter, then END.
fn emit(nonce: &str, messages: &[(Kind, Vec<u8>)], end_payload: &[u8]) -> Vec<Sent> {
    let mut emitter = Emitter::new(nonce);
    let all = messages
        .iter()
        .map(|(kind, payload)| (*kind, payload.as_slice()))
        .chain([(Kind::End, end_payload)]);
    all.zip(0..)
        .map(|((kind, payload), seq)| Sent {
            seq,
            message: Message {
                kind,
                payload: payload.to_vec(),
            },
            lines: emitter.lines(kind, payload),
        })
        .collect()
}

/// A cut inside `line` after the prefix and version, so the line keeps its prefix
/// and is recognisably one of ours.
fn cut_after_prefix(line: &str, cut: &Index) -> Option<usize> {
    let room = line.len().checked_sub(4).filter(|&room| room > 0)?;
    Some(4 + cut.index(room))
}

fn damage_lines(lines: &mut Vec<String>, damage: &LineDamage) {
    if lines.is_empty() {
        return;
    }
    let at = |i: &Index| i.index(lines.len());
    match damage {
        LineDamage::InsertPrintk(i, text) => {
            let i = i.index(lines.len() + 1);
            lines.insert(i, text.clone());
        }
        LineDamage::PrefixPrintk(i, text) => {
            let i = at(i);
            lines[i] = format!("{text}{}", lines[i]);
        }
        LineDamage::SpliceInline(i, cut, text) => {
            let i = at(i);
            if let Some(cut) = cut_after_prefix(&lines[i], cut) {
                let (head, tail) = lines[i].split_at(cut);
                lines[i] = format!("{head}{text}{tail}");
            }
        }
        LineDamage::SpliceBroken(i, cut, text) => {
            let i = at(i);
            if let Some(cut) = cut_after_prefix(&lines[i], cut) {
                let (head, tail) = lines[i].split_at(cut);
                let pieces = [head.to_string(), text.clone(), tail.to_string()];
                lines.splice(i..=i, pieces);
            }
        }
        LineDamage::Duplicate(i) => {
            let i = at(i);
            lines.insert(i, lines[i].clone());
        }
        LineDamage::Drop(i) => {
            let i = at(i);
            lines.remove(i);
        }
        LineDamage::SwapWithNext(i) => {
            let i = at(i);
            if i + 1 < lines.len() {
                lines.swap(i, i + 1);
            }
        }
    }
}

/// The capture: lines with `\n` or `\r\n` endings, then bytes replaced by other
/// ASCII bytes (newlines among them), then the tail cut off.
fn capture(
    lines: &[String],
    crlf: &[bool],
    flips: &[(Index, u8)],
    truncate_at: Option<Index>,
) -> String {
    let mut log = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        log.extend_from_slice(line.as_bytes());
        let ending: &[u8] = if crlf.get(n % crlf.len().max(1)) == Some(&true) {
            b"\r\n"
        } else {
            b"\n"
        };
        log.extend_from_slice(ending);
    }
    for (at, byte) in flips {
        if !log.is_empty() {
            let at = at.index(log.len());
            // Always a change: a flip that left the byte alone would damage nothing.
            log[at] = if log[at] == *byte { b'#' } else { *byte };
        }
    }
    if let Some(at) = truncate_at {
        log.truncate(at.index(log.len() + 1));
    }
    String::from_utf8(log).expect("all bytes are ASCII")
}

fn replacement_byte() -> impl Strategy<Value = u8> {
    prop_oneof![9 => 0x20u8..0x7f, 1 => Just(b'\n'), 1 => Just(b'\r')]
}

/// What `parse` must return, from which of the emitted lines survived intact: a
/// line survives where a line of the capture ends with it (whatever printk put
/// before it), and a message survives when all its lines did.
struct Expected {
    messages: Vec<Message>,
    begun: bool,
    ended: bool,
    complete: bool,
    bad_lines: usize,
    lost_messages: usize,
}

fn expected(sent: &[Sent], log: &str) -> Expected {
    let captured: Vec<&str> = log.split('\n').map(str::trim_end).collect();
    let survived = |line: &String| captured.iter().any(|c| c.ends_with(line.as_str()));
    let whole = |s: &&Sent| s.lines.iter().all(survived);
    let intact: Vec<&Sent> = sent.iter().filter(whole).collect();
    let highest_seen = sent
        .iter()
        .filter(|s| s.lines.iter().any(survived))
        .map(|s| s.seq)
        .max();
    let lost_messages = highest_seen.map_or(0, |h| {
        sent.iter().filter(|s| s.seq <= h && !whole(s)).count()
    });
    let all_emitted: Vec<&String> = sent.iter().flat_map(|s| &s.lines).collect();
    let bad_lines = captured
        .iter()
        .filter(|c| c.contains("@KB") && !all_emitted.iter().any(|l| c.ends_with(l.as_str())))
        .count();
    Expected {
        messages: intact.iter().map(|s| s.message.clone()).collect(),
        begun: intact.iter().any(|s| s.message.kind == Kind::Begin),
        ended: intact.iter().any(|s| s.message.kind == Kind::End),
        complete: intact.len() == sent.len(),
        bad_lines,
        lost_messages,
    }
}

fn check(parsed: &Parsed, expected: &Expected) -> Result<(), TestCaseError> {
    prop_assert_eq!(&parsed.messages, &expected.messages);
    prop_assert_eq!(parsed.begun, expected.begun);
    prop_assert_eq!(parsed.ended, expected.ended);
    prop_assert_eq!(parsed.complete, expected.complete);
    prop_assert_eq!(parsed.bad_lines, expected.bad_lines);
    prop_assert_eq!(parsed.lost_messages, expected.lost_messages);
    prop_assert!(parsed.other_nonces.is_empty(), "{:?}", parsed.other_nonces);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn a_mangled_capture_yields_exactly_the_intact_messages(
        nonce in "[A-Za-z0-9_-]{1,64}",
        messages in messages(),
        end_payload in prop::collection::vec(any::<u8>(), 0..40),
        damage in prop::collection::vec(line_damage(), 0..12),
        crlf in prop::collection::vec(any::<bool>(), 1..8),
        flips in prop::collection::vec((any::<Index>(), replacement_byte()), 0..4),
        truncate_at in prop::option::weighted(0.3, any::<Index>()),
    ) {
        let sent = emit(&nonce, &messages, &end_payload);
        let mut lines: Vec<String> = sent.iter().flat_map(|s| s.lines.clone()).collect();
        for d in &damage {
            damage_lines(&mut lines, d);
        }
        let log = capture(&lines, &crlf, &flips, truncate_at);
        check(&parse(&log, &nonce), &expected(&sent, &log))?;
    }

    #[test]
    fn every_line_spliced_by_printk_is_rejected_and_counted(
        messages in messages(),
        spliced in prop::collection::vec((any::<bool>(), any::<Index>()), 64),
        text in printk_text(),
    ) {
        let sent = emit("boot-s", &messages, b"");
        let mut lines = Vec::new();
        let mut splices = 0;
        let mut expected_messages = Vec::new();
        for s in &sent {
            let mut hit = false;
            for (n, line) in s.lines.iter().enumerate() {
                let (splice, cut) = &spliced[(s.seq as usize * 7 + n) % spliced.len()];
                match cut_after_prefix(line, cut).filter(|_| *splice) {
                    Some(cut) => {
                        lines.push(format!("{}{text}{}", &line[..cut], &line[cut..]));
                        splices += 1;
                        hit = true;
                    }
                    None => lines.push(line.clone()),
                }
            }
            if !hit {
                expected_messages.push(s.message.clone());
            }
        }
        let parsed = parse(&lines.join("\n"), "boot-s");
        prop_assert_eq!(parsed.bad_lines, splices);
        prop_assert_eq!(parsed.messages, expected_messages);
        prop_assert_eq!(parsed.complete, splices == 0);
    }

    #[test]
    fn parse_never_panics_on_frame_like_noise(
        pieces in prop::collection::vec(
            prop_oneof![
                Just("@KB1 ".to_string()),
                Just("@KB".to_string()),
                Just(" ".to_string()),
                Just("\n".to_string()),
                Just("/".to_string()),
                Just("END".to_string()),
                Just("REC".to_string()),
                "[0-9]{1,25}",
                "[A-Za-z0-9+/=_-]{0,12}",
            ],
            0..60,
        ),
    ) {
        let log = pieces.concat();
        let parsed = parse(&log, "n");
        prop_assert!(parsed.messages.is_empty() || log.contains("@KB1 n "));
    }
}
