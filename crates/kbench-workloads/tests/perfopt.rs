//! Tests for the perf-compatible option parser: golden texts of perf's help and
//! errors (docs/perf-compat.md §1.3, §2-§4, §8), behaviour of the grammar,
//! robustness, and parity with the real `/usr/bin/perf` (skipped when perf is not
//! installed).

use kbench_workloads::perfopt::{OptKind, OptSpec, OptValue, ParseExit, ParsedOptions, Parser};
use proptest::prelude::*;
use std::path::Path;
use std::process::Command;

// ---------------------------------------------------------------------------
// Option tables, in perf's table order (which `--list-opts` shows).
// messaging's is kbench's own table, which must equal perf's; seccomp-notify's is
// perf's plus kbench's --placement; pipe's differs from both perf versions (kbench
// adds --pingpong and --placement), so those are here.
use kbench_workloads::messaging::OPTIONS as MESSAGING;
use kbench_workloads::seccomp_notify::OPTIONS as SECCOMP;

const PIPE_6_1: &[OptSpec] = &[
    OptSpec {
        short: Some('l'),
        long: "loop",
        kind: OptKind::Int,
        help: "Specify number of loops",
    },
    OptSpec {
        short: Some('T'),
        long: "threaded",
        kind: OptKind::Bool,
        help: "Specify threads/process based task setup",
    },
];

const PIPE_6_13: &[OptSpec] = &[
    OptSpec {
        short: Some('n'),
        long: "nonblocking",
        kind: OptKind::Bool,
        help: "Use non-blocking operations",
    },
    OptSpec {
        short: Some('l'),
        long: "loop",
        kind: OptKind::Int,
        help: "Specify number of loops",
    },
    OptSpec {
        short: Some('T'),
        long: "threaded",
        kind: OptKind::Bool,
        help: "Specify threads/process based task setup",
    },
    OptSpec {
        short: Some('G'),
        long: "cgroups",
        kind: OptKind::Str { argh: "SEND,RECV" },
        help: "Put sender and receivers in given cgroups",
    },
];

/// A kbench-style table with long-only options mixed in.
const WITH_LONG_ONLY: &[OptSpec] = &[
    OptSpec {
        short: None,
        long: "pingpong",
        kind: OptKind::Bool,
        help: "Use the pre-6.15 loop order",
    },
    OptSpec {
        short: Some('l'),
        long: "loop",
        kind: OptKind::Int,
        help: "Specify number of loops",
    },
    OptSpec {
        short: None,
        long: "json",
        kind: OptKind::Str { argh: "FILE" },
        help: "Also write results as JSON",
    },
    OptSpec {
        short: Some('T'),
        long: "threaded",
        kind: OptKind::Bool,
        help: "Specify threads/process based task setup",
    },
];

/// perf bench's own options, parsed with stop-at-non-option.
const BENCH_COMMON: &[OptSpec] = &[
    OptSpec {
        short: Some('f'),
        long: "format",
        kind: OptKind::Str {
            argh: "default|simple",
        },
        help: "Specify the output formatting style",
    },
    OptSpec {
        short: Some('r'),
        long: "repeat",
        kind: OptKind::UInt,
        help: "Specify amount of times to repeat the run",
    },
];

fn messaging() -> Parser<'static> {
    Parser {
        usage: "perf bench sched messaging <options>",
        specs: MESSAGING,
        stop_at_non_option: false,
    }
}

fn pipe_6_1() -> Parser<'static> {
    Parser {
        usage: "perf bench sched pipe <options>",
        specs: PIPE_6_1,
        stop_at_non_option: false,
    }
}

fn pipe_6_13() -> Parser<'static> {
    Parser {
        usage: "perf bench sched pipe <options>",
        specs: PIPE_6_13,
        stop_at_non_option: false,
    }
}

fn seccomp() -> Parser<'static> {
    Parser {
        usage: "perf bench sched secccomp-notify <options>",
        specs: SECCOMP,
        stop_at_non_option: false,
    }
}

fn long_only() -> Parser<'static> {
    Parser {
        usage: "kbench pipe <options>",
        specs: WITH_LONG_ONLY,
        stop_at_non_option: false,
    }
}

