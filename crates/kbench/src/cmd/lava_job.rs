//! `kbench lava-job --kernel-a URL --kernel-b URL --initramfs URL --device-type T`: a
//! LAVA job definition that boots two kernels alternately (ABBA) on one board, kbench
//! as the initramfs /init. LAVA schedules the boots and keeps the console; kbench does
//! not become a scheduler. `kbench import-console JOB.log --label-a A --label-b B`
//! reads the job's log back into one session per boot. Which LAVA page documents
//! each key: docs/boot-ab.md, "Boards: LAVA".
use crate::error::usage;
use crate::session;
use kbench_console::lava::{abba, namespace, Side};
use kbench_console::{line_start, Kind, READY_LINE};
use serde::Serialize;
use std::collections::BTreeMap;
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
    pub guest: crate::guest::SuiteArgs,
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

/// The time LAVA gets to download a boot's kernel, device tree and initramfs.
const DEPLOY_TIMEOUT_MINUTES: u32 = 10;
/// What the job needs beyond its boots: LAVA's own setup and power-off.
const JOB_MARGIN_MINUTES: u32 = 5;
/// The LAVA action whose connection timeout bounds each wait for a console line.
const MONITOR_ACTION: &str = "lava-test-monitor";
/// LAVA's limits: a job name of 1-200 characters, a device type of 1-50.
const MAX_JOB_NAME: usize = 200;
const MAX_DEVICE_TYPE: usize = 50;

pub fn run(args: LavaJobArgs) -> anyhow::Result<i32> {
    let nonce = job_nonce();
    let job = job_definition(&args, &nonce)?;
    let yaml = to_yaml(&job)?;
    match &args.output {
        Some(path) => crate::output::write_whole(path, yaml.as_bytes())?,
        None => crate::output::write_stdout(yaml.as_bytes())?,
    }
    let order: Vec<&str> = abba(args.boots).iter().map(|s| s.letter()).collect();
    errln!(
        "kbench lava-job: {} boots on {} in the order {}, session nonce {nonce}",
        order.len(),
        args.device_type,
        order.join(" ")
    );
    errln!(
        "kbench lava-job: after the job, import its log: {}",
        import_command(&args)
    );
    Ok(0)
}

/// The job as YAML that PyYAML (LAVA's reader, YAML 1.1) reads the same: words like
/// `on` or `1:20` quoted, and every string on one line, as a person reviewing the job
/// expects to see a kernel command line.
fn to_yaml(job: &JobDefinition) -> anyhow::Result<String> {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.prefer_block_scalars = false;
    let mut yaml = serde_saphyr::to_string_with_options(job, options)?;
    if !yaml.ends_with('\n') {
        yaml.push('\n');
    }
    Ok(yaml)
}

/// One nonce for the whole job: LAVA gives every boot of a job the same kernel command
/// line (`context` is job-wide), so the nonce proves a log is of this job, and the
/// namespaces tell its boots apart.
fn job_nonce() -> String {
    format!("lava{:x}{:x}", session::unix_now_ns(), std::process::id())
}

