//! One framed line: how the emitter writes it and how the parser checks it.

use base64::{engine::general_purpose::STANDARD, Engine as _};

use crate::{is_valid_nonce, Kind, MAX_LINE, VERSION};

/// What starts every framed line; the version follows without a space.
pub(crate) const PREFIX: &str = "@KB";

/// The data field of an empty part: an empty field would leave a trailing space,
/// which consoles strip.
const EMPTY_DATA: &str = "-";

/// The widest `len` field: a part never carries more than `MAX_LINE` bytes.
const LEN_DIGITS: usize = 3;
const CRC_DIGITS: usize = 8;
const LONGEST_KIND: usize = 5;

/// One line's worth of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub nonce: String,
    pub seq: u64,
    pub kind: Kind,
    /// 1-based index of this part.
    pub part: u64,
    pub parts: u64,
    pub chunk: Vec<u8>,
}

impl Kind {
    /// The kind's field as a line spells it.
    pub fn token(self) -> &'static str {
        match self {
            Kind::Begin => "BEGIN",
            Kind::Record => "REC",
            Kind::Error => "ERR",
            Kind::End => "END",
        }
    }

    fn from_token(token: &str) -> Option<Kind> {
        [Kind::Begin, Kind::Record, Kind::Error, Kind::End]
            .into_iter()
            .find(|kind| kind.token() == token)
    }
}

/// What every framed line of this version starts with: the prefix and the version.
pub fn line_start() -> String {
    format!("{PREFIX}{VERSION}")
}

/// The line for `frame`, without a newline.
pub(crate) fn render(frame: &Frame) -> String {
    let checked = checked_fields(frame);
    let crc = checksum(&checked, &frame.chunk);
    format!("{PREFIX}{checked}{crc:08x} {}", encode_chunk(&frame.chunk))
}

/// The text after the last prefix in `line`: a frame never contains '@' after its
/// prefix, so whatever printk put before it on the same line is left out.
pub(crate) fn find_framed(line: &str) -> Option<&str> {
    line.rfind(PREFIX).map(|at| &line[at..])
}

/// The frame `framed` carries, if it is exactly what [`render`] writes for it.
pub(crate) fn decode(framed: &str) -> Option<Frame> {
    let fields: Vec<&str> = framed.strip_prefix(PREFIX)?.split(' ').collect();
    let [version, nonce, seq, kind, part_of, _len, _crc, data] = fields.as_slice() else {
        return None;
    };
    if version.parse::<u32>().ok()? != VERSION || !is_valid_nonce(nonce) {
        return None;
    }
    let (part, parts) = part_of.split_once('/')?;
    let frame = Frame {
        nonce: nonce.to_string(),
        seq: seq.parse().ok()?,
        kind: Kind::from_token(kind)?,
        part: part.parse().ok()?,
        parts: parts.parse().ok()?,
        chunk: decode_chunk(data)?,
    };
    if !(1..=frame.parts).contains(&frame.part) {
        return None;
    }
    // Rendering again checks the length and the CRC, and that every number and the
    // base64 are in the one spelling the emitter uses: "+7", "07" or other base64
    // padding can only come from damage.
    (render(&frame) == framed).then_some(frame)
}

/// How many payload bytes fit in one part of message `seq` when the part numbers
/// take `part_digits` digits each, keeping the line within `MAX_LINE`.
pub(crate) fn chunk_capacity(nonce: &str, seq: u64, part_digits: usize) -> usize {
    let fields = [
        PREFIX.len() + decimal_digits(VERSION.into()),
        nonce.len(),
        decimal_digits(seq),
        LONGEST_KIND,
        2 * part_digits + 1,
        LEN_DIGITS,
        CRC_DIGITS,
    ];
    let separators = fields.len();
    let header: usize = fields.iter().sum::<usize>() + separators;
    // base64 turns every 3 bytes into 4 characters.
    MAX_LINE.saturating_sub(header) / 4 * 3
}

