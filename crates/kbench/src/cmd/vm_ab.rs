//! `kbench vm-ab --kernel-a IMG --kernel-b IMG --boots N`: two kernels booted
//! alternately (ABBA) under qemu with kbench as the initramfs /init, each boot one
//! session, then the verdict with boots as the units.
use crate::boots::{config_sha256, init_error, store_boot};
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_boot::cmdline::{check_kernel_word, side_labels};
use kbench_boot::deb::{kernel_from_path, Arch, KernelImage};
use kbench_boot::qemu::{
    self, AccelChoice, BootFiles, BootKernel, BootRun, Deadlines, QemuSetup, Step, Watch,
    WATCH_INTERVAL,
};
use kbench_boot::stored::{BootTarget, HostView, TCG_NOTICE};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct VmAbArgs {
    /// Kernel A: a bzImage, or a Debian linux-image-*.deb.
    #[arg(long, value_name = "IMG")]
    pub kernel_a: PathBuf,
    /// Kernel B, likewise.
    #[arg(long, value_name = "IMG")]
    pub kernel_b: PathBuf,
    /// Label of kernel A's boots [default: vm-<release>, then +WORD for each
    /// --kernel-arg-a word; -a at the end when B's would be the same].
    #[arg(long)]
    pub label_a: Option<String>,
    /// Label of kernel B's boots [default: as kernel A's, with B's words].
    #[arg(long)]
    pub label_b: Option<String>,
    /// Boots per kernel, in ABBA order (at most 1000).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000), conflicts_with = "until_decided")]
    pub boots: u32,
    /// Boot pairs in ABBA order until the sequential rule decides every primary
    /// metric (regression, improvement, or no change larger than --delta), with boots
    /// as the units and a look after every pair that keeps the false-claim rate; or
    /// until --max-boots or --max-time.
    #[arg(long)]
    pub until_decided: bool,
    /// With --until-decided: boots a side at which it stops undecided.
    #[arg(long, value_name = "N", default_value_t = 20, requires = "until_decided", value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub max_boots: u32,
    /// With --until-decided: seconds after which no further pair is booted.
    #[arg(long, value_name = "SECS", default_value_t = 14_400, requires = "until_decided", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_time: u64,
    #[command(flatten)]
    pub guest: crate::guest::SuiteArgs,
    /// KVM, TCG, or KVM when this machine can run a guest with it.
    #[arg(long, default_value = "auto", value_parser = ["auto", "kvm", "tcg"])]
    pub accel: String,
    /// Virtual CPUs.
    #[arg(long, default_value_t = 2)]
    pub smp: u32,
    /// qemu's CPU model (`cortex-a53`, `cortex-a72`, `Skylake-Client`) [default: `host`
    /// under KVM, else `max`].
    #[arg(long, value_name = "MODEL")]
    pub cpu: Option<String>,
    /// Guest memory, MiB.
    #[arg(long, default_value_t = 1024)]
    pub mem: u32,
    /// An extra word for both kernels' command lines (repeatable).
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    pub kernel_arg: Vec<String>,
    /// A word for kernel A's command line only (repeatable): `preempt=full`,
    /// `mitigations=off`, `pti=on`, `idle=poll`; with one image on both sides, the
    /// command lines are what the A/B compares.
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    pub kernel_arg_a: Vec<String>,
    /// A word for kernel B's command line only (repeatable).
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    pub kernel_arg_b: Vec<String>,
    /// An extra qemu argument (repeatable).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub qemu_arg: Vec<String>,
    /// The kbench to boot as /init: a static build (scripts/build-static.sh) [default:
    /// this one, if it is static].
    #[arg(long, value_name = "PATH")]
    pub init: Option<PathBuf>,
    /// The qemu binary [default: qemu-system-x86_64 or qemu-system-aarch64, as the
    /// kernels are].
    #[arg(long)]
    pub qemu: Option<String>,
    /// Pin vCPU i to the i-th host CPU of LIST (cyclically), through QMP.
    #[arg(long, value_name = "LIST")]
    pub pin_vcpus: Option<String>,
    /// A boot with no BEGIN from kbench after this many seconds is stopped and
    /// recorded as failed (the kernel or /init never came up).
    #[arg(long = "begin-timeout", value_name = "SECS", default_value_t = 300)]
    pub begin_timeout_s: u64,
    /// A boot with no END after this many seconds is stopped and recorded as failed.
    #[arg(long = "boot-timeout", value_name = "SECS", default_value_t = 900)]
    pub boot_timeout_s: u64,
    /// A guest that has sent END but not powered off after this many seconds is
    /// stopped; its results are kept.
    #[arg(long = "exit-timeout", value_name = "SECS", default_value_t = 60)]
    pub exit_timeout_s: u64,
    /// Print the qemu commands and run nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub verdict: crate::verdict::VerdictArgs,
    /// Output format of the verdict.
    #[arg(long, default_value = "text", value_parser = crate::verdict::format_parser(&crate::verdict::VERDICT_FORMATS))]
    pub format: kbench_report::compare::Format,
    #[command(flatten)]
    pub db: DbArgs,
}

