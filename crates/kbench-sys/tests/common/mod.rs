//! Shared helpers for the integration tests.
#![allow(dead_code)]
use kbench_sys::Sysroot;
use std::path::{Path, PathBuf};

/// The fixture tree `name` as a sysroot.
pub fn fixture(name: &str) -> Sysroot {
    Sysroot::new(fixture_dir(name))
}

pub fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// Copies a fixture tree into a temporary directory (for tests that write).
pub fn fixture_copy(name: &str) -> (tempfile::TempDir, Sysroot) {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_tree(&fixture_dir(name), dir.path());
    let root = Sysroot::new(dir.path());
    (dir, root)
}

pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Every file of a tree with its bytes, sorted by path.
pub fn snapshot_tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn walk(base: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            walk(base, &entry.path(), out);
        } else {
            let rel = entry.path().strip_prefix(base).unwrap().to_path_buf();
            out.push((rel, std::fs::read(entry.path()).unwrap()));
        }
    }
}