fn import_command(args: &LavaJobArgs) -> String {
    let words: Vec<String> = [
        "kbench",
        "import-console",
        "JOB.log",
        "--label-a",
        &args.label_a,
        "--label-b",
        &args.label_b,
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    kbench_runner::child::shell_join(&words)
}

/// The job, or the usage error that keeps it from being one LAVA would run.
fn job_definition(args: &LavaJobArgs, nonce: &str) -> anyhow::Result<JobDefinition> {
    check_numbers(args)?;
    for (option, url) in [
        ("--kernel-a", Some(&args.kernel_a)),
        ("--kernel-b", Some(&args.kernel_b)),
        ("--initramfs", Some(&args.initramfs)),
        ("--dtb-a", args.dtb_a.as_ref()),
        ("--dtb-b", args.dtb_b.as_ref()),
    ] {
        if let Some(url) = url {
            check_url(option, url)?;
        }
    }
    if args.dtb_a.is_some() != args.dtb_b.is_some() {
        return usage("--dtb-a and --dtb-b go together: a board that needs a device tree needs one for each kernel (give the same URL twice if they share it)");
    }
    session::check_label(&args.label_a)?;
    session::check_label(&args.label_b)?;
    if args.label_a == args.label_b {
        return usage("the two kernels need different labels (--label-a, --label-b)");
    }
    check_device_type(&args.device_type)?;
    let job_name = match &args.job_name {
        Some(name) if (1..=MAX_JOB_NAME).contains(&name.chars().count()) => name.clone(),
        Some(_) => return usage(format!("--job-name: 1 to {MAX_JOB_NAME} characters")),
        None => default_job_name(args),
    };
    let boots = abba(args.boots);
    let mut actions = Vec::with_capacity(3 * boots.len());
    for (index, &side) in boots.iter().enumerate() {
        actions.extend(boot_actions(args, &namespace(index, side), side, nonce));
    }
    Ok(JobDefinition {
        job_name,
        device_type: args.device_type.clone(),
        visibility: visibility(&args.visibility)?,
        priority: priority(&args.priority)?,
        timeouts: JobTimeouts {
            job: Timeout::minutes(job_minutes(args, boots.len())),
            // Longer than the test action's own timeout, so that one fires first: LAVA
            // may skip an action's timeout, not a wait that ran out.
            connections: BTreeMap::from([(
                MONITOR_ACTION.to_string(),
                Timeout::minutes(args.test_timeout_minutes.saturating_add(1)),
            )]),
        },
        context: Context {
            extra_kernel_args: kernel_args(args, nonce)?,
        },
        metadata: metadata(args, nonce, &boots),
        actions,
    })
}

fn check_numbers(args: &LavaJobArgs) -> anyhow::Result<()> {
    if args.boots == 0 {
        return usage("--boots must be at least 1");
    }
    if args.boot_timeout_minutes == 0 || args.test_timeout_minutes == 0 {
        return usage("--boot-timeout-minutes and --test-timeout-minutes must be at least 1");
    }
    Ok(())
}

/// A URL LAVA can download: http, https or ftp with a host, or a file path. It goes
/// into the job as it is, so nothing that would need quoting on a command line.
fn check_url(option: &str, url: &str) -> anyhow::Result<()> {
    let bad = |why: &str| usage(format!("{option} {url}: {why}"));
    if url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\'' || c == '"')
    {
        return bad("a URL has no spaces or quotes");
    }
    let Some((scheme, rest)) = url.split_once(':') else {
        return bad("not a URL (http://, https://, ftp:// or file:/)");
    };
    match scheme {
        "http" | "https" | "ftp" => match rest.strip_prefix("//") {
            Some(host_and_path) if !host_and_path.is_empty() && !host_and_path.starts_with('/') => {
                Ok(())
            }
            _ => bad("no host after the scheme"),
        },
        "file" if rest.starts_with('/') && !rest.trim_start_matches('/').is_empty() => Ok(()),
        "file" => bad("a file URL needs an absolute path"),
        _ => bad("LAVA downloads http, https, ftp and file URLs"),
    }
}

fn check_device_type(device_type: &str) -> anyhow::Result<()> {
    let ok = (1..=MAX_DEVICE_TYPE).contains(&device_type.len())
        && device_type
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        usage(format!(
            "bad device type '{device_type}': 1 to {MAX_DEVICE_TYPE} letters, digits and - _ ."
        ))
    }
}

fn default_job_name(args: &LavaJobArgs) -> String {
    let name = format!(
        "kbench {} vs {} on {}, {} boot{} each (ABBA)",
        args.label_a,
        args.label_b,
        args.device_type,
        args.boots,
        if args.boots == 1 { "" } else { "s" }
    );
    name.chars().take(MAX_JOB_NAME).collect()
}

fn visibility(text: &str) -> anyhow::Result<Visibility> {
    match text {
        "public" | "personal" => Ok(Visibility::Named(text.to_string())),
        _ => {
            let groups: Vec<String> = text
                .strip_prefix("group:")
                .map(|g| g.split(',').map(str::to_string).collect())
                .unwrap_or_default();
            if groups.is_empty() || groups.iter().any(|g| g.trim().is_empty()) {
                return usage(format!(
                    "--visibility {text}: public, personal, or group:NAME[,NAME...]"
                ));
            }
            Ok(Visibility::Group { group: groups })
        }
    }
}

