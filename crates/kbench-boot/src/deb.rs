//! The kernel out of a Debian `linux-image-*.deb`, or a kernel image file as is.
//!
//! A .deb is an `ar` archive of `debian-binary`, `control.tar.*` and `data.tar.*`;
//! the kernel is `/boot/vmlinuz-RELEASE` in the data tarball, its configuration
//! `/boot/config-RELEASE`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

const AR_MAGIC: &[u8] = b"!<arch>\n";
/// x86 boot protocol: the setup header's magic and where the version string's offset is.
const BZIMAGE_MAGIC_OFFSET: usize = 0x202;
const BZIMAGE_MAGIC: &[u8] = b"HdrS";
const BZIMAGE_VERSION_POINTER: usize = 0x20e;
/// The version pointer counts from the end of the 512-byte boot sector.
const BZIMAGE_VERSION_BASE: usize = 0x200;
/// arm64's Image header (Documentation/arch/arm64/booting.rst): "ARM\x64" at 0x38.
const ARM64_MAGIC_OFFSET: usize = 0x38;
const ARM64_MAGIC: &[u8] = b"ARM\x64";

const KERNEL_PREFIX: &str = "boot/vmlinuz-";
const CONFIG_PREFIX: &str = "boot/config-";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelImage {
    /// `uname -r` of the kernel; empty when a bare image does not say.
    pub release: String,
    pub kernel: Vec<u8>,
    pub config: Option<String>,
    /// The modules the guest loads before its suite, in load order
    /// ([`crate::modules`]); none for a bare image.
    pub modules: Vec<crate::modules::Module>,
}

#[derive(Debug, thiserror::Error)]
pub enum DebError {
    #[error("not a Debian package (no ar archive header)")]
    NotADeb,
    #[error("not a kernel: neither a Debian package, an x86 bzImage nor an arm64 Image")]
    NotAKernel,
    #[error("broken Debian package: {0}")]
    Corrupt(String),
    #[error("the package has no data.tar member")]
    NoData,
    #[error("unsupported compression of the package's {0}")]
    UnsupportedCompression(String),
    #[error("the package has no /boot/vmlinuz-*: not a linux-image package?")]
    NoKernel,
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// The kernel, its release and its config from the bytes of a linux-image .deb.
pub fn kernel_from_deb(bytes: &[u8]) -> Result<KernelImage, DebError> {
    if !bytes.starts_with(AR_MAGIC) {
        return Err(DebError::NotADeb);
    }
    let (member, compressed) = data_member(bytes)?;
    let tarball = decompress(&member, &compressed)?;
    kernel_from_tarball(&tarball)
}

/// A .deb, or a kernel image (bzImage, arm64 Image) taken as is; a bzImage's release
/// comes from its header, an Image's is left empty.
pub fn kernel_from_path(path: &Path) -> Result<KernelImage, DebError> {
    let bytes = std::fs::read(path).map_err(|source| DebError::Io {
        path: path.display().to_string(),
        source,
    })?;
    if bytes.starts_with(AR_MAGIC) {
        return kernel_from_deb(&bytes);
    }
    if has_magic(&bytes, BZIMAGE_MAGIC_OFFSET, BZIMAGE_MAGIC) {
        let release = bzimage_release(&bytes).unwrap_or_default();
        return Ok(bare_image(release, bytes));
    }
    if image_arch(&bytes) == Some(ImageArch::Arm64) {
        return Ok(bare_image(String::new(), bytes));
    }
    Err(DebError::NotAKernel)
}

/// What a kernel image boots on, which decides the qemu binary and machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageArch {
    X86_64,
    Arm64,
}

impl ImageArch {
    pub fn as_str(self) -> &'static str {
        match self {
            ImageArch::X86_64 => "x86_64",
            ImageArch::Arm64 => "arm64",
        }
    }
}

impl KernelImage {
    pub fn arch(&self) -> Option<ImageArch> {
        image_arch(&self.kernel)
    }
}

/// A bzImage is x86; an arm64 Image has its magic in the header, and Debian ships it
/// gzipped as vmlinuz (qemu loads it so), so the header is looked for inside too.
fn image_arch(image: &[u8]) -> Option<ImageArch> {
    if has_magic(image, BZIMAGE_MAGIC_OFFSET, BZIMAGE_MAGIC) {
        return Some(ImageArch::X86_64);
    }
    if has_magic(image, ARM64_MAGIC_OFFSET, ARM64_MAGIC) {
        return Some(ImageArch::Arm64);
    }
    if image.starts_with(&[0x1f, 0x8b]) {
        let mut header = Vec::with_capacity(ARM64_MAGIC_OFFSET + ARM64_MAGIC.len());
        let wanted = (ARM64_MAGIC_OFFSET + ARM64_MAGIC.len()) as u64;
        let _ = flate2::read::GzDecoder::new(image)
            .take(wanted)
            .read_to_end(&mut header);
        if has_magic(&header, ARM64_MAGIC_OFFSET, ARM64_MAGIC) {
            return Some(ImageArch::Arm64);
        }
    }
    None
}

