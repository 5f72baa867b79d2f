//! `kbench vm-ab --kernel-a IMG --kernel-b IMG --boots N`: two kernels booted
//! alternately (ABBA) under qemu with kbench as the initramfs /init, each boot one
//! session, then the verdict with boots as the units.
use crate::args::checked_commit;
use crate::error::usage;
use crate::session::DbArgs;
use crate::vm::{read_kernel, QemuArgs};
use kbench_analysis::sequential::{options_of_report, SequentialOptions, SequentialReport};
use kbench_boot::boot_ab::{dry_run_commands, BootAb};
use kbench_boot::cmdline::side_labels;
use kbench_boot::machine::{Boot, BootSide, QemuExecutor, QemuMachine};
use kbench_boot::qemu::{self, QemuSetup};
use kbench_report::sequential::boot_pairs_lines;
use kbench_runner::{Executor, Reached};
use kbench_stats::sequential::Boundary;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    pub guest: crate::guest::GuestSuiteArgs,
    #[command(flatten)]
    pub machine: QemuArgs,
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
    pub format: kbench_report::format::Format,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: VmAbArgs) -> anyhow::Result<i32> {
    // The suite's words are checked before anything boots.
    let mut setup = args.machine.setup(
        &args.guest,
        &[
            ("--kernel-arg-a", &args.kernel_arg_a),
            ("--kernel-arg-b", &args.kernel_arg_b),
        ],
    )?;
    args.machine.deadlines()?;
    let options = args.verdict.options()?;
    let work = tempfile::tempdir()?;
    setup.disk = Some(crate::vm::scratch_disk(work.path(), args.dry_run)?);
    let sides = sides(&args, work.path())?;
    if sides[0].arch != sides[1].arch {
        return usage(format!(
            "kernel A is {} and kernel B {}: an A/B boots one machine",
            sides[0].arch.as_str(),
            sides[1].arch.as_str()
        ));
    }
    if args.dry_run {
        return dry_run(&args, &setup, &sides, work.path());
    }
    let boots_a_side = boots_a_side(&args);
    let config = args.machine.config(setup, "vm-ab")?;
    let machine = QemuMachine::start(config, &sides[0], &[&sides[0], &sides[1]], work.path())?;
    let mut store = args.db.open()?;
    let labels = [sides[0].label.as_str(), sides[1].label.as_str()];
    let mut executors = sides.each_ref().map(|side| QemuExecutor {
        machine: &machine,
        side,
    });
    let mut arms: Vec<&mut dyn Executor<Boot>> = executors
        .iter_mut()
        .map(|e| e as &mut dyn Executor<Boot>)
        .collect();
    let until_decided = match args.until_decided {
        true => Some(recorded_design(&args, &options, labels, &mut store)?),
        false => None,
    };
    let ab = BootAb {
        labels,
        boots_a_side,
        until_decided,
    };
    let (outcomes, looked) = ab.run(&mut arms, &mut store, Box::new(say_look))?;
    let failed = outcomes.iter().any(|o| !o.failures.is_empty());
    let report = kbench_analysis::compare_labels(&store, labels[0], labels[1], options)?;
    if args.format == kbench_report::format::Format::Text {
        if let Some(notice) = machine.notice() {
            outln!("{notice}\n");
        }
    }
    let layout = kbench_report::compare::Layout::Compact;
    crate::verdict::print_decided(looked.as_ref(), &report, args.format, layout)?;
    Ok(i32::from(failed))
}

/// `--until-decided`'s design, recorded before the first boot so that a later `compare`
/// of the two labels looks with it: with its time bound and its id.
fn recorded_design(
    args: &VmAbArgs,
    options: &kbench_analysis::ReportOptions,
    labels: [&str; 2],
    store: &mut kbench_store::Store,
) -> anyhow::Result<(SequentialOptions, Duration, i64)> {
    let (boots, clock) = (args.max_boots as usize, args.machine.clock);
    let design = options_of_report(options, boots, Boundary::DeclaredMaximum, clock);
    let by = kbench_record::sequential::DesignedBy::VmAb;
    let max_time = Some(args.max_time as f64);
    let recorded =
        crate::verdict::record_design(store, (labels[0], labels[1]), design, by, max_time)?;
    Ok((design, Duration::from_secs(args.max_time), recorded.id))
}

/// `--dry-run`: the labels and the qemu commands, nothing booted.
fn dry_run(
    args: &VmAbArgs,
    setup: &QemuSetup,
    sides: &[BootSide; 2],
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
    let (pinned, boots) = (args.machine.pins()?.is_some(), boots_a_side(args));
    for command in dry_run_commands(setup, &accel, sides, pinned, boots, work) {
        outln!("{command}");
    }
    Ok(0)
}

/// Boots a side: until decided, as many as the bound allows.
fn boots_a_side(args: &VmAbArgs) -> u32 {
    match args.until_decided {
        true => args.max_boots,
        false => args.boots,
    }
}

/// Each look's lines on stderr.
fn say_look(look: &SequentialReport, pairs: u32, reached: Reached) {
    for line in boot_pairs_lines(look, pairs, reached == Reached::Time) {
        errln!("kbench: {line}");
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
