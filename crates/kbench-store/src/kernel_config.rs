//! The kernel config text a session ran on, as the store keeps it: normalized, named
//! by its sha256 and gzip-compressed. The store does not read the options; that is
//! `kbench_sys::kconfig`.
pub use kbench_record::export::{config_hash, normalized};
use std::io::{Read, Write};

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
