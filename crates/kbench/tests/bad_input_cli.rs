//! Bad input of every kind, in one table: options and values, files, databases,
//! labels and machines. Every case answers with one line on stderr (no control
//! character from the input in it) and its exit status: 2 for the user's input, 1 for
//! a workload the machine cannot run, 0 for a run that goes on without what the
//! machine lacks. None panics, changes the database it was given, or leaves a
//! process behind.
mod common;
use common::{import_fixture, kbench_bin, kbench_command, kbench_on, processes_marked, text};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The database a case is given as `$KBENCH_DB`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Db {
    /// A kbench database with labels `demo` and `other`, imported perf bench runs.
    Good,
    /// No file at the path (a fresh path in the case's directory).
    Absent,
    /// A path in a directory that does not exist.
    MissingDir,
    /// Text, not SQLite.
    NotSqlite,
    /// A kbench database from a newer kbench (a higher schema version).
    Newer,
    /// The first half of [`Db::Good`]'s pages.
    Truncated,
    /// [`Db::Good`], its write lock held by another connection past the busy timeout.
    Locked,
    /// [`Db::Good`], read-only to the (unprivileged) user kbench runs as.
    ReadOnly,
    /// A directory.
    Directory,
    /// A file of no bytes.
    Empty,
}

/// The machine root a case runs under (`$KBENCH_SYSROOT`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Machine {
    Host,
    /// This machine's /proc and /sys without the file or directory named.
    Without(&'static str),
}

struct Case {
    args: &'static [&'static str],
    db: Db,
    machine: Machine,
    stdin: &'static [u8],
    code: i32,
    /// What the line says, in part (case-insensitive).
    says: &'static str,
}

const fn case(args: &'static [&'static str], code: i32, says: &'static str) -> Case {
    Case {
        args,
        db: Db::Good,
        machine: Machine::Host,
        stdin: b"",
        code,
        says,
    }
}

const fn with_db(db: Db, args: &'static [&'static str], says: &'static str) -> Case {
    Case {
        db,
        ..case(args, 2, says)
    }
}

const fn on_machine(
    machine: Machine,
    args: &'static [&'static str],
    code: i32,
    says: &'static str,
) -> Case {
    Case {
        machine,
        ..case(args, code, says)
    }
}

