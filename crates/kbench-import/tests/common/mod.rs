//! The captured outputs the import tests read, in one place for every test file.
use std::path::PathBuf;

/// The directory of captured tool outputs (`tests/fixtures/import`).
pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import")
}

/// The text of the fixture `name`.
pub fn fixture(name: &str) -> String {
    let path = fixture_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
