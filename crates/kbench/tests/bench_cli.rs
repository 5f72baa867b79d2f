//! `kbench bench` end to end: real processes, real syscalls, and parity with the real
//! `/usr/bin/perf` (Debian's perf 6.1) where it is installed.
mod common;
use common::{
    bench_record, kbench, kbench_bin, kbench_command, one_line_error, perf_present, text,
    wait_within,
};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn perf(args: &[&str]) -> Output {
    Command::new("/usr/bin/perf")
        .arg("bench")
        .args(args)
        .output()
        .expect("run perf")
}

/// Lengths of the right-aligned per-op lines, whose width perf fixes at 14.
fn fixed_width_lines(s: &str) -> Vec<usize> {
    s.lines()
        .filter(|l| l.ends_with("usecs/op") || l.ends_with("ops/sec"))
        .map(str::len)
        .collect()
}

/// The output with every number replaced by `N` and runs of spaces folded, so
/// layouts can be compared whatever the timings.
fn masked(s: &str) -> String {
    let mut folded = String::new();
    for c in mask_numbers(s).chars() {
        if !(c == ' ' && folded.ends_with(' ')) {
            folded.push(c);
        }
    }
    folded
}

fn mask_numbers(s: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in s.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

#[test]
fn default_and_simple_layouts_match_perf() {
    if !perf_present() {
        return;
    }
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["sched", "messaging", "-g", "2", "-l", "20"],
            &["sched", "messaging", "-g", "2", "-l", "20"],
        ),
        (
            &["sched", "messaging", "-t", "-p", "-g", "1", "-l", "10"],
            &["sched", "messaging", "-t", "-p", "-g", "1", "-l", "10"],
        ),
        (
            &["sched", "messaging", "-g", "0"],
            &["sched", "messaging", "-g", "0"],
        ),
        (
            &["sched", "pipe", "-l", "2000", "--pingpong"],
            &["sched", "pipe", "-l", "2000"],
        ),
        (
            &["sched", "pipe", "-T", "-l", "2000", "--pingpong"],
            &["sched", "pipe", "-T", "-l", "2000"],
        ),
        (
            &["sched", "pipe", "-l", "0", "--pingpong"],
            &["sched", "pipe", "-l", "0"],
        ),
        (
            &["sched", "pipe", "-l", "-5"],
            &["sched", "pipe", "-l", "-5"],
        ),
        (
            &["-f", "simple", "sched", "pipe", "-l", "2000"],
            &["-f", "simple", "sched", "pipe", "-l", "2000"],
        ),
        (
            &["-f", "simple", "sched", "messaging", "-g", "1", "-l", "5"],
            &["-f", "simple", "sched", "messaging", "-g", "1", "-l", "5"],
        ),
        (
            &["-r", "3", "sched", "messaging", "-g", "1", "-l", "5"],
            &["-r", "3", "sched", "messaging", "-g", "1", "-l", "5"],
        ),
        (
            &["sched", "pipe", "--lo", "100", "extra_arg"],
            &["sched", "pipe", "--lo", "100", "extra_arg"],
        ),
    ];
    for (ours, theirs) in cases {
        let mut kb_args = vec!["bench"];
        kb_args.extend_from_slice(ours);
        let kb = kbench(&kb_args);
        let pf = perf(theirs);
        assert_eq!(
            kb.status.code(),
            pf.status.code(),
            "exit of {ours:?}: {}",
            text(&kb.stderr)
        );
        let (kb_out, pf_out) = (text(&kb.stdout), text(&pf.stdout));
        // Pipe's "inf usecs/op" for -l 0 has no number to mask; the rest must agree.
        assert_eq!(masked(&kb_out), masked(&pf_out), "stdout of {ours:?}");
        assert_eq!(
            fixed_width_lines(&kb_out),
            fixed_width_lines(&pf_out),
            "widths of {ours:?}"
        );
        assert_eq!(text(&kb.stderr), text(&pf.stderr), "stderr of {ours:?}");
    }
}