/// `{F}` in an argument is replaced by the path of file F in the case's directory (see
/// [`write_files`]).
const CASES: &[Case] = &[
    // Options and their values.
    case(&["nosuchcommand"], 2, "unrecognized subcommand"),
    case(&["--bogus"], 2, "unexpected argument"),
    case(
        &["run", "--label", "x", "--runs", "abc", "pipe"],
        2,
        "invalid value",
    ),
    case(
        &["run", "--label", "x", "--runs", "-1", "pipe"],
        2,
        "--runs",
    ),
    case(&["run", "--label", "x", "--runs", "0", "pipe"], 2, "--runs"),
    case(
        &["run", "--label", "x", "--warmup", "99999999999", "pipe"],
        2,
        "--warmup",
    ),
    case(
        &["run", "--label", "x", "--precision", "0", "pipe"],
        2,
        "--precision",
    ),
    case(
        &[
            "run",
            "--label",
            "x",
            "--precision",
            "2",
            "--max-time",
            "-5",
            "pipe",
        ],
        2,
        "--max-time",
    ),
    case(
        &["run", "--label", "x", "--run-timeout", "0", "pipe"],
        2,
        "--run-timeout",
    ),
    case(
        &["run", "--label", "x", "--run-timeout", "nan", "pipe"],
        2,
        "--run-timeout",
    ),
    case(&["run", "--label", "x", "--cpus", "5-2", "pipe"], 2, "5-2"),
    case(
        &["run", "--label", "x", "--cpus", "class:nosuch", "pipe"],
        2,
        "nosuch",
    ),
    case(&["run", "--label", "x", "--cpus", "", "pipe"], 2, "cpu"),
    case(
        &["run", "--label", "x", "--seed", "-3", "pipe"],
        2,
        "--seed",
    ),
    case(&["run", "--label", "x", "pipe:-l"], 2, "-l"),
    case(&["run", "--label", "x", "pipe:--bogus"], 2, "bogus"),
    case(
        &["run", "--label", "x", "nosuchworkload"],
        2,
        "nosuchworkload",
    ),
    case(
        &["run", "--label", "x", "pipe:-l 99999999999999999999999"],
        2,
        "-l",
    ),
    case(
        &["compare", "demo", "other", "--delta", "abc"],
        2,
        "--delta",
    ),
    case(&["compare", "demo", "other", "--delta", "-1"], 2, "delta"),
    case(
        &["compare", "demo", "other", "--alpha", "1.5"],
        2,
        "--alpha",
    ),
    case(&["ab", "pipe", "pipe", "--alpha", "0"], 2, "--alpha"),
    case(&["compare", "demo", "other", "--format", "xml"], 2, "xml"),
    case(
        &["compare", "demo", "other", "--fail-on", "sometimes"],
        2,
        "sometimes",
    ),
    case(
        &["compare", "demo", "other", "--saving", "ipi=abc"],
        2,
        "ipi=abc",
    ),
    case(&["compare", "demo", "demo"], 2, "both"),
    case(
        &[
            "compare",
            "demo",
            "other",
            "--machine",
            "m",
            "--across-machines",
        ],
        2,
        "cannot be used with",
    ),
    case(
        &["compare", "demo", "other", "--machine", "nowhere"],
        2,
        "no runs on machine 'nowhere'",
    ),
    case(&["push", "nosuch", "--to", "{out.db}"], 2, "nosuch"),
    case(
        &["push", "--to", "postgres://kbench@127.0.0.1:1/x"],
        2,
        "cannot connect",
    ),
    case(
        &[
            "list",
            "--db",
            "postgres://kbench@127.0.0.1:1/x?sslmode=bogus",
        ],
        2,
        "sslmode=bogus",
    ),
    case(
        &[
            "list",
            "--db",
            "postgres://kbench@127.0.0.1:1/x?sslrootcert=/ca.pem",
        ],
        2,
        "sslmode=require",
    ),
    case(
        &["list", "--db", "postgres://kbench:secret@127.0.0.1:1/x"],
        2,
        "kbench:***@",
    ),
    case(&["compare", "demo", "nosuch"], 2, "nosuch"),
    case(
        &["plausible", "demo", "--saving", "nosuchevent=5"],
        2,
        "nosuchevent",
    ),
    case(&["plausible", "demo"], 2, "saving"),
    case(&["report", "demo", "demo"], 2, "both"),
    case(
        &["report", "demo", "other", "-o", "/nonexistent/dir/r.html"],
        2,
        "/nonexistent/dir",
    ),
    case(&["show", "nosuch"], 2, "nosuch"),
    case(&["export", "demo", "--format", "yaml"], 2, "yaml"),
    case(
        &["stat", "{numbers}", "{numbers}", "--alpha", "2"],
        2,
        "alpha",
    ),
    case(
        &["stat", "{numbers}", "{numbers}", "--delta", "-1"],
        2,
        "delta",
    ),
    case(&["exec", "--label", "x"], 2, "required"),
    case(
        &["exec", "--label", "x", "--runs", "0", "--", "true"],
        2,
        "--runs",
    ),
    case(
        &["exec", "--label", "x", "--run-timeout", "-1", "--", "true"],
        2,
        "--run-timeout",
    ),
    case(
        &["exec", "--label", "x", "--", "/nonexistent/command"],
        2,
        "/nonexistent/command",
    ),
    case(&["ab", "pipe:-l 10", ""], 2, "empty"),
    case(
        &["ab", "pipe:-l 10", "pipe:-l 10", "--runs", "0"],
        2,
        "--runs",
    ),
    case(&["calibrate", "--sessions", "0"], 2, "--sessions"),
    case(&["calibrate", "--show"], 2, "calibration"),
    case(
        &[
            "vm-ab",
            "--kernel-a",
            "/nonexistent/a",
            "--kernel-b",
            "/nonexistent/b",
        ],
        2,
        "/nonexistent/a",
    ),
    case(
        &["vm-ab", "--kernel-a", "{empty}", "--kernel-b", "{empty}"],
        2,
        "empty",
    ),
    case(
        &[
            "vm-ab",
            "--kernel-a",
            "{binary}",
            "--kernel-b",
            "{binary}",
            "--boots",
            "0",
        ],
        2,
        "--boots",
    ),
    case(&["lava-job", "--kernel-a", "http://x/a"], 2, "required"),
    case(
        &["initramfs", "-o", "/nonexistent/dir/initrd.img"],
        2,
        "/nonexistent/dir",
    ),
    case(
        &["initramfs", "-o", "{dir}/i.img", "--add", "/nonexistent:/x"],
        2,
        "/nonexistent",
    ),
    case(
        &["initramfs", "-o", "{dir}/i.img", "--compress", "zstd"],
        2,
        "zstd",
    ),
    case(&["env", "--sysroot", "/nonexistent"], 2, "/nonexistent"),
    case(&["completions", "nosuchshell"], 2, "nosuchshell"),
    case(
        &["import-trace", "{perf}", "--label", "x", "--pid", "abc"],
        2,
        "abc",
    ),
    // Files: empty, binary, one huge line, truncated JSON, UTF-16, a directory.
    case(&["import", "{empty}", "--label", "x"], 2, "empty"),
    case(&["import", "{binary}", "--label", "x"], 2, "binary"),
    case(&["import", "{huge}", "--label", "x"], 2, "huge"),
    case(
        &["import", "{truncated.json}", "--label", "x"],
        2,
        "truncated.json",
    ),
    case(&["import", "{utf16}", "--label", "x"], 2, "utf16"),
    case(&["import", "{subdir}", "--label", "x"], 2, "subdir"),
    case(
        &["import", "/nonexistent/file", "--label", "x"],
        2,
        "/nonexistent/file",
    ),
    Case {
        stdin: b"\x00\x01\x02\xff\xfe binary on standard input\n",
        ..case(&["import", "-", "--label", "x"], 2, "standard input")
    },
    case(&["import-console", "{empty}", "--label", "x"], 2, "empty"),
    case(&["import-console", "{binary}", "--label", "x"], 2, "binary"),
    case(&["import-console", "{huge}", "--label", "x"], 2, "huge"),
    case(
        &["import-console", "{truncated.json}", "--label", "x"],
        2,
        "truncated.json",
    ),
    case(&["import-console", "{utf16}", "--label", "x"], 2, "utf16"),
    case(&["import-console", "{subdir}", "--label", "x"], 2, "subdir"),
    case(&["import-trace", "{empty}", "--label", "x"], 2, "empty"),
    case(&["import-trace", "{binary}", "--label", "x"], 2, "binary"),
    case(&["import-trace", "{huge}", "--label", "x"], 2, "huge"),
    case(
        &["import-trace", "{truncated.json}", "--label", "x"],
        2,
        "truncated.json",
    ),
    case(&["import-trace", "{utf16}", "--label", "x"], 2, "utf16"),
    case(&["import-trace", "{subdir}", "--label", "x"], 2, "subdir"),
    case(&["stat", "{empty}", "{numbers}"], 2, "empty"),
    case(&["stat", "{binary}", "{numbers}"], 2, "binary"),
    case(&["stat", "{huge}", "{numbers}"], 2, "huge"),
    case(&["stat", "{numbers}", "{utf16}"], 2, "utf16"),
    case(&["stat", "{numbers}", "{subdir}"], 2, "subdir"),
    // Databases.
    with_db(Db::Absent, &["list"], "no kbench database"),
    with_db(Db::Absent, &["show", "demo"], "no kbench database"),
    with_db(
        Db::Absent,
        &["compare", "demo", "other"],
        "no kbench database",
    ),
    with_db(Db::MissingDir, &["list"], "no kbench database"),
    with_db(Db::MissingDir, &["export", "demo"], "no kbench database"),
    with_db(
        Db::MissingDir,
        &["plausible", "demo", "--saving", "ipi=100"],
        "no kbench database",
    ),
    with_db(Db::NotSqlite, &["list"], "not a"),
    with_db(
        Db::NotSqlite,
        &["import", "{perf}", "--label", "x"],
        "not a",
    ),
    with_db(
        Db::NotSqlite,
        &["run", "--label", "x", "--runs", "1", "pipe:-l 10"],
        "not a",
    ),
    with_db(Db::Newer, &["show", "demo"], "newer"),
    with_db(Db::Newer, &["import", "{perf}", "--label", "x"], "newer"),
    with_db(Db::Truncated, &["list"], "malformed"),
    with_db(Db::Truncated, &["compare", "demo", "other"], "malformed"),
    with_db(
        Db::Truncated,
        &["import", "{perf}", "--label", "x"],
        "malformed",
    ),
    with_db(Db::Locked, &["import", "{perf}", "--label", "x"], "locked"),
    with_db(
        Db::Locked,
        &["exec", "--label", "x", "--runs", "1", "--", "true"],
        "locked",
    ),
    with_db(
        Db::ReadOnly,
        &["import", "{perf}", "--label", "x"],
        "read-only",
    ),
    with_db(
        Db::ReadOnly,
        &["exec", "--label", "x", "--runs", "1", "--", "true"],
        "read-only",
    ),
    with_db(Db::Directory, &["list"], "directory"),
    with_db(
        Db::Directory,
        &["run", "--label", "x", "--runs", "1", "pipe:-l 10"],
        "directory",
    ),
    with_db(Db::Empty, &["show", "demo"], "empty file"),
    // Labels with control characters.
    case(&["run", "--label", "a\u{1}b", "pipe:-l 10"], 2, "bad label"),
    case(&["import", "{perf}", "--label", "x\ny"], 2, "bad label"),
    case(
        &["exec", "--label", "\u{1b}[31mred", "--", "true"],
        2,
        "bad label",
    ),
    case(&["compare", "a\nb", "demo"], 2, "a\\nb"),
    case(&["show", "\u{7}bell"], 2, "\\u{7}bell"),
    case(
        &["ab", "--label-a", "a\tb", "pipe:-l 10", "pipe:-l 10"],
        2,
        "bad label",
    ),
    // Machines without /proc/interrupts, tracefs or perf events.
    on_machine(
        Machine::Without("proc/interrupts"),
        &[
            "run",
            "--label",
            "x",
            "--runs",
            "1",
            "--warmup",
            "0",
            "pipe:-l 100",
        ],
        0,
        "no IRQs or IPIs",
    ),
    on_machine(
        Machine::Without("sys/kernel/tracing"),
        &["bench", "sched", "wakeup", "--trace", "--wakes", "10"],
        1,
        "tracefs is not available",
    ),
    on_machine(
        Machine::Without("proc/sys/kernel/perf_event_paranoid"),
        &["bench", "--counters", "sched", "pipe", "-l", "100"],
        2,
        "without perf events",
    ),
    on_machine(
        Machine::Without("proc/sys/kernel/perf_event_paranoid"),
        &["run", "--label", "x", "--counters", "pipe:-l 100"],
        2,
        "without perf events",
    ),
    case(&["env", "--sysroot", "{subdir}"], 2, "not a machine root"),
];

