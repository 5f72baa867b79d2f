//! `kbench vm-ab --kernel-a IMG --kernel-b IMG --boots N`: two kernels booted
//! alternately (ABBA) under qemu with kbench as the initramfs /init, each boot one
//! session, then the verdict with boots as the units.
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_boot::deb::{kernel_from_path, KernelImage};
use kbench_store::{NewSession, Store, StoredRun};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct VmAbArgs {
    /// Kernel A: a bzImage, or a Debian linux-image-*.deb.
    #[arg(long, value_name = "IMG")]
    pub kernel_a: PathBuf,
    /// Kernel B, likewise.
    #[arg(long, value_name = "IMG")]
    pub kernel_b: PathBuf,
    /// Label of kernel A's boots [default: vm-<release>].
    #[arg(long)]
    pub label_a: Option<String>,
    /// Label of kernel B's boots [default: vm-<release>].
    #[arg(long)]
    pub label_b: Option<String>,
    /// Boots per kernel, in ABBA order.
    #[arg(long, default_value_t = 3)]
    pub boots: u32,
    /// Workload specs run in each boot [default: pipe on one CPU].
    #[arg(long, value_name = "SPEC")]
    pub suite: Vec<String>,
    /// The quick suite of `kbench run` in each boot.
    #[arg(long, conflicts_with = "suite")]
    pub quick: bool,
    /// Measured runs per workload and boot.
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
    /// KVM, TCG, or KVM when this machine can run a guest with it.
    #[arg(long, default_value = "auto", value_parser = ["auto", "kvm", "tcg"])]
    pub accel: String,
    /// Virtual CPUs.
    #[arg(long, default_value_t = 2)]
    pub smp: u32,
    /// Guest memory, MiB.
    #[arg(long, default_value_t = 1024)]
    pub mem: u32,
    /// An extra word for the kernel command line (repeatable).
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    pub kernel_arg: Vec<String>,
    /// An extra qemu argument (repeatable).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub qemu_arg: Vec<String>,
    /// The kbench to boot as /init: a static build (scripts/build-static.sh) [default:
    /// this one, if it is static].
    #[arg(long, value_name = "PATH")]
    pub init: Option<PathBuf>,
    /// The qemu binary.
    #[arg(long, default_value = "qemu-system-x86_64")]
    pub qemu: String,
    /// A boot still running after this many seconds is stopped and recorded as failed.
    #[arg(long, value_name = "SECS", default_value_t = 900)]
    pub boot_timeout: u64,
    /// Print the qemu commands and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub verdict: crate::cmd::compare::VerdictArgs,
    /// Output format of the verdict.
    #[arg(long, default_value = "text", value_parser = ["text", "markdown", "json", "csv"])]
    pub format: String,
    #[command(flatten)]
    pub db: DbArgs,
}

/// The notice a TCG run carries, in the output and in its sessions.
const TCG_NOTICE: &str = "qemu ran under TCG (emulation): its timings measure the emulator, not the kernel; use the verdicts to check that both kernels work, not which is faster";

/// One kernel of the A/B, ready to boot.
struct Side {
    label: String,
    image: KernelImage,
    kernel_path: PathBuf,
}

