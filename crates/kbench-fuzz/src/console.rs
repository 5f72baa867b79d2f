//! Console captures (`kbench import-console`, `kbench vm-ab`): the framed-line parser,
//! the cut of a capture into boots, and the panic lines found on the way.
use kbench_console::{parse, split_boots, Emitter, Kind, Parsed};

/// No nonce the protocol allows is empty, so parsing with it sets every intact frame
/// aside as another boot's: what the binary does to find the nonces a capture holds.
const NO_NONCE: &str = "";

/// The nonces of a capture tried in full: enough to cover the assembly of messages
/// without making one input cost as much as a thousand.
const NONCES_TRIED: usize = 4;

/// A capture parsed once for its nonces, then again as the boot of each of them.
pub fn console_parse(data: &[u8]) {
    let log = crate::lossy_text(data);
    let survey = parse(&log, NO_NONCE);
    assert!(survey.messages.is_empty() && !survey.begun && !survey.ended);
    check_panics(&survey, &log);
    for nonce in survey.other_nonces.iter().take(NONCES_TRIED) {
        let parsed = parse(&log, nonce);
        check_parsed(&parsed);
        assert_eq!(parsed.panics, survey.panics, "panics depend on the nonce");
        let others: Vec<&String> = survey.other_nonces.iter().filter(|n| *n != nonce).collect();
        let found: Vec<&String> = parsed.other_nonces.iter().collect();
        assert_eq!(found, others, "the other boots of {nonce}");
    }
}

/// What a parse claims must agree with itself.
fn check_parsed(parsed: &Parsed) {
    if parsed.complete {
        assert!(parsed.ended && parsed.lost_messages == 0, "{parsed:?}");
    }
    let ends = parsed
        .messages
        .iter()
        .filter(|m| m.kind == Kind::End)
        .count();
    assert_eq!(parsed.ended, ends > 0, "ended without an END message");
    let begins = parsed.messages.iter().any(|m| m.kind == Kind::Begin);
    assert_eq!(parsed.begun, begins, "begun without a BEGIN message");
}

/// Every panic reported is a whole line of the capture, trimmed.
fn check_panics(parsed: &Parsed, log: &str) {
    for panic in &parsed.panics {
        assert!(
            !panic.is_empty() && log.contains(panic.as_str()),
            "{panic:?}"
        );
        assert_eq!(panic.trim(), panic, "a panic line is trimmed");
    }
}

/// A capture of several boots cut into one piece per boot, each judged as
/// `import-console` judges it.
pub fn console_split(data: &[u8]) {
    let log = crate::lossy_text(data);
    let split = split_boots(&log);
    let mut joined = String::from(split.head);
    for boot in &split.boots {
        assert!(boot.until_next.starts_with(boot.text), "{}", boot.nonce);
        joined.push_str(boot.until_next);
        let parsed = parse(boot.judged_text(), &boot.nonce);
        check_parsed(&parsed);
        check_panics(&parsed, boot.judged_text());
        let _ = boot.after_end();
    }
    assert_eq!(joined, log, "the pieces of a capture are the capture");
    let mut nonces: Vec<&str> = split.boots.iter().map(|b| b.nonce.as_str()).collect();
    nonces.sort_unstable();
    nonces.dedup();
    assert_eq!(nonces.len(), split.boots.len(), "a nonce makes one boot");
}

/// Payloads cut from the bytes go through the emitter, with console noise between the
/// lines, and come back from the parser exactly, in a complete capture.
pub fn console_round_trip(data: &[u8]) {
    let (payloads, end) = payloads_of(data);
    let mut emitter = Emitter::new("fuzz-0");
    let mut log = String::from("[    0.000000] Linux version 6.12.0\n");
    let mut sent = Vec::new();
    for (index, payload) in payloads.iter().enumerate() {
        let kind = match index {
            0 => Kind::Begin,
            _ if payload.first() == Some(&b'!') => Kind::Error,
            _ => Kind::Record,
        };
        write_message(&mut log, &mut emitter, kind, payload);
        sent.push((kind, payload.to_vec()));
    }
    write_message(&mut log, &mut emitter, Kind::End, end);
    sent.push((Kind::End, end.to_vec()));
    let parsed = parse(&log, "fuzz-0");
    assert!(parsed.complete, "{parsed:?}");
    let received: Vec<(Kind, Vec<u8>)> = parsed
        .messages
        .into_iter()
        .map(|m| (m.kind, m.payload))
        .collect();
    assert_eq!(received, sent);
}

/// The bytes cut at each `0xff` (which no UTF-8 text holds) into payloads; the last
/// piece is END's.
fn payloads_of(data: &[u8]) -> (Vec<&[u8]>, &[u8]) {
    let mut pieces: Vec<&[u8]> = data.split(|&b| b == 0xff).collect();
    let end = pieces.pop().unwrap_or_default();
    (pieces, end)
}

/// The lines of one message, each followed by a printk line as a console shows it.
fn write_message(log: &mut String, emitter: &mut Emitter, kind: Kind, payload: &[u8]) {
    for line in emitter.lines(kind, payload) {
        log.push_str(&line);
        log.push_str("\r\n[    1.000000] random: crng init done\n");
    }
}
