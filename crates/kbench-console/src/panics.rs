//! Recognising the console lines that say the kernel died.

/// Substrings the kernel prints when it panics or hits a fatal fault. " Oops " is
/// there for the arm/x86 variants that do not follow the word with a colon.
const PANIC_MARKERS: &[&str] = &[
    "Kernel panic - not syncing",
    "Oops:",
    " Oops ",
    "BUG: ",
    "KASAN:",
    "general protection fault",
    "Unable to handle kernel",
];

/// The trimmed line if it reports a dead kernel.
pub(crate) fn panic_text(line: &str) -> Option<String> {
    PANIC_MARKERS
        .iter()
        .any(|marker| contains_at_word_start(line, marker))
        .then(|| line.trim().to_string())
}

/// Whether `marker` occurs where a word starts, so a driver's "DEBUG: " is not
/// read as the kernel's "BUG: ".
fn contains_at_word_start(line: &str, marker: &str) -> bool {
    line.match_indices(marker)
        .any(|(at, _)| at == 0 || !line.as_bytes()[at - 1].is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_marker_is_found_and_the_line_trimmed() {
        let lines = [
            "[   12.345678] Kernel panic - not syncing: Attempted to kill init!",
            "[    3.1] Oops: 0002 [#1] PREEMPT SMP NOPTI",
            "[    3.1] Internal error: Oops - BUG: 0 [#1] SMP",
            "[    4.2] BUG: unable to handle page fault for address: 0000000000001000",
            "[    5.0] BUG: KASAN: slab-out-of-bounds in foo+0x10/0x20",
            "[    6.0] general protection fault, probably for non-canonical address",
            "[    7.0] Unable to handle kernel NULL pointer dereference at virtual address 0",
            "[    8.0] Call Trace: Oops here ",
        ];
        for line in lines {
            let padded = format!("  {line}\r");
            assert_eq!(panic_text(&padded).as_deref(), Some(line.trim()), "{line}");
        }
    }

    #[test]
    fn ordinary_lines_are_not_panics() {
        for line in [
            "[    0.000000] Linux version 6.12.0 (gcc 12)",
            "[    1.0] Oopsie daisy",
            "[    1.0] DEBUG: something",
            "[    1.0] bug: lowercase is a message, not the kernel's BUG",
        ] {
            assert_eq!(panic_text(line), None, "{line}");
        }
    }
}
