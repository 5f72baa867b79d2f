//! Kernel configurations: the text of a `.config` (`/proc/config.gz`,
//! `/boot/config-RELEASE`, the `config-*` of a Debian kernel package) read into
//! options, the options two configurations set differently, and where the running
//! kernel keeps its own.
//!
//! An option is `n` when its line says `# CONFIG_X is not set`, says `CONFIG_X=n`, or
//! is not there at all: Kconfig writes the first for a visible option that is off and
//! nothing for one whose dependencies hide it, and both build the same kernel.
use crate::{SysError, Sysroot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The running kernel's config, when it was built with `CONFIG_IKCONFIG_PROC`.
pub const PROC_CONFIG_GZ: &str = "/proc/config.gz";

/// A decompressed config larger than this is not a kernel config (a distribution's
/// is under 300 KB).
const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The value of one option, as a `.config` line spells it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum ConfigValue {
    /// `=y`: built in.
    Yes,
    /// `=m`: built as a module.
    Module,
    /// `# ... is not set`, `=n`, or no line at all.
    No,
    /// `="text"`: the text without its quotes and escapes.
    Str(String),
    /// `=250`, `=-1`, `=0x1000000`: as written.
    Number(String),
}

impl ConfigValue {
    /// The value of the text after `=`, `None` when it is none Kconfig writes.
    pub fn parse(raw: &str) -> Option<ConfigValue> {
        match raw {
            "y" => Some(ConfigValue::Yes),
            "m" => Some(ConfigValue::Module),
            "n" => Some(ConfigValue::No),
            _ if raw.starts_with('"') => unquote(raw).map(ConfigValue::Str),
            _ if is_number(raw) => Some(ConfigValue::Number(raw.to_string())),
            _ => None,
        }
    }

    /// Whether the option is on or has a value (anything but `n`).
    pub fn is_set(&self) -> bool {
        *self != ConfigValue::No
    }
}

impl fmt::Display for ConfigValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigValue::Yes => f.write_str("y"),
            ConfigValue::Module => f.write_str("m"),
            ConfigValue::No => f.write_str("n"),
            ConfigValue::Str(text) => write!(f, "\"{}\"", escape(text)),
            ConfigValue::Number(text) => f.write_str(text),
        }
    }
}

impl From<ConfigValue> for String {
    fn from(value: ConfigValue) -> String {
        value.to_string()
    }
}

impl TryFrom<String> for ConfigValue {
    type Error = String;

    fn try_from(text: String) -> Result<ConfigValue, String> {
        ConfigValue::parse(&text).ok_or_else(|| format!("not a kernel config value: {text}"))
    }
}

/// Decimal (`-1`, `250`) or hexadecimal with its `0x` (`0x1000000`), as Kconfig's
/// int and hex options are written.
fn is_number(raw: &str) -> bool {
    let all =
        |digits: &str, radix: u32| !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
    match raw.strip_prefix("0x").or_else(|| raw.strip_prefix("0X")) {
        Some(hex) => all(hex, 16),
        None => all(raw.strip_prefix('-').unwrap_or(raw), 10),
    }
}