#[test]
fn option_errors_match_perf_byte_for_byte() {
    if !perf_present() {
        return;
    }
    let cases: &[&[&str]] = &[
        &["sched", "messaging", "-g", "-1"],
        &["sched", "messaging", "-g", "abc"],
        &["sched", "messaging", "--nr_loops=abc"],
        &["sched", "messaging", "-thread"],
        &["sched", "messaging", "--bogus"],
        &["sched", "messaging", "-h"],
        &["sched", "messaging", "--list-opts"],
        &["sched", "pipe", "-l", "10abc"],
        &["sched", "pipe", "-l", "0x10"],
        &["sched", "pipe", "--threaded=1"],
        &["sched", "bogus"],
        &["bogus"],
        // After the name kbench takes only its own exact `--json` and `--cpus`:
        // perf's common options, abbreviations and `=` values stay perf's errors.
        &["sched", "messaging", "-f", "simple"],
        &["sched", "messaging", "-r", "1"],
        &["sched", "messaging", "--js"],
        &["sched", "messaging", "--json=1"],
    ];
    for args in cases {
        let mut kb_args = vec!["bench"];
        kb_args.extend_from_slice(args);
        let kb = kbench(&kb_args);
        let pf = perf(args);
        assert_eq!(kb.status.code(), pf.status.code(), "exit of {args:?}");
        assert_eq!(text(&kb.stdout), text(&pf.stdout), "stdout of {args:?}");
        assert_eq!(text(&kb.stderr), text(&pf.stderr), "stderr of {args:?}");
    }
}

#[test]
fn pipe_help_is_perfs_layout_with_the_newer_options() {
    // perf 6.1 lacks -G, -n (6.7, 6.13) and kbench's --pingpong, so only the error
    // line and the lines of the options 6.1 has can be compared.
    if !perf_present() {
        return;
    }
    for args in [
        &["sched", "pipe", "-x"][..],
        &["-f", "simple", "sched", "pipe", "-x"],
    ] {
        let mut kb_args = vec!["bench"];
        kb_args.extend_from_slice(args);
        let (kb, pf) = (kbench(&kb_args), perf(args));
        assert_eq!(kb.status.code(), pf.status.code());
        assert_eq!(text(&kb.stdout), text(&pf.stdout));
        let (ours, theirs) = (text(&kb.stderr), text(&pf.stderr));
        for line in theirs.lines() {
            assert!(
                ours.lines().any(|l| l == line),
                "perf's line {line:?} missing from {ours}"
            );
        }
        assert!(
            ours.contains("    -G, --cgroups <SEND,RECV>\n                          Put sender")
        );
        assert!(ours.contains("        --pingpong        "));
    }
}

