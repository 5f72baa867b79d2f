//! Kernel deaths on the console are reported next to the messages.

use kbench_console::{parse, Emitter, Kind};

#[test]
fn panic_lines_are_found_among_framed_lines() {
    let mut emitter = Emitter::new("boot-p");
    let mut log = String::from("[    0.000000] Linux version 6.12.0\n");
    for line in emitter.lines(Kind::Begin, b"{}") {
        log.push_str(&format!("{line}\r\n"));
    }
    log.push_str(
        "[   10.500000] BUG: kernel NULL pointer dereference, address: 0000000000000008\r\n",
    );
    log.push_str("[   10.500100] Oops: 0000 [#1] PREEMPT SMP NOPTI\r\n");
    log.push_str("[   10.600000] ---[ end trace 0000000000000000 ]---\r\n");
    log.push_str("[   10.700000] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009\r\n");
    let parsed = parse(&log, "boot-p");
    assert_eq!(
        parsed.panics,
        vec![
            "[   10.500000] BUG: kernel NULL pointer dereference, address: 0000000000000008",
            "[   10.500100] Oops: 0000 [#1] PREEMPT SMP NOPTI",
            "[   10.700000] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009",
        ]
    );
    assert!(parsed.begun && !parsed.ended && !parsed.complete);
}

#[test]
fn arm64_and_kasan_reports_are_found() {
    let log = "\
[    2.0] Unable to handle kernel paging request at virtual address dead000000000108
[    2.1] ==================================================================
[    2.2] BUG: KASAN: use-after-free in kfree+0x3c/0x90
[    2.3] general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] SMP KASAN
";
    let parsed = parse(log, "boot-p");
    assert_eq!(parsed.panics.len(), 3, "{:?}", parsed.panics);
    assert!(parsed.panics[0].starts_with("[    2.0] Unable to handle kernel"));
}

#[test]
fn a_clean_boot_has_no_panics() {
    let log = "[    1.0] Run /init as init process\n[    1.1] random: crng init done\n";
    assert!(parse(log, "boot-p").panics.is_empty());
}
