//! kbench's standard output and error, for every crate that writes to them: the
//! binary, the runner, and the workloads and their forked workers.
//!
//! `print!` and `eprint!` panic when their reader has gone (`kbench show | head -1`, a
//! closed stderr): output goes through [`out!`] and [`outln!`], which end quietly on a
//! closed stdout, and messages through [`errln!`], which loses them. A crate of its
//! own, with no dependency, so that the crates at the bottom of the graph (the
//! workloads) and the binary at its top write alike, and none of them exports it for
//! the others.

use std::io::Write;

/// Writes `text` to stderr, losing it when stderr is closed or its reader went away:
/// `eprint!` panics then, and a message is never worth a run (or a forked worker).
pub fn write_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Writes `bytes` to stdout. A closed stdout (`kbench ... | head -1`) ends the output
/// quietly: the reader took all it wanted. Any other failure is an error.
pub fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// `eprintln!` that never panics (see [`write_stderr`]).
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::write_stderr(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that ends quietly on a closed stdout (see [`write_stdout`]) rather than
/// panicking as `print!` does; any other write error is returned with `?`.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::write_stdout(format!($($arg)*).as_bytes())?
    };
}

/// `println!` as [`out!`] is `print!`.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::write_stdout(b"\n")?
    };
    ($($arg:tt)*) => {
        $crate::write_stdout(format!("{}\n", format_args!($($arg)*)).as_bytes())?
    };
}
