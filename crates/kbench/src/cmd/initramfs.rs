//! `kbench initramfs -o FILE`: an initramfs with kbench (or `--init`) as /init, plus
//! `--add SRC:DEST` files, to boot a kernel under test straight into a benchmark.
use kbench_boot::{init, Initramfs};
use std::path::PathBuf;

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
    let additions = init::parse_additions(&args.add)?;
    let (init_path, init) = init::init_binary(args.init.as_deref())?;
    let mut image = Initramfs::with_init(init.clone());
    init::add_files(&mut image, additions)?;
    let bytes = match args.compress {
        Compression::Gzip => image.to_gzip(),
        Compression::None => image.to_cpio(),
    };
    crate::output::write_whole(&args.output, &bytes)?;
    if let Some(warning) = init::dynamic_warning(&init_path, &init) {
        errln!("{warning}");
    }
    Ok(0)
}
