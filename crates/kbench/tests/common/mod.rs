//! Helpers the kbench CLI tests share: running the kbench binary and reading what it
//! prints, temporary databases, the processes a run leaves, the machine's CPUs, and
//! the cached kernels the boot tests need.
// Each test file compiles this module on its own and uses only some of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output};
use std::time::{Duration, Instant};

/// The kbench binary under test.
pub fn kbench_bin() -> &'static str {
    env!("CARGO_BIN_EXE_kbench")
}

/// A kbench command with nothing set yet, for a test to give its arguments,
/// environment and standard streams.
pub fn kbench_command() -> Command {
    Command::new(kbench_bin())
}

/// kbench as an `assert_cmd` command, for the tests that assert with predicates.
pub fn kbench_assert() -> assert_cmd::Command {
    assert_cmd::Command::new(kbench_bin())
}

/// Runs kbench with `args` (stdin empty, stdout and stderr collected).
pub fn kbench(args: &[&str]) -> Output {
    kbench_command().args(args).output().expect("run kbench")
}

/// Runs kbench with `args` on the database `db`, named by `$KBENCH_DB`.
pub fn kbench_on(db: &Path, args: &[&str]) -> Output {
    kbench_command()
        .args(args)
        .env("KBENCH_DB", db)
        .output()
        .expect("run kbench")
}

/// Runs kbench with `args` and then `--db DB` (a path or a PostgreSQL URL).
pub fn kbench_db_arg(db: impl AsRef<OsStr>, args: &[&str]) -> Output {
    kbench_command()
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run kbench")
}

/// What a process wrote, as text (invalid UTF-8 replaced).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Fails the test unless kbench `args` (none: not said) succeeded, showing what it
/// printed.
pub fn assert_success(out: &Output, args: &[&str]) {
    let args = if args.is_empty() {
        String::new()
    } else {
        format!(" {args:?}")
    };
    assert!(
        out.status.success(),
        "kbench{args} failed: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// The stdout of kbench `args`, which must have succeeded.
pub fn stdout_ok(out: Output, args: &[&str]) -> String {
    assert_success(&out, args);
    text(&out.stdout)
}

/// The stdout of kbench `args`, which must have succeeded and written UTF-8.
pub fn utf8_stdout_ok(out: Output, args: &[&str]) -> String {
    assert_success(&out, args);
    String::from_utf8(out.stdout).expect("kbench writes UTF-8")
}

/// The stdout of kbench `args` on `db` (`$KBENCH_DB`), which must succeed.
pub fn ok_on(db: &Path, args: &[&str]) -> String {
    stdout_ok(kbench_on(db, args), args)
}

/// The JSON kbench `args` prints on `db` (`$KBENCH_DB`), which must succeed.
pub fn json_on(db: &Path, args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok_on(db, args)).expect("JSON output")
}

/// The JSON on the stdout of kbench `args`, which must have succeeded.
pub fn json_ok<T: serde::de::DeserializeOwned>(out: &Output, args: &[&str]) -> T {
    assert_success(out, args);
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// The one record `kbench bench --json ARGS` prints, as `T`.
pub fn bench_json<T: serde::de::DeserializeOwned>(args: &[&str]) -> T {
    let mut full = vec!["bench", "--json"];
    full.extend_from_slice(args);
    json_ok(&kbench(&full), &full)
}

/// The one record `kbench bench --json ARGS` prints, as JSON.
pub fn bench_record(args: &[&str]) -> serde_json::Value {
    bench_json(args)
}

/// The series `name` of a run record.
pub fn series<'a>(record: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    record["series"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no series {name} in {record}"))
}

/// The CPUs this process may run on, at least 1.
pub fn usable_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How `child` ended, or `None` when it was still running after `limit`: it is then
/// killed and reaped, so a hang fails its test rather than stalling it.
pub fn wait_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for kbench") {
            return Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The error of a refused command: exit status `code` and one line on stderr, which
/// is returned for the test to read.
pub fn one_line_error(out: &Output, code: i32, args: &[&str]) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "kbench {args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    stderr
}

/// A database file in a directory of its own, both removed when dropped.
pub struct TempDb {
    dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl TempDb {
    pub fn new() -> TempDb {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.db");
        TempDb { dir, path }
    }

    /// The directory beside the database, for a test's other files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `bytes` to `name` in the database's directory; its path.
    pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// A kbench command on this database (`$KBENCH_DB`), `args` given.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = kbench_command();
        cmd.args(args).env("KBENCH_DB", &self.path);
        cmd
    }

    pub fn kbench(&self, args: &[&str]) -> Output {
        kbench_on(&self.path, args)
    }

    pub fn ok(&self, args: &[&str]) -> String {
        ok_on(&self.path, args)
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        json_on(&self.path, args)
    }

    pub fn sqlite(&self) -> rusqlite::Connection {
        sqlite(&self.path)
    }

    pub fn count(&self, sql: &str) -> i64 {
        count(&self.path, sql)
    }
}

