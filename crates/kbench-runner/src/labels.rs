//! Two labels' sessions as units (each boot of `vm-ab`, or of any other way to boot),
//! looked at by kbench-analysis's sequential comparison after every block: the looker
//! the one sequential driver uses for boots. The labels, read once before the first
//! boot, grow by the sessions the scheduler hands over; nothing is read back from the
//! store between looks.
use crate::driver::{Decidable, Looker, Reached, Seen};
use crate::scheduler::ArmOutcome;
use kbench_analysis::calibration::Calibration;
use kbench_analysis::sequential::{self, FixedAtFirstLook, SequentialOptions, SequentialReport};
use kbench_analysis::LabelData;
use kbench_record::sequential::SequentialLook;
use kbench_record::stored::SessionWithRuns;

impl Decidable for SequentialReport {
    fn decided(&self) -> bool {
        SequentialReport::decided(self)
    }

    fn close_undecided(&mut self) {
        SequentialReport::close_undecided(self)
    }
}

/// Says a look: the report, the blocks (pairs of boots) so far, and whether a bound
/// closed it.
pub type SayLook = Box<dyn Fn(&SequentialReport, u32, Reached)>;

/// The sequential comparison of two labels' sessions, α split among the primary
/// metrics of the first look that saw any, each with the units that look chose.
pub struct LabelLooker {
    options: SequentialOptions,
    data: [LabelData; 2],
    /// Sessions of each arm already in `data`.
    taken: [usize; 2],
    fixed: Option<FixedAtFirstLook>,
    /// This machine's calibration, when the labels had one as they were read.
    calibration: Option<Calibration>,
    /// Ids of the sessions added, above any a store gives.
    next_session_id: i64,
    say: Option<SayLook>,
    /// Each look is recorded with the design (`vm-ab --until-decided`).
    recorded: bool,
}

/// Where the ids of sessions added in memory start: far above a store's own.
const FIRST_ADDED_SESSION_ID: i64 = 1 << 40;

impl LabelLooker {
    /// Looks at `labels` under `options`; `recorded` when the design is kept with its
    /// looks.
    pub fn new(labels: [&str; 2], options: SequentialOptions, recorded: bool) -> LabelLooker {
        let empty = |label: &str| LabelData {
            label: label.to_string(),
            ..LabelData::default()
        };
        LabelLooker {
            options,
            data: [empty(labels[0]), empty(labels[1])],
            taken: [0, 0],
            fixed: None,
            calibration: None,
            next_session_id: FIRST_ADDED_SESSION_ID,
            say: None,
            recorded,
        }
    }

    /// Starts from the labels as stored (`data`, read once) and the calibration found
    /// for them: earlier sessions under the labels count, as `compare` counts them.
    pub fn starting_from(mut self, data: [LabelData; 2], calibration: Option<Calibration>) -> Self {
        self.data = data;
        self.calibration = calibration;
        self
    }

    /// Says every look with `say`.
    pub fn saying(mut self, say: SayLook) -> LabelLooker {
        self.say = Some(say);
        self
    }

    /// Both labels as the looks saw them.
    pub fn data(&self) -> &[LabelData; 2] {
        &self.data
    }

    fn take_new_sessions(&mut self, arms: &[ArmOutcome<SessionWithRuns>]) {
        for (side, arm) in arms.iter().enumerate().take(2) {
            for whole in &arm.measured[self.taken[side]..] {
                self.next_session_id += 1;
                self.data[side].push_session(whole, self.next_session_id);
            }
            self.taken[side] = arm.measured.len();
        }
    }
}

impl Looker<SessionWithRuns> for LabelLooker {
    type Look = SequentialReport;

    fn look(&mut self, arms: &[ArmOutcome<SessionWithRuns>]) -> Seen<SequentialReport> {
        if arms.iter().all(|a| a.attempts == 0) {
            return Seen::Nothing;
        }
        self.take_new_sessions(arms);
        let [a, b] = &self.data;
        // Instructions and times are never compared: labels of two clocks are the
        // user's to mend.
        let clocks =
            kbench_analysis::clock::shared_clock((&a.label, &a.sessions), (&b.label, &b.sessions));
        if let Err(e) = clocks {
            return Seen::Refuse(e.to_string());
        }
        let calibration = self.calibration.as_ref();
        let fixed = self.fixed.as_ref();
        let report = sequential::sequential_loaded(a, b, self.options, calibration, fixed);
        if self.fixed.is_none() {
            self.fixed = FixedAtFirstLook::of_report(&report);
        }
        Seen::Look(report)
    }

    fn say(&self, look: &SequentialReport, arms: &[ArmOutcome<SessionWithRuns>], reached: Reached) {
        if let Some(say) = &self.say {
            let blocks = crate::arm::blocks_done(arms);
            say(look, blocks, reached);
        }
    }

    fn record(&self, look: &SequentialReport, index: u64) -> Option<SequentialLook> {
        let now = kbench_workloads::measure::unix_now_ns();
        self.recorded
            .then(|| sequential::look_record(look, index, now))
    }
}

/// A boot's primary value, for the fixed rules: the mean of its first primary metric
/// over its measured runs.
impl crate::scheduler::Measurement for SessionWithRuns {
    fn primary_value(&self) -> Option<f64> {
        let primary = |run: &kbench_record::StoredRun| {
            run.values
                .iter()
                .find(|v| v.primary)
                .map(|v| (v.metric.clone(), v.value))
        };
        let measured = self.runs.iter().filter(|r| r.is_measured());
        let first = measured.clone().find_map(primary)?.0;
        let values: Vec<f64> = measured
            .filter_map(primary)
            .filter(|(metric, _)| *metric == first)
            .map(|(_, value)| value)
            .collect();
        Some(values.iter().sum::<f64>() / values.len() as f64)
    }
}