fn bench_common() -> Parser<'static> {
    Parser {
        usage: "perf bench [<common options>] <collection> <benchmark> [<options>]",
        specs: BENCH_COMMON,
        stop_at_non_option: true,
    }
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn ok(parser: &Parser<'_>, args: &[&str]) -> ParsedOptions {
    match parser.parse(&words(args)) {
        Ok(parsed) => parsed,
        Err(exit) => panic!("{args:?} failed: {exit:?}"),
    }
}

fn fail(parser: &Parser<'_>, args: &[&str]) -> ParseExit {
    match parser.parse(&words(args)) {
        Ok(parsed) => panic!("{args:?} unexpectedly parsed: {parsed:?}"),
        Err(exit) => exit,
    }
}

/// The stderr of a failing parse, asserting perf's usage exit status.
fn stderr_of(parser: &Parser<'_>, args: &[&str]) -> String {
    let exit = fail(parser, args);
    assert_eq!(exit.code, 129, "{args:?}");
    assert_eq!(exit.stdout, "", "{args:?}");
    exit.stderr
}

// ---------------------------------------------------------------------------
// Golden help texts (docs/perf-compat.md §2.1, §3.1, §4.1).

const MESSAGING_HELP: &str = "
 Usage: perf bench sched messaging <options>

    -g, --group <n>       Specify number of groups
    -l, --nr_loops <n>    Specify the number of loops to run (default: 100)
    -p, --pipe            Use pipe() instead of socketpair()
    -t, --thread          Be multi thread instead of multi process

";

const PIPE_6_1_HELP: &str = "
 Usage: perf bench sched pipe <options>

    -l, --loop <n>        Specify number of loops
    -T, --threaded        Specify threads/process based task setup

";

const PIPE_6_13_HELP: &str = "
 Usage: perf bench sched pipe <options>

    -G, --cgroups <SEND,RECV>
                          Put sender and receivers in given cgroups
    -l, --loop <n>        Specify number of loops
    -n, --nonblocking     Use non-blocking operations
    -T, --threaded        Specify threads/process based task setup

";

/// perf's help, then kbench's own option in perf's layout.
const SECCOMP_HELP: &str = "
 Usage: perf bench sched secccomp-notify <options>

    -l, --loop <n>        Specify number of loops
    -s, --sync-mode       Enable the synchronous mode for seccomp notifications
        --placement <free|same-cpu|cross-cpu>
                          Pin both tasks to one CPU, or each to its own (kbench)

";

#[test]
fn help_text_of_messaging_matches_perf() {
    assert_eq!(messaging().help(), MESSAGING_HELP);
}

#[test]
fn help_text_of_pipe_6_1_matches_perf() {
    assert_eq!(pipe_6_1().help(), PIPE_6_1_HELP);
}

#[test]
fn help_text_of_pipe_6_13_wraps_the_cgroups_line() {
    assert_eq!(pipe_6_13().help(), PIPE_6_13_HELP);
}

#[test]
fn help_text_of_seccomp_notify_keeps_the_upstream_typo() {
    assert_eq!(seccomp().help(), SECCOMP_HELP);
}

#[test]
fn dash_h_and_help_print_the_help_on_stderr_with_129() {
    for args in [
        &["-h"][..],
        &["--help"],
        &["--help-all"],
        &["-l", "5", "-h"],
    ] {
        assert_eq!(stderr_of(&pipe_6_1(), args), PIPE_6_1_HELP, "{args:?}");
    }
}

#[test]
fn long_only_options_sort_after_all_letters_by_long_name() {
    let expected = "
 Usage: kbench pipe <options>

    -l, --loop <n>        Specify number of loops
    -T, --threaded        Specify threads/process based task setup
        --json <FILE>     Also write results as JSON
        --pingpong        Use the pre-6.15 loop order

";
    assert_eq!(long_only().help(), expected);
}

#[test]
fn top_level_format_option_wraps_like_perf_bench() {
    let help = bench_common().help();
    assert!(help.contains(
        "    -f, --format <default|simple>\n                          Specify the output formatting style\n"
    ));
    assert!(help.contains("    -r, --repeat <n>      Specify amount of times to repeat the run\n"));
}

// ---------------------------------------------------------------------------
// Golden error transcripts (docs/perf-compat.md §1.3 and §8).

#[test]
fn transcript_messaging_negative_group() {
    assert_eq!(
        stderr_of(&messaging(), &["-g", "-1"]),
        " Error: switch `g' expects an unsigned numerical value
 Usage: perf bench sched messaging <options>

    -g, --group <n>       Specify number of groups
"
    );
}

