//! Lines of another boot are never taken for this one's.

use kbench_console::{parse, Emitter, Kind};

#[test]
fn another_boots_lines_are_reported_not_accepted() {
    let mut ours = Emitter::new("boot-new");
    let mut old = Emitter::new("boot-old");
    let mut log = String::new();
    for kind in [Kind::Begin, Kind::Record, Kind::End] {
        for line in old
            .lines(kind, b"stale")
            .into_iter()
            .chain(ours.lines(kind, b"fresh"))
        {
            log.push_str(&line);
            log.push('\n');
        }
    }
    let parsed = parse(&log, "boot-new");
    assert_eq!(parsed.messages.len(), 3);
    assert!(parsed
        .messages
        .iter()
        .all(|m| !m.payload.starts_with(b"stale")));
    assert_eq!(parsed.other_nonces, vec!["boot-old".to_string()]);
    assert_eq!(parsed.bad_lines, 0);
    assert!(parsed.complete);
}

#[test]
fn only_another_boots_lines_give_nothing() {
    let mut old = Emitter::new("boot-old");
    let mut other = Emitter::new("boot-other");
    let log: String = [
        old.lines(Kind::Begin, b""),
        other.lines(Kind::Begin, b""),
        old.lines(Kind::End, b""),
    ]
    .concat()
    .join("\n");
    let parsed = parse(&log, "boot-new");
    assert!(parsed.messages.is_empty() && !parsed.begun && !parsed.ended);
    assert_eq!(
        parsed.other_nonces,
        vec!["boot-old".to_string(), "boot-other".to_string()]
    );
}

#[test]
fn a_nonce_that_is_a_prefix_of_ours_is_another_boot() {
    let mut short = Emitter::new("boot");
    let log = short.lines(Kind::Begin, b"").join("\n");
    let parsed = parse(&log, "boot-1");
    assert!(parsed.messages.is_empty());
    assert_eq!(parsed.other_nonces, vec!["boot".to_string()]);
}
