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
    /// An `--add` that is not `SRC:DEST`.
    #[error("--add wants SRC:DEST, got {0:?}")]
    AddSpec(String),
    /// An `--add` file the image cannot take where it was to go.
    #[error("--add {}:{dest}: {problem}", src.display())]
    Add {
        src: PathBuf,
        dest: String,
        problem: crate::InitramfsError,
    },
}

impl InitError {
    /// Whether the user can fix it by giving another file (exit status 2).
    pub fn is_usage(&self) -> bool {
        !matches!(self, InitError::CurrentExe(_) | InitError::Initramfs(_))
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

/// Each `--add SRC:DEST`, split at its first colon, both halves non-empty: all are
/// parsed before any file is read, so that a typo fails first.
pub fn parse_additions(specs: &[String]) -> Result<Vec<(PathBuf, String)>, InitError> {
    let parse = |spec: &String| match spec.split_once(':') {
        Some((src, dest)) if !src.is_empty() && !dest.is_empty() => {
            Ok((PathBuf::from(src), dest.to_string()))
        }
        _ => Err(InitError::AddSpec(spec.clone())),
    };
    specs.iter().map(parse).collect()
}

/// Puts each file of `additions` in `image` at its place, keeping its permission bits.
pub fn add_files(
    image: &mut Initramfs,
    additions: Vec<(PathBuf, String)>,
) -> Result<(), InitError> {
    use std::os::unix::fs::PermissionsExt;
    for (src, dest) in additions {
        let data = read_file(&src)?;
        let unreadable = |source| InitError::Unreadable {
            path: src.clone(),
            source,
        };
        let mode = std::fs::metadata(&src)
            .map_err(unreadable)?
            .permissions()
            .mode();
        if let Err(problem) = image.add_file(&dest, data, mode) {
            return Err(InitError::Add { src, dest, problem });
        }
    }
    Ok(())
}

/// The warning for a dynamically linked /init, which dies at once: the kernel finds
/// no loader in the image and panics with "No working init found". Better said now
/// than at boot.
pub fn dynamic_warning(path: &Path, init: &[u8]) -> Option<String> {
    (needs_interpreter(init) == Some(true)).then(|| format!(
        "kbench: warning: {} is dynamically linked and will not run as /init; build a static one with scripts/build-static.sh",
        path.display()
    ))
}