#[test]
fn transcript_messaging_group_not_a_number() {
    assert_eq!(
        stderr_of(&messaging(), &["-g", "abc"]),
        " Error: switch `g' expects a numerical value
 Usage: perf bench sched messaging <options>

    -g, --group <n>       Specify number of groups
"
    );
}

#[test]
fn transcript_long_option_requires_a_value() {
    assert_eq!(
        stderr_of(&messaging(), &["--group"]),
        " Error: option `group' requires a value
 Usage: perf bench sched messaging <options>

    -g, --group <n>       Specify number of groups
"
    );
}

#[test]
fn transcript_equals_form_prints_no_option_line() {
    assert_eq!(
        stderr_of(&messaging(), &["--nr_loops=abc"]),
        " Error: option `nr_loops' expects a numerical value
 Usage: perf bench sched messaging <options>

"
    );
    assert_eq!(
        stderr_of(&pipe_6_1(), &["--threaded=1"]),
        " Error: option `threaded' takes no value
 Usage: perf bench sched pipe <options>

"
    );
}

#[test]
fn transcript_unknown_switch_prints_full_help() {
    assert_eq!(
        stderr_of(&pipe_6_1(), &["-x"]),
        format!("  Error: unknown switch `x'\n{PIPE_6_1_HELP}")
    );
}

#[test]
fn transcript_unknown_option_prints_full_help() {
    assert_eq!(
        stderr_of(&messaging(), &["--bogus"]),
        format!("  Error: unknown option `bogus'\n{MESSAGING_HELP}")
    );
}

#[test]
fn transcript_single_dash_typos() {
    assert_eq!(
        stderr_of(&messaging(), &["-thread"]),
        " Error: did you mean `--thread` (with two dashes ?)\n"
    );
    assert_eq!(
        stderr_of(&messaging(), &["-pipe"]),
        " Error: did you mean `--pipe` (with two dashes ?)\n"
    );
    assert_eq!(
        stderr_of(&pipe_6_1(), &["-loop"]),
        " Error: switch `l' expects a numerical value
 Usage: perf bench sched pipe <options>

    -l, --loop <n>        Specify number of loops
"
    );
    assert_eq!(
        stderr_of(&pipe_6_1(), &["-threaded"]),
        format!("  Error: unknown switch `t'\n{PIPE_6_1_HELP}")
    );
}

#[test]
fn transcript_list_opts() {
    let exit = fail(&messaging(), &["--list-opts"]);
    assert_eq!(
        (exit.stdout.as_str(), exit.stderr.as_str(), exit.code),
        ("--pipe --thread --group --nr_loops \n", "", 130)
    );
    assert_eq!(
        fail(&pipe_6_1(), &["--list-opts"]).stdout,
        "--loop --threaded \n"
    );
    assert_eq!(
        fail(&pipe_6_13(), &["--list-opts"]).stdout,
        "--nonblocking --loop --threaded --cgroups \n"
    );
}

#[test]
fn list_cmds_prints_an_empty_line_with_130() {
    let exit = fail(&pipe_6_1(), &["--list-cmds"]);
    assert_eq!((exit.stdout.as_str(), exit.code), ("\n", 130));
}

#[test]
fn ambiguous_abbreviation_names_the_last_two_candidates() {
    assert_eq!(
        stderr_of(&messaging(), &["--n"]),
        " Error: Ambiguous option: n (could be --no-group or --nr_loops)

 Usage: perf bench sched messaging <options>

    -l, --nr_loops <n>    Specify the number of loops to run (default: 100)
"
    );
    assert_eq!(
        stderr_of(&messaging(), &["--=5"]),
        " Error: Ambiguous option: =5 (could be --group or --nr_loops)

 Usage: perf bench sched messaging <options>

"
    );
    // `--no` reads past its own text into the next word: `group` here.
    assert_eq!(
        stderr_of(&messaging(), &["--no", "group"]),
        " Error: Ambiguous option: no (could be --no-group or --no-nr_loops)

 Usage: perf bench sched messaging <options>

    -g, --group <n>       Specify number of groups
"
    );
}

// ---------------------------------------------------------------------------
// Grammar.