#[test]
fn pingpong_does_the_same_context_switches_as_perf_and_symmetric_about_half() {
    if !perf_present() {
        return;
    }
    // Pinned to one CPU every blocking read is a context switch, so the counts are
    // a property of the loop order, not of the scheduler's placement.
    let loops = "20000";
    let switches = |program: &str, args: &[&str]| -> f64 {
        let out = Command::new("taskset")
            .args([
                "-c",
                "0",
                "/usr/bin/perf",
                "stat",
                "-x",
                ",",
                "-e",
                "context-switches",
                "--",
                program,
            ])
            .args(args)
            .output()
            .expect("perf stat");
        let stderr = text(&out.stderr);
        let line = stderr
            .lines()
            .find(|l| l.contains("context-switches"))
            .unwrap_or_else(|| panic!("no count in {stderr}"));
        line.split(',')
            .next()
            .unwrap()
            .parse::<f64>()
            .expect("a count")
    };
    let perf_csw = switches("/usr/bin/perf", &["bench", "sched", "pipe", "-l", loops]);
    let ours_pingpong = switches(
        kbench_bin(),
        &["bench", "sched", "pipe", "-l", loops, "--pingpong"],
    );
    let ours_symmetric = switches(kbench_bin(), &["bench", "sched", "pipe", "-l", loops]);
    let per_op = |c: f64| c / 20_000.0;
    eprintln!(
        "context switches per op: perf {:.3}, kbench --pingpong {:.3}, kbench symmetric {:.3}",
        per_op(perf_csw),
        per_op(ours_pingpong),
        per_op(ours_symmetric)
    );
    let ratio = ours_pingpong / perf_csw;
    assert!(
        (0.9..1.1).contains(&ratio),
        "pingpong/perf switches = {ratio}"
    );
    // Upstream measured about half as many switches unpinned on bare metal; pinned on
    // this kind of VM it is about 0.85. Either way strictly fewer than ping-pong.
    assert!(
        ours_symmetric < 0.95 * ours_pingpong,
        "symmetric should switch less often"
    );
    // kbench's own record counts the same switches through getrusage.
    let rec = bench_record(&["sched", "pipe", "-l", loops, "--pingpong"]);
    assert_eq!(rec["variant"], "pingpong");
    let recorded = [
        "self_voluntary_csw",
        "self_involuntary_csw",
        "children_voluntary_csw",
        "children_involuntary_csw",
    ]
    .iter()
    .map(|k| rec["rusage"][k].as_u64().unwrap())
    .sum::<u64>();
    assert!(recorded > 0);
}

#[test]
fn messaging_moves_groups_x_20_x_20_x_loops_x_100_bytes() {
    for (groups, loops, extra) in [
        (1u64, 7u64, &[][..]),
        (2, 5, &["-p"][..]),
        (2, 3, &["-t"][..]),
        (1, 4, &["-t", "-p"][..]),
    ] {
        let (g, l) = (groups.to_string(), loops.to_string());
        let mut args = vec!["sched", "messaging", "-g", &g, "-l", &l];
        args.extend_from_slice(extra);
        let rec = bench_record(&args);
        assert_eq!(
            rec["bytes_transferred"].as_u64(),
            Some(groups * 20 * 20 * loops * 100),
            "{args:?}"
        );
        assert_eq!(rec["tasks"].as_array().unwrap().len() as u64, groups * 40);
        assert!(rec["total_ns"].as_u64().unwrap() > 0);
    }
}

#[test]
fn json_record_carries_parameters_variant_rusage_cpus_and_timestamps() {
    let rec = bench_record(&["sched", "pipe", "-l", "3000", "-T"]);
    assert_eq!(rec["workload"], "sched/pipe");
    assert_eq!(rec["variant"], "symmetric");
    assert_eq!(rec["params"]["loop"], 3000);
    assert_eq!(rec["params"]["threaded"], true);
    assert_eq!(rec["ops"], 3000);
    let usecs = rec["usecs_per_op"].as_f64().unwrap();
    let total_ns = rec["total_ns"].as_f64().unwrap();
    assert!((usecs - total_ns / 1e3 / 3000.0).abs() < 1e-6);
    assert!(rec["end_unix_ns"].as_u64() > rec["start_unix_ns"].as_u64());
    assert_eq!(rec["tasks"].as_array().unwrap().len(), 2);
    assert!(!rec["cpus_used"].as_array().unwrap().is_empty());
    assert!(rec["rusage"]["self_voluntary_csw"].as_u64().unwrap() > 0);
}

#[test]
fn pinned_run_records_only_the_pinned_cpu() {
    let out = Command::new("taskset")
        .args([
            "-c",
            "1",
            kbench_bin(),
            "bench",
            "--json",
            "sched",
            "pipe",
            "-l",
            "2000",
        ])
        .output()
        .expect("taskset");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["cpus_used"], serde_json::json!([1]));
    for task in rec["tasks"].as_array().unwrap() {
        assert_eq!(task["cpus"], serde_json::json!([1]));
    }
}

