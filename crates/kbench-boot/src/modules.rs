//! The kernel modules a guest loads before its suite: the driver of vm-ab's scratch
//! disk (`virtio_blk`) and its transport (`virtio_pci`), with what they depend on, as
//! a Debian kernel package ships them (Debian's cloud kernels build both as modules:
//! without them the guest has no `/dev/vda`).
//!
//! The package has no `modules.dep` (depmod makes it at install time), so the order
//! comes from each module's own `.modinfo`: its `depends=` names the modules that must
//! be loaded first. A dependency the package does not ship as a module is built in.
//! The modules travel uncompressed in the initramfs (`kbench/modules/RELEASE/`,
//! numbered in load order), so the guest needs no decompressor and the kernel no
//! `CONFIG_MODULE_DECOMPRESS`.
use std::collections::BTreeMap;
use std::io::{Cursor, Read};

/// What the guest's suite needs loaded, roots first; their dependencies are added.
pub const GUEST_MODULES: &[&str] = &["virtio_pci", "virtio_blk"];

/// Where the modules of kernel RELEASE lie in the initramfs: `DIR/RELEASE/NN-NAME.ko`.
pub const INITRAMFS_DIR: &str = "kbench/modules";

/// One module, uncompressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// The name the kernel knows it by (`virtio_blk`: dashes read as underscores).
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The directories of a package's module tree whose modules are kept while reading it:
/// the guest's modules and what they depend on all lie there.
const KEPT_DIRS: [&str; 2] = ["/kernel/drivers/virtio/", "/kernel/drivers/block/"];

/// The module name of a package path (`lib/modules/R/kernel/drivers/block/virtio_blk.ko.xz`
/// -> `virtio_blk`) when it is a module in one of the kept directories.
pub fn kept_module_name(path: &str) -> Option<String> {
    if !path.starts_with("lib/modules/") || !KEPT_DIRS.iter().any(|d| path.contains(d)) {
        return None;
    }
    let file = path.rsplit('/').next()?;
    let stem = [".ko", ".ko.xz", ".ko.zst", ".ko.gz"]
        .iter()
        .find_map(|ext| file.strip_suffix(ext))?;
    Some(stem.replace('-', "_"))
}

/// A module file's bytes uncompressed, by its name's extension.
pub fn uncompressed(path: &str, bytes: Vec<u8>) -> Result<Vec<u8>, String> {
    let suffix = path.rsplit_once(".ko").map_or("", |(_, suffix)| suffix);
    match decompress_by_suffix(suffix, &bytes) {
        Some(out) => out.map_err(|e| format!("{path}: {e}")),
        None => Ok(bytes),
    }
}

/// The modules a module's `.modinfo` says it depends on. The section is a run of
/// NUL-terminated `key=value` strings; `depends=` is found by its text, which cannot
/// occur elsewhere preceded by a NUL.
pub fn depends(module: &[u8]) -> Vec<String> {
    const KEY: &[u8] = b"\0depends=";
    let Some(at) = module.windows(KEY.len()).position(|w| w == KEY) else {
        return Vec::new();
    };
    let value = &module[at + KEY.len()..];
    let end = value.iter().position(|&b| b == 0).unwrap_or(value.len());
    String::from_utf8_lossy(&value[..end])
        .split(',')
        .map(|d| d.trim().replace('-', "_"))
        .filter(|d| !d.is_empty())
        .collect()
}

/// `wanted` and their dependencies among `available` (uncompressed, by name), each
/// after what it depends on. A wanted module the package does not have is built in
/// (or absent): nothing to load.
pub fn load_order(available: &BTreeMap<String, Vec<u8>>, wanted: &[&str]) -> Vec<Module> {
    let mut order: Vec<Module> = Vec::new();
    for root in wanted {
        visit(root, available, &mut order, &mut Vec::new());
    }
    order
}

fn visit(
    name: &str,
    available: &BTreeMap<String, Vec<u8>>,
    order: &mut Vec<Module>,
    path: &mut Vec<String>,
) {
    let Some(bytes) = available.get(name) else {
        return;
    };
    // A cycle cannot be loaded in any order; a broken package is not worth a hang.
    if order.iter().any(|m| m.name == name) || path.iter().any(|p| p == name) {
        return;
    }
    path.push(name.to_string());
    for dependency in depends(bytes) {
        visit(&dependency, available, order, path);
    }
    path.pop();
    order.push(Module {
        name: name.to_string(),
        bytes: bytes.clone(),
    });
}

