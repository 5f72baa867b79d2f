//! `kbench lava-job --kernel-a URL --kernel-b URL --initramfs URL --device-type T`: a
//! LAVA job definition that boots two kernels alternately (ABBA) on one board, kbench
//! as the initramfs /init; [`kbench_boot::lava`] writes it (docs/boot-ab.md).
use crate::session;
use kbench_boot::lava::{job_definition, job_nonce, to_yaml, JobRequest};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct LavaJobArgs {
    /// Kernel A's image, as the LAVA worker downloads it: an http, https, ftp or file URL.
    #[arg(long, value_name = "URL")]
    pub kernel_a: String,
    /// Kernel B's image, likewise.
    #[arg(long, value_name = "URL")]
    pub kernel_b: String,
    /// The initramfs with a static kbench as /init (`kbench initramfs`), as a URL.
    #[arg(long, value_name = "URL")]
    pub initramfs: String,
    /// How the initramfs at that URL is compressed.
    #[arg(long, default_value = "gz", value_parser = ["gz", "none"])]
    pub initramfs_compression: String,
    /// The initramfs already carries a u-boot legacy header (`mkimage -T ramdisk`), as
    /// device types that load ramdisks in that format need.
    #[arg(long)]
    pub initramfs_uboot_header: bool,
    /// The board's LAVA device type.
    #[arg(long, value_name = "T")]
    pub device_type: String,
    /// Label of kernel A's boots: what `kbench import-console` will be told.
    #[arg(long, default_value = "lava-a")]
    pub label_a: String,
    /// Label of kernel B's boots.
    #[arg(long, default_value = "lava-b")]
    pub label_b: String,
    /// Kernel A's device tree, for boards that need one: a URL (with --dtb-b).
    #[arg(long, value_name = "URL")]
    pub dtb_a: Option<String>,
    /// Kernel B's device tree (the same URL as --dtb-a if they share one).
    #[arg(long, value_name = "URL")]
    pub dtb_b: Option<String>,
    /// How u-boot starts the kernels: image (booti), zimage (bootz) or uimage (bootm).
    #[arg(long, default_value = "image", value_parser = ["image", "zimage", "uimage"])]
    pub kernel_type: String,
    /// Boots per kernel, in ABBA order (at most 99: the namespaces are numbered in two
    /// digits, and a job of hundreds of boots is a lab's week).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub boots: u32,
    #[command(flatten)]
    pub guest: crate::guest::GuestSuiteArgs,
    /// An extra word for the kernel command line (repeatable).
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    pub kernel_arg: Vec<String>,
    /// The job's name [default: the labels, the device type and the boots].
    #[arg(long)]
    pub job_name: Option<String>,
    /// LAVA's scheduling priority: high, medium, low, or 0 to 100.
    #[arg(long, default_value = "medium")]
    pub priority: String,
    /// Who sees the job: public, personal, or group:NAME[,NAME...].
    #[arg(long, default_value = "public")]
    pub visibility: String,
    /// Each boot's limit for u-boot to load and start the kernel.
    #[arg(long, value_name = "MINUTES", default_value_t = 5)]
    pub boot_timeout_minutes: u32,
    /// Each boot's limit from the kernel's start to kbench's last result line.
    #[arg(long, value_name = "MINUTES", default_value_t = 30)]
    pub test_timeout_minutes: u32,
    /// Write the job here [default: standard output].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: LavaJobArgs) -> anyhow::Result<i32> {
    let nonce = job_nonce();
    // The labels and the suite are checked here, as every command checks them.
    session::check_label(&args.label_a)?;
    session::check_label(&args.label_b)?;
    let request = JobRequest {
        kernel_a: args.kernel_a,
        kernel_b: args.kernel_b,
        initramfs: args.initramfs,
        initramfs_compression: args.initramfs_compression,
        initramfs_uboot_header: args.initramfs_uboot_header,
        device_type: args.device_type,
        label_a: args.label_a,
        label_b: args.label_b,
        dtb_a: args.dtb_a,
        dtb_b: args.dtb_b,
        kernel_type: args.kernel_type,
        boots: args.boots,
        suite_words: args.guest.kernel_words()?,
        kernel_args: args.kernel_arg,
        job_name: args.job_name,
        priority: args.priority,
        visibility: args.visibility,
        boot_timeout_minutes: args.boot_timeout_minutes,
        test_timeout_minutes: args.test_timeout_minutes,
    };
    let yaml = to_yaml(&job_definition(&request, &nonce)?)?;
    match &args.output {
        Some(path) => crate::output::write_whole(path, yaml.as_bytes())?,
        None => crate::output::write_stdout(yaml.as_bytes())?,
    }
    errln!("{}", request.notice(&nonce));
    Ok(0)
}
