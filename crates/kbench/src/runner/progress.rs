//! A progress bar on stderr when stderr is a terminal; nothing otherwise.
use super::spec::WorkloadSpec;
use super::{Plan, Stopping};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(plan: &Plan) -> Self {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let per_workload = match plan.stopping {
            Stopping::Runs(n) => u64::from(n),
            Stopping::Precision { min_runs, .. } => u64::from(min_runs),
        };
        let total = (per_workload + u64::from(plan.warmup)) * plan.specs.len() as u64;
        let bar = ProgressBar::new(total);
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} ETA {eta} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        Progress { bar: Some(bar) }
    }

    pub fn start_run(&mut self, spec: &WorkloadSpec, what: &str) {
        if let Some(bar) = &self.bar {
            if bar.position() >= bar.length().unwrap_or(0) {
                // Adaptive runs go past the first estimate.
                bar.inc_length(1);
            }
            bar.set_message(format!("{} {what}", spec.display()));
            bar.inc(1);
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
