//! A deterministic initramfs: the kernel's "newc" cpio format (magic `070701`),
//! written from scratch so the same inputs always give the same bytes: mtime 0,
//! owner root, inode numbers in entry order, entries in the order they were added.

use std::io::Write;

/// The bytes of a newc header before the name: magic plus 13 eight-digit hex fields.
const HEADER_LEN: usize = 110;
/// The name that ends every cpio archive.
const TRAILER: &str = "TRAILER!!!";

const S_IFDIR: u32 = 0o040_000;
const S_IFREG: u32 = 0o100_000;
const S_IFCHR: u32 = 0o020_000;
/// Only the permission, set-id and sticky bits of a caller's mode are kept: the file
/// type comes from the entry kind.
const PERMISSION_BITS: u32 = 0o7777;

/// The directories the kernel and kbench's init expect to mount or write into.
const BASE_DIRS: [&str; 5] = ["dev", "proc", "sys", "tmp", "run"];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InitramfsError {
    #[error("bad path in initramfs {path:?}: {reason}")]
    BadPath { path: String, reason: &'static str },
    #[error("{0:?} is already in the initramfs")]
    Exists(String),
    #[error("{0:?} is a file in the initramfs, not a directory")]
    NotADirectory(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Directory,
    File(Vec<u8>),
    CharDevice { major: u32, minor: u32 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// Relative to the root, without a leading slash, as the kernel's unpacker expects.
    path: String,
    kind: Kind,
    /// Permission bits only.
    permissions: u32,
}

impl Entry {
    fn mode(&self) -> u32 {
        let file_type = match self.kind {
            Kind::Directory => S_IFDIR,
            Kind::File(_) => S_IFREG,
            Kind::CharDevice { .. } => S_IFCHR,
        };
        file_type | self.permissions
    }

    fn data(&self) -> &[u8] {
        match &self.kind {
            Kind::File(data) => data,
            _ => &[],
        }
    }

    /// A directory's "." and its entry in the parent; cpio tools show 2.
    fn nlink(&self) -> u32 {
        match self.kind {
            Kind::Directory => 2,
            _ => 1,
        }
    }
}

/// An initramfs being assembled; [`Initramfs::to_cpio`] writes it out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Initramfs {
    entries: Vec<Entry>,
}

impl Initramfs {
    /// kbench's base image: dirs dev proc sys tmp run, /dev/console and /dev/null nodes,
    /// and `init_binary` as /init (mode 0755).
    pub fn with_init(init_binary: Vec<u8>) -> Initramfs {
        let mut image = Initramfs::default();
        for dir in BASE_DIRS {
            image.push(dir, Kind::Directory, 0o755);
        }
        // The kernel opens /dev/console for init's stdio before devtmpfs is mounted,
        // so the node must be in the archive itself.
        image.push(
            "dev/console",
            Kind::CharDevice { major: 5, minor: 1 },
            0o600,
        );
        image.push("dev/null", Kind::CharDevice { major: 1, minor: 3 }, 0o666);
        image.push("init", Kind::File(init_binary), 0o755);
        image
    }

    /// Adds a regular file at `dest` (leading slashes allowed, `..` not), creating the
    /// missing parent directories with mode 0755.
    pub fn add_file(&mut self, dest: &str, data: Vec<u8>, mode: u32) -> Result<(), InitramfsError> {
        let components = path_components(dest)?;
        let (name, parents) = components
            .split_last()
            .expect("path_components is never empty");
        let mut prefix = String::new();
        for parent in parents {
            append_component(&mut prefix, parent);
            self.ensure_directory(&prefix)?;
        }
        append_component(&mut prefix, name);
        if self.find(&prefix).is_some() {
            return Err(InitramfsError::Exists(prefix));
        }
        self.push(&prefix, Kind::File(data), mode);
        Ok(())
    }

    /// The uncompressed newc archive, trailer included.
    pub fn to_cpio(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (index, entry) in self.entries.iter().enumerate() {
            // Inode 0 is left to the trailer; numbers only need to be distinct so the
            // unpacker does not take two files for hard links of each other.
            let ino = index as u32 + 1;
            write_entry(&mut out, ino, entry);
        }
        write_trailer(&mut out);
        out
    }

    /// The archive gzip-compressed, with no file name and mtime 0 in the gzip header,
    /// so it is as reproducible as [`Initramfs::to_cpio`].
    pub fn to_gzip(&self) -> Vec<u8> {
        let mut encoder = flate2::GzBuilder::new()
            .mtime(0)
            .write(Vec::new(), flate2::Compression::default());
        encoder
            .write_all(&self.to_cpio())
            .expect("writing to a Vec cannot fail");
        encoder.finish().expect("writing to a Vec cannot fail")
    }

    fn push(&mut self, path: &str, kind: Kind, mode: u32) {
        self.entries.push(Entry {
            path: path.to_string(),
            kind,
            permissions: mode & PERMISSION_BITS,
        });
    }

    fn find(&self, path: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.path == path)
    }

    fn ensure_directory(&mut self, path: &str) -> Result<(), InitramfsError> {
        match self.find(path).map(|entry| &entry.kind) {
            Some(Kind::Directory) => Ok(()),
            Some(_) => Err(InitramfsError::NotADirectory(path.to_string())),
            None => {
                self.push(path, Kind::Directory, 0o755);
                Ok(())
            }
        }
    }
}

/// Splits `dest` into its names; `.` and repeated slashes are dropped, and a path
/// that could leave the root (`..`) or names nothing is refused.
fn path_components(dest: &str) -> Result<Vec<&str>, InitramfsError> {
    let bad = |reason| InitramfsError::BadPath {
        path: dest.to_string(),
        reason,
    };
    if dest.contains('\0') {
        return Err(bad("it contains a NUL byte"));
    }
    let components: Vec<&str> = dest
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if components.contains(&"..") {
        return Err(bad("`..` is not allowed"));
    }
    if components.is_empty() {
        return Err(bad("it names no file"));
    }
    Ok(components)
}

fn append_component(prefix: &mut String, component: &str) {
    if !prefix.is_empty() {
        prefix.push('/');
    }
    prefix.push_str(component);
}

fn write_entry(out: &mut Vec<u8>, ino: u32, entry: &Entry) {
    let (rdev_major, rdev_minor) = match entry.kind {
        Kind::CharDevice { major, minor } => (major, minor),
        _ => (0, 0),
    };
    let data = entry.data();
    let fields = HeaderFields {
        ino,
        mode: entry.mode(),
        nlink: entry.nlink(),
        file_size: data.len() as u32,
        rdev_major,
        rdev_minor,
    };
    write_header_and_name(out, &fields, &entry.path);
    out.extend_from_slice(data);
    pad_to_four(out);
}

fn write_trailer(out: &mut Vec<u8>) {
    let fields = HeaderFields {
        ino: 0,
        mode: 0,
        nlink: 1,
        file_size: 0,
        rdev_major: 0,
        rdev_minor: 0,
    };
    write_header_and_name(out, &fields, TRAILER);
}

/// The header fields that vary; uid, gid, mtime, the containing device and the
/// checksum are always 0.
struct HeaderFields {
    ino: u32,
    mode: u32,
    nlink: u32,
    file_size: u32,
    rdev_major: u32,
    rdev_minor: u32,
}

fn write_header_and_name(out: &mut Vec<u8>, fields: &HeaderFields, name: &str) {
    let name_size = name.len() as u32 + 1; // the NUL counts
    let values = [
        fields.ino,
        fields.mode,
        0, // uid
        0, // gid
        fields.nlink,
        0, // mtime
        fields.file_size,
        0, // devmajor
        0, // devminor
        fields.rdev_major,
        fields.rdev_minor,
        name_size,
        0, // check: only used by the "070702" variant
    ];
    let start = out.len();
    out.extend_from_slice(b"070701");
    for value in values {
        out.extend_from_slice(format!("{value:08X}").as_bytes());
    }
    debug_assert_eq!(out.len() - start, HEADER_LEN);
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    // The archive starts 4-aligned and every record ends 4-aligned, so padding the
    // whole buffer pads header plus name as the format requires.
    pad_to_four(out);
}

fn pad_to_four(out: &mut Vec<u8>) {
    out.resize(out.len().next_multiple_of(4), 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_110_bytes_and_name_is_padded() {
        let image = Initramfs::default();
        let cpio = image.to_cpio();
        // Trailer only: 110 + "TRAILER!!!\0" (11) = 121, padded to 124.
        assert_eq!(cpio.len(), 124);
        assert_eq!(&cpio[..6], b"070701");
        assert_eq!(&cpio[HEADER_LEN..HEADER_LEN + 10], TRAILER.as_bytes());
    }

    #[test]
    fn add_file_creates_parents_once() {
        let mut image = Initramfs::default();
        image.add_file("/usr/bin/a", vec![1], 0o755).unwrap();
        image.add_file("usr//bin/./b", vec![2], 0o644).unwrap();
        let paths: Vec<&str> = image.entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["usr", "usr/bin", "usr/bin/a", "usr/bin/b"]);
    }

    #[test]
    fn add_file_refuses_escapes_duplicates_and_files_as_dirs() {
        let mut image = Initramfs::with_init(vec![]);
        assert!(matches!(
            image.add_file("../etc/passwd", vec![], 0o644),
            Err(InitramfsError::BadPath { .. })
        ));
        assert!(matches!(
            image.add_file("/", vec![], 0o644),
            Err(InitramfsError::BadPath { .. })
        ));
        assert_eq!(
            image.add_file("/init", vec![], 0o644),
            Err(InitramfsError::Exists("init".into()))
        );
        assert_eq!(
            image.add_file("/init/x", vec![], 0o644),
            Err(InitramfsError::NotADirectory("init".into()))
        );
    }
}
