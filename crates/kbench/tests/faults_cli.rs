//! Faults from outside, with real processes and a real database: kbench killed at
//! seeded moments, a full disk, a workload's process killed, a second writer the whole
//! time, a command that hangs, and standard streams closed or broken. Nothing a
//! committed transaction wrote may be lost, and nothing may be left running.
mod common;
use common::processes_marked;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn kbench_bin() -> &'static str {
    env!("CARGO_BIN_EXE_kbench")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kbench-import/tests/fixtures/import")
        .join(name)
}

/// A kbench command on `db`, marked so that its processes can be found afterwards.
fn kbench(db: &Path, mark: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(kbench_bin());
    cmd.args(args)
        .env("KBENCH_DB", db)
        .env("KBENCH_TEST_MARK", mark)
        .env_remove("KBENCH_SYSROOT")
        .stdin(Stdio::null());
    cmd
}

fn output(db: &Path, args: &[&str]) -> Output {
    kbench(db, "none", args).output().unwrap()
}

/// Waits a little for the processes of `mark` to go (the kernel delivers a parent's
/// death signal asynchronously), then lists those that stayed.
fn left_behind(mark: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = processes_marked(mark);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sqlite(db: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(db).unwrap()
}

fn count(db: &Path, sql: &str) -> i64 {
    sqlite(db).query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Runs committed so far, as a reader sees them; 0 before the schema exists.
fn committed_runs(conn: &rusqlite::Connection) -> i64 {
    conn.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap_or(0)
}

/// Checks what every kill must leave: a sound file, every run with its values, and the
/// run indexes of each session without a gap.
fn assert_sound(db: &Path, context: &str) {
    let conn = sqlite(db);
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok", "{context}");
    let without_values = count(
        db,
        "SELECT count(*) FROM runs r WHERE r.error IS NULL AND NOT EXISTS \
         (SELECT 1 FROM run_values v WHERE v.run_id = r.id)",
    );
    assert_eq!(without_values, 0, "{context}: a run without its values");
    let gaps = count(
        db,
        "SELECT count(*) FROM (SELECT session_id, workload, max(run_index) + 1 - count(*) AS gap \
         FROM runs GROUP BY session_id, workload) WHERE gap != 0",
    );
    assert_eq!(gaps, 0, "{context}: a session lost a run in its middle");
}

/// A seeded sequence of delays (xorshift64*): the same moments on every machine.
struct Moments(u64);

impl Moments {
    fn next_ms(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % below
    }
}

#[test]
fn sigkill_at_twenty_seeded_moments_loses_no_committed_run() {
    const SEED: u64 = 20_261_201;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let mut moments = Moments(SEED);
    for kill in 0..20 {
        // From before the database exists to well into the runs.
        let after_ms = moments.next_ms(1500);
        let label = format!("killed-{kill}");
        let mark = format!("{}-kill-{kill}", std::process::id());
        let args = [
            "run",
            "--label",
            &label,
            "--runs",
            "1000",
            "--warmup",
            "1",
            "pipe:-l 2000",
        ];
        let mut child = kbench(&db, &mark, &args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let seen = watch_committed_runs(&db, &mut child, Duration::from_millis(after_ms));
        let context = format!("kill {kill} (seed {SEED}) after {after_ms} ms");
        assert!(db.exists() || seen == 0, "{context}");
        if db.exists() {
            assert_sound(&db, &context);
            let runs = count(&db, "SELECT count(*) FROM runs");
            assert!(
                runs >= seen,
                "{context}: {seen} runs were committed, {runs} are left"
            );
            eprintln!("{context}: {seen} runs seen committed, {runs} in the database");
        }
        assert_eq!(left_behind(&mark), Vec::<String>::new(), "{context}");
    }
    // The database goes on serving: a comparison of two killed sessions, and a new run.
    let labels: Vec<String> = sqlite(&db)
        .prepare(
            "SELECT s.label FROM sessions s JOIN runs r ON r.session_id = s.id \
             WHERE r.warmup = 0 GROUP BY s.label HAVING count(*) >= 3 ORDER BY count(*) DESC LIMIT 2",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(labels.len(), 2, "two killed sessions with runs to compare");
    let compare = output(&db, &["compare", &labels[0], &labels[1]]);
    assert!(compare.status.success(), "{}", text(&compare.stderr));
    let after = output(
        &db,
        &[
            "run",
            "--label",
            "after",
            "--runs",
            "2",
            "--warmup",
            "0",
            "pipe:-l 200",
        ],
    );
    assert!(after.status.success(), "{}", text(&after.stderr));
}

/// Watches the committed runs from another connection until `after`, then SIGKILLs
/// `child`; the most runs seen committed.
fn watch_committed_runs(db: &Path, child: &mut Child, after: Duration) -> i64 {
    let started = Instant::now();
    let mut seen = 0;
    while started.elapsed() < after {
        if db.exists() {
            if let Ok(conn) = rusqlite::Connection::open_with_flags(
                db,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                    | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
            ) {
                seen = seen.max(committed_runs(&conn));
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    seen
}

/// A small tmpfs, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        if !rustix::process::geteuid().is_root() {
            eprintln!("SKIP: mounting a tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "mount a tmpfs");
        Some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn free_bytes(&self) -> u64 {
        let stat = rustix::fs::statvfs(self.path()).unwrap();
        stat.f_bavail * stat.f_frsize
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_disk_fails_the_run_in_one_line_and_the_database_still_compares() {
    let Some(disk) = SmallDisk::mount("4m") else {
        return;
    };
    let db = disk.path().join("k.db");
    let before = output(
        &db,
        &[
            "run",
            "--label",
            "before",
            "--runs",
            "5",
            "--warmup",
            "0",
            "pipe:-l 200",
        ],
    );
    assert!(before.status.success(), "{}", text(&before.stderr));
    // Leave the database a few pages to grow into.
    let filler = disk.path().join("filler");
    let free = disk.free_bytes();
    std::fs::write(&filler, vec![0u8; free.saturating_sub(384 << 10) as usize]).unwrap();
    let started = Instant::now();
    let full = output(
        &db,
        &[
            "run",
            "--label",
            "filling",
            "--runs",
            "100000",
            "--warmup",
            "0",
            "pipe:-l 10",
        ],
    );
    let stderr = text(&full.stderr);
    assert_eq!(full.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("full"), "{stderr}");
    eprintln!("{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "it stopped when the disk filled"
    );
    assert_sound(&db, "after the disk filled");
    let filled = count(&db, "SELECT count(*) FROM runs r JOIN sessions s ON s.id = r.session_id WHERE s.label = 'filling'");
    assert!(
        filled >= 2,
        "{filled} runs went in before the disk was full"
    );
    // Still full: reading needs no space.
    let compare = output(&db, &["compare", "before", "filling"]);
    assert!(compare.status.success(), "{}", text(&compare.stderr));
    assert!(text(&compare.stdout).contains("pipe"));
    // And with the space back, it takes runs again.
    std::fs::remove_file(&filler).unwrap();
    let again = output(
        &db,
        &[
            "run",
            "--label",
            "again",
            "--runs",
            "2",
            "--warmup",
            "0",
            "pipe:-l 200",
        ],
    );
    assert!(again.status.success(), "{}", text(&again.stderr));
}

/// The pids whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let ppid: u32 = stat
                .rsplit(')')
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            let zombie = stat.rsplit(')').next()?.trim_start().starts_with('Z');
            (ppid == parent && !zombie).then_some(pid)
        })
        .collect()
}

/// Waits for a process under `parent` (and, with `depth` 2, under one of its children)
/// other than those in `not`; kills it.
fn kill_descendant(parent: u32, depth: u32, not: &[u32]) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut candidates = children_of(parent);
        if depth == 2 {
            candidates = candidates.into_iter().flat_map(children_of).collect();
        }
        if let Some(&pid) = candidates.iter().find(|p| !not.contains(p)) {
            // Let the run get into its loop first.
            std::thread::sleep(Duration::from_millis(150));
            let pid_t = rustix::process::Pid::from_raw(pid as i32).unwrap();
            let _ = rustix::process::kill_process(pid_t, rustix::process::Signal::KILL);
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "no process to kill under {parent}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_workload_process_killed_mid_run_is_a_failed_run_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let mark = format!("{}-worker", std::process::id());
    let args = [
        "run",
        "--label",
        "w",
        "--runs",
        "4",
        "--warmup",
        "0",
        "pipe:-l 200000",
    ];
    let child = kbench(&db, &mark, &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let coordinator = child.id();
    // First a pipe worker under the run's `kbench bench`, then a `kbench bench` itself.
    let worker = kill_descendant(coordinator, 2, &[]);
    let first_bench = children_of(coordinator);
    let bench = kill_descendant(coordinator, 1, &first_bench);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failed run makes run fail: {stderr}"
    );
    let failed: Vec<String> = sqlite(&db)
        .prepare("SELECT error FROM runs WHERE error IS NOT NULL ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        failed.len(),
        2,
        "worker {worker} and bench {bench}: {failed:?}"
    );
    eprintln!("recorded: {failed:?}");
    assert!(
        failed.iter().all(|e| e.contains("pipe:-l 200000")),
        "{failed:?}"
    );
    // Failures do not count toward --runs: the session went on to its four.
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs WHERE error IS NULL AND warmup = 0"
        ),
        4
    );
    assert!(text(&out.stdout).contains("pipe:-l 200000"), "the summary");
    assert_sound(&db, "after the kills");
    assert_eq!(left_behind(&mark), Vec::<String>::new());
}

/// A perf bench pipe output with its own figure, so that each import is new content.
fn perf_output(i: usize) -> String {
    let usecs = 5.0 + i as f64 / 1000.0;
    format!(
        "# Running 'sched/pipe' benchmark:\n# Executed 1000000 pipe operations between two processes\n\n     Total time: {:.3} [sec]\n\n       {usecs:.6} usecs/op\n         {} ops/sec\n",
        usecs,
        (1e6 / usecs) as u64
    )
}

#[test]
fn a_second_writer_all_along_loses_nothing_on_either_side() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let mark = format!("{}-writers", std::process::id());
    let args = [
        "run",
        "--label",
        "main",
        "--runs",
        "30",
        "--warmup",
        "0",
        "pipe:-l 500",
        "messaging:-g 1 -l 2",
    ];
    let mut main = kbench(&db, &mark, &args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let running = Arc::new(AtomicBool::new(true));
    let imported = Arc::new(AtomicI64::new(0));
    let side = {
        let (db, running, imported) = (db.clone(), running.clone(), imported.clone());
        std::thread::spawn(move || {
            let mut i = 0;
            while running.load(Ordering::Relaxed) {
                let file = db.with_file_name(format!("perf-{i}.txt"));
                std::fs::write(&file, perf_output(i)).unwrap();
                let out = output(&db, &["import", file.to_str().unwrap(), "--label", "side"]);
                assert!(out.status.success(), "import {i}: {}", text(&out.stderr));
                imported.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
        })
    };
    let status = main.wait().unwrap();
    running.store(false, Ordering::Relaxed);
    side.join().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(main.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    let side_runs = imported.load(Ordering::Relaxed);
    assert!(
        side_runs >= 3,
        "the second writer wrote all along: {side_runs} imports"
    );
    eprintln!("{side_runs} imports beside the run");
    let runs_of = |label: &str| {
        count(
            &db,
            &format!("SELECT count(*) FROM runs r JOIN sessions s ON s.id = r.session_id WHERE s.label = '{label}'"),
        )
    };
    assert_eq!(runs_of("main"), 60);
    assert_eq!(runs_of("side"), side_runs);
    assert_sound(&db, "after two writers");
}

#[test]
fn a_command_that_hangs_is_killed_at_run_timeout_with_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let mark = format!("{}-hang", std::process::id());
    // The shell waits on one sleep and leaves another in the background.
    let started = Instant::now();
    let out = kbench(
        &db,
        &mark,
        &[
            "exec",
            "--label",
            "hang",
            "--runs",
            "2",
            "--run-timeout",
            "1",
            "--",
            "sh",
            "-c",
            "sleep 1000 & sleep 1000",
        ],
    )
    .output()
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("timed out after 1 s"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs WHERE error LIKE '%timed out after 1 s%'"
        ),
        2
    );
    assert_eq!(
        left_behind(&mark),
        Vec::<String>::new(),
        "the sleeps were left running"
    );

    let ab = kbench(
        &db,
        &mark,
        &[
            "ab",
            "sleep 1000",
            "true",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--run-timeout",
            "1",
            "--label-a",
            "ha",
            "--label-b",
            "hb",
        ],
    )
    .output()
    .unwrap();
    assert!(
        text(&ab.stderr).contains("timed out after 1 s"),
        "{}",
        text(&ab.stderr)
    );
    assert_eq!(left_behind(&mark), Vec::<String>::new());
}

/// What kbench's standard streams are, for one invocation.
#[derive(Debug, Clone, Copy)]
enum Streams {
    /// Every stream as a test sees it: the reference exit status.
    Open,
    /// stdout closed before kbench starts (`>&-`).
    StdoutClosed,
    /// stdout a pipe nobody reads (`| true`, `| head -0`).
    StdoutBroken,
    StderrClosed,
    StderrBroken,
}

/// Runs kbench with its streams as `streams` says, through a shell for the closed ones.
fn run_with(streams: Streams, db: &Path, dir: &Path, args: &[String]) -> Output {
    let mut cmd = match streams {
        Streams::StdoutClosed | Streams::StderrClosed => {
            let redirect = if matches!(streams, Streams::StdoutClosed) {
                ">&-"
            } else {
                "2>&-"
            };
            let mut cmd = Command::new("sh");
            cmd.arg("-c")
                .arg(format!("exec \"$0\" \"$@\" {redirect}"))
                .arg(kbench_bin())
                .args(args);
            cmd
        }
        _ => {
            let mut cmd = Command::new(kbench_bin());
            cmd.args(args);
            cmd
        }
    };
    cmd.current_dir(dir)
        .env("KBENCH_DB", db)
        .stdin(Stdio::null());
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    match streams {
        Streams::StdoutBroken => drop(child.stdout.take()),
        Streams::StderrBroken => drop(child.stderr.take()),
        _ => {}
    }
    child.wait_with_output().unwrap()
}

#[test]
fn closed_or_broken_standard_streams_change_no_command_s_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    for (file, label) in [
        ("perf_bench_pipe.txt", "demo"),
        ("perf_bench_simple.txt", "other"),
    ] {
        let out = output(
            &db,
            &["import", fixture(file).to_str().unwrap(), "--label", label],
        );
        assert!(out.status.success());
    }
    std::fs::write(dir.path().join("a.txt"), "1\n2\n3\n4\n5\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "2\n3\n4\n5\n6\n").unwrap();
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kbench-trace/tests/fixtures/ftrace-x86.trace");
    let commands: Vec<Vec<String>> = [
        "list",
        "show demo",
        "export demo",
        "export demo --format csv",
        "compare demo other",
        "compare demo other --format json",
        "compare demo other --format html",
        "report demo other",
        "plausible demo --saving ipi=100",
        "stat a.txt b.txt",
        "env",
        "completions bash",
        "manpage",
        "bench sched pipe -l 100",
        "bench --json sched messaging -g 1 -l 2",
        "run --label r --runs 1 --warmup 0 pipe:-l100",
        "exec --label e --runs 1 -- true",
        "ab true true --runs 1 --warmup 0 --label-a aa --label-b ab",
        "calibrate --show",
        "show nosuch",
        "initramfs --init /bin/true --compress none -o i.img",
        "nosuchcommand",
        "--help",
        "--version",
    ]
    .iter()
    .map(|c| c.split(' ').map(str::to_string).collect())
    .chain(std::iter::once(vec![
        "import-trace".into(),
        trace.display().to_string(),
        "--label".into(),
        "t{n}".into(),
    ]))
    .collect();
    let mut failures = Vec::new();
    // `{n}`: a label of its own for each try, where a second import would be refused.
    let numbered = |args: &[String], n: usize| -> Vec<String> {
        args.iter()
            .map(|a| a.replace("{n}", &n.to_string()))
            .collect()
    };
    for args in &commands {
        let reference = run_with(Streams::Open, &db, dir.path(), &numbered(args, 0))
            .status
            .code();
        let broken = [
            Streams::StdoutClosed,
            Streams::StdoutBroken,
            Streams::StderrClosed,
            Streams::StderrBroken,
        ];
        for (n, streams) in broken.into_iter().enumerate() {
            let out = run_with(streams, &db, dir.path(), &numbered(args, n + 1));
            let stderr = text(&out.stderr);
            if out.status.code() != reference || stderr.contains("panicked") {
                failures.push(format!(
                    "{args:?} {streams:?}: exit {:?}, not {reference:?}: {stderr}",
                    out.status.code()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