#[test]
fn short_switches_bundle_and_take_attached_or_next_values() {
    let parsed = ok(&pipe_6_1(), &["-Tl", "100"]);
    assert_eq!(
        (parsed.bool("threaded"), parsed.int("loop")),
        (Some(true), Some(100))
    );
    let parsed = ok(&messaging(), &["-ptg", "1"]);
    assert_eq!(parsed.bool("pipe"), Some(true));
    assert_eq!(parsed.bool("thread"), Some(true));
    assert_eq!(parsed.uint("group"), Some(1));
    assert_eq!(ok(&pipe_6_1(), &["-l100"]).int("loop"), Some(100));
    assert_eq!(ok(&pipe_6_1(), &["-Tl7"]).int("loop"), Some(7));
}

#[test]
fn long_options_take_equals_or_next_word_and_abbreviate() {
    assert_eq!(ok(&pipe_6_1(), &["--loop=100"]).int("loop"), Some(100));
    assert_eq!(ok(&pipe_6_1(), &["--loop", "100"]).int("loop"), Some(100));
    assert_eq!(ok(&pipe_6_1(), &["--lo", "100"]).int("loop"), Some(100));
    assert_eq!(ok(&pipe_6_1(), &["--l=3"]).int("loop"), Some(3));
    assert_eq!(ok(&messaging(), &["--gr", "5"]).uint("group"), Some(5));
    assert_eq!(ok(&pipe_6_1(), &["--thr"]).bool("threaded"), Some(true));
}

#[test]
fn values_are_recorded_in_order_and_the_last_one_wins() {
    let parsed = ok(&pipe_6_1(), &["-l", "1", "-T", "--loop=2", "--no-threaded"]);
    assert_eq!(
        parsed.values,
        vec![
            ("loop", OptValue::Int(1)),
            ("threaded", OptValue::Bool(true)),
            ("loop", OptValue::Int(2)),
            ("threaded", OptValue::Bool(false)),
        ]
    );
    assert_eq!(
        (parsed.int("loop"), parsed.bool("threaded")),
        (Some(2), Some(false))
    );
    assert_eq!(parsed.int("threaded"), None, "accessors check the kind");
    assert_eq!(parsed.bool("nonexistent"), None);
}

#[test]
fn negation_unsets_every_kind() {
    let parsed = ok(
        &pipe_6_13(),
        &["-G", "a,b", "--no-cgroups", "--no-loop", "--no-nonb"],
    );
    assert_eq!(parsed.str("cgroups"), Some(None));
    assert_eq!(parsed.int("loop"), Some(0));
    assert_eq!(parsed.bool("nonblocking"), Some(false));
    assert_eq!(ok(&seccomp(), &["--no-loop"]).u64("loop"), Some(0));
    assert_eq!(ok(&messaging(), &["--no-gr"]).uint("group"), Some(0));
    assert_eq!(
        stderr_of(&messaging(), &["--no-group=5"]),
        " Error: option `no-group' takes no value
 Usage: perf bench sched messaging <options>

"
    );
}

#[test]
fn string_options_keep_their_text() {
    let parsed = ok(&pipe_6_13(), &["-G", "send,recv"]);
    assert_eq!(parsed.str("cgroups"), Some(Some("send,recv".to_string())));
    assert_eq!(
        ok(&pipe_6_13(), &["--cgroups=a,b"]).str("cgroups"),
        Some(Some("a,b".into()))
    );
    assert_eq!(
        ok(&pipe_6_13(), &["-Ga,b"]).str("cgroups"),
        Some(Some("a,b".into()))
    );
}

#[test]
fn double_dash_ends_parsing_and_non_options_are_collected() {
    let parsed = ok(&pipe_6_1(), &["extra", "-l", "5", "-", "--", "-x", "y"]);
    assert_eq!(parsed.int("loop"), Some(5));
    assert_eq!(parsed.rest, words(&["extra", "-"]));
    assert_eq!(parsed.after_double_dash, words(&["-x", "y"]));
}

#[test]
fn stop_at_non_option_hands_back_the_rest_unparsed() {
    let parsed = ok(
        &bench_common(),
        &["-f", "simple", "sched", "pipe", "-l", "5"],
    );
    assert_eq!(parsed.str("format"), Some(Some("simple".into())));
    assert_eq!(parsed.rest, words(&["sched", "pipe", "-l", "5"]));
    let parsed = ok(&bench_common(), &["-r", "3", "--", "sched", "pipe"]);
    assert_eq!(parsed.uint("repeat"), Some(3));
    assert!(parsed.rest.is_empty());
    assert_eq!(parsed.after_double_dash, words(&["sched", "pipe"]));
}

