//! Whole texts to standard output.
use std::io::Write;

/// Writes `bytes` to stdout. A closed stdout (`kbench ... | head -1`) ends the output
/// quietly: the reader took all it wanted. Any other failure is an error.
pub fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// `print!` that ends quietly on a closed stdout (see [`write_stdout`]) rather than
/// panicking as `print!` does; any other write error is returned with `?`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format!($($arg)*).as_bytes())?
    };
}

/// `println!` as [`out!`] is `print!`.
macro_rules! outln {
    () => {
        $crate::output::write_stdout(b"\n")?
    };
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format!("{}\n", format_args!($($arg)*)).as_bytes())?
    };
}