pub(crate) fn decimal_digits(value: u64) -> usize {
    value.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// The fields the CRC covers besides the payload, with the space before the CRC.
fn checked_fields(frame: &Frame) -> String {
    format!(
        "{VERSION} {} {} {} {}/{} {} ",
        frame.nonce,
        frame.seq,
        frame.kind.token(),
        frame.part,
        frame.parts,
        frame.chunk.len()
    )
}

fn checksum(checked_fields: &str, chunk: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(checked_fields.as_bytes());
    hasher.update(chunk);
    hasher.finalize()
}

fn encode_chunk(chunk: &[u8]) -> String {
    if chunk.is_empty() {
        EMPTY_DATA.to_string()
    } else {
        STANDARD.encode(chunk)
    }
}

fn decode_chunk(data: &str) -> Option<Vec<u8>> {
    if data == EMPTY_DATA {
        Some(Vec::new())
    } else {
        STANDARD.decode(data).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Frame {
        Frame {
            nonce: "boot-7f3a".into(),
            seq: 12,
            kind: Kind::Record,
            part: 2,
            parts: 3,
            chunk: b"hello".to_vec(),
        }
    }

    #[test]
    fn a_rendered_line_decodes_to_its_frame() {
        let line = render(&sample());
        assert!(line.starts_with("@KB1 boot-7f3a 12 REC 2/3 5 "), "{line}");
        assert!(line.ends_with(" aGVsbG8="), "{line}");
        assert_eq!(decode(&line), Some(sample()));
        let kind_field = line.split(' ').nth(3);
        assert_eq!(kind_field, Some(Kind::Record.token()));
        assert!(line.starts_with(&format!("{} ", line_start())), "{line}");
    }

    #[test]
    fn the_line_in_the_crate_docs_is_real() {
        let frame = Frame {
            seq: 0,
            kind: Kind::Begin,
            part: 1,
            parts: 1,
            ..sample()
        };
        assert_eq!(
            render(&frame),
            "@KB1 boot-7f3a 0 BEGIN 1/1 5 36bd18c4 aGVsbG8="
        );
    }

    #[test]
    fn an_empty_part_is_written_as_a_dash() {
        let frame = Frame {
            chunk: Vec::new(),
            ..sample()
        };
        let line = render(&frame);
        assert!(line.ends_with(" -"), "{line}");
        assert_eq!(decode(&line), Some(frame));
    }

    #[test]
    fn other_spellings_of_the_same_values_are_rejected() {
        let line = render(&sample());
        for (from, to) in [
            (" 12 ", " 012 "),
            (" 12 ", " +12 "),
            (" 2/3 ", " 02/3 "),
            (" 5 ", " 05 "),
            ("@KB1 ", "@KB01 "),
            ("REC", "rec"),
        ] {
            let respelled = line.replacen(from, to, 1);
            assert_ne!(respelled, line);
            assert_eq!(decode(&respelled), None, "{respelled}");
        }
        let upper_crc = {
            let fields: Vec<&str> = line.split(' ').collect();
            line.replace(fields[6], &fields[6].to_uppercase())
        };
        if upper_crc != line {
            assert_eq!(decode(&upper_crc), None, "{upper_crc}");
        }
    }

    #[test]
    fn a_changed_field_fails_the_crc() {
        let line = render(&sample());
        for (from, to) in [
            (" 12 ", " 13 "),
            (" 2/3 ", " 1/3 "),
            ("REC", "ERR"),
            ("aGVsbG8=", "aGVsbG9="),
        ] {
            let changed = line.replacen(from, to, 1);
            assert_ne!(changed, line);
            assert_eq!(decode(&changed), None, "{changed}");
        }
    }

    #[test]
    fn part_numbers_outside_the_part_count_are_rejected() {
        for (part, parts) in [(0, 3), (4, 3), (1, 0)] {
            let line = render(&Frame {
                part,
                parts,
                ..sample()
            });
            assert_eq!(decode(&line), None, "{line}");
        }
    }

    #[test]
    fn another_version_is_rejected_even_with_a_good_crc() {
        let line_with_good_crc =
            |checked: &str| format!("{PREFIX}{checked}{:08x} -", checksum(checked, b""));
        assert!(decode(&line_with_good_crc("1 boot-7f3a 12 REC 2/3 0 ")).is_some());
        assert_eq!(
            decode(&line_with_good_crc("2 boot-7f3a 12 REC 2/3 0 ")),
            None
        );
    }

    #[test]
    fn printk_before_the_prefix_is_left_out() {
        let line = format!("[    1.234] random: crng init done{}", render(&sample()));
        assert_eq!(find_framed(&line), Some(render(&sample()).as_str()));
        assert_eq!(find_framed("[    1.234] no frame here"), None);
    }

    #[test]
    fn decimal_digits_counts_digits() {
        assert_eq!(decimal_digits(0), 1);
        assert_eq!(decimal_digits(9), 1);
        assert_eq!(decimal_digits(10), 2);
        assert_eq!(decimal_digits(u64::MAX), 20);
    }
}