#[test]
fn a_value_is_the_next_word_whatever_it_looks_like() {
    assert_eq!(ok(&pipe_6_1(), &["-l", "-5"]).int("loop"), Some(-5));
    assert!(stderr_of(&pipe_6_1(), &["-l", "-h"])
        .starts_with(" Error: switch `l' expects a numerical value\n"));
    assert!(stderr_of(&pipe_6_1(), &["-l", "--"])
        .starts_with(" Error: switch `l' expects a numerical value\n"));
}

#[test]
fn h_anywhere_in_a_bundle_asks_for_help() {
    assert_eq!(stderr_of(&messaging(), &["-pth"]), MESSAGING_HELP);
    assert_eq!(stderr_of(&messaging(), &["-hx"]), MESSAGING_HELP);
}

#[test]
fn a_dash_inside_a_bundle_reports_an_unknown_long_option() {
    assert_eq!(
        stderr_of(&messaging(), &["-t-x"]),
        format!("  Error: unknown option `x'\n{MESSAGING_HELP}")
    );
}

#[test]
fn words_after_h_filter_the_help() {
    let head = "\n Usage: perf bench sched pipe <options>\n\n";
    assert_eq!(
        stderr_of(&pipe_6_1(), &["-h", "extra"]),
        format!("{head}\n")
    );
    let loop_line = "    -l, --loop <n>        Specify number of loops\n";
    let thread_line = "    -T, --threaded        Specify threads/process based task setup\n";
    for filter in ["l", "-l", "--loop", "loop", "LOOPS"] {
        assert_eq!(
            stderr_of(&pipe_6_1(), &["-h", filter]),
            format!("{head}{loop_line}\n"),
            "{filter}"
        );
    }
    assert_eq!(
        stderr_of(&pipe_6_1(), &["--help", "T", "extra"]),
        format!("{head}{thread_line}\n")
    );
    assert_eq!(stderr_of(&pipe_6_1(), &["-h", ""]), PIPE_6_1_HELP);
    let long_only_dash = stderr_of(&long_only(), &["-h", "-"]);
    assert!(long_only_dash.contains("--json") && !long_only_dash.contains("--loop"));
}

#[test]
fn typo_check_needs_three_letters_and_a_plain_first_switch() {
    assert_eq!(
        stderr_of(&messaging(), &["-thr"]),
        " Error: did you mean `--thr` (with two dashes ?)\n"
    );
    assert_eq!(
        stderr_of(&messaging(), &["-tno-x"]),
        format!("  Error: unknown switch `n'\n{MESSAGING_HELP}")
    );
    assert_eq!(
        stderr_of(&pipe_6_13(), &["-no-block"]),
        " Error: did you mean `--no-block` (with two dashes ?)\n"
    );
    let parsed = ok(&messaging(), &["-tpg", "2"]);
    assert_eq!(parsed.uint("group"), Some(2));
}

// ---------------------------------------------------------------------------
// Numbers (docs/perf-compat.md §1.3 "Value parsing").

#[test]
fn signed_int_follows_strtol_and_truncates() {
    let cases = [
        ("010", 10),
        ("  7", 7),
        ("+3", 3),
        ("-5", -5),
        ("", 0),
        ("2147483648", -2147483648),
        ("4294967297", 1),
        ("99999999999999999999", -1),
    ];
    for (text, expected) in cases {
        assert_eq!(
            ok(&pipe_6_1(), &["-l", text]).int("loop"),
            Some(expected),
            "{text:?}"
        );
    }
    for text in ["0x10", "1.5", " ", "-", "5 ", "1e3"] {
        assert!(
            stderr_of(&pipe_6_1(), &["-l", text]).contains("expects a numerical value"),
            "{text:?}"
        );
    }
}

#[test]
fn unsigned_int_rejects_a_leading_minus_only() {
    assert_eq!(
        ok(&messaging(), &["-g", "4294967297"]).uint("group"),
        Some(1)
    );
    assert_eq!(
        ok(&messaging(), &["-g", " -5"]).uint("group"),
        Some(4294967291)
    );
    assert_eq!(
        ok(&messaging(), &["-g", "99999999999999999999"]).uint("group"),
        Some(u32::MAX)
    );
    assert!(stderr_of(&messaging(), &["-g", "-0"]).contains("expects an unsigned numerical value"));
    assert!(stderr_of(&messaging(), &["-g", "+x"]).contains("expects a numerical value"));
}