/// The input files every case can name: `{empty}`, `{binary}`, `{huge}` (one 8 MiB
/// line), `{truncated.json}` (a kbench export cut in half), `{utf16}` (perf bench
/// output in UTF-16), `{subdir}`, `{numbers}` (a good stat file), `{perf}` (good perf
/// bench output) and `{dir}` itself.
fn write_files(dir: &Path, export_json: &str) {
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();
    write("empty", b"");
    // Seeded bytes: every value, NULs and invalid UTF-8 among them.
    let mut state = 0x2026_1201_u32;
    let binary: Vec<u8> = (0..4096)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect();
    write("binary", &binary);
    write("huge", &vec![b'7'; 8 << 20]);
    write(
        "truncated.json",
        &export_json.as_bytes()[..export_json.len() / 2],
    );
    let perf = std::fs::read_to_string(import_fixture("perf_bench_pipe.txt")).unwrap();
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(perf.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    write("utf16", &utf16);
    write("perf", perf.as_bytes());
    write("numbers", b"1.0\n1.1\n0.9\n1.05\n0.95\n");
    std::fs::create_dir(dir.join("subdir")).unwrap();
}

fn substitute(arg: &str, dir: &Path) -> String {
    if arg == "{dir}/i.img" {
        return dir.join("i.img").display().to_string();
    }
    match arg.strip_prefix('{').and_then(|a| a.strip_suffix('}')) {
        Some(name) => dir.join(name).display().to_string(),
        None => arg.to_string(),
    }
}

/// A kbench database with two labels, made once by kbench itself.
fn good_database(dir: &Path) -> (PathBuf, String) {
    let db = dir.join("good.db");
    for (file, label) in [
        ("perf_bench_pipe.txt", "demo"),
        ("perf_bench_simple.txt", "other"),
    ] {
        let out = kbench_on(
            &db,
            &[
                "import",
                import_fixture(file).to_str().unwrap(),
                "--label",
                label,
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let export = kbench_on(&db, &["export", "demo"]);
    // Everything in the main file, so that a copy of it alone is the whole database.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;")
        .unwrap();
    (db, text(&export.stdout))
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Makes the case's database; returns its path.
fn make_db(kind: Db, good: &Path, dir: &Path) -> PathBuf {
    let path = dir.join("k.db");
    match kind {
        Db::Good | Db::Locked | Db::ReadOnly => {
            std::fs::copy(good, &path).unwrap();
        }
        Db::Absent => {}
        Db::MissingDir => return dir.join("no-such-dir").join("k.db"),
        Db::NotSqlite => std::fs::write(
            &path,
            "not SQLite: a text file long enough to have a header\n".repeat(20),
        )
        .unwrap(),
        Db::Newer => {
            std::fs::copy(good, &path).unwrap();
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch("PRAGMA user_version = 999").unwrap();
        }
        Db::Truncated => {
            let bytes = std::fs::read(good).unwrap();
            std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        }
        Db::Directory => std::fs::create_dir(&path).unwrap(),
        Db::Empty => std::fs::write(&path, b"").unwrap(),
    }
    if kind == Db::ReadOnly {
        set_mode(&path, 0o444);
        set_mode(dir, 0o555);
    }
    path
}

/// What a case must leave as it was: the rows of a kbench database, or a file's bytes.
fn db_state(path: &Path) -> String {
    let rows = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|conn| {
            conn.query_row(
                "SELECT (SELECT count(*) FROM sessions) || ' sessions, ' || \
                 (SELECT count(*) FROM runs) || ' runs, ' || (SELECT count(*) FROM run_values) || ' values'",
                [],
                |r| r.get::<_, String>(0),
            )
        });
    match rows {
        Ok(rows) => rows,
        Err(_) => match std::fs::read(path) {
            Ok(bytes) => format!("{} bytes, {:x}", bytes.len(), crc(&bytes)),
            Err(_) => "no file".to_string(),
        },
    }
}

fn crc(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// This machine's root, less one path: /proc and /sys linked entry by entry, down
/// the path to what is left out.
fn machine_without(missing: &str, dir: &Path) -> PathBuf {
    let root = dir.join("machine");
    let parts: Vec<&str> = missing.split('/').collect();
    let mut host = PathBuf::from("/");
    let mut here = root.clone();
    for (depth, part) in parts.iter().enumerate() {
        std::fs::create_dir_all(&here).unwrap();
        for entry in std::fs::read_dir(&host).unwrap().flatten() {
            let name = entry.file_name();
            let is_next = name.to_str() == Some(part);
            let wanted = depth > 0 || matches!(name.to_str(), Some("proc" | "sys" | "etc"));
            if is_next || !wanted {
                continue;
            }
            let _ = std::os::unix::fs::symlink(entry.path(), here.join(&name));
        }
        host.push(part);
        here.push(part);
    }
    root
}

/// Holds the write lock of `db` until dropped.
struct Lock(#[allow(dead_code)] rusqlite::Connection);

fn hold_write_lock(db: &Path) -> Lock {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    Lock(conn)
}

fn command_for(case: &Case, db: &Path, dir: &Path, mark: &str) -> Command {
    let args: Vec<String> = case.args.iter().map(|a| substitute(a, dir)).collect();
    let as_nobody = case.db == Db::ReadOnly && rustix::process::geteuid().is_root();
    let mut cmd = if as_nobody {
        let mut cmd = Command::new("setpriv");
        cmd.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            kbench_bin(),
        ]);
        cmd
    } else {
        kbench_command()
    };
    cmd.args(&args)
        .current_dir(dir)
        .env("KBENCH_DB", db)
        .env("KBENCH_TEST_MARK", mark)
        .env("KBENCH_BUSY_TIMEOUT", "0.5")
        .env_remove("KBENCH_SYSROOT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Machine::Without(missing) = case.machine {
        cmd.env("KBENCH_SYSROOT", machine_without(missing, dir));
    }
    cmd
}

/// Runs one case; the reasons it failed, if any.
fn check(index: usize, case: &Case, good: &Path, export_json: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    set_mode(dir.path(), 0o755);
    write_files(dir.path(), export_json);
    let db = make_db(case.db, good, dir.path());
    let before = db_state(&db);
    let lock = (case.db == Db::Locked).then(|| hold_write_lock(&db));
    let mark = format!("{}-{index}", std::process::id());
    let mut child = command_for(case, &db, dir.path(), &mark).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(case.stdin);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    drop(lock);
    let stderr = text(&out.stderr);
    let mut problems = Vec::new();
    if out.status.code() != Some(case.code) {
        problems.push(format!("exit {:?}, not {}", out.status.code(), case.code));
    }
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.len() != 1 || !lines[0].starts_with("kbench: ") {
        problems.push("not one line from kbench on stderr".into());
    }
    if stderr.trim_end_matches('\n').chars().any(char::is_control) {
        problems.push("a control character on stderr".into());
    }
    if !stderr.to_lowercase().contains(&case.says.to_lowercase()) {
        problems.push(format!("does not say {:?}", case.says));
    }
    if stderr.contains("panicked") {
        problems.push("panicked".into());
    }
    if case.code != 0 && db_state(&db) != before {
        problems.push(format!(
            "the database changed: {before} -> {}",
            db_state(&db)
        ));
    }
    if case.db == Db::MissingDir && db.parent().unwrap().exists() {
        problems.push("made the missing directory".into());
    }
    let left = processes_marked(&mark);
    if !left.is_empty() {
        problems.push(format!("left processes: {left:?}"));
    }
    if case.db == Db::ReadOnly {
        set_mode(dir.path(), 0o755);
    }
    problems
        .into_iter()
        .map(|p| format!("{:?}: {p}; stderr: {stderr:?}", case.args))
        .collect()
}

#[test]
fn every_bad_input_gets_one_line_and_its_exit_status() {
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let work = tempfile::tempdir().unwrap();
    let (good, export_json) = good_database(work.path());
    let failures: Vec<String> = CASES
        .iter()
        .enumerate()
        .flat_map(|(i, case)| check(i, case, &good, &export_json))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
