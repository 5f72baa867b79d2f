//! The host side: a console capture to the messages that arrived intact.

use std::collections::BTreeMap;

use crate::frame::{decode, find_framed, Frame};
use crate::panics::panic_text;
use crate::Kind;

/// One message as the emitter was given it.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub kind: Kind,
    pub payload: Vec<u8>,
}

/// What one boot's capture holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// Complete, intact messages in order, each once.
    pub messages: Vec<Message>,
    /// A BEGIN message arrived.
    pub begun: bool,
    /// An END message arrived.
    pub ended: bool,
    /// The END's message count equals the messages received (so nothing was lost).
    pub complete: bool,
    /// Nonces of intact framed lines from another boot (refuse the log).
    pub other_nonces: Vec<String>,
    /// Framed lines that failed their check (CRC, length, syntax), or contradicted
    /// an intact line of the same message.
    pub bad_lines: usize,
    /// Messages with a missing part, or missing sequence numbers.
    pub lost_messages: usize,
    /// Kernel console lines that say the kernel died, trimmed.
    pub panics: Vec<String>,
}

/// Reads the capture `log` of the boot named `nonce`.
pub fn parse(log: &str, nonce: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut assembly = Assembly::default();
    for line in log.split('\n').map(str::trim_end) {
        if let Some(panic) = panic_text(line) {
            parsed.panics.push(panic);
        }
        let Some(framed) = find_framed(line) else {
            continue;
        };
        match decode(framed) {
            None => parsed.bad_lines += 1,
            Some(frame) if frame.nonce != nonce => note_once(&mut parsed.other_nonces, frame.nonce),
            Some(frame) => {
                if !assembly.add(frame) {
                    parsed.bad_lines += 1;
                }
            }
        }
    }
    assembly.finish(&mut parsed);
    parsed
}

/// The kind of each intact line of boot `nonce` in `text`, line by line: enough to see
/// that BEGIN or END has started to arrive while a capture grows, without assembling
/// messages. [`parse`] is the judge of what arrived whole.
pub fn line_kinds<'a>(text: &'a str, nonce: &'a str) -> impl Iterator<Item = Kind> + 'a {
    text.split('\n')
        .filter_map(|line| find_framed(line.trim_end()).and_then(decode))
        .filter(move |frame| frame.nonce == nonce)
        .map(|frame| frame.kind)
}

fn note_once(seen: &mut Vec<String>, nonce: String) {
    if !seen.contains(&nonce) {
        seen.push(nonce);
    }
}

/// The parts of one message received so far.
struct Pending {
    kind: Kind,
    parts: u64,
    chunks: BTreeMap<u64, Vec<u8>>,
}

impl Pending {
    fn is_whole(&self) -> bool {
        self.chunks.len() as u64 == self.parts
    }

    fn payload(self) -> Vec<u8> {
        self.chunks.into_values().flatten().collect()
    }
}

/// Messages by sequence number, so they come out in order whatever order the
/// parts arrived in.
#[derive(Default)]
struct Assembly {
    pending: BTreeMap<u64, Pending>,
}

impl Assembly {
    /// Takes an intact frame of this boot; false if it contradicts one already taken
    /// (another kind or part count for the message, or other bytes for the part),
    /// which only a second writer with the same nonce explains. The first one wins.
    fn add(&mut self, frame: Frame) -> bool {
        let pending = self.pending.entry(frame.seq).or_insert_with(|| Pending {
            kind: frame.kind,
            parts: frame.parts,
            chunks: BTreeMap::new(),
        });
        if pending.kind != frame.kind || pending.parts != frame.parts {
            return false;
        }
        match pending.chunks.get(&frame.part) {
            // A repeated line is expected on a serial path: keep the part once.
            Some(chunk) => *chunk == frame.chunk,
            None => {
                pending.chunks.insert(frame.part, frame.chunk);
                true
            }
        }
    }