/// The text of `"..."` with Kconfig's two escapes (`\"`, `\\`) undone; `None` when
/// the quotes do not close at the end.
fn unquote(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '"' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A kernel config read into its options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelConfig {
    /// Every option a line names, `n` included; a later line wins, as in Kconfig.
    options: BTreeMap<String, ConfigValue>,
    /// Lines that are neither an option, a comment nor blank.
    ignored_lines: usize,
}

/// What one line of a config says.
enum Line<'a> {
    Option(&'a str, ConfigValue),
    CommentOrBlank,
    Unknown,
}

fn is_option_name(name: &str) -> bool {
    name.strip_prefix("CONFIG_").is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn parse_line(line: &str) -> Line<'_> {
    let line = line.trim_end();
    if let Some(comment) = line.strip_prefix('#') {
        let not_set = comment
            .strip_prefix(' ')
            .and_then(|c| c.strip_suffix(" is not set"))
            .filter(|name| is_option_name(name));
        return match not_set {
            Some(name) => Line::Option(name, ConfigValue::No),
            None => Line::CommentOrBlank,
        };
    }
    if line.trim_start().is_empty() {
        return Line::CommentOrBlank;
    }
    let parsed = line
        .split_once('=')
        .filter(|(name, _)| is_option_name(name))
        .and_then(|(name, raw)| Some((name, ConfigValue::parse(raw)?)));
    match parsed {
        Some((name, value)) => Line::Option(name, value),
        None => Line::Unknown,
    }
}

impl KernelConfig {
    /// Reads a config's text. Lines it does not understand are skipped and counted
    /// ([`KernelConfig::ignored_lines`]), as Kconfig itself skips them with a warning.
    pub fn parse(text: &str) -> KernelConfig {
        let mut config = KernelConfig::default();
        for line in text.lines() {
            match parse_line(line) {
                Line::Option(name, value) => {
                    config.options.insert(name.to_string(), value);
                }
                Line::CommentOrBlank => {}
                Line::Unknown => config.ignored_lines += 1,
            }
        }
        config
    }

    /// The value of `option` (`CONFIG_X`): `n` when no line names it.
    pub fn value(&self, option: &str) -> &ConfigValue {
        self.options.get(option).unwrap_or(&ConfigValue::No)
    }

    /// The options that are not `n`, in name order.
    pub fn set_options(&self) -> impl Iterator<Item = (&str, &ConfigValue)> {
        self.options
            .iter()
            .filter(|(_, v)| v.is_set())
            .map(|(k, v)| (k.as_str(), v))
    }

    /// How many options are not `n`.
    pub fn set_count(&self) -> usize {
        self.set_options().count()
    }

    /// Whether no line named an option: the text is not a kernel config.
    pub fn is_empty(&self) -> bool {
        self.options.is_empty()
    }

    /// Lines that were neither an option, a comment nor blank.
    pub fn ignored_lines(&self) -> usize {
        self.ignored_lines
    }
}

/// An option two configs set differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigDifference {
    /// `CONFIG_X`.
    pub option: String,
    /// Its value in the base config.
    pub base: ConfigValue,
    /// Its value in the new config.
    pub new: ConfigValue,
}

impl ConfigDifference {
    /// Set on both sides, to different values (`y` to `m`, `250` to `1000`), rather
    /// than set on one side only.
    pub fn is_change(&self) -> bool {
        self.base.is_set() && self.new.is_set()
    }
}

/// The options whose values differ, in name order; `n` and absent are the same value.
pub fn differences(base: &KernelConfig, new: &KernelConfig) -> Vec<ConfigDifference> {
    let mut names: Vec<&String> = base.options.keys().chain(new.options.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let (b, n) = (base.value(name), new.value(name));
            (b != n).then(|| ConfigDifference {
                option: name.clone(),
                base: b.clone(),
                new: n.clone(),
            })
        })
        .collect()
}

/// A config's text and the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Where it was read: a machine path (`/proc/config.gz`) for the running kernel.
    pub path: PathBuf,
    /// The config itself, decompressed.
    pub text: String,
}

/// The running kernel's config: `/proc/config.gz` when the kernel has one, else
/// `/boot/config-RELEASE` (Debian, Fedora and `make install` put it there), read under
/// `root`. `None` when neither is there or readable; like the rest of the machine, an
/// unreadable config is a missing one.
pub fn read_running(root: &Sysroot) -> Option<ConfigFile> {
    let proc_config = || {
        let text = decompressed(&std::fs::read(root.path(PROC_CONFIG_GZ)).ok()?).ok()?;
        Some(ConfigFile {
            path: PROC_CONFIG_GZ.into(),
            text,
        })
    };
    let boot_config = || {
        let release = root.read_value("/proc/sys/kernel/osrelease")?;
        let path = format!("/boot/config-{release}");
        let text = root.read(&path)?;
        Some(ConfigFile {
            path: path.into(),
            text,
        })
    };
    // Each on its own merits: a /proc/config.gz that holds no option must not hide a
    // good /boot config.
    let is_config = |c: &ConfigFile| !KernelConfig::parse(&c.text).is_empty();
    proc_config()
        .filter(is_config)
        .or_else(|| boot_config().filter(is_config))
}

