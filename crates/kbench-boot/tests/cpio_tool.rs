//! The archives checked by GNU cpio itself (Debian's `cpio` package), not by our reader.
use kbench_boot::Initramfs;
use std::path::Path;
use std::process::{Command, Stdio};

fn sample_image() -> Initramfs {
    let mut image = Initramfs::with_init(b"#!/bin/sh\necho init\n".to_vec());
    image
        .add_file(
            "/usr/bin/tool",
            (0..=255u8).cycle().take(5000).collect(),
            0o755,
        )
        .unwrap();
    image.add_file("etc/odd", b"abc".to_vec(), 0o640).unwrap();
    image
}

/// Runs `cpio ARGS` in `dir` with `archive` on stdin; its stdout.
fn cpio(dir: &Path, args: &[&str], archive: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("cpio")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cpio is installed (scripts/test.sh installs it)");
    child.stdin.take().unwrap().write_all(archive).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "cpio {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// (mode string, name) of each `cpio -itv` line; device lines carry "maj, min" too.
fn listing(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields[0].to_string(), fields.last().unwrap().to_string())
        })
        .collect()
}

#[test]
fn cpio_lists_the_expected_entries_modes_and_devices() {
    let dir = tempfile::tempdir().unwrap();
    let text = cpio(dir.path(), &["-itv", "--quiet"], &sample_image().to_cpio());
    let expected = [
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
        ("-rwxr-xr-x", "usr/bin/tool"),
        ("drwxr-xr-x", "etc"),
        ("-rw-r-----", "etc/odd"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(m, n)| (m.to_string(), n.to_string()))
        .collect();
    assert_eq!(listing(&text), expected, "{text}");
    let console = text.lines().find(|l| l.ends_with(" dev/console")).unwrap();
    let null = text.lines().find(|l| l.ends_with(" dev/null")).unwrap();
    assert!(
        console.contains(" 5, 1 ") || console.contains(" 5,   1 "),
        "{console}"
    );
    assert!(
        null.contains(" 1, 3 ") || null.contains(" 1,   3 "),
        "{null}"
    );
    assert!(
        text.lines().all(|l| l.contains(" root ")),
        "owner root: {text}"
    );
}

#[test]
fn cpio_extracts_the_files_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    // Device nodes need root to create; extract only the regular files.
    cpio(
        dir.path(),
        &[
            "-id",
            "--quiet",
            "--no-absolute-filenames",
            "init",
            "usr/bin/tool",
            "etc/odd",
        ],
        &sample_image().to_cpio(),
    );
    let read = |p: &str| std::fs::read(dir.path().join(p)).unwrap();
    assert_eq!(read("init"), b"#!/bin/sh\necho init\n");
    assert_eq!(
        read("usr/bin/tool"),
        (0..=255u8).cycle().take(5000).collect::<Vec<_>>()
    );
    assert_eq!(read("etc/odd"), b"abc");
}

#[test]
fn the_same_image_gives_the_same_bytes() {
    assert_eq!(sample_image().to_cpio(), sample_image().to_cpio());
    assert_eq!(sample_image().to_gzip(), sample_image().to_gzip());
}

#[test]
fn gzip_output_has_no_mtime_or_name_and_decompresses_to_the_cpio() {
    use std::io::Read;
    let image = sample_image();
    let gz = image.to_gzip();
    assert_eq!(&gz[..2], b"\x1f\x8b");
    assert_eq!(gz[3] & 0x08, 0, "FNAME flag set");
    assert_eq!(&gz[4..8], &[0, 0, 0, 0], "mtime set");
    let mut cpio = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut cpio)
        .unwrap();
    assert_eq!(cpio, image.to_cpio());
}
