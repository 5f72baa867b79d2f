//! The program a boot runs as /init: a static kbench, read from where the user said
//! or from this very executable.
use crate::elf::needs_interpreter;
use crate::initramfs::Initramfs;
use std::path::{Path, PathBuf};

/// Why there is no /init to boot.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// A file the user named could not be read: their mistake.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The user's /init would find no dynamic loader in the image.
    #[error("{} is not a static executable, so it cannot run as /init: build one with scripts/build-static.sh and pass it as --init", .0.display())]
    NotStatic(PathBuf),
    /// This executable could not be found to be put in the image.
    #[error(transparent)]
    CurrentExe(std::io::Error),
    /// A kernel's modules could not be put in the image (a release naming a path
    /// outside it).
    #[error("the guest's modules: {0}")]
    Initramfs(crate::InitramfsError),
}

impl InitError {
    /// Whether the user can fix it by giving another file (exit status 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, InitError::Unreadable { .. } | InitError::NotStatic(_))
    }
}

/// A file the user named, whole.
pub fn read_file(path: &Path) -> Result<Vec<u8>, InitError> {
    std::fs::read(path).map_err(|source| InitError::Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

/// The executable to put at /init, `path` or else this kbench, with its bytes.
pub fn init_binary(path: Option<&Path>) -> Result<(PathBuf, Vec<u8>), InitError> {
    let path = match path {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe().map_err(InitError::CurrentExe)?,
    };
    let bytes = read_file(&path)?;
    Ok((path, bytes))
}

/// An initramfs with `init` (else this kbench) as /init, and each kernel's guest
/// modules under its release ([`crate::modules`]); a dynamically linked init could not
/// start there.
pub fn static_init_image(
    init: Option<&Path>,
    kernels: &[&crate::KernelImage],
) -> Result<Initramfs, InitError> {
    let (path, exe) = init_binary(init)?;
    if needs_interpreter(&exe) != Some(false) {
        return Err(InitError::NotStatic(path));
    }
    let mut image = Initramfs::with_init(exe);
    let mut releases: Vec<&str> = Vec::new();
    for kernel in kernels {
        // Two sides of one kernel share its modules; a bare image has none.
        if kernel.release.is_empty() || releases.contains(&kernel.release.as_str()) {
            continue;
        }
        releases.push(&kernel.release);
        for (index, module) in kernel.modules.iter().enumerate() {
            let dest = crate::modules::initramfs_path(&kernel.release, index, module);
            image
                .add_file(&dest, module.bytes.clone(), 0o644)
                .map_err(InitError::Initramfs)?;
        }
    }
    Ok(image)
}
