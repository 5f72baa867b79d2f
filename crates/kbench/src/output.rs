//! Whole texts to standard output, and whole files.
use crate::error::usage;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to stdout. A closed stdout (`kbench ... | head -1`) ends the output
/// quietly: the reader took all it wanted. Any other failure is an error.
pub fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes `path` through a temporary file beside it, renamed over it once complete: a
/// killed kbench or a full disk leaves the old file or none, never half an image.
pub fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let partial = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let written = std::fs::write(&partial, bytes).and_then(|()| std::fs::rename(&partial, path));
    written.or_else(|e| {
        let _ = std::fs::remove_file(&partial);
        usage(format!("cannot write {}: {e}", path.display()))
    })
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

/// A page to `output`, whole, saying where it went and its size; to stdout without one.
pub fn write_page(output: Option<&Path>, page: &str) -> anyhow::Result<()> {
    match output {
        Some(path) => {
            write_whole(path, page.as_bytes())?;
            outln!("wrote {} ({} bytes)", path.display(), page.len());
        }
        None => write_stdout(page.as_bytes())?,
    }
    Ok(())
}
