//! Two kernels' boots in ABBA pairs through the runner's scheduler: a fixed number a
//! side, or until the one sequential driver decides with the boots as units, every
//! look kept with the design. `vm-ab`'s loop, and that of any way to boot whose
//! executor hands over [`Boot`]s.
use crate::keep::BootStore;
use crate::machine::{Boot, BootSide};
use crate::qemu::{BootFiles, QemuSetup};
use kbench_analysis::sequential::{same_machine_calibration, SequentialOptions, SequentialReport};
use kbench_analysis::{AnalysisError, LabelData};
use kbench_record::stored::SessionWithRuns;
use kbench_runner::labels::SayLook;
use kbench_runner::{
    scheduler, ArmOutcome, Bounds, Executor, LabelLooker, Observer, Order, RunnerError, Schedule,
    SequentialDriver, StopPolicy, StopRule,
};
use kbench_store::Store;
use std::path::Path;
use std::time::Duration;

/// What an A/B of two kernels' boots asks.
pub struct BootAb<'a> {
    pub labels: [&'a str; 2],
    /// Boots a side; with a sequential decision, its bound.
    pub boots_a_side: u32,
    /// Until decided: the design, the time bound, and the recorded design its looks
    /// are kept with.
    pub until_decided: Option<(SequentialOptions, Duration, i64)>,
}

/// Both sides' boots, and the sequential decision when one was asked for.
pub type BootAbOutcome = (Vec<ArmOutcome<SessionWithRuns>>, Option<SequentialReport>);

impl BootAb<'_> {
    /// Boots `arms` (A, B) in ABBA pairs into `store`, saying each boot as it starts
    /// and each look with `say_look`.
    pub fn run(
        &self,
        arms: &mut [&mut dyn Executor<Boot>],
        store: &mut Store,
        say_look: SayLook,
    ) -> Result<BootAbOutcome, RunnerError> {
        let mut said = SaidBoots {
            labels: self.labels,
            total: 2 * self.boots_a_side,
            at_most: self.until_decided.is_some(),
            started: 0,
        };
        let Some((options, max_time, design_id)) = self.until_decided else {
            let mut fixed = StopPolicy::Attempts(self.boots_a_side);
            let mut sink = BootStore {
                store,
                design: None,
            };
            let outcomes = scheduler::run(boots(&mut fixed), arms, &mut sink, &mut said)?;
            return Ok((outcomes, None));
        };
        // The labels as stored, read once: their earlier boots count, as in `compare`.
        let data = self.labels.map(|label| LabelData::load(store, label));
        let [a, b] = data;
        let (a, b) = (a.map_err(usage)?, b.map_err(usage)?);
        let calibration = match options.use_calibration {
            true => same_machine_calibration(store, &a, &b).map_err(usage)?,
            false => None,
        };
        let looker = LabelLooker::new(self.labels, options, true)
            .starting_from([a, b], calibration)
            .saying(say_look);
        let bounds = Bounds {
            max_attempts_per_side: Some(self.boots_a_side),
            max_time,
        };
        let mut driver = SequentialDriver::new(looker, bounds);
        let mut sink = BootStore {
            store,
            design: Some(design_id),
        };
        let outcomes = scheduler::run(boots(&mut driver), arms, &mut sink, &mut said)?;
        Ok((outcomes, driver.latest().cloned()))
    }
}

/// The boots of both kernels in ABBA pairs, with no warm-up or hooks, until `stop`.
fn boots(stop: &mut dyn StopRule<SessionWithRuns>) -> Schedule<'_, SessionWithRuns> {
    Schedule {
        order: Order::Abba,
        warmup: 0,
        hooks: Vec::new(),
        stop,
    }
}

/// Each boot said as it starts: `boot 3 of at most 40 (LABEL)`.
struct SaidBoots<'a> {
    labels: [&'a str; 2],
    /// Boots in all; with `at_most`, the bound.
    total: u32,
    at_most: bool,
    started: u32,
}

impl Observer<SessionWithRuns> for SaidBoots<'_> {
    fn starting(&mut self, side: usize, _warmup: bool, _so_far: &ArmOutcome<SessionWithRuns>) {
        self.started += 1;
        errln!(
            "kbench: boot {} of {}{} ({})",
            self.started,
            if self.at_most { "at most " } else { "" },
            self.total,
            self.labels[side]
        );
    }
}

/// The qemu command of each of `boots_a_side` ABBA pairs of `sides`' boots, as a
/// shell would read it back (`vm-ab --dry-run`), their files in the current directory.
pub fn dry_run_commands(
    setup: &QemuSetup,
    accel: &str,
    sides: &[BootSide; 2],
    pinned: bool,
    boots_a_side: u32,
    work: &Path,
) -> Vec<String> {
    let initrd = work.join(crate::machine::INITRAMFS_FILE);
    kbench_runner::scheduler::abba(boots_a_side)
        .into_iter()
        .enumerate()
        .map(|(boot, side)| {
            let boot = boot as u32;
            let files = BootFiles::in_dir(Path::new("."), boot, pinned);
            let nonce = format!("DRYRUN{boot}");
            let cmd = sides[side].qemu_command(setup, accel, &initrd, &nonce, &files);
            let words: Vec<String> = std::iter::once(cmd.get_program())
                .chain(cmd.get_args())
                .map(|w| w.to_string_lossy().into_owned())
                .collect();
            kbench_runner::child::shell_join(&words)
        })
        .collect()
}

/// An analysis error met before the first boot, as the runner reports it: the user's
/// to mend when it says so, else the store's fault as it gave it.
fn usage(e: AnalysisError) -> RunnerError {
    match e.is_usage() {
        true => RunnerError::Usage(e.to_string()),
        false => RunnerError::Executor(e.into()),
    }
}