/// The SQLite database at `db`, opened read-write.
pub fn sqlite(db: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(db).unwrap()
}

/// The one integer `sql` selects from the SQLite database at `db`.
pub fn count(db: &Path, sql: &str) -> i64 {
    sqlite(db).query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Whether Debian's perf is installed, saying SKIP when it is not.
pub fn perf_present() -> bool {
    let present = Path::new("/usr/bin/perf").exists();
    if !present {
        eprintln!("SKIP: /usr/bin/perf is not installed (scripts/test.sh installs linux-perf)");
    }
    present
}

/// A file of the import fixtures of kbench-import.
pub fn import_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kbench-import/tests/fixtures/import")
        .join(name)
}

/// The kernel cache scripts/fetch-kernels.sh fills when `$KBENCH_KERNEL_CACHE` is unset.
pub fn home_kernel_cache() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/kbench/kernels")
}

/// `$KBENCH_KERNEL_CACHE`, or the cache under `$HOME`.
pub fn kernel_cache() -> PathBuf {
    std::env::var_os("KBENCH_KERNEL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(home_kernel_cache)
}

/// A file of `dir` whose name starts with `prefix` and ends with `suffix`.
pub fn cached_file(dir: &Path, prefix: &str, suffix: &str) -> Option<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.into_iter().find(|p| {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        name.starts_with(prefix) && name.ends_with(suffix)
    })
}

/// The path in the environment variable `var`, when that file exists.
pub fn existing_file_from_env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|p| Path::new(p).exists())
}

/// Whether `program --version` starts (qemu and the like are installed).
pub fn runs(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok()
}

/// Skips a test whose machine lacks what it boots, unless scripts/test.sh (which
/// provides it) asked for every boot test to run: there a skip is a failure.
pub fn skip_or_fail(why: &str) {
    assert!(
        std::env::var_os("KBENCH_REQUIRE_BOOT_TESTS").is_none(),
        "KBENCH_REQUIRE_BOOT_TESTS is set, but {why}"
    );
    eprintln!("SKIP: {why}");
}

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

/// The static kbench scripts/test.sh builds, to boot as /init.
pub fn static_kbench() -> Option<String> {
    existing_file_from_env("KBENCH_STATIC_BIN")
}

/// The cached 6.1 and 6.12 cloud kernel packages, or None (with a SKIP line) when the
/// fetch script has not run, qemu is missing or no static kbench was built.
pub fn kernels() -> Option<(PathBuf, PathBuf)> {
    if static_kbench().is_none() {
        skip_or_fail("KBENCH_STATIC_BIN unset (scripts/test.sh builds and exports it)");
        return None;
    }
    let cache = kernel_cache();
    match (
        cached_file(&cache, "linux-image-6.1.0-", ".deb"),
        cached_file(&cache, "linux-image-6.12.", ".deb"),
        runs("qemu-system-x86_64"),
    ) {
        (Some(a), Some(b), true) => Some((a, b)),
        _ => {
            skip_or_fail(
                "no cached kernels or no qemu (scripts/test.sh fetches and installs them)",
            );
            None
        }
    }
}

/// Chromium's binary, when installed (scripts/test.sh installs it; there it must run).
pub fn chromium() -> Option<&'static str> {
    let found = Path::new("/usr/bin/chromium").exists();
    if !found {
        assert!(
            std::env::var_os("KBENCH_REQUIRE_CHROMIUM").is_none(),
            "KBENCH_REQUIRE_CHROMIUM is set, but /usr/bin/chromium is not installed"
        );
        eprintln!("SKIP: no /usr/bin/chromium");
    }
    found.then_some("/usr/bin/chromium")
}

/// Renders the page `html` in headless Chromium to a PNG beside it, which must not be
/// blank, with no message on the page's console (a CSP violation, a parse error).
pub fn render_in_chromium(html: &Path) {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = html.parent().unwrap();
    let png = html.with_extension("png");
    let profile = dir.join("chromium-profile");
    let out = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=820,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium: {log}");
    // The page's own console (a CSP violation, a parse error) says CONSOLE.
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let pixels = &pixels[..info.buffer_size()];
    let channels = info.color_type.samples();
    let first = &pixels[..channels];
    let differing = pixels.chunks(channels).filter(|p| p != &first).count();
    let total = pixels.len() / channels;
    assert!(
        differing * 100 > total,
        "the screenshot is blank: {differing} of {total} pixels differ from the first"
    );
}

/// Busy loops on one CPU for as long as it lives: a real effect from outside for a
/// test to find. Three of them leave a workload's task a quarter of the CPU.
pub struct Hog(Vec<std::process::Child>);

impl Hog {
    pub fn on_cpu(cpu: u32, loops: usize) -> Hog {
        Hog((0..loops)
            .map(|_| {
                Command::new("taskset")
                    .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
                    .spawn()
                    .expect("taskset (util-linux)")
            })
            .collect())
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