fn priority(text: &str) -> anyhow::Result<Priority> {
    match text {
        "high" | "medium" | "low" => Ok(Priority::Named(text.to_string())),
        _ => match text.parse::<u8>() {
            Ok(level) if level <= 100 => Ok(Priority::Level(level)),
            _ => usage(format!("--priority {text}: high, medium, low, or 0 to 100")),
        },
    }
}

/// Every boot's deploy, boot and test, and what LAVA needs beyond them.
fn job_minutes(args: &LavaJobArgs, boots: usize) -> u32 {
    let per_boot = DEPLOY_TIMEOUT_MINUTES
        .saturating_add(args.boot_timeout_minutes)
        .saturating_add(args.test_timeout_minutes);
    let boots = u32::try_from(boots).unwrap_or(u32::MAX);
    per_boot
        .saturating_mul(boots)
        .saturating_add(JOB_MARGIN_MINUTES)
}

/// The `kbench.*` words the guest reads (see guest.rs), as vm-ab passes them, for
/// LAVA's `extra_kernel_args`. No `console=`: the device type sets the board's. No
/// `quiet`: the kernel's messages are the only record of a boot that went wrong.
fn kernel_args(args: &LavaJobArgs, nonce: &str) -> anyhow::Result<String> {
    let mut words = vec![format!("kbench.session={nonce}")];
    words.extend(args.guest.kernel_words()?);
    for word in &args.kernel_arg {
        if word.is_empty() || word.contains(['\'', '\n']) {
            return usage(format!(
                "--kernel-arg {word:?}: one non-empty word without a single quote"
            ));
        }
        words.push(word.clone());
    }
    Ok(words.join(" "))
}

fn metadata(args: &LavaJobArgs, nonce: &str, boots: &[Side]) -> BTreeMap<String, String> {
    let order: Vec<&str> = boots.iter().map(|s| s.letter()).collect();
    BTreeMap::from([
        ("kbench.label-a".to_string(), args.label_a.clone()),
        ("kbench.label-b".to_string(), args.label_b.clone()),
        ("kbench.session".to_string(), nonce.to_string()),
        ("kbench.order".to_string(), order.join(" ")),
        ("kbench.import".to_string(), import_command(args)),
    ])
}

/// One boot: download its kernel (and device tree) with the initramfs, boot it with the
/// device type's `ramdisk` u-boot commands, and watch its console for kbench's lines.
fn boot_actions(args: &LavaJobArgs, namespace: &str, side: Side, nonce: &str) -> [Action; 3] {
    let (kernel, dtb) = match side {
        Side::A => (&args.kernel_a, &args.dtb_a),
        Side::B => (&args.kernel_b, &args.dtb_b),
    };
    [
        Action::Deploy(Deploy {
            namespace: namespace.to_string(),
            timeout: Timeout::minutes(DEPLOY_TIMEOUT_MINUTES),
            to: "tftp",
            kernel: Kernel {
                url: kernel.clone(),
                kind: args.kernel_type.clone(),
            },
            dtb: dtb.as_ref().map(|url| Artifact { url: url.clone() }),
            ramdisk: Ramdisk {
                url: args.initramfs.clone(),
                compression: (args.initramfs_compression == "gz").then_some("gz"),
                header: args.initramfs_uboot_header.then_some("u-boot"),
                // LAVA would otherwise unpack the initramfs to add its test shell and
                // modules, and pack it again: kbench's /init needs neither, and the
                // image that boots stays the one `kbench initramfs` made.
                install_modules: false,
                install_overlay: false,
            },
        }),
        Action::Boot(Boot {
            namespace: namespace.to_string(),
            timeout: Timeout::minutes(args.boot_timeout_minutes),
            method: "u-boot",
            commands: "ramdisk",
        }),
        Action::Test(Test {
            namespace: namespace.to_string(),
            // A boot that never ends its results (a panic, a hang) ends its own test,
            // and the job goes on to the next boot rather than ending incomplete.
            timeout: Timeout::skippable(args.test_timeout_minutes),
            monitors: vec![monitor(namespace, nonce)],
        }),
    ]
}