/// The initramfs path of the `index`-th module to load for `release`.
pub fn initramfs_path(release: &str, index: usize, module: &Module) -> String {
    format!("{INITRAMFS_DIR}/{release}/{index:02}-{}.ko", module.name)
}

/// `compressed` decompressed as a Debian package compresses its members and its
/// modules, by the file name's suffix (`.xz`, `.zst`, `.gz`); `None` for another.
pub(crate) fn decompress_by_suffix(
    suffix: &str,
    compressed: &[u8],
) -> Option<Result<Vec<u8>, String>> {
    let mut out = Vec::new();
    let done = match suffix {
        ".xz" => lzma_rs::xz_decompress(&mut Cursor::new(compressed), &mut out)
            .map_err(|e| e.to_string()),
        ".zst" => ruzstd::decoding::StreamingDecoder::new(compressed)
            .map_err(|e| e.to_string())
            .and_then(|mut decoder| {
                decoder
                    .read_to_end(&mut out)
                    .map(drop)
                    .map_err(|e| e.to_string())
            }),
        ".gz" => flate2::read::GzDecoder::new(compressed)
            .read_to_end(&mut out)
            .map(drop)
            .map_err(|e| e.to_string()),
        _ => return None,
    };
    Some(done.map(|()| out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(name: &str, depends: &str) -> (String, Vec<u8>) {
        let modinfo = format!("\x7fELF...\0license=GPL\0depends={depends}\0name={name}\0");
        (name.to_string(), modinfo.into_bytes())
    }

    #[test]
    fn dependencies_load_first_and_built_in_ones_are_skipped() {
        let available: BTreeMap<String, Vec<u8>> = [
            module("virtio_blk", "virtio,virtio_ring"),
            module(
                "virtio_pci",
                "virtio_pci_modern_dev,virtio_pci_legacy_dev,virtio_ring,virtio",
            ),
            module("virtio_ring", "virtio"),
            module("virtio", ""),
            module("virtio_pci_modern_dev", "virtio"),
            module("virtio_pci_legacy_dev", ""),
            module("virtio_balloon", "virtio"),
        ]
        .into_iter()
        .collect();
        let names: Vec<String> = load_order(&available, GUEST_MODULES)
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(
            names,
            [
                "virtio",
                "virtio_pci_modern_dev",
                "virtio_pci_legacy_dev",
                "virtio_ring",
                "virtio_pci",
                "virtio_blk"
            ]
        );
        // 6.12's cloud kernel: virtio_pci and the virtio core built in.
        let only_blk: BTreeMap<String, Vec<u8>> = [module("virtio_blk", "")].into_iter().collect();
        let names: Vec<String> = load_order(&only_blk, GUEST_MODULES)
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(names, ["virtio_blk"]);
    }

    #[test]
    fn a_dependency_cycle_ends() {
        let available: BTreeMap<String, Vec<u8>> =
            [module("virtio_blk", "a"), module("a", "virtio_blk")]
                .into_iter()
                .collect();
        let names: Vec<String> = load_order(&available, &["virtio_blk"])
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(names, ["a", "virtio_blk"]);
    }

    #[test]
    fn only_modules_of_the_kept_directories_are_named() {
        let r = "lib/modules/6.1.0-57-cloud-amd64/kernel";
        assert_eq!(
            kept_module_name(&format!("{r}/drivers/block/virtio_blk.ko.xz")).as_deref(),
            Some("virtio_blk")
        );
        assert_eq!(
            kept_module_name(&format!("{r}/drivers/virtio/virtio-mem.ko")).as_deref(),
            Some("virtio_mem")
        );
        assert_eq!(
            kept_module_name(&format!("{r}/drivers/net/virtio_net.ko")),
            None
        );
        assert_eq!(kept_module_name(&format!("{r}/drivers/block/README")), None);
        assert_eq!(kept_module_name("boot/vmlinuz-6.1"), None);
    }
}
