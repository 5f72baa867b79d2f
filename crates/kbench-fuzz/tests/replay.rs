//! Every corpus and regression file through its target, on stable, in the ordinary test
//! run: an input that once crashed a parser stays a test after the fix, and the corpus
//! the fuzzer built keeps checking the invariants without a nightly toolchain.
//!
//! A target without a corpus fails here, so renaming a target (or its directory) cannot
//! leave it replaying nothing.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of a directory, sorted; none when it does not exist.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// The inputs of one target: its corpus, which must not be empty, then its
/// regressions, if any.
fn inputs_of(name: &str) -> Result<Vec<PathBuf>, String> {
    let corpus = files_in(&fuzz_dir().join("corpus").join(name));
    if corpus.is_empty() {
        return Err(format!("{name}: fuzz/corpus/{name}/ is missing or empty"));
    }
    let regressions = files_in(&fuzz_dir().join("regressions").join(name));
    Ok(corpus.into_iter().chain(regressions).collect())
}

/// Runs one input, turning a panic into the name of the file that caused it.
fn replay(name: &str, target: fn(&[u8]), file: &Path) -> Result<(), String> {
    let data = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    catch_unwind(AssertUnwindSafe(|| target(&data)))
        .map_err(|_| format!("{name}: {} panicked", file.display()))
}

#[test]
fn every_corpus_and_regression_file_passes_its_target() {
    let previous_hook = std::panic::take_hook();
    // The failures are listed at the end; a backtrace per file would bury them.
    std::panic::set_hook(Box::new(|info| eprintln!("{info}")));
    let mut failures = Vec::new();
    let mut replayed = 0;
    for (name, target) in kbench_fuzz::TARGETS {
        match inputs_of(name) {
            Ok(files) => {
                for file in &files {
                    match replay(name, *target, file) {
                        Ok(()) => replayed += 1,
                        Err(failure) => failures.push(failure),
                    }
                }
            }
            Err(missing) => failures.push(missing),
        }
    }
    std::panic::set_hook(previous_hook);
    assert!(
        failures.is_empty(),
        "{} of {} inputs failed:\n{}",
        failures.len(),
        replayed + failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_fuzz_target_file_is_a_listed_target() {
    let mut missing = Vec::new();
    for file in files_in(&fuzz_dir().join("fuzz_targets")) {
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if !kbench_fuzz::TARGETS.iter().any(|(name, _)| *name == stem) {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "fuzz targets not in TARGETS: {missing:?}"
    );
    let listed = kbench_fuzz::TARGETS.len();
    let files = files_in(&fuzz_dir().join("fuzz_targets")).len();
    assert_eq!(files, listed, "one fuzz_targets/*.rs per target");
}