/// LAVA's view of a boot: it starts at kbench's ready line, records `begin` (pass) when
/// kbench's results start and `err` (fail) for an error from the guest, and stops at
/// END. The measurements themselves come back through `kbench import-console`.
/// The pieces are the protocol's own (`@KB1`, the kind tokens, a nonce of
/// `[A-Za-z0-9_-]`), none of which a regex reads as anything but itself.
fn monitor(namespace: &str, nonce: &str) -> Monitor {
    let frame = format!("{} {nonce} ", line_start());
    let (begin, error, end) = (Kind::Begin.token(), Kind::Error.token(), Kind::End.token());
    Monitor {
        name: namespace.to_string(),
        // The alternative keeps a kbench that prints no ready line usable: the
        // monitor then starts at its first framed line.
        start: format!("{READY_LINE}|{frame}"),
        end: format!(r"{frame}\d+ {end} 1/"),
        pattern: format!(r"{frame}\d+ (?P<result>(?P<test_case_id>{begin}|{error})) 1/"),
        fixupdict: BTreeMap::from([
            (begin.to_string(), "pass".to_string()),
            (error.to_string(), "fail".to_string()),
        ]),
    }
}

/// A LAVA job definition, with the keys LAVA's job schema documents.
#[derive(Debug, Serialize)]
struct JobDefinition {
    job_name: String,
    device_type: String,
    visibility: Visibility,
    priority: Priority,
    timeouts: JobTimeouts,
    context: Context,
    metadata: BTreeMap<String, String>,
    actions: Vec<Action>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Visibility {
    Named(String),
    Group { group: Vec<String> },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Priority {
    Named(String),
    Level(u8),
}

#[derive(Debug, Serialize)]
struct JobTimeouts {
    job: Timeout,
    /// Per LAVA action name: the longest wait for one expected console line.
    connections: BTreeMap<String, Timeout>,
}

/// A LAVA timeout, and whether LAVA goes on to the next action block when it expires.
#[derive(Debug, Clone, Copy, Serialize)]
struct Timeout {
    minutes: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    skip: bool,
}

impl Timeout {
    fn minutes(minutes: u32) -> Timeout {
        Timeout {
            minutes,
            skip: false,
        }
    }

    fn skippable(minutes: u32) -> Timeout {
        Timeout {
            minutes,
            skip: true,
        }
    }
}

#[derive(Debug, Serialize)]
struct Context {
    extra_kernel_args: String,
}

/// One entry of `actions`: a mapping with the action's type as its only key.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
enum Action {
    Deploy(Deploy),
    Boot(Boot),
    Test(Test),
}

#[derive(Debug, Serialize)]
struct Deploy {
    namespace: String,
    timeout: Timeout,
    to: &'static str,
    kernel: Kernel,
    #[serde(skip_serializing_if = "Option::is_none")]
    dtb: Option<Artifact>,
    ramdisk: Ramdisk,
}

#[derive(Debug, Serialize)]
struct Kernel {
    url: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Debug, Serialize)]
struct Artifact {
    url: String,
}

#[derive(Debug, Serialize)]
struct Ramdisk {
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    compression: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    header: Option<&'static str>,
    install_modules: bool,
    install_overlay: bool,
}

#[derive(Debug, Serialize)]
struct Boot {
    namespace: String,
    timeout: Timeout,
    method: &'static str,
    commands: &'static str,
}

#[derive(Debug, Serialize)]
struct Test {
    namespace: String,
    timeout: Timeout,
    monitors: Vec<Monitor>,
}

#[derive(Debug, Serialize)]
struct Monitor {
    name: String,
    start: String,
    end: String,
    pattern: String,
    fixupdict: BTreeMap<String, String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_minimally() {
        for good in [
            "http://lab/vmlinuz",
            "https://lab.example:8080/a/Image?x=1",
            "ftp://lab/x",
            "file:///srv/x",
            "file:/srv/x",
        ] {
            assert!(check_url("--kernel-a", good).is_ok(), "{good}");
        }
        for bad in [
            "lab/vmlinuz",
            "scp://lab/x",
            "http:/x",
            "http://",
            "http:///x",
            "file:x",
            "file:///",
            "http://lab/a b",
            "http://lab/it's",
        ] {
            let error = check_url("--kernel-a", bad).unwrap_err();
            assert!(
                error.downcast_ref::<crate::error::UsageError>().is_some(),
                "{bad}"
            );
        }
    }
}