/// A config file someone named (text, or gzip as `/proc/config.gz` is); an error when
/// it cannot be read or names no option.
pub fn read_file(path: &Path) -> Result<String, SysError> {
    let fail = |reason: String| SysError::KernelConfig {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
    let text = decompressed(&bytes).map_err(fail)?;
    if KernelConfig::parse(&text).is_empty() {
        return Err(fail("not a kernel config (no CONFIG_ line)".into()));
    }
    Ok(text)
}

/// The text of `bytes`, gunzipped first when they are gzip; at most
/// `MAX_CONFIG_BYTES`.
fn decompressed(bytes: &[u8]) -> Result<String, String> {
    let plain = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .take(MAX_CONFIG_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("bad gzip: {e}"))?;
        out
    } else {
        bytes.to_vec()
    };
    if plain.len() as u64 > MAX_CONFIG_BYTES {
        return Err(format!(
            "over {} MiB: not a kernel config",
            MAX_CONFIG_BYTES >> 20
        ));
    }
    String::from_utf8(plain).map_err(|_| "not text: not a kernel config".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
#
# Automatically generated file; DO NOT EDIT.
# Linux/x86 6.1.0 Kernel Configuration
#
CONFIG_CC_VERSION_TEXT=\"gcc-12 (Debian 12.2.0-14) 12.2.0\"
CONFIG_64BIT=y
CONFIG_HZ=250
CONFIG_PHYSICAL_START=0x1000000
CONFIG_EXT4_FS=m
# CONFIG_KASAN is not set
CONFIG_CMDLINE=\"quote \\\" and backslash \\\\\"

# end of General setup
CONFIG_NR_CPUS_DEFAULT=-1
";

    #[test]
    fn every_kind_of_line_reads() {
        let c = KernelConfig::parse(SAMPLE);
        assert_eq!(c.value("CONFIG_64BIT"), &ConfigValue::Yes);
        assert_eq!(c.value("CONFIG_EXT4_FS"), &ConfigValue::Module);
        assert_eq!(c.value("CONFIG_KASAN"), &ConfigValue::No);
        assert_eq!(c.value("CONFIG_ABSENT"), &ConfigValue::No);
        assert_eq!(c.value("CONFIG_HZ"), &ConfigValue::Number("250".into()));
        assert_eq!(
            c.value("CONFIG_PHYSICAL_START"),
            &ConfigValue::Number("0x1000000".into())
        );
        assert_eq!(
            c.value("CONFIG_NR_CPUS_DEFAULT"),
            &ConfigValue::Number("-1".into())
        );
        assert_eq!(
            c.value("CONFIG_CMDLINE"),
            &ConfigValue::Str("quote \" and backslash \\".into())
        );
        assert_eq!(
            c.value("CONFIG_CC_VERSION_TEXT"),
            &ConfigValue::Str("gcc-12 (Debian 12.2.0-14) 12.2.0".into())
        );
        assert_eq!(c.set_count(), 7);
        assert_eq!(c.ignored_lines(), 0);
    }

    #[test]
    fn lines_kconfig_would_not_write_are_counted_and_skipped() {
        let c = KernelConfig::parse(
            "CONFIG_A=y\nCONFIG_B=maybe\nCONFIG_C=\"open\nFOO=y\nCONFIG_=y\nrandom words\n\
             #CONFIG_D is not set\n# CONFIG_E is not set, really\n",
        );
        assert_eq!(c.set_count(), 1);
        assert_eq!(c.ignored_lines(), 5);
        // A comment that only looks like "is not set" stays a comment.
        assert!(!c.options.contains_key("CONFIG_D"));
        assert!(!c.options.contains_key("CONFIG_E"));
    }

    #[test]
    fn crlf_and_trailing_blanks_do_not_change_a_value() {
        let c = KernelConfig::parse("CONFIG_A=y\r\nCONFIG_B=\"x\"  \r\n# CONFIG_C is not set\r\n");
        assert_eq!(c.value("CONFIG_A"), &ConfigValue::Yes);
        assert_eq!(c.value("CONFIG_B"), &ConfigValue::Str("x".into()));
        assert_eq!(c.ignored_lines(), 0);
    }

    #[test]
    fn not_set_and_absent_are_the_same_value() {
        let a = KernelConfig::parse("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_D=n\n");
        let b = KernelConfig::parse("CONFIG_A=y\n# CONFIG_D is not set\n");
        assert!(differences(&a, &b).is_empty());
    }

    #[test]
    fn differences_name_each_option_once_with_both_values() {
        let a = KernelConfig::parse("CONFIG_A=y\nCONFIG_B=y\nCONFIG_HZ=250\n");
        let b = KernelConfig::parse("CONFIG_A=m\nCONFIG_C=y\nCONFIG_HZ=1000\n");
        let d = differences(&a, &b);
        let text: Vec<String> = d
            .iter()
            .map(|d| format!("{} {} {} {}", d.option, d.base, d.new, d.is_change()))
            .collect();
        assert_eq!(
            text,
            [
                "CONFIG_A y m true",
                "CONFIG_B y n false",
                "CONFIG_C n y false",
                "CONFIG_HZ 250 1000 true"
            ]
        );
    }

    #[test]
    fn values_serialize_as_their_config_spelling() {
        let d = ConfigDifference {
            option: "CONFIG_X".into(),
            base: ConfigValue::Str("a\"b".into()),
            new: ConfigValue::No,
        };
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(
            json,
            r#"{"option":"CONFIG_X","base":"\"a\\\"b\"","new":"n"}"#
        );
        assert_eq!(serde_json::from_str::<ConfigDifference>(&json).unwrap(), d);
        assert!(serde_json::from_str::<ConfigValue>("\"maybe\"").is_err());
    }

    fn gzip(text: &str) -> Vec<u8> {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text.as_bytes()).unwrap();
        enc.finish().unwrap()
    }

    fn write(root: &Path, rel: &str, bytes: &[u8]) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn the_running_config_is_proc_config_gz_first_then_boot() {
        let dir = tempfile::tempdir().unwrap();
        let root = Sysroot::new(dir.path());
        assert_eq!(read_running(&root), None);
        write(
            dir.path(),
            "proc/sys/kernel/osrelease",
            b"6.1.0-57-cloud-amd64\n",
        );
        write(
            dir.path(),
            "boot/config-6.1.0-57-cloud-amd64",
            b"CONFIG_BOOT=y\n",
        );
        let boot = read_running(&root).unwrap();
        assert_eq!(boot.path, Path::new("/boot/config-6.1.0-57-cloud-amd64"));
        assert_eq!(boot.text, "CONFIG_BOOT=y\n");
        write(dir.path(), "proc/config.gz", &gzip("CONFIG_PROC=y\n"));
        let proc = read_running(&root).unwrap();
        assert_eq!(proc.path, Path::new(PROC_CONFIG_GZ));
        assert_eq!(proc.text, "CONFIG_PROC=y\n");
    }

    #[test]
    fn a_broken_proc_config_falls_back_to_boot() {
        let dir = tempfile::tempdir().unwrap();
        let root = Sysroot::new(dir.path());
        write(dir.path(), "proc/config.gz", &[0x1f, 0x8b, 1, 2, 3]);
        write(dir.path(), "proc/sys/kernel/osrelease", b"6.12.1\n");
        write(dir.path(), "boot/config-6.12.1", b"CONFIG_BOOT=y\n");
        assert_eq!(read_running(&root).unwrap().text, "CONFIG_BOOT=y\n");
        // Good gzip that holds no option is as broken.
        write(dir.path(), "proc/config.gz", &gzip("not a config\n"));
        assert_eq!(read_running(&root).unwrap().text, "CONFIG_BOOT=y\n");
        // Another release's config is not this kernel's.
        write(dir.path(), "proc/sys/kernel/osrelease", b"6.12.2\n");
        assert_eq!(read_running(&root), None);
    }

    #[test]
    fn a_named_file_is_text_or_gzip_and_must_be_a_config() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "plain", b"CONFIG_A=y\n");
        write(dir.path(), "packed", &gzip("CONFIG_B=m\n"));
        write(dir.path(), "other", b"hello\n");
        assert_eq!(
            read_file(&dir.path().join("plain")).unwrap(),
            "CONFIG_A=y\n"
        );
        assert_eq!(
            read_file(&dir.path().join("packed")).unwrap(),
            "CONFIG_B=m\n"
        );
        let e = read_file(&dir.path().join("other"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no CONFIG_ line"), "{e}");
        let e = read_file(&dir.path().join("missing"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing"), "{e}");
    }
}
