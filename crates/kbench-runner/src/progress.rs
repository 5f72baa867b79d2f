//! A progress bar on stderr when stderr is a terminal; nothing otherwise.
use crate::scheduler::{ArmOutcome, MeasuredRun, Observer};
use crate::spec::WorkloadSpec;
use crate::stop::{StopPolicy, StopRule};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    bar: Option<ProgressBar>,
    names: Vec<String>,
}

impl Progress {
    /// The bar of a suite of `specs`, each run as `stopping` says after `warmup`
    /// warm-up runs.
    pub fn new(specs: &[WorkloadSpec], stopping: &StopPolicy, warmup: u32) -> Self {
        let names = specs.iter().map(|s| s.display()).collect();
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None, names };
        }
        let per_workload = StopRule::<MeasuredRun>::expected_runs_per_arm(stopping);
        let total = (per_workload + u64::from(warmup)) * specs.len() as u64;
        let bar = ProgressBar::new(total);
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} ETA {eta} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        Progress {
            bar: Some(bar),
            names,
        }
    }
}

impl Observer for Progress {
    fn starting(&mut self, arm: usize, warmup: bool, so_far: &ArmOutcome) {
        let Some(bar) = &self.bar else {
            return;
        };
        if bar.position() >= bar.length().unwrap_or(0) {
            // Adaptive runs go past the first estimate.
            bar.inc_length(1);
        }
        let what = if warmup {
            "warm-up".to_string()
        } else {
            format!("run {}", so_far.primary_values().len() + 1)
        };
        bar.set_message(format!("{} {what}", self.names[arm]));
        bar.inc(1);
    }

    fn finished(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
