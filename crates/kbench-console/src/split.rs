//! A capture of several boots (a board's serial log over a whole LAVA job) cut into
//! one piece per boot, so that a panic is held against the boot it happened in.
//!
//! A boot's records end where it stopped reporting; what the console shows after that,
//! until the next boot starts, is either that boot dying (a panic after its last
//! record, so it has no END) or something between boots (a boot whose kernel never
//! reached /init, a panic during a power-off). The next boot starts at the last start
//! line before its first record: its kernel's banner or kbench's [`READY_LINE`].
//!
//! [`READY_LINE`]: crate::READY_LINE

use crate::frame::{decode, find_framed};
use crate::Kind;

/// Lines that only a starting boot prints: the kernel's banner (shown without `quiet`)
/// and kbench's own first line as /init.
const START_MARKERS: [&str; 3] = [
    crate::READY_LINE,
    "Linux version ",
    "Booting Linux on physical CPU",
];

/// One boot's part of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootLog<'a> {
    pub nonce: String,
    /// From where this boot started (its start line, else its first record) to its
    /// last intact line.
    pub text: &'a str,
    /// `text` and what follows it until the next boot starts (or the capture ends):
    /// the log of a boot that died after its last record.
    pub until_next: &'a str,
    /// An END of this boot arrived: what follows it is not this boot's doing.
    pub ended: bool,
}

impl<'a> BootLog<'a> {
    /// The text to judge this boot by: its own records, and after them, when it never
    /// sent END, how it died.
    pub fn judged_text(&self) -> &'a str {
        if self.ended {
            self.text
        } else {
            self.until_next
        }
    }

    /// What followed this boot after it had finished: no boot's doing.
    pub fn after_end(&self) -> &'a str {
        if self.ended {
            &self.until_next[self.text.len()..]
        } else {
            ""
        }
    }
}

/// A capture cut by boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitLog<'a> {
    pub boots: Vec<BootLog<'a>>,
    /// What precedes the first boot's start.
    pub head: &'a str,
    /// Nonces whose intact lines appear again after another boot's: a serial line
    /// replaying old output. Those lines are left where they fell, in the other boot's
    /// text, and never make a boot of their own.
    pub replayed: Vec<String>,
}

/// One stretch of consecutive intact lines of one nonce.
struct Stretch {
    nonce: String,
    /// Byte offsets: the start of its first line, the end of its last line.
    first: usize,
    last_end: usize,
    ended: bool,
}

/// Cuts `log` into its boots, in order of appearance.
pub fn split_boots(log: &str) -> SplitLog<'_> {
    let (stretches, markers) = scan(log);
    let mut boots: Vec<BootLog<'_>> = Vec::new();
    let mut replayed: Vec<String> = Vec::new();
    // (start offset, stretch) of each boot, the first stretch of each nonce.
    let mut starts: Vec<(usize, &Stretch)> = Vec::new();
    let mut previous_end = 0;
    for stretch in &stretches {
        let seen = starts.iter().any(|(_, s)| s.nonce == stretch.nonce);
        if seen {
            if !replayed.contains(&stretch.nonce) {
                replayed.push(stretch.nonce.clone());
            }
        } else {
            let start = markers
                .iter()
                .copied()
                .rfind(|&m| m >= previous_end && m <= stretch.first)
                .unwrap_or(stretch.first);
            starts.push((start, stretch));
        }
        previous_end = stretch.last_end;
    }
    for (i, (start, stretch)) in starts.iter().enumerate() {
        let next = starts.get(i + 1).map_or(log.len(), |(s, _)| *s);
        // A boot's last line is that of its own last stretch before the next boot.
        let last_end = stretches
            .iter()
            .filter(|s| s.nonce == stretch.nonce && s.first < next)
            .map(|s| s.last_end)
            .max()
            .unwrap_or(stretch.last_end);
        let ended = stretches
            .iter()
            .any(|s| s.nonce == stretch.nonce && s.first < next && s.ended);
        boots.push(BootLog {
            nonce: stretch.nonce.clone(),
            text: &log[*start..last_end],
            until_next: &log[*start..next],
            ended,
        });
    }
    SplitLog {
        head: &log[..starts.first().map_or(log.len(), |(s, _)| *s)],
        boots,
        replayed,
    }
}

