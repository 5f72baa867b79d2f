//! Real executables of this system: Debian's /sbin/ldconfig is static, /bin/sh dynamic.
use kbench_boot::elf::needs_interpreter;

#[test]
fn dynamic_executables_need_an_interpreter_static_ones_do_not() {
    assert_eq!(
        needs_interpreter(&std::fs::read("/bin/sh").unwrap()),
        Some(true)
    );
    assert_eq!(
        needs_interpreter(&std::fs::read("/sbin/ldconfig").unwrap()),
        Some(false)
    );
}

#[test]
fn non_elf_and_truncated_elf_are_not_judged() {
    assert_eq!(needs_interpreter(b"#!/bin/sh\n"), None);
    let sh = std::fs::read("/bin/sh").unwrap();
    assert_eq!(needs_interpreter(&sh[..40]), None);
}