pub fn run(args: VmAbArgs) -> anyhow::Result<i32> {
    if args.boots == 0 || args.runs == 0 {
        return usage("--boots and --runs must be at least 1");
    }
    let options = args.verdict.options()?;
    let work = tempfile::tempdir()?;
    let sides = [
        side(&args.kernel_a, args.label_a.as_deref(), work.path(), "a")?,
        side(&args.kernel_b, args.label_b.as_deref(), work.path(), "b")?,
    ];
    if sides[0].label == sides[1].label {
        return usage("the two kernels need different labels (--label-a, --label-b)");
    }
    let initrd = work.path().join("initramfs.cpio.gz");
    std::fs::write(&initrd, initramfs(args.init.as_deref())?)?;
    let accel = accel(&args.accel);
    if args.dry_run {
        for (boot, s) in order(args.boots) {
            let cmd = qemu_command(
                &args,
                &accel,
                &sides[s],
                &initrd,
                &format!("DRYRUN{boot}"),
                Path::new("console.log"),
            );
            outln!("{}", shell_words(&cmd));
        }
        return Ok(0);
    }
    if accel == "tcg" {
        eprintln!("kbench: {TCG_NOTICE}");
    }
    let mut store = args.db.open()?;
    let mut failed = 0;
    for (boot, s) in order(args.boots) {
        let nonce = nonce(boot);
        let log = work.path().join(format!("boot{boot}.log"));
        let cmd = qemu_command(&args, &accel, &sides[s], &initrd, &nonce, &log);
        eprintln!(
            "kbench: boot {} of {} ({})",
            boot + 1,
            2 * args.boots,
            sides[s].label
        );
        let timed_out = boot_once(cmd, Duration::from_secs(args.boot_timeout))?;
        let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
        let target = BootTarget {
            label: &sides[s].label,
            expected_release: &sides[s].image.release,
            accel: Some(&accel),
            kind: "vm-ab",
            shared_log: false,
        };
        if !store_boot(&mut store, &target, &nonce, &text, timed_out)? {
            failed += 1;
        }
    }
    let report = kbench_analysis::compare_labels(&store, &sides[0].label, &sides[1].label, options)
        .map_err(crate::analysis_error)?;
    if args.format == "text" && accel == "tcg" {
        outln!("{TCG_NOTICE}\n");
    }
    crate::cmd::compare::print_reports(
        std::slice::from_ref(&report),
        &args.format,
        kbench_report::compare::Layout::Compact,
    )?;
    Ok(i32::from(failed > 0))
}

/// A kernel image read, written where qemu can load it, and labelled.
fn side(path: &Path, label: Option<&str>, work: &Path, name: &str) -> anyhow::Result<Side> {
    let image = kernel_from_path(path).or_else(|e| usage(format!("{}: {e}", path.display())))?;
    let label = match label {
        Some(l) => l.to_string(),
        None if !image.release.is_empty() => format!("vm-{}", image.release),
        None => format!("vm-{name}"),
    };
    session::check_label(&label)?;
    let kernel_path = work.join(format!("vmlinuz-{name}"));
    std::fs::write(&kernel_path, &image.kernel)?;
    Ok(Side {
        label,
        image,
        kernel_path,
    })
}

/// `init` (else this kbench) as /init; a dynamically linked one could not start there.
fn initramfs(init: Option<&Path>) -> anyhow::Result<Vec<u8>> {
    let (path, exe) = crate::cmd::initramfs::init_binary(init)?;
    if kbench_boot::elf::needs_interpreter(&exe) != Some(false) {
        return usage(format!(
            "{} is not a static executable, so it cannot run as /init: build one with scripts/build-static.sh and pass it as --init",
            path.display()
        ));
    }
    Ok(kbench_boot::initramfs::Initramfs::with_init(exe).to_gzip())
}

/// KVM only when asked or when the CPU can run a guest with it (vmx or svm and a
/// /dev/kvm); a nested KVM without them emulates every memory write.
fn accel(asked: &str) -> String {
    match asked {
        "auto" => {
            let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
            let virt = flags
                .lines()
                .filter(|l| l.starts_with("flags"))
                .any(|l| l.split_whitespace().any(|f| f == "vmx" || f == "svm"));
            if virt && Path::new("/dev/kvm").exists() {
                "kvm".into()
            } else {
                "tcg".into()
            }
        }
        other => other.into(),
    }
}

/// (boot number, side) in ABBA order: A B, B A, A B, ...
fn order(boots: u32) -> Vec<(u32, usize)> {
    (0..boots)
        .flat_map(|block| if block % 2 == 0 { [0, 1] } else { [1, 0] })
        .enumerate()
        .map(|(i, s)| (i as u32, s))
        .collect()
}

/// A nonce no other boot shares: the log must prove it is of this boot.
fn nonce(boot: u32) -> String {
    format!(
        "{:x}{:x}b{boot}",
        session::unix_now_ns(),
        std::process::id()
    )
}

