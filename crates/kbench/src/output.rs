//! Whole texts to standard output, and whole files.
use crate::error::usage;
use std::path::Path;

/// stdout that ends quietly when closed, kbench-term's, as `out!` and `outln!` write.
pub use kbench_term::write_stdout;

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
