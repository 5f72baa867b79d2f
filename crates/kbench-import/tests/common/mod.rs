//! What the import tests share: the captured outputs they read, the output of an
//! installed tool, and the names of a reader's primary values.
// Each test file compiles this module on its own and uses only some of it.
#![allow(dead_code)]

use kbench_record::MetricValue;
use std::path::PathBuf;
use std::process::Command;

/// The directory of captured tool outputs (`tests/fixtures/import`).
pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import")
}

/// The text of the fixture `name`.
pub fn fixture(name: &str) -> String {
    let path = fixture_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What `program args` prints now, when it is installed (else a SKIP line and `None`);
/// it must succeed.
pub fn installed_output(program: &str, args: &[&str]) -> Option<String> {
    let Ok(out) = Command::new(program).args(args).output() else {
        eprintln!("SKIP: {program} (rt-tests) is not installed");
        return None;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// The names of the values a reader marked primary, in their order.
pub fn primary_names(values: &[MetricValue]) -> Vec<&str> {
    values
        .iter()
        .filter(|v| v.is_primary())
        .map(|v| v.name.as_str())
        .collect()
}