fn kernel_cmdline(args: &VmAbArgs, nonce: &str) -> String {
    let mut cmdline = format!(
        "console=ttyS0 quiet panic=-1 kbench.session={nonce} kbench.runs={}",
        args.runs
    );
    if args.quick {
        cmdline.push_str(" kbench.quick");
    } else if !args.suite.is_empty() {
        cmdline.push_str(&format!(" kbench.suite=\"{}\"", args.suite.join(";")));
    }
    for word in &args.kernel_arg {
        cmdline.push(' ');
        cmdline.push_str(word);
    }
    cmdline
}

fn qemu_command(
    args: &VmAbArgs,
    accel: &str,
    side: &Side,
    initrd: &Path,
    nonce: &str,
    log: &Path,
) -> Command {
    let mut cmd = Command::new(&args.qemu);
    cmd.args(["-accel", accel, "-cpu"])
        .arg(if accel == "kvm" { "host" } else { "max" })
        .args(["-smp", &args.smp.to_string(), "-m", &args.mem.to_string()])
        .args(["-display", "none", "-monitor", "none", "-no-reboot"])
        .arg("-serial")
        .arg(format!("file:{}", log.display()))
        .arg("-kernel")
        .arg(&side.kernel_path)
        .arg("-initrd")
        .arg(initrd)
        .arg("-append")
        .arg(kernel_cmdline(args, nonce))
        .args(&args.qemu_arg);
    cmd
}

fn shell_words(cmd: &Command) -> String {
    let words: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    crate::runner::child::shell_join(&words)
}

/// Starts qemu, so that it dies with kbench, and waits for it at most `timeout`; true
/// when it had to be stopped.
fn boot_once(mut cmd: Command, timeout: Duration) -> anyhow::Result<bool> {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // SAFETY: runs in the forked child before exec and calls only prctl, which is
    // async-signal-safe; it allocates nothing and touches no lock.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().or_else(|e| {
        usage(format!(
            "cannot start qemu ({e}): install qemu-system-x86 or pass --qemu"
        ))
    })?;
    let status = crate::runner::child::wait_with_timeout(&mut child, timeout)?;
    Ok(status.is_none())
}

/// Where the sessions of booted kernels are stored, and what their logs must show.
pub struct BootTarget<'a> {
    pub label: &'a str,
    /// The kernel release the boot must report; empty when unknown.
    pub expected_release: &'a str,
    /// qemu's accelerator, for a boot kbench started itself.
    pub accel: Option<&'a str>,
    /// The session kind: `vm-ab`, `console`.
    pub kind: &'a str,
    /// The log holds other boots too (a board's capture of several): their lines are
    /// no reason to refuse this one's.
    pub shared_log: bool,
}

