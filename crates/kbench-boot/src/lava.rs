//! A LAVA job definition that boots two kernels alternately (ABBA) on one board,
//! kbench as the initramfs /init (`kbench lava-job`). LAVA schedules the boots and
//! keeps the console; kbench does not become a scheduler. Which LAVA page documents
//! each key: docs/boot-ab.md, "Boards: LAVA".
use kbench_console::lava::{namespace, KernelSide};
use kbench_console::{line_start, Kind, READY_LINE};
use serde::Serialize;
use std::collections::BTreeMap;

/// What the job is to boot and how, as `kbench lava-job` was asked.
#[derive(Debug, Clone)]
pub struct JobRequest {
    /// Kernel A's image, as the LAVA worker downloads it (a URL).
    pub kernel_a: String,
    pub kernel_b: String,
    /// The initramfs with a static kbench as /init, as a URL.
    pub initramfs: String,
    /// `gz` or `none`.
    pub initramfs_compression: String,
    /// The initramfs carries a u-boot legacy header already.
    pub initramfs_uboot_header: bool,
    pub device_type: String,
    pub label_a: String,
    pub label_b: String,
    pub dtb_a: Option<String>,
    pub dtb_b: Option<String>,
    /// `image` (booti), `zimage` (bootz) or `uimage` (bootm).
    pub kernel_type: String,
    /// Boots per kernel.
    pub boots: u32,
    /// The `kbench.*` words saying what each boot runs.
    pub suite_words: Vec<String>,
    /// The user's extra kernel command line words.
    pub kernel_args: Vec<String>,
    pub job_name: Option<String>,
    pub priority: String,
    pub visibility: String,
    pub boot_timeout_minutes: u32,
    pub test_timeout_minutes: u32,
}

impl JobRequest {
    /// The command that imports the job's log, kept in its metadata.
    pub fn import_command(&self) -> String {
        let words = [
            "kbench",
            "import-console",
            "JOB.log",
            "--label-a",
            &self.label_a,
            "--label-b",
            &self.label_b,
        ]
        .map(str::to_string);
        kbench_runner::child::shell_join(&words)
    }

    /// What `kbench lava-job` says of the job it wrote, on stderr: its boots in order,
    /// and the command that imports its log.
    pub fn notice(&self, nonce: &str) -> String {
        let order: Vec<&str> = kbench_runner::scheduler::abba(self.boots)
            .into_iter()
            .map(|side| KernelSide::of_index(side).letter())
            .collect();
        format!(
            "kbench lava-job: {} boots on {} in the order {}, session nonce {nonce}\n\
             kbench lava-job: after the job, import its log: {}",
            order.len(),
            self.device_type,
            order.join(" "),
            self.import_command()
        )
    }
}

/// One nonce for the whole job: LAVA gives every boot of a job the same kernel command
/// line (`context` is job-wide), so the nonce proves a log is of this job, and the
/// namespaces tell its boots apart.
pub fn job_nonce() -> String {
    let now = kbench_workloads::measure::unix_now_ns();
    format!("lava{now:x}{:x}", std::process::id())
}

/// Why no job was written.
#[derive(Debug, thiserror::Error)]
pub enum LavaJobError {
    /// The request is not a job LAVA would run: the user's mistake.
    #[error("{0}")]
    Usage(String),
    #[error("writing the job as YAML: {0}")]
    Yaml(#[from] serde_saphyr::SerializeError),
}

impl LavaJobError {
    /// Whether the user can fix it by asking for another job (exit status 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, LavaJobError::Usage(_))
    }
}

