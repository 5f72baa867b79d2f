//! A console protocol that survives a serial line.
//!
//! kbench can run as the `/init` of an initramfs, in a VM or on a board, where the
//! only way out is the console. The kernel writes to the same console (printk), the
//! serial line may drop, repeat or damage bytes, and the capture may stop early. This
//! crate is both ends of that channel: the [`Emitter`] turns messages into lines the
//! writer prints, and [`parse`] reads a whole capture on the host and returns exactly
//! the messages that arrived intact, with an account of what did not.
//!
//! # Line format
//!
//! Every line carries one part of one message and checks itself:
//!
//! ```text
//! @KB1 <nonce> <seq> <kind> <part>/<parts> <len> <crc> <data>
//! @KB1 boot-7f3a 0 BEGIN 1/1 5 36bd18c4 aGVsbG8=
//! ```
//!
//! - `@KB` is the fixed prefix. The parser looks for it anywhere in a line, because
//!   the kernel may have printed something on the same line just before it; the
//!   prefix is followed directly by the protocol version ([`VERSION`]).
//! - `nonce` names one boot (`[A-Za-z0-9_-]{1,64}`). The host passes the nonce it
//!   gave the boot, so lines left in a capture by an earlier boot are never taken
//!   for this one's; they are reported in [`Parsed::other_nonces`] so the caller
//!   can refuse the log.
//! - `seq` numbers messages from 0 within a boot, so a gap shows a lost message.
//! - `kind` is `BEGIN`, `REC`, `ERR` or `END` ([`Kind`]).
//! - `part/parts` (1-based) split a payload so that no line exceeds [`MAX_LINE`]
//!   bytes: long lines are where consoles wrap, truncate, and get interleaved with
//!   printk. Parts may arrive in any order and repeated.
//! - `len` is the number of payload bytes in this line.
//! - `crc` is the CRC-32 (8 lowercase hex digits) of everything between the prefix
//!   and the CRC field, followed by this line's payload bytes. A line the kernel
//!   printed into the middle of, a flipped byte or a cut line fails it.
//! - `data` is this line's payload bytes in standard base64 (no spaces, so nothing
//!   can be mistaken for a field), or `-` when the part is empty: consoles strip
//!   trailing spaces, so a line never ends in an empty field.
//!
//! A line is accepted only if it is, byte for byte, the line the emitter would write
//! for the values it decodes to; any other spelling of a number or of the base64 is
//! damage. Trailing whitespace (and the `\r` of `\r\n` consoles) is ignored.
//!
//! # Messages
//!
//! A boot writes `BEGIN`, any number of `REC` and `ERR`, then `END`. The `END`
//! payload starts with the number of messages sent before it, in decimal, then a
//! space, then the caller's payload; [`parse`] strips the count again. Comparing the
//! count with what arrived tells a complete capture from a truncated one even when
//! the loss is at the tail, where no gap in sequence numbers shows it.
//!
//! [`parse`] keeps each message once (duplicated lines are expected on a retrying
//! serial path), drops a message with a missing part and counts it in
//! [`Parsed::lost_messages`], as it does every sequence number below the highest one
//! seen that never arrived. Lines with the prefix that fail their check are skipped
//! and counted in [`Parsed::bad_lines`]. Console lines that say the kernel died
//! (panic, oops, BUG, KASAN, general protection fault, unhandled kernel fault) are
//! kept in [`Parsed::panics`], because they explain why a capture ends early.
//!
//! # Using it
//!
//! On the writer side (kbench as `/init`), pick a nonce the host knows, for example
//! one passed on the kernel command line, make one [`Emitter`] for the boot, and
//! print every line [`Emitter::lines`] returns followed by a newline, in one write
//! per line so printk is less likely to land inside it. Write `BEGIN` first and
//! `END` last, after the last result.
//!
//! On the host, give the whole capture and the same nonce to [`parse`], then:
//!
//! - refuse the log if [`Parsed::other_nonces`] is not empty: the capture mixes
//!   boots, and which one a result belongs to is a guess;
//! - trust it as the whole run only if [`Parsed::complete`]; otherwise
//!   [`Parsed::lost_messages`], [`Parsed::bad_lines`] and a missing `END` say how
//!   much is missing, and [`Parsed::panics`] often says why.
//!
//! # Example
//!
//! ```
//! use kbench_console::{parse, Emitter, Kind};
//!
//! let mut emitter = Emitter::new("boot-1");
//! let mut log = String::from("[    0.000000] Linux version 6.12\n");
//! for (kind, payload) in [(Kind::Begin, &b"{}"[..]), (Kind::Record, b"{\"ops\":42}"), (Kind::End, b"")] {
//!     for line in emitter.lines(kind, payload) {
//!         log.push_str(&line);
//!         log.push_str("\r\n");
//!     }
//! }
//! let parsed = parse(&log, "boot-1");
//! assert!(parsed.complete);
//! assert_eq!(parsed.messages[1].payload, b"{\"ops\":42}");
//! ```
//!
//! What the messages carry is typed in [`payload`]: [`payload::Begin`], the run of
//! each REC, an error's text and [`payload::End`], read back as [`payload::Received`].
//!
//! The crate does no I/O: the writer prints the lines, the host reads the capture.

mod emit;
mod frame;
pub mod lava;
mod panics;
mod parse;
pub mod payload;
mod split;

pub use emit::Emitter;
pub use frame::line_start;
pub use parse::{line_kinds, parse, Message, Parsed};
pub use split::{split_boots, BootLog, SplitLog};

/// The protocol version written after the prefix of every line.
pub const VERSION: u32 = 1;

/// The longest line [`Emitter::lines`] writes, in bytes, without the newline.
pub const MAX_LINE: usize = 200;

/// The plain (unframed) line the writer prints once when it starts, before any result:
/// something a lab's scheduler can wait for while the runs go on (LAVA's test monitor
/// starts there, see `kbench lava-job`). The parser ignores it.
pub const READY_LINE: &str = "kbench: ready";

/// The name of the virtio-serial port `kbench vm-ab` gives its guests for results: a
/// guest whose kernel has the driver writes its framed lines there, away from printk.
pub const RESULTS_PORT: &str = "org.kbench.results";

/// What a message is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The boot started writing; the payload describes the boot.
    Begin,
    /// One result.
    Record,
    /// Something failed; the payload says what.
    Error,
    /// The last message; its count tells the host whether anything was lost.
    End,
}

/// Whether `nonce` is one the protocol can carry: `[A-Za-z0-9_-]{1,64}`, so it is a
/// single field and never contains the prefix.
pub(crate) fn is_valid_nonce(nonce: &str) -> bool {
    (1..=64).contains(&nonce.len())
        && nonce
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
