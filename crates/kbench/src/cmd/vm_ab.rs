//! `kbench vm-ab --kernel-a IMG --kernel-b IMG --boots N`: two kernels booted
//! alternately (ABBA) under qemu with kbench as the initramfs /init, each boot one
//! session, then the verdict with boots as the units.
use crate::args::checked_commit;
use crate::error::usage;
use crate::session::{self, DbArgs};
use crate::vm::{qemu_command, read_kernel, BootSide, Machine, MachineArgs};
use kbench_boot::cmdline::side_labels;
use kbench_boot::qemu::{self, BootFiles, QemuSetup};
use kbench_stats::sequential::Boundary;
use std::path::{Path, PathBuf};
use std::process::Command;
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
    #[command(flatten)]
    pub machine: MachineArgs,
    /// A word for kernel A's command line only (repeatable): `preempt=full`,
    /// `mitigations=off`, `pti=on`, `idle=poll`; with one image on both sides, the
    /// command lines are what the A/B compares.
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    pub kernel_arg_a: Vec<String>,
    /// A word for kernel B's command line only (repeatable).
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    pub kernel_arg_b: Vec<String>,
    /// The commit kernel A was built from, stored with its boots (`kbench history --by
    /// commit`).
    #[arg(long, value_name = "REV")]
    pub commit_a: Option<String>,
    /// The commit kernel B was built from.
    #[arg(long, value_name = "REV")]
    pub commit_b: Option<String>,
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

pub fn run(args: VmAbArgs) -> anyhow::Result<i32> {
    // The suite's words are checked before anything boots.
    let setup = args.machine.setup(
        &args.guest,
        &[
            ("--kernel-arg-a", &args.kernel_arg_a),
            ("--kernel-arg-b", &args.kernel_arg_b),
        ],
    )?;
    args.machine.deadlines()?;
    let options = args.verdict.options()?;
    let work = tempfile::tempdir()?;
    let mut setup = setup;
    setup.disk = Some(crate::vm::scratch_disk(work.path(), args.dry_run)?);
    let sides = sides(&args, work.path())?;
    if sides[0].arch != sides[1].arch {
        return usage(format!(
            "kernel A is {} and kernel B {}: an A/B boots one machine",
            sides[0].arch.as_str(),
            sides[1].arch.as_str()
        ));
    }
    let pins = args.machine.pins()?;
    // Until decided, as many as the bound allows.
    let boots_a_side = if args.until_decided {
        args.max_boots
    } else {
        args.boots
    };
    if args.dry_run {
        return dry_run(
            &args,
            &setup,
            &sides,
            pins.is_some(),
            boots_a_side,
            work.path(),
        );
    }
    let machine = Machine::start(
        &args.machine,
        setup,
        &sides[0],
        &[&sides[0], &sides[1]],
        work.path(),
        "vm-ab",
    )?;
    let mut store = args.db.open()?;
    let mut failed = 0;
    let sequential = args.until_decided.then(|| {
        crate::verdict::sequential_options(
            &options,
            args.max_boots as usize,
            Boundary::DeclaredMaximum,
            args.machine.clock,
        )
    });
    // Recorded before the first boot, so that a later `compare` of the two labels
    // looks with it.
    // It gathers its looks as they are recorded: each look after the first keeps to
    // what the first fixed.
    let mut recorded = match sequential {
        Some(design) => Some(crate::verdict::record_design(
            &mut store,
            (&sides[0].label, &sides[1].label),
            design,
            kbench_record::sequential::DesignedBy::VmAb,
            Some(args.max_time as f64),
        )?),
        None => None,
    };
    let started = Instant::now();
    let mut looked = None;
    for (boot, s) in qemu::order(boots_a_side) {
        errln!(
            "kbench: boot {} of {}{} ({})",
            boot + 1,
            if args.until_decided { "at most " } else { "" },
            2 * boots_a_side,
            sides[s].label
        );
        if !machine.boot(&sides[s], boot, &mut store)? {
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
            recorded.as_ref(),
        )?;
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
        if let Some(recorded) = recorded.as_mut() {
            let record = kbench_analysis::sequential::look_record(
                &look,
                u64::from(boot.div_ceil(2)),
                session::unix_now_ns(),
            );
            store.insert_sequential_look(recorded.id, &record)?;
            recorded.looks.push(record);
        }
        let stop = look.decided() || out_of_time;
        looked = Some(look);
        if stop {
            break;
        }
    }
    let report =
        kbench_analysis::compare_labels(&store, &sides[0].label, &sides[1].label, options)?;
    if args.format == kbench_report::compare::Format::Text {
        if let Some(notice) = machine.notice() {
            outln!("{notice}\n");
        }
    }
    crate::verdict::print_decided(
        looked.as_ref(),
        &report,
        args.format,
        kbench_report::compare::Layout::Compact,
    )?;
    Ok(i32::from(failed > 0))
}

/// `--dry-run`: the labels and the qemu commands, nothing booted.
fn dry_run(
    args: &VmAbArgs,
    setup: &QemuSetup,
    sides: &[BootSide; 2],
    pinned: bool,
    boots_a_side: u32,
    work: &Path,
) -> anyhow::Result<i32> {
    errln!(
        "kbench: kernel A's boots would be labelled {}, kernel B's {}",
        sides[0].label,
        sides[1].label
    );
    let accel = qemu::accel_for_dry_run(&args.machine.accel, sides[0].arch, setup.clock);
    if args.machine.accel == "auto" && accel == "kvm" {
        errln!("kbench: --accel auto first boots kernel A under KVM to its early panic, and uses TCG if that fails; these commands assume it works");
    }
    let initrd = work.join(crate::vm::INITRAMFS_FILE);
    for (boot, s) in qemu::order(boots_a_side) {
        let files = BootFiles::in_dir(Path::new("."), boot, pinned);
        let cmd = qemu_command(
            setup,
            &accel,
            &sides[s],
            &initrd,
            &format!("DRYRUN{boot}"),
            &files,
        );
        outln!("{}", shell_words(&cmd));
    }
    Ok(0)
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

/// Both kernels read, written where qemu can load them, with their own words, and
/// labelled so that the labels differ.
fn sides(args: &VmAbArgs, work: &Path) -> anyhow::Result<[BootSide; 2]> {
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
    let mut sides = [
        BootSide::new(
            image_a,
            label_a,
            &args.kernel_a,
            &args.kernel_arg_a,
            work,
            "a",
        )?,
        BootSide::new(
            image_b,
            label_b,
            &args.kernel_b,
            &args.kernel_arg_b,
            work,
            "b",
        )?,
    ];
    for (side, (option, commit)) in sides.iter_mut().zip([
        ("--commit-a", &args.commit_a),
        ("--commit-b", &args.commit_b),
    ]) {
        side.source.kernel_commit = checked_commit(option, commit.as_deref())?;
    }
    Ok(sides)
}

fn shell_words(cmd: &Command) -> String {
    let words: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    kbench_runner::child::shell_join(&words)
}