/// The CPUs a run's record says its tasks were seen on: all of them, then per task.
fn cpus_seen(rec: &serde_json::Value) -> (serde_json::Value, Vec<serde_json::Value>) {
    let per_task = rec["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["cpus"].clone())
        .collect();
    (rec["cpus_used"].clone(), per_task)
}

#[test]
fn json_and_cpus_are_taken_after_the_benchmark_name() {
    let out = kbench(&["bench", "sched", "pipe", "-l", "2000", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON record");
    assert_eq!(rec["workload"], "sched/pipe");
    assert_eq!(rec["ops"], 2000);
    for cpus in [&["--cpus", "0"][..], &["--cpus=0"]] {
        let mut args = vec!["bench", "sched", "pipe", "-l", "1000"];
        args.extend_from_slice(cpus);
        args.push("--json");
        let out = kbench(&args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let (all, per_task) = cpus_seen(&rec);
        assert_eq!(all, serde_json::json!([0]), "{args:?}");
        assert!(per_task.iter().all(|cpus| *cpus == serde_json::json!([0])));
    }
}

#[test]
fn words_after_double_dash_are_not_kbench_options() {
    let out = kbench(&["bench", "sched", "pipe", "-l", "100", "--", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("# Running 'sched/pipe' benchmark:"));
}

#[test]
fn cpus_given_twice_is_refused_before_anything_runs() {
    let cases: &[&[&str]] = &[
        &[
            "bench", "--cpus", "0", "sched", "pipe", "-l", "100", "--cpus", "1",
        ],
        &[
            "bench", "sched", "pipe", "--cpus=0", "-l", "100", "--cpus", "0",
        ],
        &[
            "bench", "--cpus", "0", "--cpus", "1", "sched", "pipe", "-l", "100",
        ],
    ];
    for args in cases {
        let out = kbench(args);
        let stderr = one_line_error(&out, 2, args);
        assert!(out.stdout.is_empty(), "{args:?} ran: {}", text(&out.stdout));
        assert!(stderr.contains("--cpus given more than once"), "{stderr}");
    }
    let missing = kbench(&["bench", "sched", "pipe", "-l", "100", "--cpus"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(text(&missing.stderr).lines().count(), 1);
}

#[test]
fn seccomp_notify_runs_unprivileged_semantics_and_sync_mode() {
    for args in [
        &["sched", "seccomp-notify", "-l", "2000"][..],
        &["sched", "seccomp-notify", "-l", "2000", "-s"],
    ] {
        let rec = bench_record(args);
        assert_eq!(rec["ops"], 2000);
        assert_eq!(rec["params"]["sync-mode"], args.len() == 5);
        let tasks = rec["tasks"].as_array().unwrap();
        assert_eq!(tasks[0]["task"], "supervisor");
        assert!(
            !tasks[1]["cpus"].as_array().unwrap().is_empty(),
            "the target recorded its CPUs"
        );
    }
    // The coordinator is not left filtered: a second benchmark in the same process
    // (sched all runs seccomp-notify then exits; here pipe after it) is unaffected.
    let out = kbench(&[
        "bench",
        "-f",
        "simple",
        "sched",
        "seccomp-notify",
        "-l",
        "100",
    ]);
    assert!(out.status.success());
}

#[test]
fn nonblocking_pipe_runs_through_epoll() {
    let rec = bench_record(&["sched", "pipe", "-n", "-l", "2000"]);
    assert_eq!(rec["params"]["nonblocking"], true);
    assert_eq!(rec["ops"], 2000);
}

#[test]
fn sched_without_a_benchmark_lists_every_benchmark() {
    // `sched all` itself runs every benchmark with perf's defaults (a minute here);
    // its banners are covered by the format tests, its workloads by the single runs.
    let out = kbench(&["bench", "sched"]);
    let listing = text(&out.stdout);
    for name in ["messaging", "pipe", "seccomp-notify", "all"] {
        assert!(listing.contains(&format!("{name}: ")), "{listing}");
    }
}

#[test]
fn bad_values_are_errors_never_panics() {
    let cases: &[&[&str]] = &[
        &["bench", "-f", "bogus", "sched", "pipe"],
        &["bench", "-r", "0", "sched", "pipe"],
        &["bench", "sched", "pipe", "-G", "nocomma", "-l", "10"],
        &[
            "bench",
            "sched",
            "pipe",
            "-G",
            "does-not-exist-a,does-not-exist-b",
            "-l",
            "10",
        ],
        &["bench", "sched", "messaging", "-g", "99999999999"],
        &["bench", "sched", "seccomp-notify", "-l", "-1"],
        &["bench", "sched", "pipe", "-l"],
    ];
    for args in cases {
        let out = kbench(args);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            !stderr.is_empty() || !out.stdout.is_empty(),
            "{args:?} said nothing"
        );
    }
    let bogus = kbench(&["bench", "-f", "bogus", "sched", "pipe"]);
    assert_eq!(bogus.status.code(), Some(2));
    assert_eq!(text(&bogus.stderr).lines().count(), 1);
}

#[test]
fn lowered_nofile_limit_is_refused_before_any_fork() {
    // strace shows whether a clone/fork happened at all.
    let strace = Path::new("/usr/bin/strace").exists();
    let trace = tempfile::NamedTempFile::new().unwrap();
    let trace_path = trace.path().to_str().unwrap().to_string();
    let script = if strace {
        format!(
            "ulimit -n 24; exec strace -f -qq -e trace=fork,vfork,clone,clone3 -o {trace_path} {} bench sched messaging -g 3 -l 1",
            kbench_bin()
        )
    } else {
        eprintln!("strace missing: checking the message only");
        format!(
            "ulimit -n 24; exec {} bench sched messaging -g 3 -l 1",
            kbench_bin()
        )
    };
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("RLIMIT_NOFILE is 24"), "{stderr}");
    assert!(stderr.contains("needs "), "{stderr}");
    if strace {
        let forks = std::fs::read_to_string(&trace_path).unwrap();
        assert!(
            !forks.contains("clone") && !forks.contains("fork"),
            "forked: {forks}"
        );
    }
    // Thread mode needs 40 descriptors a group.
    let out = Command::new("sh")
        .args([
            "-c",
            &format!(
                "ulimit -n 100; exec {} bench sched messaging -t -g 3 -l 1",
                kbench_bin()
            ),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("RLIMIT_NOFILE is 100"));
}

/// Pids whose parent is `parent`, from /proc.
fn children_of(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_string))
                })
                .flatten()
                .and_then(|ppid| ppid.parse::<u32>().ok())
                == Some(parent)
        })
        .collect()
}

