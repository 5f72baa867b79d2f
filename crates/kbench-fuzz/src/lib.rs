//! One function per fuzz target: each feeds its bytes to a real kbench parser of
//! outside input, the way the `kbench` binary hands it a file, and checks what must
//! hold for any input. A bad input must come back as an error, never as a panic, a
//! hang or a huge allocation; where a parser has a cheap invariant (a round trip, finite
//! values) it is asserted too, so a wrong answer fails like a crash.
//!
//! `fuzz/fuzz_targets/<name>.rs` calls `<name>` under libFuzzer (nightly), and
//! `tests/replay.rs` runs every corpus and regression file through it on stable. The
//! list of targets is [`TARGETS`]; docs/fuzzing.md says how to run them.

mod console;
mod import;
mod lava;
mod options;
mod sys;
mod trace;

pub use console::{console_parse, console_round_trip, console_split};
pub use import::{
    export_json, import_auto, import_cyclictest, import_hackbench, import_hyperfine,
    import_perf_bench, import_perf_stat, import_run_record, output_figures, stat_numbers,
};
pub use lava::lava_log;
pub use options::perf_options;
pub use sys::{sys_cmdline, sys_cpuidle, sys_cpuinfo, sys_cpulist, sys_interrupts, sys_kconfig};
pub use trace::{trace_analyse, trace_parse};

/// A fuzz target: its name (that of its `fuzz_targets/*.rs` and corpus directory) and
/// its function.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, by name. The replay test walks this list, so a target missing here
/// is a target whose corpus is never replayed.
pub const TARGETS: &[Target] = &[
    ("import_perf_bench", import_perf_bench),
    ("import_perf_stat", import_perf_stat),
    ("import_hyperfine", import_hyperfine),
    ("import_hackbench", import_hackbench),
    ("import_cyclictest", import_cyclictest),
    ("import_run_record", import_run_record),
    ("import_auto", import_auto),
    ("output_figures", output_figures),
    ("export_json", export_json),
    ("stat_numbers", stat_numbers),
    ("console_parse", console_parse),
    ("console_split", console_split),
    ("console_round_trip", console_round_trip),
    ("lava_log", lava_log),
    ("trace_parse", trace_parse),
    ("trace_analyse", trace_analyse),
    ("perf_options", perf_options),
    ("sys_cpulist", sys_cpulist),
    ("sys_cpuinfo", sys_cpuinfo),
    ("sys_interrupts", sys_interrupts),
    ("sys_cpuidle", sys_cpuidle),
    ("sys_kconfig", sys_kconfig),
    ("sys_cmdline", sys_cmdline),
];

/// The text of a file the `kbench` binary reads strictly (`import`, `import-trace`,
/// `stat`): anything that is not UTF-8 is refused before any parser sees it.
fn strict_text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// The text of a file the binary reads leniently (console captures, `/proc` and `/sys`
/// through a sysroot): invalid bytes become U+FFFD, as `String::from_utf8_lossy` makes
/// them.
fn lossy_text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}
