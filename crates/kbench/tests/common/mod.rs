//! Helpers the kbench CLI tests share.
// Each test file compiles this module on its own and uses only some of it.
#![allow(dead_code)]

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

/// Two CPUs this process may use, busiest first: `(busy, quiet)`, by the idle time each
/// had over half a second of `/proc/stat`.
///
/// Tests that compare timings put the CPU they need idle (an IPI target, a wakee, the
/// CPU their own hog takes) on `quiet`, so that other work holding one core of the
/// machine lands beside the measurement, not inside it. Panics, naming the idle
/// fractions, when no allowed CPU idled for at least a third of the sample: such a
/// test cannot measure an idle CPU on a machine that has none.
pub fn busy_and_quiet_cpus() -> (u32, u32) {
    let allowed = kbench_workloads::cpus::allowed_cpus().unwrap();
    assert!(allowed.len() >= 2, "needs two CPUs, allowed: {allowed:?}");
    let before = cpu_times();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let after = cpu_times();
    let mut idle: Vec<(u32, f64)> = allowed
        .iter()
        .filter_map(|cpu| {
            let (idle0, total0) = before.get(cpu)?;
            let (idle1, total1) = after.get(cpu)?;
            let total = total1.saturating_sub(*total0).max(1);
            Some((*cpu, idle1.saturating_sub(*idle0) as f64 / total as f64))
        })
        .collect();
    idle.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (quiet, quiet_idle) = *idle.last().expect("CPUs in /proc/stat");
    assert!(
        quiet_idle >= 0.33,
        "no CPU idles on this machine (idle fractions {idle:?}): this test measures an idle CPU"
    );
    (idle[0].0, quiet)
}

/// Per CPU, (idle + iowait, all) jiffies from `/proc/stat`.
fn cpu_times() -> std::collections::BTreeMap<u32, (u64, u64)> {
    std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let cpu = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let ticks: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
            let idle = ticks.get(3)? + ticks.get(4).unwrap_or(&0);
            Some((cpu, (idle, ticks.iter().sum())))
        })
        .collect()
}
