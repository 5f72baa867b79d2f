//! End-to-end tests of `kbench initramfs`, the images read back by GNU cpio.
mod common;
use common::{kbench_assert, kbench_bin};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

fn write_file(path: &Path, data: &[u8], mode: u32) {
    std::fs::write(path, data).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs `cpio ARGS` in `dir` on `archive`; its stdout.
fn cpio(dir: &Path, args: &[&str], archive: &[u8]) -> String {
    let mut child = std::process::Command::new("cpio")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cpio is installed (scripts/test.sh installs it)");
    let mut stdin = child.stdin.take().unwrap();
    let archive = archive.to_vec();
    // A writer thread: cpio may fill its stdout pipe before reading all its input.
    let writer = std::thread::spawn(move || stdin.write_all(&archive));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "cpio {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn gunzip(gz: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// A work dir with a small /init script and two files to add.
fn inputs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_file(
        &dir.path().join("init.sh"),
        b"#!/bin/sh\nexec kbench\n",
        0o755,
    );
    write_file(&dir.path().join("tool"), &[0xAA; 1001], 0o750);
    write_file(&dir.path().join("notes"), b"hello\n", 0o644);
    dir
}

fn build(dir: &Path, output: &str, extra: &[&str]) -> Vec<u8> {
    kbench_assert()
        .current_dir(dir)
        .args(["initramfs", "-o", output, "--init", "init.sh"])
        .args(["--add", "tool:/usr/bin/tool", "--add", "notes:etc/notes"])
        .args(extra)
        .assert()
        .success();
    std::fs::read(dir.join(output)).unwrap()
}

#[test]
fn added_files_are_listed_with_their_modes_and_extract_byte_for_byte() {
    let dir = inputs();
    let cpio_bytes = gunzip(&build(dir.path(), "initrd.gz", &[]));
    let listing = cpio(dir.path(), &["-itv", "--quiet"], &cpio_bytes);
    let modes_and_names: Vec<(&str, &str)> = listing
        .lines()
        .map(|l| {
            (
                l.split_whitespace().next().unwrap(),
                l.split_whitespace().last().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        modes_and_names,
        [
            ("drwxr-xr-x", "dev"),
            ("drwxr-xr-x", "proc"),
            ("drwxr-xr-x", "sys"),
            ("drwxr-xr-x", "tmp"),
            ("drwxr-xr-x", "run"),
            ("crw-------", "dev/console"),
            ("crw-rw-rw-", "dev/null"),
            ("-rwxr-xr-x", "init"),
            ("drwxr-xr-x", "usr"),
            ("drwxr-xr-x", "usr/bin"),
            ("-rwxr-x---", "usr/bin/tool"),
            ("drwxr-xr-x", "etc"),
            ("-rw-r--r--", "etc/notes"),
        ],
        "{listing}"
    );
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    cpio(
        &out,
        &["-id", "--quiet", "init", "usr/bin/tool", "etc/notes"],
        &cpio_bytes,
    );
    for (extracted, original) in [
        ("init", "init.sh"),
        ("usr/bin/tool", "tool"),
        ("etc/notes", "notes"),
    ] {
        assert_eq!(
            std::fs::read(out.join(extracted)).unwrap(),
            std::fs::read(dir.path().join(original)).unwrap(),
            "{extracted}"
        );
    }
}

#[test]
fn two_runs_write_identical_bytes() {
    let dir = inputs();
    assert_eq!(
        build(dir.path(), "a.gz", &[]),
        build(dir.path(), "b.gz", &[])
    );
    let plain = build(dir.path(), "a.cpio", &["--compress", "none"]);
    assert_eq!(plain, build(dir.path(), "b.cpio", &["--compress", "none"]));
    assert_eq!(&plain[..6], b"070701");
}

#[test]
fn the_default_init_is_this_kbench_and_a_dynamic_one_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let output = kbench_assert()
        .current_dir(dir.path())
        .args(["initramfs", "-o", "initrd", "--compress", "none"])
        .output()
        .unwrap();
    assert!(output.status.success());
    // Test builds of kbench are dynamically linked.
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("dynamically linked"), "{stderr}");
    let archive = std::fs::read(dir.path().join("initrd")).unwrap();
    cpio(dir.path(), &["-id", "--quiet", "init"], &archive);
    let kbench_binary = kbench_bin();
    assert!(
        std::fs::read(dir.path().join("init")).unwrap() == std::fs::read(kbench_binary).unwrap()
    );
}

#[test]
fn a_static_init_gets_no_warning() {
    // Debian's /sbin/ldconfig is a static executable.
    let dir = tempfile::tempdir().unwrap();
    kbench_assert()
        .current_dir(dir.path())
        .args(["initramfs", "-o", "initrd", "--init", "/sbin/ldconfig"])
        .assert()
        .success()
        .stderr("");
}

/// Exit 2 and exactly one line on stderr, containing `needle`.
fn assert_usage_error(args: &[&str], needle: &str) {
    let dir = inputs();
    let output = kbench_assert()
        .current_dir(dir.path())
        .args(["initramfs", "-o", "initrd", "--init", "init.sh"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(needle), "{stderr}");
    assert!(
        !dir.path().join("initrd").exists(),
        "no image on a usage error"
    );
}

#[test]
fn bad_add_specs_are_usage_errors() {
    assert_usage_error(&["--add", "tool"], "--add wants SRC:DEST");
    assert_usage_error(&["--add", ":/x"], "--add wants SRC:DEST");
    assert_usage_error(&["--add", "tool:"], "--add wants SRC:DEST");
    assert_usage_error(&["--add", "missing:/x"], "cannot read missing");
    assert_usage_error(&["--add", "tool:../../etc/x"], "`..` is not allowed");
    assert_usage_error(&["--add", "tool:/init"], "already in the initramfs");
    assert_usage_error(&["--compress", "bzip9"], "bzip9");
}
