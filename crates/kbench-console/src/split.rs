//! A capture of several boots (a board's serial log over a whole LAVA job) cut into
//! one piece per boot, so that a panic is held against the boot it happened in.

use crate::frame::{decode, find_framed};

/// One boot's part of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootLog<'a> {
    pub nonce: String,
    /// From the line after the previous boot's last intact line (or the start) to this
    /// boot's last intact line.
    pub text: &'a str,
}

/// A capture cut by boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitLog<'a> {
    pub boots: Vec<BootLog<'a>>,
    /// What follows the last boot's last line: a boot that never reported (its kernel
    /// died before /init), or nothing. No boot is blamed for it.
    pub tail: &'a str,
}

/// Cuts `log` after each boot's last intact framed line, in order of appearance. What
/// comes before a boot's first line is its kernel starting (or dying before kbench
/// could report), so it belongs to that boot.
pub fn split_boots(log: &str) -> SplitLog<'_> {
    // (nonce, byte offset just past its last intact line)
    let mut lasts: Vec<(String, usize)> = Vec::new();
    let mut offset = 0;
    for line in log.split_inclusive('\n') {
        offset += line.len();
        let Some(frame) = find_framed(line.trim_end()).and_then(decode) else {
            continue;
        };
        match lasts.last_mut() {
            Some((nonce, end)) if *nonce == frame.nonce => *end = offset,
            _ => lasts.push((frame.nonce, offset)),
        }
    }
    // A nonce seen again after another boot's lines (a stray repeat) extends nothing:
    // the first stretch of each nonce is its boot, later ones stay where they fell.
    let mut boots: Vec<BootLog<'_>> = Vec::new();
    let mut start = 0;
    for (nonce, end) in lasts {
        if boots.iter().any(|b| b.nonce == nonce) {
            start = end;
            continue;
        }
        boots.push(BootLog {
            nonce,
            text: &log[start..end],
        });
        start = end;
    }
    SplitLog {
        boots,
        tail: &log[start..],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, Emitter, Kind};

    fn boot(nonce: &str, before: &str, after: &str) -> String {
        let mut e = Emitter::new(nonce);
        let mut text = before.to_string();
        for (kind, payload) in [
            (Kind::Begin, &b"{}"[..]),
            (Kind::Record, b"1"),
            (Kind::End, b""),
        ] {
            for line in e.lines(kind, payload) {
                text.push_str(&line);
                text.push('\n');
            }
        }
        text + after
    }

    #[test]
    fn each_boot_keeps_its_own_panic() {
        let log = boot("one", "[    0.0] Linux version 6.1\n", "")
            + &boot("two", "[    0.0] Linux version 6.12\n", "")
            + "[    0.0] Linux version 6.1\n[    1.2] Kernel panic - not syncing: VFS\n";
        let split = split_boots(&log);
        let boots = &split.boots;
        let nonces: Vec<&str> = boots.iter().map(|b| b.nonce.as_str()).collect();
        assert_eq!(nonces, ["one", "two"]);
        assert!(parse(boots[0].text, "one").panics.is_empty());
        assert!(parse(boots[0].text, "one").complete);
        assert!(parse(boots[1].text, "two").panics.is_empty());
        assert!(parse(boots[1].text, "two").complete);
        assert_eq!(
            parse(split.tail, "").panics.len(),
            1,
            "the tail is no boot's"
        );
        let joined: String = boots.iter().map(|b| b.text).chain([split.tail]).collect();
        assert_eq!(joined, log, "nothing lost or repeated");
    }

    #[test]
    fn a_panic_before_a_boots_first_line_is_that_boots() {
        let log = boot("one", "", "")
            + "[    2.0] BUG: unable to handle page fault\n"
            + &boot("two", "", "");
        let boots = split_boots(&log).boots;
        assert!(parse(boots[0].text, "one").panics.is_empty());
        assert_eq!(parse(boots[1].text, "two").panics.len(), 1);
    }

    #[test]
    fn no_frames_no_boots() {
        let split = split_boots("[    0.0] Linux version 6.1\n");
        assert!(split.boots.is_empty());
        assert_eq!(split.tail, "[    0.0] Linux version 6.1\n");
        assert!(split_boots("").boots.is_empty());
    }
}