/// The stretches of intact framed lines, and the offsets of start lines.
fn scan(log: &str) -> (Vec<Stretch>, Vec<usize>) {
    let mut stretches: Vec<Stretch> = Vec::new();
    let mut markers = Vec::new();
    let mut offset = 0;
    for line in log.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        let Some(frame) = find_framed(line.trim_end()).and_then(decode) else {
            if START_MARKERS.iter().any(|m| line.contains(m)) {
                markers.push(line_start);
            }
            continue;
        };
        let ended = frame.kind == Kind::End;
        match stretches.last_mut() {
            Some(s) if s.nonce == frame.nonce => {
                s.last_end = offset;
                s.ended |= ended;
            }
            _ => stretches.push(Stretch {
                nonce: frame.nonce,
                first: line_start,
                last_end: offset,
                ended,
            }),
        }
    }
    (stretches, markers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, Emitter, READY_LINE};

    /// A boot's console: its start, BEGIN, `records` RECORDs, and END when `ends`.
    fn boot(nonce: &str, records: usize, ends: bool) -> String {
        let mut e = Emitter::new(nonce);
        let mut text = format!("[    0.0] Linux version 6.1\n{READY_LINE}\n");
        let mut messages = vec![(Kind::Begin, b"{}".to_vec())];
        messages.extend((0..records).map(|i| (Kind::Record, i.to_string().into_bytes())));
        if ends {
            messages.push((Kind::End, Vec::new()));
        }
        for (kind, payload) in messages {
            for line in e.lines(kind, &payload) {
                text.push_str(&line);
                text.push('\n');
            }
        }
        text
    }

    const PANIC: &str = "[    9.9] Kernel panic - not syncing: Attempted to kill init!\n";

    #[test]
    fn a_boot_that_dies_after_its_records_keeps_its_own_panic() {
        let log = boot("one", 2, false) + PANIC + &boot("two", 2, true);
        let split = split_boots(&log);
        let [one, two] = split.boots.as_slice() else {
            panic!("{:?}", split.boots)
        };
        assert!(!one.ended && two.ended);
        assert_eq!(parse(one.judged_text(), "one").panics.len(), 1);
        assert!(parse(two.judged_text(), "two").panics.is_empty());
        assert!(parse(two.judged_text(), "two").complete);
        let joined: String = [split.head, one.until_next, two.until_next].concat();
        assert_eq!(joined, log, "nothing lost or repeated");
    }

    #[test]
    fn a_panic_after_a_finished_boot_is_no_boots() {
        // A kernel that never reached /init between two boots, and one at the end.
        let log = boot("one", 1, true) + PANIC + &boot("two", 1, true) + PANIC;
        let split = split_boots(&log);
        for b in &split.boots {
            assert!(
                parse(b.judged_text(), &b.nonce).panics.is_empty(),
                "{}",
                b.nonce
            );
            assert_eq!(parse(b.after_end(), "").panics.len(), 1, "{}", b.nonce);
        }
    }

    #[test]
    fn a_replayed_stretch_is_said_and_makes_no_boot() {
        let first = boot("one", 1, true);
        let replay: String = first
            .lines()
            .filter(|l| l.contains("@KB"))
            .take(1)
            .collect();
        let log = first.clone() + &boot("two", 1, true) + &replay + "\n";
        let split = split_boots(&log);
        let nonces: Vec<&str> = split.boots.iter().map(|b| b.nonce.as_str()).collect();
        assert_eq!(nonces, ["one", "two"]);
        assert_eq!(split.replayed, ["one"]);
        assert!(split.boots[1].until_next.ends_with(&format!("{replay}\n")));
        assert!(parse(split.boots[1].judged_text(), "two").complete);
    }

    #[test]
    fn no_frames_no_boots() {
        let split = split_boots("[    0.0] Linux version 6.1\n");
        assert!(split.boots.is_empty());
        assert_eq!(split.head, "[    0.0] Linux version 6.1\n");
        assert!(split_boots("").boots.is_empty());
    }
}
