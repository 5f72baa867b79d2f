//! Files the user names.
use crate::error::usage;

/// A file's text, or stdin's for `-`; bytes that are not UTF-8 are a usage error.
pub fn read_text(file: &str) -> anyhow::Result<String> {
    let bytes = read_bytes(file)?;
    let name = if file == "-" { "standard input" } else { file };
    String::from_utf8(bytes).or_else(|_| usage(format!("{name}: not a text file (UTF-8)")))
}

/// A file's bytes, or stdin's for `-`; a file that cannot be read is a usage error.
pub fn read_bytes(file: impl AsRef<std::path::Path>) -> anyhow::Result<Vec<u8>> {
    let file = file.as_ref();
    if file.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)?;
        Ok(buf)
    } else {
        std::fs::read(file).or_else(|e| usage(format!("{}: {e}", file.display())))
    }
}