/// Stores one boot: its session with the guest's environment and runs when its log is
/// intact and of this boot, else a failed session with the reason. True when it
/// succeeded. The console log is kept with the session either way.
pub fn store_boot(
    store: &mut Store,
    target: &BootTarget<'_>,
    nonce: &str,
    log: &str,
    timed_out: bool,
) -> anyhow::Result<bool> {
    let parsed = kbench_console::parse(log, nonce);
    let begin = parsed
        .messages
        .iter()
        .find(|m| m.kind == kbench_console::Kind::Begin)
        .and_then(|m| serde_json::from_slice::<serde_json::Value>(&m.payload).ok());
    let runs: Vec<StoredRun> = parsed
        .messages
        .iter()
        .filter(|m| m.kind == kbench_console::Kind::Record)
        .filter_map(|m| serde_json::from_slice(&m.payload).ok())
        .collect();
    let guest_error = parsed
        .messages
        .iter()
        .find(|m| m.kind == kbench_console::Kind::Error)
        .map(|m| String::from_utf8_lossy(&m.payload).into_owned());
    let release = begin
        .as_ref()
        .and_then(|b| b["kernel_release"].as_str())
        .map(str::to_string);
    let foreign = if target.shared_log {
        Vec::new()
    } else {
        parsed.other_nonces.clone()
    };
    let failure = boot_failure(
        &parsed,
        &foreign,
        timed_out,
        begin.is_some(),
        guest_error,
        release.as_deref(),
        target.expected_release,
    );
    let mut session = begin
        .as_ref()
        .and_then(|b| serde_json::from_value::<NewSession>(b["session"].clone()).ok())
        .unwrap_or_else(|| NewSession {
            kbench_version: env!("CARGO_PKG_VERSION").to_string(),
            started_unix_ns: session::unix_now_ns(),
            ..NewSession::default()
        });
    session.label = target.label.to_string();
    session.kind = target.kind.into();
    session.command_line = session::command_line();
    if let Some(env) = session.environment.as_mut().and_then(|e| e.as_object_mut()) {
        // Every boot has its own nonce: it proves the log's origin, and is no
        // difference between the kernels' environments.
        if let Some(cmdline) = env.get("cmdline").and_then(|c| c.as_str()) {
            let kept: Vec<&str> = cmdline
                .split(' ')
                .filter(|w| !w.starts_with("kbench.session="))
                .collect();
            env.insert("cmdline".into(), kept.join(" ").into());
        }
        if let Some(accel) = target.accel {
            env.insert("vm_accel".into(), accel.into());
        }
        // What the guest said of itself beyond the snapshot: its compiler line (which
        // /proc/version has), the governor it set, and its uptimes.
        for (from, to) in [
            ("uptime_s", "vm_uptime_s"),
            ("proc_version", "proc_version"),
            ("governor", "vm_governor"),
        ] {
            if let Some(value) = begin
                .as_ref()
                .map(|b| b[from].clone())
                .filter(|v| !v.is_null())
            {
                env.insert(to.into(), value);
            }
        }
        if target.accel == Some("tcg") {
            env.insert("vm_notice".into(), TCG_NOTICE.into());
        }
    }
    let id = store
        .begin_session(&session)
        .map_err(session::store_error)?;
    store
        .set_console_log(id, &gzip(log.as_bytes()))
        .map_err(session::store_error)?;
    match &failure {
        None => {
            for run in &runs {
                store.insert_run(id, run).map_err(session::store_error)?;
            }
        }
        Some(reason) => {
            eprintln!("kbench: boot of {} failed: {reason}", target.label);
            let failed = StoredRun {
                workload: "boot".into(),
                error: Some(reason.clone()),
                exit_status: Some(1),
                ..StoredRun::default()
            };
            store
                .insert_run(id, &failed)
                .map_err(session::store_error)?;
        }
    }
    store
        .end_session(id, session::unix_now_ns())
        .map_err(session::store_error)?;
    Ok(failure.is_none())
}

/// Why a boot's results cannot be used, if they cannot.
fn boot_failure(
    parsed: &kbench_console::Parsed,
    foreign_nonces: &[String],
    timed_out: bool,
    begun: bool,
    guest_error: Option<String>,
    release: Option<&str>,
    expected_release: &str,
) -> Option<String> {
    if !foreign_nonces.is_empty() {
        return Some(format!(
            "the console log is of another boot (nonce {})",
            foreign_nonces.join(", ")
        ));
    }
    if let Some(panic) = parsed.panics.first() {
        return Some(format!("the kernel died: {panic}"));
    }
    if let Some(error) = guest_error {
        return Some(format!("kbench in the guest: {error}"));
    }
    if timed_out {
        return Some("timed out".into());
    }
    if !begun {
        return Some("no BEGIN record: kbench never reported from the guest".into());
    }
    if let Some(release) = release {
        if !expected_release.is_empty() && release != expected_release {
            return Some(format!("booted kernel {release}, not {expected_release}"));
        }
    }
    if !parsed.complete {
        return Some(format!(
            "incomplete results: {} message(s) lost, {} bad line(s), END {}",
            parsed.lost_messages,
            parsed.bad_lines,
            if parsed.ended { "seen" } else { "missing" }
        ));
    }
    None
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = enc.write_all(bytes);
    enc.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boots_alternate_abba() {
        let sides: Vec<usize> = order(3).into_iter().map(|(_, s)| s).collect();
        assert_eq!(sides, [0, 1, 1, 0, 0, 1]);
        let boots: Vec<u32> = order(2).into_iter().map(|(b, _)| b).collect();
        assert_eq!(boots, [0, 1, 2, 3]);
    }
}