#[test]
fn u64_uses_strtoull() {
    assert_eq!(
        ok(&seccomp(), &["-l", "18446744073709551615"]).u64("loop"),
        Some(u64::MAX)
    );
    assert_eq!(
        ok(&seccomp(), &["-l", "99999999999999999999999"]).u64("loop"),
        Some(u64::MAX)
    );
    assert_eq!(ok(&seccomp(), &["--loop=010"]).u64("loop"), Some(10));
    assert_eq!(
        stderr_of(&seccomp(), &["-l", "-1"]),
        " Error: switch `l' expects an unsigned numerical value
 Usage: perf bench sched secccomp-notify <options>

    -l, --loop <n>        Specify number of loops
"
    );
}

// ---------------------------------------------------------------------------
// Callback-style validation (docs/perf-compat.md §3.1, `-G` without a comma).

fn needs_comma(long: &'static str, value: &OptValue) -> Result<(), String> {
    match (long, value) {
        ("cgroups", OptValue::Str(Some(text))) if !text.contains(',') => {
            Err(format!("it should have two cgroup names: {text}"))
        }
        _ => Ok(()),
    }
}

const CGROUP_ERROR: &str = "it should have two cgroup names: x

 Usage: perf bench sched pipe <options>

    -G, --cgroups <SEND,RECV>
                          Put sender and receivers in given cgroups
";

#[test]
fn option_error_prints_message_usage_and_the_option_lines() {
    let exit = pipe_6_13().option_error("cgroups", "it should have two cgroup names: x");
    assert_eq!((exit.stderr.as_str(), exit.code), (CGROUP_ERROR, 129));
    let exit = pipe_6_13().option_error("cgroups", "it should have two cgroup names: x\n");
    assert_eq!(exit.stderr, CGROUP_ERROR);
}

#[test]
fn parse_with_check_fails_during_parsing_like_a_perf_callback() {
    let parser = pipe_6_13();
    let run = |args: &[&str]| parser.parse_with_check(&words(args), needs_comma);
    assert_eq!(
        run(&["-G", "x", "--bogus"]).unwrap_err().stderr,
        CGROUP_ERROR
    );
    assert_eq!(run(&["--cgroups", "x"]).unwrap_err().stderr, CGROUP_ERROR);
    assert_eq!(
        run(&["--cgroups=x"]).unwrap_err().stderr,
        "it should have two cgroup names: x\n\n Usage: perf bench sched pipe <options>\n\n"
    );
    let parsed = run(&["-G", "a,b", "--no-cgroups"]).unwrap();
    assert_eq!(parsed.str("cgroups"), Some(None));
}

// ---------------------------------------------------------------------------
// Robustness: no input makes the parser panic, and exits are well-formed.

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-".to_string()),
        Just("--".to_string()),
        Just("-h".to_string()),
        Just("--no".to_string()),
        Just("--no-".to_string()),
        Just("=".to_string()),
        "-[a-zA-Z=é-]{0,5}",
        "--[a-z_=é-]{0,12}",
        "--no-[a-z=]{0,8}",
        "[ +-]?[0-9]{0,22}",
        any::<String>(),
    ]
}

fn check_exit_shape(exit: &ParseExit) {
    assert!(exit.code == 129 || exit.code == 130);
    if exit.code == 130 {
        assert!(exit.stderr.is_empty() && exit.stdout.ends_with('\n'));
    } else {
        assert!(exit.stdout.is_empty() && exit.stderr.ends_with('\n'));
    }
}

proptest! {
    #[test]
    fn never_panics_and_exits_are_well_formed(args in prop::collection::vec(fragment(), 0..6)) {
        for parser in [messaging(), pipe_6_13(), seccomp(), long_only(), bench_common()] {
            match parser.parse(&args) {
                Ok(parsed) => prop_assert!(parsed.rest.len() + parsed.after_double_dash.len() <= args.len()),
                Err(exit) => check_exit_shape(&exit),
            }
            let _ = parser.parse_with_check(&args, needs_comma);
        }
    }
}

