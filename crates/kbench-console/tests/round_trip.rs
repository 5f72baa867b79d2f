//! Messages written by the emitter come back from the parser unchanged.

use kbench_console::{parse, Emitter, Kind, Message, MAX_LINE};

const KINDS: [Kind; 4] = [Kind::Begin, Kind::Record, Kind::Error, Kind::End];

/// Bytes that differ from position to position, so a misplaced part shows.
fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

fn log_of(lines: &[String]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

#[test]
fn every_kind_and_size_from_0_to_5000_bytes_round_trips() {
    for kind in KINDS {
        for len in (0..=300).chain((301..=5000).step_by(97)).chain([5000]) {
            let mut emitter = Emitter::new("boot-rt");
            let lines = emitter.lines(kind, &payload(len));
            assert!(lines.iter().all(|line| line.len() <= MAX_LINE));
            let parsed = parse(&log_of(&lines), "boot-rt");
            let expected = Message {
                kind,
                payload: payload(len),
            };
            assert_eq!(parsed.messages, vec![expected], "{kind:?} of {len} bytes");
            assert_eq!(parsed.bad_lines, 0);
            assert_eq!(parsed.lost_messages, 0);
        }
    }
}

#[test]
fn a_whole_boot_is_complete() {
    let mut emitter = Emitter::new("boot-rt");
    let mut lines = Vec::new();
    let mut expected = Vec::new();
    for (i, kind) in [
        Kind::Begin,
        Kind::Record,
        Kind::Error,
        Kind::Record,
        Kind::End,
    ]
    .into_iter()
    .enumerate()
    {
        let bytes = payload(i * 1000);
        lines.extend(emitter.lines(kind, &bytes));
        expected.push(Message {
            kind,
            payload: bytes,
        });
    }
    assert_eq!(emitter.messages_sent(), 4);
    let parsed = parse(&log_of(&lines), "boot-rt");
    assert_eq!(parsed.messages, expected);
    assert!(parsed.begun && parsed.ended && parsed.complete);
    assert!(parsed.other_nonces.is_empty() && parsed.panics.is_empty());
}

#[test]
fn parts_in_reverse_order_are_reassembled() {
    let mut emitter = Emitter::new("boot-rt");
    let mut lines = emitter.lines(Kind::Record, &payload(3000));
    assert!(lines.len() > 2);
    lines.reverse();
    let parsed = parse(&log_of(&lines), "boot-rt");
    assert_eq!(parsed.messages[0].payload, payload(3000));
}

#[test]
fn a_missing_part_drops_the_message_and_counts_it() {
    let mut emitter = Emitter::new("boot-rt");
    let mut lines = emitter.lines(Kind::Begin, b"");
    let mut record = emitter.lines(Kind::Record, &payload(2000));
    record.remove(1);
    lines.extend(record);
    lines.extend(emitter.lines(Kind::End, b""));
    let parsed = parse(&log_of(&lines), "boot-rt");
    assert_eq!(parsed.messages.len(), 2, "BEGIN and END only");
    assert_eq!(parsed.lost_messages, 1);
    assert!(parsed.ended && !parsed.complete);
}

#[test]
fn a_missing_tail_leaves_the_boot_incomplete() {
    let mut emitter = Emitter::new("boot-rt");
    let mut lines = emitter.lines(Kind::Begin, b"");
    lines.extend(emitter.lines(Kind::Record, b"r"));
    let parsed = parse(&log_of(&lines), "boot-rt");
    assert_eq!(parsed.messages.len(), 2);
    assert_eq!(
        parsed.lost_messages, 0,
        "nothing shows the loss but the missing END"
    );
    assert!(parsed.begun && !parsed.ended && !parsed.complete);
}

#[test]
fn an_end_whose_count_disagrees_is_not_complete() {
    // END counts 2 messages but the log has only the second: the first was lost
    // with no gap to show it, as when a capture starts late.
    let mut emitter = Emitter::new("boot-rt");
    emitter.lines(Kind::Begin, b"");
    let mut lines = emitter.lines(Kind::Record, b"r");
    lines.extend(emitter.lines(Kind::End, b""));
    let parsed = parse(&log_of(&lines), "boot-rt");
    assert!(parsed.ended);
    assert_eq!(parsed.lost_messages, 1, "sequence number 0 never arrived");
    assert!(!parsed.complete);
}