/// One kernel of the A/B, ready to boot.
struct Side {
    label: String,
    image: KernelImage,
    arch: Arch,
    kernel_path: PathBuf,
    /// Its own command line words, after those of both sides.
    own_words: Vec<String>,
    /// The hash of the kernel's config (its .deb's config-*), when known.
    config_sha256: Option<String>,
}

pub fn run(args: VmAbArgs) -> anyhow::Result<i32> {
    // The suite's words are checked before anything boots.
    let setup = qemu_setup(&args)?;
    if [
        args.begin_timeout_s,
        args.boot_timeout_s,
        args.exit_timeout_s,
    ]
    .contains(&0)
    {
        return usage("--begin-timeout, --boot-timeout and --exit-timeout must be at least 1 s");
    }
    let options = args.verdict.options()?;
    let work = tempfile::tempdir()?;
    let sides = sides(&args, work.path())?;
    if sides[0].arch != sides[1].arch {
        return usage(format!(
            "kernel A is {} and kernel B {}: an A/B boots one machine",
            sides[0].arch.as_str(),
            sides[1].arch.as_str()
        ));
    }
    let pins = match &args.pin_vcpus {
        Some(list) => {
            Some(kbench_boot::qmp::parse_pin_list(list).or_else(|e| usage(e.to_string()))?)
        }
        None => None,
    };
    let initrd = work.path().join("initramfs.cpio.gz");
    let image = kbench_boot::init::static_init_image(args.init.as_deref()).map_err(init_error)?;
    std::fs::write(&initrd, image)?;
    // Until decided, as many as the bound allows.
    let boots_a_side = if args.until_decided {
        args.max_boots
    } else {
        args.boots
    };
    if args.dry_run {
        errln!(
            "kbench: kernel A's boots would be labelled {}, kernel B's {}",
            sides[0].label,
            sides[1].label
        );
        let accel = qemu::accel_for_dry_run(&args.accel, sides[0].arch);
        if args.accel == "auto" && accel == "kvm" {
            errln!("kbench: --accel auto first boots kernel A under KVM to its early panic, and uses TCG if that fails; these commands assume it works");
        }
        for (boot, s) in qemu::order(boots_a_side) {
            let files = BootFiles::in_dir(Path::new("."), boot, pins.is_some());
            let cmd = qemu_command(
                &setup,
                &accel,
                &sides[s],
                &initrd,
                &format!("DRYRUN{boot}"),
                &files,
            );
            outln!("{}", shell_words(&cmd));
        }
        return Ok(0);
    }
    let choice = choose_accel(&args, &setup, &sides[0], work.path())?;
    errln!("kbench: {}", choice.reason);
    let accel = choice.accel.clone();
    if accel == "tcg" {
        errln!("kbench: {TCG_NOTICE}");
    }
    let deadlines = Deadlines {
        begin: Duration::from_secs(args.begin_timeout_s),
        end: Duration::from_secs(args.boot_timeout_s),
        exit: Duration::from_secs(args.exit_timeout_s),
    };
    let command_line = session::command_line();
    let mut store = args.db.open()?;
    let mut failed = 0;
    let sequential = args
        .until_decided
        .then(|| crate::verdict::sequential_options(&options, args.max_boots as usize));
    // Recorded before the first boot, so that a later `compare` of the two labels
    // looks with it.
    let design_id = match sequential {
        Some(design) => Some(
            crate::verdict::record_design(
                &mut store,
                (&sides[0].label, &sides[1].label),
                design,
                kbench_record::sequential::DesignedBy::VmAb,
                Some(args.max_time as f64),
            )
            .map_err(session::store_error)?
            .id,
        ),
        None => None,
    };
    let started = Instant::now();
    let mut looked = None;
    for (boot, s) in qemu::order(boots_a_side) {
        let nonce = nonce(boot);
        let files = BootFiles::in_dir(work.path(), boot, pins.is_some());
        let cmd = qemu_command(&setup, &accel, &sides[s], &initrd, &nonce, &files);
        errln!(
            "kbench: boot {} of {}{} ({})",
            boot + 1,
            if args.until_decided { "at most " } else { "" },
            2 * boots_a_side,
            sides[s].label
        );
        let qemu_started = Instant::now();
        let run = boot_once(cmd, &files, &nonce, deadlines, pins.as_deref())?;
        let qemu_wall_s = qemu_started.elapsed().as_secs_f64();
        for note in &run.notes {
            errln!("kbench: boot {}: {note}", boot + 1);
        }
        errln!(
            "kbench: boot {}: qemu ran {qemu_wall_s:.1} s, start to exit",
            boot + 1
        );
        let target = BootTarget {
            label: &sides[s].label,
            expected_release: &sides[s].image.release,
            accel: Some(&accel),
            kind: "vm-ab",
            shared_log: false,
            kernel_config_sha256: sides[s].config_sha256.as_deref(),
            command_line: &command_line,
        };
        let host = HostView {
            failure: run.failure,
            vcpu_pins: run.pins,
            accel_reason: Some(choice.reason.clone()),
            qemu_wall_s: Some(qemu_wall_s),
        };
        let config = sides[s].image.config.as_deref();
        if !store_boot(
            &mut store,
            &target,
            config,
            &nonce,
            &files.read_log(),
            &host,
        )? {
            failed += 1;
        }
        // A look after every pair of boots (AB or BA), with the boots as units.
        let Some(design) = sequential.filter(|_| boot % 2 == 1) else {
            continue;
        };
        let mut look = kbench_analysis::sequential::sequential_labels(
            &store,
            &sides[0].label,
            &sides[1].label,
            design,
        )
        .map_err(crate::analysis_error)?;
        let out_of_time = started.elapsed() >= Duration::from_secs(args.max_time);
        let last_pair = boot + 1 == 2 * boots_a_side;
        if !look.decided() && out_of_time && !last_pair {
            errln!("kbench: --max-time reached: no more boots");
        }
        // No more boots: what is open is undecided (failed boots can leave a side
        // short of the bound when the boots run out).
        if out_of_time || last_pair {
            look.close_undecided();
        }
        say_look(&look, boot.div_ceil(2));
        if let Some(id) = design_id {
            let record = kbench_analysis::sequential::look_record(
                &look,
                u64::from(boot.div_ceil(2)),
                session::unix_now_ns(),
            );
            store
                .insert_sequential_look(id, &record)
                .map_err(session::store_error)?;
        }
        let stop = look.decided() || out_of_time;
        looked = Some(look);
        if stop {
            break;
        }
    }
    let report = kbench_analysis::compare_labels(&store, &sides[0].label, &sides[1].label, options)
        .map_err(crate::analysis_error)?;
    if args.format == kbench_report::compare::Format::Text && accel == "tcg" {
        outln!("{TCG_NOTICE}\n");
    }
    crate::verdict::print_decided(
        looked.as_ref(),
        &report,
        args.format,
        kbench_report::compare::Layout::Compact,
    )?;
    Ok(i32::from(failed > 0))
}