// ---------------------------------------------------------------------------
// Parity with the real perf 6.1 (only invocations that fail, ask for help or
// run tiny workloads).

const PERF: &str = "/usr/bin/perf";

struct PerfRun {
    stdout: String,
    stderr: String,
    code: i32,
}

/// Runs `perf bench sched <bench> <args>` and drops the driver's header.
fn run_perf(bench: &str, args: &[&str]) -> PerfRun {
    let output = Command::new("timeout")
        .args(["20", PERF, "bench", "sched", bench])
        .args(args)
        .env("PAGER", "cat")
        .output()
        .expect("run perf");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let header = format!("# Running 'sched/{bench}' benchmark:\n");
    PerfRun {
        stdout: stdout.strip_prefix(&header).unwrap_or(&stdout).to_string(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code().unwrap_or(-1),
    }
}

fn perf_available() -> bool {
    if Path::new(PERF).exists() {
        return true;
    }
    eprintln!("skipping: {PERF} is not installed");
    false
}

/// Bad, help and listing invocations: perf exits before running anything.
const FAILING: &[(&str, &[&str])] = &[
    ("messaging", &["-g", "-1"]),
    ("messaging", &["-g", "abc"]),
    ("messaging", &["-gabc"]),
    ("messaging", &["-pg"]),
    ("messaging", &["-l", "-1"]),
    ("messaging", &["--nr_loops=-1"]),
    ("messaging", &["-l", "0x10"]),
    ("messaging", &["-l", "1.5"]),
    ("messaging", &["-l", " "]),
    ("messaging", &["-l", "-"]),
    ("messaging", &["--group"]),
    ("messaging", &["--gr"]),
    ("messaging", &["--g", "abc"]),
    ("messaging", &["--group", "-h"]),
    ("messaging", &["--nr_loops", "--"]),
    ("messaging", &["--nr_loops=abc"]),
    ("messaging", &["-g", "1", "-l"]),
    ("messaging", &["--thread=1"]),
    ("messaging", &["--no-thread=1"]),
    ("messaging", &["--pipe="]),
    ("messaging", &["--no-group=5"]),
    ("messaging", &["--no-gr=5"]),
    ("messaging", &["--no-g=1"]),
    ("messaging", &["--no-pip=1"]),
    ("messaging", &["--no"]),
    ("messaging", &["--no", "group"]),
    ("messaging", &["--n"]),
    ("messaging", &["--n", "xthread"]),
    ("messaging", &["--=5"]),
    ("messaging", &["-x"]),
    ("messaging", &["-Tl"]),
    ("messaging", &["-tp", "-x"]),
    ("messaging", &["-t-x"]),
    ("messaging", &["-t-"]),
    ("messaging", &["extra", "-x"]),
    ("messaging", &["-g", "5", "--bogus"]),
    ("messaging", &["--bogus"]),
    ("messaging", &["--bogus=3"]),
    ("messaging", &["--hel"]),
    ("messaging", &["-thread"]),
    ("messaging", &["-pipe"]),
    ("messaging", &["-thr"]),
    ("messaging", &["-tno-x"]),
    ("messaging", &["-pthr"]),
    ("messaging", &["-h"]),
    ("messaging", &["-hx"]),
    ("messaging", &["-th"]),
    ("messaging", &["--help"]),
    ("messaging", &["--help-all"]),
    ("messaging", &["-h", "extra"]),
    ("messaging", &["-h", "-g"]),
    ("messaging", &["-h", "g"]),
    ("messaging", &["-h", "pipe"]),
    ("messaging", &["-h", "PIPE()"]),
    ("messaging", &["-h", "multi", "--group"]),
    ("messaging", &["-h", ""]),
    ("messaging", &["-h", "-"]),
    ("messaging", &["--help", "thread"]),
    ("messaging", &["--list-opts"]),
    ("messaging", &["--list-cmds"]),
    ("messaging", &["-g", "1", "--list-opts"]),
    ("pipe", &["-l", "abc"]),
    ("pipe", &["--loop"]),
    ("pipe", &["--l", "x"]),
    ("pipe", &["--lo=x"]),
    ("pipe", &["--no-loop=3"]),
    ("pipe", &["--threaded=1"]),
    ("pipe", &["--t=1"]),
    ("pipe", &["--no-t=1"]),
    ("pipe", &["--no"]),
    ("pipe", &["--n"]),
    ("pipe", &["-x"]),
    ("pipe", &["-loop"]),
    ("pipe", &["-threaded"]),
    ("pipe", &["-Tloop"]),
    ("pipe", &["-Tl"]),
    ("pipe", &["-T", "-l", "x"]),
    ("pipe", &["-l1", "-x"]),
    ("pipe", &["--loop=1", "--bogus=3"]),
    ("pipe", &["-Th"]),
    ("pipe", &["-hT"]),
    ("pipe", &["-h"]),
    ("pipe", &["-h", "extra"]),
    ("pipe", &["-h", "T", "loops"]),
    ("pipe", &["--list-opts"]),
];

#[test]
fn failing_invocations_match_perf_byte_for_byte() {
    if !perf_available() {
        return;
    }
    let mut mismatches = Vec::new();
    for (bench, args) in FAILING {
        let parser = if *bench == "pipe" {
            pipe_6_1()
        } else {
            messaging()
        };
        let perf = run_perf(bench, args);
        let ours = parser.parse(&words(args));
        let Err(ours) = ours else {
            mismatches.push(format!(
                "{bench} {args:?}: we accepted, perf rc={}",
                perf.code
            ));
            continue;
        };
        if (ours.stdout.as_str(), ours.stderr.as_str(), ours.code)
            != (perf.stdout.as_str(), perf.stderr.as_str(), perf.code)
        {
            mismatches.push(format!(
                "{bench} {args:?}:\n perf rc={} stdout={:?} stderr={:?}\n ours rc={} stdout={:?} stderr={:?}",
                perf.code, perf.stdout, perf.stderr, ours.code, ours.stdout, ours.stderr
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Accepted invocations with tiny workloads: perf's report of what it ran
/// must agree with the values we parsed.
const PIPE_ACCEPTED: &[&[&str]] = &[
    &["-l", "010"],
    &["-l", " 7"],
    &["-l", "+3"],
    &["-l", "-5"],
    &["-l", ""],
    &["--loop="],
    &["-l", "2147483648"],
    &["-l", "4294967297"],
    &["-l", "99999999999999999999"],
    &["--lo", "2"],
    &["--l=3"],
    &["-Tl", "2"],
    &["-Tl2"],
    &["-l2", "extra"],
    &["--no-loop"],
    &["-l", "1", "--", "-x"],
    &["-l", "5", "-T", "--no-thr"],
];

#[test]
fn accepted_pipe_invocations_run_what_we_parse() {
    if !perf_available() {
        return;
    }
    for args in PIPE_ACCEPTED {
        let parsed = ok(&pipe_6_1(), args);
        let loops = parsed.int("loop").expect("every case sets the loop count");
        let tasks = if parsed.bool("threaded") == Some(true) {
            "threads"
        } else {
            "processes"
        };
        let perf = run_perf("pipe", args);
        assert_eq!(perf.code, 0, "{args:?}: {}", perf.stderr);
        let expected = format!("# Executed {loops} pipe operations between two {tasks}\n");
        assert!(
            perf.stdout.starts_with(&expected),
            "{args:?}: {}",
            perf.stdout
        );
    }
}

const MESSAGING_ACCEPTED: &[&[&str]] = &[
    &["-g", "0"],
    &["-g", "4294967296"],
    &["--gr", "0", "-tp"],
    &["-g0", "-l", "4294967297"],
    &["-ptg", "0"],
    &["--no-group", "--thr"],
    &["-g", "+0", "extra", "--", "--bogus"],
];

#[test]
fn accepted_messaging_invocations_run_what_we_parse() {
    if !perf_available() {
        return;
    }
    for args in MESSAGING_ACCEPTED {
        let parsed = ok(&messaging(), args);
        let groups = parsed
            .uint("group")
            .expect("every case sets the group count");
        let tasks = if parsed.bool("thread") == Some(true) {
            "threads"
        } else {
            "processes"
        };
        let perf = run_perf("messaging", args);
        assert_eq!(perf.code, 0, "{args:?}: {}", perf.stderr);
        let expected = format!(
            "# 20 sender and receiver {tasks} per group\n# {groups} groups == {} {tasks} run\n",
            groups * 40
        );
        assert!(
            perf.stdout.starts_with(&expected),
            "{args:?}: {}",
            perf.stdout
        );
    }
}