/// A pid is gone when /proc has no entry, or only a zombie waiting for init.
fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next().map(|s| s == "Z" || s == "X"))
            .unwrap_or(true),
    }
}

fn wait_until(deadline: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Starts a long 10-group messaging run and waits until all 400 workers exist.
fn start_long_messaging() -> (std::process::Child, Vec<u32>) {
    let child = kbench_command()
        .args(["bench", "sched", "messaging", "-g", "10", "-l", "1000000"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut workers = Vec::new();
    assert!(
        wait_until(Duration::from_secs(30), || {
            workers = children_of(pid);
            workers.len() == 400
        }),
        "saw {} workers",
        workers.len()
    );
    (child, workers)
}

#[test]
fn sigint_and_sigterm_kill_and_reap_every_worker() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let (mut child, workers) = start_long_messaging();
        std::thread::sleep(Duration::from_millis(200));
        // SAFETY: plain kill(2) of our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        assert_eq!(
            status.code(),
            Some(128 + signal),
            "exit after signal {signal}"
        );
        let left: Vec<u32> = workers.iter().copied().filter(|&p| !is_gone(p)).collect();
        assert!(
            left.is_empty(),
            "workers left after signal {signal}: {left:?}"
        );
    }
}

#[test]
fn sigkill_of_the_coordinator_leaves_no_worker() {
    let (mut child, workers) = start_long_messaging();
    child.kill().unwrap();
    child.wait().unwrap();
    let all_gone = wait_until(Duration::from_secs(20), || {
        workers.iter().all(|&p| is_gone(p))
    });
    assert!(all_gone, "workers survived SIGKILL of the coordinator");
}