    fn finish(self, parsed: &mut Parsed) {
        parsed.lost_messages = self.sequence_numbers_never_seen();
        let mut end_count = None;
        for pending in self.pending.into_values() {
            if !pending.is_whole() {
                parsed.lost_messages = parsed.lost_messages.saturating_add(1);
                continue;
            }
            let kind = pending.kind;
            let mut payload = pending.payload();
            if kind == Kind::End {
                let Some((count, rest)) = split_end_payload(&payload) else {
                    // Intact but not what an emitter writes: it cannot be delivered.
                    parsed.lost_messages = parsed.lost_messages.saturating_add(1);
                    continue;
                };
                end_count = Some(count);
                payload = rest;
                parsed.ended = true;
            }
            parsed.begun |= kind == Kind::Begin;
            parsed.messages.push(Message { kind, payload });
        }
        let received = parsed
            .messages
            .iter()
            .filter(|m| m.kind != Kind::End)
            .count();
        parsed.complete = parsed.lost_messages == 0
            && end_count.is_some_and(|count| u64::try_from(received) == Ok(count));
    }

    /// Sequence numbers below the highest one seen of which no part arrived.
    fn sequence_numbers_never_seen(&self) -> usize {
        let Some(&highest) = self.pending.keys().next_back() else {
            return 0;
        };
        // 0..=highest holds highest + 1 numbers, without overflowing at u64::MAX.
        let missing = highest - (self.pending.len() as u64 - 1);
        usize::try_from(missing).unwrap_or(usize::MAX)
    }
}

/// The count and the caller's payload of an END message.
fn split_end_payload(payload: &[u8]) -> Option<(u64, Vec<u8>)> {
    let space = payload.iter().position(|&b| b == b' ')?;
    let digits = std::str::from_utf8(&payload[..space]).ok()?;
    let count: u64 = digits.parse().ok()?;
    // The emitter writes the count plainly; another spelling is not its payload.
    (count.to_string() == digits).then(|| (count, payload[space + 1..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::end_payload;

    #[test]
    fn the_end_payload_splits_back_into_count_and_payload() {
        assert_eq!(
            split_end_payload(&end_payload(12, b"a b")),
            Some((12, b"a b".to_vec()))
        );
        assert_eq!(split_end_payload(b"0 "), Some((0, Vec::new())));
        assert_eq!(split_end_payload(b"12"), None);
        assert_eq!(split_end_payload(b"+1 x"), None);
        assert_eq!(split_end_payload(b"x x"), None);
    }

    #[test]
    fn gaps_below_the_highest_sequence_number_are_lost() {
        let frame = |seq| Frame {
            nonce: "n".into(),
            seq,
            kind: Kind::Record,
            part: 1,
            parts: 1,
            chunk: Vec::new(),
        };
        let mut assembly = Assembly::default();
        for seq in [0, 3, 5] {
            assert!(assembly.add(frame(seq)));
        }
        assert_eq!(assembly.sequence_numbers_never_seen(), 3);
        assert!(assembly.add(frame(u64::MAX)));
        assert_eq!(
            assembly.sequence_numbers_never_seen(),
            usize::try_from(u64::MAX - 3).unwrap_or(usize::MAX)
        );
    }

    #[test]
    fn a_contradicting_part_is_refused_and_the_first_kept() {
        let frame = Frame {
            nonce: "n".into(),
            seq: 0,
            kind: Kind::Record,
            part: 1,
            parts: 2,
            chunk: b"a".to_vec(),
        };
        let mut assembly = Assembly::default();
        assert!(assembly.add(frame.clone()));
        assert!(
            assembly.add(frame.clone()),
            "a duplicate is not a contradiction"
        );
        assert!(!assembly.add(Frame {
            chunk: b"b".to_vec(),
            ..frame.clone()
        }));
        assert!(!assembly.add(Frame {
            parts: 3,
            ..frame.clone()
        }));
        assert!(!assembly.add(Frame {
            kind: Kind::Error,
            ..frame.clone()
        }));
        assert_eq!(assembly.pending[&0].chunks[&1], b"a");
    }
}