/// One line per primary metric after a look: its interval against ±δ so far.
fn say_look(look: &kbench_analysis::sequential::SequentialReport, pairs: u32) {
    for row in &look.rows {
        let metric = format!("{} {}", row.workload, row.metric);
        errln!(
            "kbench: after {pairs} boot pairs: {}",
            kbench_report::sequential::progress_line(&metric, &row.look, look.options.delta_pct)
        );
    }
}

/// What every boot asks of qemu; the suite's words, and the user's for both sides and
/// for each, are checked here.
fn qemu_setup(args: &VmAbArgs) -> anyhow::Result<QemuSetup> {
    let mut kernel_words = args.guest.kernel_words()?;
    for (option, words) in [
        ("--kernel-arg", &args.kernel_arg),
        ("--kernel-arg-a", &args.kernel_arg_a),
        ("--kernel-arg-b", &args.kernel_arg_b),
    ] {
        for word in words {
            check_kernel_word(word).or_else(|e| usage(format!("{option} {e}")))?;
        }
    }
    kernel_words.extend(args.kernel_arg.iter().cloned());
    Ok(QemuSetup {
        qemu: args.qemu.clone(),
        cpu: args.cpu.clone(),
        smp: args.smp,
        mem_mib: args.mem,
        qemu_args: args.qemu_arg.clone(),
        kernel_words,
    })
}

