//! Real Debian kernel packages, fetched by scripts/fetch-kernels.sh into
//! `${KBENCH_KERNEL_CACHE:-$HOME/.cache/kbench/kernels}`.
use kbench_boot::{kernel_from_deb, kernel_from_path, DebError};
use std::path::PathBuf;

fn cache_dir() -> PathBuf {
    match std::env::var_os("KBENCH_KERNEL_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/kbench/kernels")
        }
    }
}

/// The cached linux-image debs; empty (and a SKIP line) when none were fetched.
fn kernel_debs() -> Vec<PathBuf> {
    let mut debs: Vec<PathBuf> = std::fs::read_dir(cache_dir())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("linux-image-") && name.ends_with(".deb")
        })
        .collect();
    debs.sort();
    if debs.is_empty() {
        // scripts/test.sh fetches them: there a skip would hide a broken fetch.
        assert!(
            std::env::var_os("KBENCH_REQUIRE_BOOT_TESTS").is_none(),
            "KBENCH_REQUIRE_BOOT_TESTS is set, but no kernel .deb in {}",
            cache_dir().display()
        );
        eprintln!(
            "SKIP: no kernel .deb in {} (run scripts/fetch-kernels.sh)",
            cache_dir().display()
        );
    }
    debs
}

/// "linux-image-6.1.0-57-cloud-amd64_6.1.192-3_amd64.deb" -> "6.1.0-57-cloud-amd64".
fn release_in_file_name(deb: &std::path::Path) -> String {
    let name = deb.file_name().unwrap().to_string_lossy();
    let package = name.split('_').next().unwrap();
    package.strip_prefix("linux-image-").unwrap().to_string()
}

#[test]
fn real_debs_give_kernel_release_and_config() {
    for deb in kernel_debs() {
        let image = kernel_from_deb(&std::fs::read(&deb).unwrap()).unwrap();
        assert_eq!(
            image.release,
            release_in_file_name(&deb),
            "{}",
            deb.display()
        );
        assert_eq!(&image.kernel[0x202..0x206], b"HdrS", "{}", deb.display());
        assert_eq!(image.arch(), Some(kbench_boot::deb::ImageArch::X86_64));
        let config = image.config.expect("a config");
        assert!(config.contains("CONFIG_"), "{}", deb.display());
        // The guest's modules, decompressed from the package's .ko.xz, virtio_blk
        // last as the others are what it depends on.
        let names: Vec<&str> = image.modules.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names.last(), Some(&"virtio_blk"), "{}", deb.display());
        for module in &image.modules {
            assert_eq!(&module.bytes[..4], b"\x7fELF", "{}", module.name);
        }
        // The bzImage's own header names the same release; a bare image is read as is.
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("vmlinuz");
        std::fs::write(&bare, &image.kernel).unwrap();
        let from_file = kernel_from_path(&bare).unwrap();
        assert_eq!(from_file.release, image.release);
        assert_eq!(from_file.kernel, image.kernel);
        assert_eq!(from_file.config, None);
    }
}

#[test]
fn a_truncated_deb_is_a_clear_error() {
    let Some(deb) = kernel_debs().into_iter().next() else {
        return;
    };
    let bytes = std::fs::read(&deb).unwrap();
    let error = kernel_from_deb(&bytes[..bytes.len() / 2]).unwrap_err();
    assert!(matches!(error, DebError::Corrupt(_)), "{error:?}");
    assert!(
        error.to_string().starts_with("broken Debian package: "),
        "{error}"
    );
}

#[test]
fn garbage_is_not_a_deb_nor_a_kernel() {
    let garbage: Vec<u8> = (0..10_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    assert!(matches!(kernel_from_deb(&garbage), Err(DebError::NotADeb)));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage");
    std::fs::write(&path, &garbage).unwrap();
    let error = kernel_from_path(&path).unwrap_err();
    assert!(matches!(error, DebError::NotAKernel), "{error:?}");
}

#[test]
fn an_ar_archive_without_data_is_no_kernel_package() {
    // A real ar archive made by binutils' `ar`, holding only a debian-binary.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("debian-binary"), "2.0\n").unwrap();
    let status = std::process::Command::new("ar")
        .args(["rc", "x.deb", "debian-binary"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(dir.path().join("x.deb")).unwrap();
    assert!(matches!(kernel_from_deb(&bytes), Err(DebError::NoData)));
}

/// arm64's Image header as booting.rst lays it out: code0/code1, text_offset,
/// image_size, flags, reserved, then the magic "ARM\x64" at 0x38.
fn arm64_image_header() -> Vec<u8> {
    let mut image = vec![0u8; 4096];
    image[0x38..0x3c].copy_from_slice(b"ARM\x64");
    image
}

#[test]
fn an_arm64_image_is_known_bare_and_gzipped_as_debian_ships_it() {
    let dir = tempfile::tempdir().unwrap();
    let image = arm64_image_header();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &image).unwrap();
    for (name, bytes) in [("Image", image.clone()), ("vmlinuz", gz.finish().unwrap())] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let read = kernel_from_path(&path).unwrap();
        assert_eq!(
            read.arch(),
            Some(kbench_boot::deb::ImageArch::Arm64),
            "{name}"
        );
        assert_eq!(read.kernel, bytes, "{name}: loaded as is");
    }
    let path = dir.path().join("zeros");
    std::fs::write(&path, vec![0u8; 4096]).unwrap();
    assert!(matches!(kernel_from_path(&path), Err(DebError::NotAKernel)));
}