fn usage_error<T>(message: impl Into<String>) -> Result<T, LavaJobError> {
    Err(LavaJobError::Usage(message.into()))
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

/// The job as YAML that PyYAML (LAVA's reader, YAML 1.1) reads the same: words like
/// `on` or `1:20` quoted, and every string on one line, as a person reviewing the job
/// expects to see a kernel command line.
pub fn to_yaml(job: &JobDefinition) -> Result<String, LavaJobError> {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.prefer_block_scalars = false;
    let mut yaml = serde_saphyr::to_string_with_options(job, options)?;
    if !yaml.ends_with('\n') {
        yaml.push('\n');
    }
    Ok(yaml)
}

/// The job, or the usage error that keeps it from being one LAVA would run. The
/// labels are the caller's to check, as every command checks them.
pub fn job_definition(request: &JobRequest, nonce: &str) -> Result<JobDefinition, LavaJobError> {
    check_numbers(request)?;
    for (option, url) in [
        ("--kernel-a", Some(&request.kernel_a)),
        ("--kernel-b", Some(&request.kernel_b)),
        ("--initramfs", Some(&request.initramfs)),
        ("--dtb-a", request.dtb_a.as_ref()),
        ("--dtb-b", request.dtb_b.as_ref()),
    ] {
        if let Some(url) = url {
            check_url(option, url)?;
        }
    }
    if request.dtb_a.is_some() != request.dtb_b.is_some() {
        return usage_error("--dtb-a and --dtb-b go together: a board that needs a device tree needs one for each kernel (give the same URL twice if they share it)");
    }
    if request.label_a == request.label_b {
        return usage_error("the two kernels need different labels (--label-a, --label-b)");
    }
    check_device_type(&request.device_type)?;
    let job_name = match &request.job_name {
        Some(name) if (1..=MAX_JOB_NAME).contains(&name.chars().count()) => name.clone(),
        Some(_) => return usage_error(format!("--job-name: 1 to {MAX_JOB_NAME} characters")),
        None => default_job_name(request),
    };
    let boots: Vec<KernelSide> = kbench_runner::scheduler::abba(request.boots)
        .into_iter()
        .map(KernelSide::of_index)
        .collect();
    let mut actions = Vec::with_capacity(3 * boots.len());
    for (index, &side) in boots.iter().enumerate() {
        actions.extend(boot_actions(request, &namespace(index, side), side, nonce));
    }
    Ok(JobDefinition {
        job_name,
        device_type: request.device_type.clone(),
        visibility: visibility(&request.visibility)?,
        priority: priority(&request.priority)?,
        timeouts: JobTimeouts {
            job: Timeout::minutes(job_minutes(request, boots.len())),
            // Longer than the test action's own timeout, so that one fires first: LAVA
            // may skip an action's timeout, not a wait that ran out.
            connections: BTreeMap::from([(
                MONITOR_ACTION.to_string(),
                Timeout::minutes(request.test_timeout_minutes.saturating_add(1)),
            )]),
        },
        context: Context {
            extra_kernel_args: kernel_args(request, nonce)?,
        },
        metadata: metadata(request, nonce, &boots),
        actions,
    })
}

fn check_numbers(request: &JobRequest) -> Result<(), LavaJobError> {
    if request.boots == 0 {
        return usage_error("--boots must be at least 1");
    }
    if request.boot_timeout_minutes == 0 || request.test_timeout_minutes == 0 {
        return usage_error("--boot-timeout-minutes and --test-timeout-minutes must be at least 1");
    }
    Ok(())
}

/// A URL LAVA can download: http, https or ftp with a host, or a file path. It goes
/// into the job as it is, so nothing that would need quoting on a command line.
fn check_url(option: &str, url: &str) -> Result<(), LavaJobError> {
    let bad = |why: &str| usage_error(format!("{option} {url}: {why}"));
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

fn check_device_type(device_type: &str) -> Result<(), LavaJobError> {
    let ok = (1..=MAX_DEVICE_TYPE).contains(&device_type.len())
        && device_type
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        usage_error(format!(
            "bad device type '{device_type}': 1 to {MAX_DEVICE_TYPE} letters, digits and - _ ."
        ))
    }
}

fn default_job_name(request: &JobRequest) -> String {
    let name = format!(
        "kbench {} vs {} on {}, {} boot{} each (ABBA)",
        request.label_a,
        request.label_b,
        request.device_type,
        request.boots,
        if request.boots == 1 { "" } else { "s" }
    );
    name.chars().take(MAX_JOB_NAME).collect()
}

fn visibility(text: &str) -> Result<Visibility, LavaJobError> {
    match text {
        "public" | "personal" => Ok(Visibility::Named(text.to_string())),
        _ => {
            let groups: Vec<String> = text
                .strip_prefix("group:")
                .map(|g| g.split(',').map(str::to_string).collect())
                .unwrap_or_default();
            if groups.is_empty() || groups.iter().any(|g| g.trim().is_empty()) {
                return usage_error(format!(
                    "--visibility {text}: public, personal, or group:NAME[,NAME...]"
                ));
            }
            Ok(Visibility::Group { group: groups })
        }
    }
}

fn priority(text: &str) -> Result<Priority, LavaJobError> {
    match text {
        "high" | "medium" | "low" => Ok(Priority::Named(text.to_string())),
        _ => match text.parse::<u8>() {
            Ok(level) if level <= 100 => Ok(Priority::Level(level)),
            _ => usage_error(format!("--priority {text}: high, medium, low, or 0 to 100")),
        },
    }
}

/// Every boot's deploy, boot and test, and what LAVA needs beyond them.
fn job_minutes(request: &JobRequest, boots: usize) -> u32 {
    let per_boot = DEPLOY_TIMEOUT_MINUTES
        .saturating_add(request.boot_timeout_minutes)
        .saturating_add(request.test_timeout_minutes);
    let boots = u32::try_from(boots).unwrap_or(u32::MAX);
    per_boot
        .saturating_mul(boots)
        .saturating_add(JOB_MARGIN_MINUTES)
}

/// The `kbench.*` words the guest reads (see guest.rs), as vm-ab passes them, for
/// LAVA's `extra_kernel_args`. No `console=`: the device type sets the board's. No
/// `quiet`: the kernel's messages are the only record of a boot that went wrong.
fn kernel_args(request: &JobRequest, nonce: &str) -> Result<String, LavaJobError> {
    let mut words = vec![format!("kbench.session={nonce}")];
    words.extend(request.suite_words.iter().cloned());
    for word in &request.kernel_args {
        crate::cmdline::check_kernel_word(word)
            .or_else(|e| usage_error(format!("--kernel-arg {e}")))?;
        words.push(word.clone());
    }
    Ok(words.join(" "))
}

fn metadata(request: &JobRequest, nonce: &str, boots: &[KernelSide]) -> BTreeMap<String, String> {
    let order: Vec<&str> = boots.iter().map(|s| s.letter()).collect();
    BTreeMap::from([
        ("kbench.label-a".to_string(), request.label_a.clone()),
        ("kbench.label-b".to_string(), request.label_b.clone()),
        ("kbench.session".to_string(), nonce.to_string()),
        ("kbench.order".to_string(), order.join(" ")),
        ("kbench.import".to_string(), request.import_command()),
    ])
}

/// One boot: download its kernel (and device tree) with the initramfs, boot it with the
/// device type's `ramdisk` u-boot commands, and watch its console for kbench's lines.
fn boot_actions(
    request: &JobRequest,
    namespace: &str,
    side: KernelSide,
    nonce: &str,
) -> [Action; 3] {
    let (kernel, dtb) = match side {
        KernelSide::A => (&request.kernel_a, &request.dtb_a),
        KernelSide::B => (&request.kernel_b, &request.dtb_b),
    };
    [
        Action::Deploy(Deploy {
            namespace: namespace.to_string(),
            timeout: Timeout::minutes(DEPLOY_TIMEOUT_MINUTES),
            to: "tftp",
            kernel: Kernel {
                url: kernel.clone(),
                kind: request.kernel_type.clone(),
            },
            dtb: dtb.as_ref().map(|url| Artifact { url: url.clone() }),
            ramdisk: Ramdisk {
                url: request.initramfs.clone(),
                compression: (request.initramfs_compression == "gz").then_some("gz"),
                header: request.initramfs_uboot_header.then_some("u-boot"),
                // LAVA would otherwise unpack the initramfs to add its test shell and
                // modules, and pack it again: kbench's /init needs neither, and the
                // image that boots stays the one `kbench initramfs` made.
                install_modules: false,
                install_overlay: false,
            },
        }),
        Action::Boot(BootAction {
            namespace: namespace.to_string(),
            timeout: Timeout::minutes(request.boot_timeout_minutes),
            method: "u-boot",
            commands: "ramdisk",
        }),
        Action::Test(Test {
            namespace: namespace.to_string(),
            // A boot that never ends its results (a panic, a hang) ends its own test,
            // and the job goes on to the next boot rather than ending incomplete.
            timeout: Timeout::skippable(request.test_timeout_minutes),
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
pub struct JobDefinition {
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
pub enum Visibility {
    Named(String),
    Group { group: Vec<String> },
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Priority {
    Named(String),
    Level(u8),
}

#[derive(Debug, Serialize)]
pub struct JobTimeouts {
    job: Timeout,
    /// Per LAVA action name: the longest wait for one expected console line.
    connections: BTreeMap<String, Timeout>,
}

/// A LAVA timeout, and whether LAVA goes on to the next action block when it expires.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Timeout {
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
pub struct Context {
    extra_kernel_args: String,
}

/// One entry of `actions`: a mapping with the action's type as its only key.
#[derive(Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Deploy(Deploy),
    Boot(BootAction),
    Test(Test),
}

#[derive(Debug, Serialize)]
pub struct Deploy {
    namespace: String,
    timeout: Timeout,
    to: &'static str,
    kernel: Kernel,
    #[serde(skip_serializing_if = "Option::is_none")]
    dtb: Option<Artifact>,
    ramdisk: Ramdisk,
}

#[derive(Debug, Serialize)]
pub struct Kernel {
    url: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Debug, Serialize)]
pub struct Artifact {
    url: String,
}

#[derive(Debug, Serialize)]
pub struct Ramdisk {
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    compression: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    header: Option<&'static str>,
    install_modules: bool,
    install_overlay: bool,
}

#[derive(Debug, Serialize)]
pub struct BootAction {
    namespace: String,
    timeout: Timeout,
    method: &'static str,
    commands: &'static str,
}

#[derive(Debug, Serialize)]
pub struct Test {
    namespace: String,
    timeout: Timeout,
    monitors: Vec<Monitor>,
}

#[derive(Debug, Serialize)]
pub struct Monitor {
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
            assert!(matches!(error, LavaJobError::Usage(_)), "{bad}");
        }
    }
}
