//! perf's option grammar, as `kbench bench sched pipe -l 1000 ...` and `kbench run`'s
//! workload specs parse it (kbench_workloads::perfopt).
use kbench_workloads::perfopt::{Parser, EXIT_LIST, EXIT_USAGE};
use kbench_workloads::{Workload, REGISTRY};

/// The bytes as an argument vector: cut at NULs when there are any (as a process's
/// arguments are laid out), else at whitespace (as a spec's words are).
fn args_of(data: &[u8]) -> Vec<String> {
    let words: Vec<&[u8]> = if data.contains(&0) {
        data.split(|&b| b == 0).collect()
    } else {
        data.split(u8::is_ascii_whitespace)
            .filter(|w| !w.is_empty())
            .collect()
    };
    words
        .into_iter()
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect()
}

/// The arguments given to every workload's option table, as the benchmark after its
/// name and as perf's front end (stopping at the first word that is no option).
pub fn perf_options(data: &[u8]) {
    let args = args_of(data);
    for workload in REGISTRY {
        for stop_at_non_option in [false, true] {
            let parser = Parser {
                usage: workload.usage,
                specs: workload.options,
                stop_at_non_option,
            };
            parse_as(&parser, workload, &args);
        }
    }
}

/// One parse, then the parse-time checks the binary runs on what it accepts. The
/// workloads' `validate` is left out: it reads the machine's CPUs and topology from
/// /sys, so it is neither pure nor fast, and what it checks is values, not grammar.
fn parse_as(parser: &Parser<'_>, workload: &Workload, args: &[String]) {
    match parser.parse(args) {
        Ok(parsed) => {
            for (long, _) in &parsed.values {
                let known = parser.specs.iter().any(|s| s.long == *long);
                assert!(known, "{long} is not an option of {}", workload.name);
            }
            if !parser.stop_at_non_option {
                let words = parsed.rest.len() + parsed.after_double_dash.len();
                assert!(words <= args.len());
            }
            if let Err(problem) = (workload.check)(&parsed) {
                let exit = parser.option_error(problem.long, &problem.message);
                assert_eq!(exit.code, EXIT_USAGE);
            }
        }
        Err(exit) => {
            assert!(
                [EXIT_USAGE, EXIT_LIST].contains(&exit.code),
                "exit {}",
                exit.code
            );
            assert!(
                !exit.stdout.is_empty() || !exit.stderr.is_empty(),
                "an exit that says nothing"
            );
        }
    }
}