/// Both kernels read, written where qemu can load them, with their own words, and
/// labelled so that the labels differ.
fn sides(args: &VmAbArgs, work: &Path) -> anyhow::Result<[Side; 2]> {
    let image_a = read_kernel(&args.kernel_a)?;
    // One image on both sides (two command lines, or an A/A) is read once: unpacking a
    // .deb takes seconds.
    let image_b = if args.kernel_b == args.kernel_a {
        image_a.clone()
    } else {
        read_kernel(&args.kernel_b)?
    };
    let [label_a, label_b] = side_labels(
        [args.label_a.as_deref(), args.label_b.as_deref()],
        [&image_a.release, &image_b.release],
        [&args.kernel_arg_a, &args.kernel_arg_b],
    );
    if label_a == label_b {
        return usage(format!(
            "both sides would be labelled {label_a}: give them different labels (--label-a, --label-b)"
        ));
    }
    Ok([
        side(
            image_a,
            label_a,
            &args.kernel_a,
            &args.kernel_arg_a,
            work,
            "a",
        )?,
        side(
            image_b,
            label_b,
            &args.kernel_b,
            &args.kernel_arg_b,
            work,
            "b",
        )?,
    ])
}

fn read_kernel(path: &Path) -> anyhow::Result<KernelImage> {
    kernel_from_path(path).or_else(|e| usage(format!("{}: {e}", path.display())))
}

/// A kernel image (read from `path`) written where qemu can load it, with its label.
fn side(
    image: KernelImage,
    label: String,
    path: &Path,
    own_words: &[String],
    work: &Path,
    name: &str,
) -> anyhow::Result<Side> {
    session::check_label(&label)?;
    let Some(arch) = image.arch() else {
        return usage(format!(
            "{}: neither an x86 bzImage nor an arm64 Image",
            path.display()
        ));
    };
    let kernel_path = work.join(format!("vmlinuz-{name}"));
    std::fs::write(&kernel_path, &image.kernel)?;
    Ok(Side {
        label,
        own_words: own_words.to_vec(),
        config_sha256: config_sha256(image.config.as_deref()),
        image,
        arch,
        kernel_path,
    })
}