/// The release a bzImage announces, the first word of its version string
/// ("6.1.0-57-cloud-amd64 (debian-kernel@...) #1 SMP ...").
pub fn bzimage_release(image: &[u8]) -> Option<String> {
    if !has_magic(image, BZIMAGE_MAGIC_OFFSET, BZIMAGE_MAGIC) {
        return None;
    }
    let pointer = image.get(BZIMAGE_VERSION_POINTER..BZIMAGE_VERSION_POINTER + 2)?;
    let offset = u16::from_le_bytes([pointer[0], pointer[1]]) as usize;
    // Old boot protocols leave the pointer 0: no version string.
    if offset == 0 {
        return None;
    }
    let text = image.get(offset + BZIMAGE_VERSION_BASE..)?;
    let end = text.iter().position(|&b| b == 0)?;
    let version = std::str::from_utf8(&text[..end]).ok()?;
    version.split_whitespace().next().map(str::to_string)
}

fn bare_image(release: String, kernel: Vec<u8>) -> KernelImage {
    KernelImage {
        release,
        kernel,
        config: None,
        modules: Vec::new(),
    }
}

fn has_magic(bytes: &[u8], offset: usize, magic: &[u8]) -> bool {
    bytes.get(offset..offset + magic.len()) == Some(magic)
}

/// The `data.tar.*` member's name and bytes.
fn data_member(bytes: &[u8]) -> Result<(String, Vec<u8>), DebError> {
    let mut archive = ar::Archive::new(bytes);
    while let Some(entry) = archive.next_entry() {
        let mut entry = entry.map_err(|e| DebError::Corrupt(format!("ar archive: {e}")))?;
        let name = String::from_utf8_lossy(entry.header().identifier()).into_owned();
        if name.starts_with("data.tar") {
            let mut data = Vec::new();
            entry
                .read_to_end(&mut data)
                .map_err(|e| DebError::Corrupt(format!("{name}: {e}")))?;
            return Ok((name, data));
        }
    }
    Err(DebError::NoData)
}

/// The tarball inside `data.tar.{xz,zst,gz}` (or a plain `data.tar`).
fn decompress(member: &str, compressed: &[u8]) -> Result<Vec<u8>, DebError> {
    let suffix = member.strip_prefix("data.tar").unwrap_or(member);
    if suffix.is_empty() {
        return Ok(compressed.to_vec());
    }
    match crate::modules::decompress_by_suffix(suffix, compressed) {
        Some(out) => out.map_err(|e| DebError::Corrupt(format!("{member}: {e}"))),
        None => Err(DebError::UnsupportedCompression(member.to_string())),
    }
}

fn kernel_from_tarball(tarball: &[u8]) -> Result<KernelImage, DebError> {
    let corrupt = |e: std::io::Error| DebError::Corrupt(format!("data tarball: {e}"));
    let mut kernel = None;
    let mut config = None;
    let mut modules = BTreeMap::new();
    let mut archive = tar::Archive::new(tarball);
    for entry in archive.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .map_err(corrupt)?
            .to_string_lossy()
            .into_owned();
        // Debian's tarballs name members "./boot/...".
        let path = path.trim_start_matches("./").trim_start_matches('/');
        if let Some(release) = path.strip_prefix(KERNEL_PREFIX) {
            let release = release.to_string();
            kernel = Some((release, read_entry(&mut entry).map_err(corrupt)?));
        } else if path.starts_with(CONFIG_PREFIX) {
            let bytes = read_entry(&mut entry).map_err(corrupt)?;
            config = Some(String::from_utf8_lossy(&bytes).into_owned());
        } else if let Some(name) = crate::modules::kept_module_name(path) {
            let bytes = read_entry(&mut entry).map_err(corrupt)?;
            let bytes = crate::modules::uncompressed(path, bytes).map_err(DebError::Corrupt)?;
            modules.insert(name, bytes);
        }
    }
    let (release, kernel) = kernel.ok_or(DebError::NoKernel)?;
    Ok(KernelImage {
        release,
        kernel,
        config,
        modules: crate::modules::load_order(&modules, crate::modules::GUEST_MODULES),
    })
}

fn read_entry(entry: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    entry.read_to_end(&mut bytes)?;
    Ok(bytes)
}