#[test]
fn task_name_is_perfs() {
    let child = kbench_command()
        .args(["bench", "sched", "pipe", "-l", "100000000"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut comm = String::new();
    wait_until(Duration::from_secs(10), || {
        comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        comm.trim() == "sched-pipe"
    });
    let mut child = child;
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(comm.trim(), "sched-pipe");
}

#[test]
fn cgroups_option_moves_each_worker_into_its_cgroup_v2() {
    // Needs root and a cgroup2 mount; mount one privately for the test if allowed.
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIP: -G needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path();
    let mounted = Command::new("mount")
        .args(["-t", "cgroup2", "none", mnt.to_str().unwrap()])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    let existing = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .find(|l| l.contains(" - cgroup2 "))
        .and_then(|l| l.split_whitespace().nth(4).map(str::to_string));
    let Some(root) = existing else {
        eprintln!("SKIP: no cgroup2 hierarchy can be mounted here");
        return;
    };
    let root = Path::new(&root);
    let (send, recv) = (
        format!("kbench-test-send-{}", std::process::id()),
        format!("kbench-test-recv-{}", std::process::id()),
    );
    std::fs::create_dir(root.join(&send)).unwrap();
    std::fs::create_dir(root.join(&recv)).unwrap();
    let spec = format!("{send},{recv}");
    let out = kbench(&[
        "bench", "--json", "sched", "pipe", "-l", "20000", "-G", &spec,
    ]);
    let usage = |name: &str| -> u64 {
        std::fs::read_to_string(root.join(name).join("cpu.stat"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("usage_usec ")?.parse().ok())
            .unwrap_or(0)
    };
    let (send_us, recv_us) = (usage(&send), usage(&recv));
    let _ = std::fs::remove_dir(root.join(&send));
    let _ = std::fs::remove_dir(root.join(&recv));
    if mounted {
        let _ = Command::new("umount").arg(mnt).status();
    }
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["params"]["cgroups"], spec.as_str());
    assert!(
        send_us > 0 && recv_us > 0,
        "cpu time in SEND {send_us} us, RECV {recv_us} us"
    );
}

#[test]
fn seccomp_notify_runs_without_root() {
    // setpriv drops to nobody; the binary must be readable by it (it is, under /work).
    let setpriv = Path::new("/usr/bin/setpriv");
    if !setpriv.exists() || !rustix::process::geteuid().is_root() {
        eprintln!("SKIP: needs root and setpriv to drop to an unprivileged user");
        return;
    }
    let out = Command::new(setpriv)
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            kbench_bin(),
        ])
        .args(["bench", "--json", "sched", "seccomp-notify", "-l", "1000"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["ops"], 1000);
}

#[test]
fn seccomp_supervisor_does_not_wait_forever_for_a_dead_target() {
    let mut child = kbench_command()
        .args(["bench", "sched", "seccomp-notify", "-l", "100000000"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The coordinator forks the supervisor, which forks the target.
    let mut target = None;
    wait_until(Duration::from_secs(20), || {
        target = children_of(child.id())
            .into_iter()
            .flat_map(children_of)
            .next();
        target.is_some()
    });
    let target = target.expect("the target process");
    // SAFETY: plain kill(2) of a grandchild of this test.
    unsafe { libc::kill(target as i32, libc::SIGKILL) };
    let status = wait_within(&mut child, Duration::from_secs(20))
        .expect("kbench waited forever for a dead target");
    assert_eq!(status.code(), Some(1));
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("kbench: seccomp-notify"), "{stderr}");
}