fn qemu_command(
    setup: &QemuSetup,
    accel: &str,
    side: &Side,
    initrd: &Path,
    nonce: &str,
    files: &BootFiles,
) -> Command {
    let kernel = BootKernel {
        arch: side.arch,
        image: &side.kernel_path,
        own_words: &side.own_words,
    };
    qemu::qemu_command(setup, accel, &kernel, initrd, nonce, files)
}

/// `kvm` or `tcg` as asked; for `auto`, KVM when kernel A boots under it to its early
/// panic (kbench-boot's `qemu` says why a probe).
fn choose_accel(
    args: &VmAbArgs,
    setup: &QemuSetup,
    side: &Side,
    work: &Path,
) -> anyhow::Result<AccelChoice> {
    if let Some(choice) = qemu::accel_without_probe_needed(&args.accel, side.arch) {
        return Ok(choice);
    }
    let log = work.join("kvm-probe.console");
    let mut cmd = qemu::kvm_probe_command(setup, side.arch, &side.kernel_path, &log);
    let started = Instant::now();
    let mut child = spawn_dying_with_kbench(&mut cmd)?;
    let exited = kbench_runner::child::wait_with_timeout(&mut child, qemu::KVM_PROBE_DEADLINE)?;
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
    Ok(qemu::accel_after_probe(exited, &text, started.elapsed()))
}

/// A nonce no other boot shares: the log must prove it is of this boot.
fn nonce(boot: u32) -> String {
    format!(
        "{:x}{:x}b{boot}",
        session::unix_now_ns(),
        std::process::id()
    )
}

fn shell_words(cmd: &Command) -> String {
    let words: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    kbench_runner::child::shell_join(&words)
}

/// Starts qemu so that it dies with kbench, pins its vCPUs if asked, and watches the
/// boot's output until qemu exits or a deadline passes: no BEGIN, no END, or no exit
/// after END.
fn boot_once(
    mut cmd: Command,
    files: &BootFiles,
    nonce: &str,
    deadlines: Deadlines,
    pins: Option<&[u32]>,
) -> anyhow::Result<BootRun> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let mut watch = Watch::start();
    let mut child = spawn_dying_with_kbench(&mut cmd)?;
    let mut run = BootRun::default();
    if let (Some(cpus), Some(socket)) = (pins, &files.qmp) {
        let mut qemu_gone =
            || match child.try_wait() {
                Ok(Some(status)) => Some(qemu::qemu_exit_failure(status).unwrap_or_else(|| {
                    format!("qemu exited ({status}) before its QMP socket was up")
                })),
                _ => None,
            };
        match kbench_boot::qmp::pin_vcpus(socket, cpus, Duration::from_secs(10), &mut qemu_gone) {
            Ok(done) => run.pins = done,
            Err(e) => {
                kbench_runner::child::stop(&mut child);
                run.failure = Some(format!("--pin-vcpus: {e}"));
                return Ok(run);
            }
        }
    }
    loop {
        if let Some(status) = child.try_wait()? {
            run.failure = qemu::qemu_exit_failure(status);
            return Ok(run);
        }
        match watch.look(files, nonce, deadlines) {
            Step::Wait => std::thread::sleep(WATCH_INTERVAL),
            Step::Stop { failure, note } => {
                run.notes.extend(note);
                kbench_runner::child::stop(&mut child);
                run.failure = failure;
                return Ok(run);
            }
        }
    }
}

/// Starts qemu so that the kernel kills it when kbench dies, however kbench dies.
fn spawn_dying_with_kbench(cmd: &mut Command) -> anyhow::Result<std::process::Child> {
    kbench_runner::child::die_with_kbench(cmd);
    cmd.spawn().or_else(|e| {
        usage(format!(
            "cannot start {} ({e}): install qemu (qemu-system-x86, qemu-system-arm) or pass --qemu",
            cmd.get_program().to_string_lossy()
        ))
    })
}
