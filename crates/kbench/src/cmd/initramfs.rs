//! `kbench initramfs -o FILE`: an initramfs with kbench (or `--init`) as /init, plus
//! `--add SRC:DEST` files, to boot a kernel under test straight into a benchmark.
use crate::error::{usage, UsageError};
use kbench_boot::elf::needs_interpreter;
use kbench_boot::Initramfs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Compression {
    /// gzip, which every kernel can unpack (CONFIG_RD_GZIP).
    Gzip,
    /// A plain newc cpio archive.
    None,
}

#[derive(Debug, clap::Args)]
pub struct InitramfsArgs {
    /// Where to write the image.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    #[arg(long, value_enum, default_value_t = Compression::Gzip)]
    pub compress: Compression,
    /// A file to put in the image, keeping its permission bits: `--add ./perf:/usr/bin/perf`.
    #[arg(long, value_name = "SRC:DEST")]
    pub add: Vec<String>,
    /// The program to run as /init; by default this kbench executable. It must be
    /// static: the image holds no dynamic loader.
    #[arg(long, value_name = "PATH")]
    pub init: Option<PathBuf>,
}

pub fn run(args: InitramfsArgs) -> anyhow::Result<i32> {
    // Parse every --add first, so a typo fails before any file is read.
    let additions = args
        .add
        .iter()
        .map(|spec| parse_add_spec(spec))
        .collect::<Result<Vec<_>, _>>()?;
    let (init_path, init) = kbench_boot::init::init_binary(args.init.as_deref())?;
    let mut image = Initramfs::with_init(init.clone());
    for (src, dest) in additions {
        let (data, mode) = read_with_mode(&src)?;
        image
            .add_file(&dest, data, mode)
            .map_err(|e| UsageError(format!("--add {}:{dest}: {e}", src.display())))?;
    }
    let bytes = match args.compress {
        Compression::Gzip => image.to_gzip(),
        Compression::None => image.to_cpio(),
    };
    crate::output::write_whole(&args.output, &bytes)?;
    warn_if_dynamic(&init_path, &init);
    Ok(0)
}

/// `SRC:DEST`, split at the first colon; both halves must be non-empty.
fn parse_add_spec(spec: &str) -> anyhow::Result<(PathBuf, String)> {
    match spec.split_once(':') {
        Some((src, dest)) if !src.is_empty() && !dest.is_empty() => {
            Ok((PathBuf::from(src), dest.to_string()))
        }
        _ => usage(format!("--add wants SRC:DEST, got {spec:?}")),
    }
}

/// A file the user named: failing to read it is their mistake (exit 2).
fn read_input(path: &Path) -> anyhow::Result<Vec<u8>> {
    Ok(kbench_boot::init::read_file(path)?)
}

fn read_with_mode(path: &Path) -> anyhow::Result<(Vec<u8>, u32)> {
    let data = read_input(path)?;
    let mode = std::fs::metadata(path)
        .or_else(|e| usage(format!("cannot read {}: {e}", path.display())))?
        .permissions()
        .mode();
    Ok((data, mode))
}

/// A dynamically linked /init dies at once: the kernel finds no loader in the image
/// and panics with "No working init found". Say so now rather than at boot.
fn warn_if_dynamic(path: &Path, init: &[u8]) {
    if needs_interpreter(init) == Some(true) {
        errln!(
            "kbench: warning: {} is dynamically linked and will not run as /init; build a static one with scripts/build-static.sh",
            path.display()
        );
    }
}
