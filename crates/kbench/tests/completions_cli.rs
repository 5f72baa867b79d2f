//! `kbench completions SHELL` and `kbench manpage`: the real shell and the real man
//! (man-db, installed by scripts/test.sh) read what kbench prints.
mod common;
use common::{kbench, kbench_command, text};
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `program args` with `input` on its standard input.
fn fed(program: &str, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e} (scripts/test.sh installs it)"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// kbench with a stdout whose reader has already gone, so its first write fails.
fn with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = rustix::pipe::pipe().expect("pipe");
    drop(reader);
    kbench_command()
        .args(args)
        .stdout(Stdio::from(writer))
        .output()
        .expect("run kbench")
}

const SUBCOMMANDS: &[&str] = &[
    "run",
    "compare",
    "calibrate",
    "exec",
    "ab",
    "list",
    "show",
    "export",
    "import",
    "bench",
    "stat",
    "env",
    "initramfs",
    "import-console",
    "import-trace",
    "vm-ab",
    "lava-job",
    "completions",
    "manpage",
];

/// What bash completes for the words typed so far (the last one partial), with the
/// script sourced as bash-completion would.
fn bash_completes(script: &[u8], words: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kbench.bash");
    std::fs::write(&path, script).unwrap();
    let current = words.len() - 1;
    let previous = words[current.saturating_sub(1)];
    let program = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD={current}; _kbench kbench '{}' '{previous}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display(),
        words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" "),
        words[current],
    );
    let out = Command::new("bash")
        .args(["-c", &program])
        .output()
        .unwrap();
    assert!(out.status.success(), "bash: {}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_string).collect()
}

#[test]
fn bash_completion_is_valid_bash_and_completes_every_subcommand() {
    let out = kbench(&["completions", "bash"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let check = fed("bash", &["-n"], &out.stdout);
    assert!(check.status.success(), "bash -n: {}", text(&check.stderr));
    let offered = bash_completes(&out.stdout, &["kbench", ""]);
    for name in SUBCOMMANDS {
        assert!(
            offered.iter().any(|w| w == name),
            "{name} not in {offered:?}"
        );
    }
    assert_eq!(
        bash_completes(&out.stdout, &["kbench", "co"]),
        ["compare", "completions"]
    );
    assert_eq!(
        bash_completes(&out.stdout, &["kbench", "compare", "--f"]),
        ["--format", "--full", "--fail-on"]
    );
}

#[test]
fn zsh_and_fish_scripts_name_the_subcommands() {
    for shell in ["zsh", "fish"] {
        let out = kbench(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        assert!(
            script.contains("compare") && script.contains("manpage"),
            "{shell}"
        );
    }
}

#[test]
fn an_unknown_shell_is_one_line_and_exit_2() {
    let out = kbench(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).lines().count(),
        1,
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn man_renders_the_page_without_a_warning() {
    for args in [&["manpage"][..], &["manpage", "compare"]] {
        let out = kbench(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let rendered = fed("man", &["--warnings", "-l", "-"], &out.stdout);
        assert!(rendered.status.success(), "{args:?}");
        assert_eq!(text(&rendered.stderr), "", "man's warnings for {args:?}");
        let page = text(&rendered.stdout);
        assert!(page.contains("compare"), "{page}");
        assert!(page.contains("SYNOPSIS"), "{page}");
    }
    let main_page = text(&fed("man", &["-l", "-"], &kbench(&["manpage"]).stdout).stdout);
    for name in SUBCOMMANDS {
        assert!(main_page.contains(&format!("kbench-{name}(1)")), "{name}");
    }
    let compare_page =
        text(&fed("man", &["-l", "-"], &kbench(&["manpage", "compare"]).stdout).stdout);
    assert!(compare_page.contains("--fail-on"), "{compare_page}");
    let lava_page = fed(
        "man",
        &["--warnings", "-l", "-"],
        &kbench(&["manpage", "lava-job"]).stdout,
    );
    assert_eq!(text(&lava_page.stderr), "", "man's warnings for lava-job");
    assert!(text(&lava_page.stdout).contains("--device-type"));
}

#[test]
fn an_unknown_subcommand_page_is_one_line_and_exit_2() {
    let out = kbench(&["manpage", "bogus"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("'bogus'") && stderr.contains("compare"),
        "{stderr}"
    );
}

#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    for args in [
        &["completions", "bash"][..],
        &["completions", "zsh"],
        &["manpage"],
    ] {
        let out = with_closed_stdout(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), "", "{args:?}");
    }
}

#[test]
fn every_command_that_prints_ends_quietly_on_a_closed_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let db = db.to_str().unwrap();
    for label in ["a", "b"] {
        let out = kbench(&[
            "run",
            "pipe:-l 1000",
            "--runs",
            "2",
            "--label",
            label,
            "--db",
            db,
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let numbers = dir.path().join("n.txt");
    std::fs::write(&numbers, "1\n2\n3\n4\n5\n").unwrap();
    let numbers = numbers.to_str().unwrap();
    for args in [
        &["list", "--db", db][..],
        &["show", "a", "--db", db],
        &["export", "a", "--format", "json", "--db", db],
        &["export", "a", "--format", "csv", "--db", db],
        &["compare", "a", "b", "--db", db],
        &["compare", "a", "b", "--full", "--db", db],
        &["stat", numbers, numbers],
        &["env"],
        &[
            "run",
            "pipe:-l 1000",
            "--runs",
            "1",
            "--label",
            "c",
            "--db",
            db,
        ],
        &[
            "exec", "--label", "d", "--runs", "1", "--db", db, "--", "true",
        ],
        &[
            "lava-job",
            "--kernel-a",
            "http://lab/a",
            "--kernel-b",
            "http://lab/b",
            "--initramfs",
            "http://lab/init.cpio.gz",
            "--device-type",
            "board",
        ],
    ] {
        let out = with_closed_stdout(args);
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
}
