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
