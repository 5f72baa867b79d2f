//! The kernel config text a session ran on, as the store keeps it: normalized, named
//! by its sha256 and gzip-compressed. The store does not read the options; that is
//! `kbench_sys::kconfig`.
use sha2::{Digest, Sha256};
use std::io::{Read, Write};

/// The text with `\r\n` line ends and trailing blanks gone and every line ended by
/// `\n`: the same config read from a file, a package or a serial capture is one text.
pub fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for line in text.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The key of a config in the store: the sha256 (64 hex digits) of its normalized
/// text, so `sha256sum` of an exported config gives it too.
pub fn config_hash(text: &str) -> String {
    format!("{:x}", Sha256::digest(normalized(text).as_bytes()))
}

pub(crate) fn gzip(text: &str) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    enc.write_all(text.as_bytes())
        .and_then(|()| enc.finish())
        .unwrap_or_default()
}

/// The largest text a stored blob may expand to: a kernel config is about 300 KB, and
/// a damaged or hostile database must not make a read allocate without bound.
const MAX_GUNZIP_BYTES: u64 = 64 << 20;

pub(crate) fn gunzip(bytes: &[u8]) -> Result<String, String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes)
        .take(MAX_GUNZIP_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_GUNZIP_BYTES {
        return Err(format!("expands beyond {} MiB", MAX_GUNZIP_BYTES >> 20));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ends_and_trailing_blanks_do_not_change_the_hash() {
        let unix = "CONFIG_A=y\n# CONFIG_B is not set\n";
        assert_eq!(
            config_hash(unix),
            config_hash("CONFIG_A=y  \r\n# CONFIG_B is not set")
        );
        assert_ne!(
            config_hash(unix),
            config_hash("CONFIG_A=m\n# CONFIG_B is not set\n")
        );
        // What `printf 'CONFIG_A=y\n' | sha256sum` prints.
        assert_eq!(
            config_hash("CONFIG_A=y"),
            "e7e1b2c0a9031fbc9e999438d6d65847f80ddd76244dfc5a1efac71731d40f85"
        );
    }

    #[test]
    fn gzip_round_trips() {
        let text = normalized("CONFIG_A=\"x\"\n");
        assert_eq!(gunzip(&gzip(&text)).unwrap(), text);
        assert!(gunzip(b"not gzip").is_err());
    }
}
