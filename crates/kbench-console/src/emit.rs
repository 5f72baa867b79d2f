//! The writer side: messages to framed lines.

use crate::frame::{chunk_capacity, decimal_digits, render, Frame};
use crate::{is_valid_nonce, Kind};

/// Writes framed lines for one boot.
#[derive(Debug, Clone)]
pub struct Emitter {
    nonce: String,
    next_seq: u64,
    /// Begin, Record and Error messages so far: what END reports.
    sent: u64,
}

impl Emitter {
    /// An emitter for the boot named `nonce`.
    ///
    /// # Panics
    ///
    /// If `nonce` is not `[A-Za-z0-9_-]{1,64}`: anything else could not be read back
    /// as one field, so it is a bug in the caller.
    pub fn new(nonce: &str) -> Emitter {
        assert!(
            is_valid_nonce(nonce),
            "a console nonce is 1 to 64 of [A-Za-z0-9_-], not {nonce:?}"
        );
        Emitter {
            nonce: nonce.to_string(),
            next_seq: 0,
            sent: 0,
        }
    }

    /// The lines (without '\n') carrying one message; a payload is split into parts
    /// so no line exceeds [`MAX_LINE`](crate::MAX_LINE), each line self-checking.
    ///
    /// For [`Kind::End`], the lines also carry the number of messages sent before
    /// it; [`parse`](crate::parse) gives back `payload` alone.
    pub fn lines(&mut self, kind: Kind, payload: &[u8]) -> Vec<String> {
        let wire = self.wire_payload(kind, payload);
        let seq = self.next_seq;
        self.next_seq += 1;
        if kind != Kind::End {
            self.sent += 1;
        }
        let chunks = split_into_parts(&wire, part_size(&self.nonce, seq, wire.len()));
        let parts = chunks.len() as u64;
        chunks
            .into_iter()
            .zip(1..)
            .map(|(chunk, part)| {
                render(&Frame {
                    nonce: self.nonce.clone(),
                    seq,
                    kind,
                    part,
                    parts,
                    chunk: chunk.to_vec(),
                })
            })
            .collect()
    }

    /// Begin, Record and Error messages written so far (End is not counted).
    pub fn messages_sent(&self) -> u64 {
        self.sent
    }

    fn wire_payload(&self, kind: Kind, payload: &[u8]) -> Vec<u8> {
        if kind == Kind::End {
            end_payload(self.sent, payload)
        } else {
            payload.to_vec()
        }
    }
}

/// The END payload on the wire: the count, a space, the caller's payload.
pub(crate) fn end_payload(count: u64, payload: &[u8]) -> Vec<u8> {
    let mut wire = format!("{count} ").into_bytes();
    wire.extend_from_slice(payload);
    wire
}

/// The largest part size for which the part numbers fit the room left for them:
/// more parts need more digits, which leaves less room for each part.
fn part_size(nonce: &str, seq: u64, payload_len: usize) -> usize {
    let mut part_digits = 1;
    loop {
        let size = chunk_capacity(nonce, seq, part_digits);
        let parts = payload_len.div_ceil(size).max(1);
        if decimal_digits(parts as u64) <= part_digits {
            return size;
        }
        part_digits += 1;
    }
}

/// An empty payload still takes one (empty) part, so the message is seen.
fn split_into_parts(payload: &[u8], size: usize) -> Vec<&[u8]> {
    if payload.is_empty() {
        vec![payload]
    } else {
        payload.chunks(size).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MAX_LINE;

    #[test]
    fn only_begin_record_and_error_are_counted() {
        let mut emitter = Emitter::new("n");
        for kind in [Kind::Begin, Kind::Record, Kind::Error, Kind::End] {
            emitter.lines(kind, b"x");
        }
        assert_eq!(emitter.messages_sent(), 3);
    }

    #[test]
    fn sequence_numbers_advance_per_message() {
        let mut emitter = Emitter::new("n");
        let first = emitter.lines(Kind::Begin, b"");
        let second = emitter.lines(Kind::Record, &[7; 1000]);
        assert!(
            first[0].starts_with("@KB1 n 0 BEGIN 1/1 0 "),
            "{}",
            first[0]
        );
        assert!(second.len() > 1);
        assert!(second.iter().all(|l| l.starts_with("@KB1 n 1 REC ")));
    }

    #[test]
    fn the_end_payload_starts_with_the_count() {
        assert_eq!(end_payload(3, b"bye"), b"3 bye");
        assert_eq!(end_payload(0, b""), b"0 ");
    }

    #[test]
    fn lines_stay_within_max_line_with_the_longest_nonce_and_many_parts() {
        let nonce = "N".repeat(64);
        let mut emitter = Emitter {
            next_seq: u64::MAX - 1,
            ..Emitter::new(&nonce)
        };
        for len in [0, 1, 100, 5000, 200_000] {
            let lines = emitter.lines(Kind::Record, &vec![0xa5; len]);
            let longest = lines.iter().map(String::len).max().unwrap();
            assert!(longest <= MAX_LINE, "{len} bytes: a line of {longest}");
            emitter.next_seq = u64::MAX - 1;
        }
    }

    #[test]
    fn parts_use_most_of_the_line() {
        let mut emitter = Emitter::new("boot-1");
        let lines = emitter.lines(Kind::Record, &[1; 5000]);
        assert!(lines[0].len() > MAX_LINE - 12, "{}", lines[0].len());
    }

    #[test]
    #[should_panic(expected = "console nonce")]
    fn a_nonce_with_a_space_is_refused() {
        Emitter::new("two words");
    }

    #[test]
    #[should_panic(expected = "console nonce")]
    fn a_nonce_longer_than_64_is_refused() {
        Emitter::new(&"a".repeat(65));
    }
}
