//! Helpers the kbench CLI tests share.

/// The live processes (not zombies) with `KBENCH_TEST_MARK=mark` in their environment:
/// what a test's kbench left running, whatever became of the parent.
pub fn processes_marked(mark: &str) -> Vec<String> {
    let needle = format!("KBENCH_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter_map(|e| {
            let environ = std::fs::read(e.path().join("environ")).ok()?;
            let marked = environ.split(|&b| b == 0).any(|v| v == needle.as_bytes());
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let zombie = stat.rsplit(')').next()?.trim_start().starts_with('Z');
            (marked && !zombie).then_some(stat)
        })
        .collect()
}
