//! kbench's own JSON export (`kbench export --format json`): a label's sessions whole,
//! and the kernel configs they ran on, each once by the hash that names it in the store
//! too. The store writes it; kbench-import reads it back.
use crate::stored::SessionWithRuns;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The marker and version of the JSON export format.
pub const EXPORT_FORMAT: &str = "kbench-export";
/// 2: typed failures (`error`), `ab_side`, primary values, structured `source`, and
/// pipe's `perf_signed_loops` in the record instead of a parameter. Version 1 exports
/// are read and upgraded. Kernel configs came later without a new version: a reader
/// that does not know them ignores them, and loses nothing else.
pub const EXPORT_VERSION: u32 = 2;

/// A label's sessions, as `kbench export --format json` writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Export {
    pub format: String,
    pub version: u32,
    pub label: String,
    pub sessions: Vec<SessionWithRuns>,
    /// The kernel configs the sessions ran on, each once, by hash
    /// ([`SessionWithRuns::kernel_config_hash`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kernel_configs: BTreeMap<String, String>,
}

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
