//! What every row of one comparison is made with: the options, the calibration, and
//! the labels' clock resolution.
use super::options::ReportOptions;
use crate::calibration::{Calibration, ComponentKey};
use crate::model::*;
use kbench_stats::{CompareOptions, Design, Level};

/// Everything a row needs to know beyond its two sides.
pub(super) struct Context<'a> {
    pub(super) opts: ReportOptions,
    pub(super) calibration: Option<&'a Calibration>,
    /// The clock both labels were measured with: δ's default, a series' unit.
    pub(super) clock: kbench_record::Clock,
}

impl Context<'_> {
    pub(super) fn compare_options(&self, higher_is_better: bool, delta_pct: f64) -> CompareOptions {
        CompareOptions {
            delta_pct,
            alpha: self.opts.alpha,
            higher_is_better,
        }
    }

    pub(super) fn noise(&self, key: &ComponentKey) -> Option<kbench_stats::NoiseComponents> {
        self.calibration?.find(key).cloned()
    }

    /// δ's floor when `--delta` is not given: the default of the labels' clock.
    pub(super) fn default_delta_pct(&self) -> f64 {
        crate::clock::default_delta_pct(self.clock)
    }

    /// `--delta`, or the default of the labels' clock.
    pub(super) fn delta_or_default(&self) -> f64 {
        self.opts.delta_pct.unwrap_or(self.default_delta_pct())
    }

    /// The row's delta: `--delta`, or the larger of the clock's default (1 % timed)
    /// and what the calibration lets this machine resolve with `units` of `level` a
    /// side.
    pub(super) fn delta_for(
        &self,
        noise: Option<&kbench_stats::NoiseComponents>,
        design: Design,
        units: usize,
    ) -> (f64, Option<Diagnostic>) {
        if let Some(d) = self.opts.delta_pct {
            return (d, None);
        }
        let level = design.level();
        let resolvable = noise.and_then(|n| {
            if level == Level::Run {
                return None;
            }
            kbench_stats::resolvable_change_pct(n, level, units, self.opts.alpha)
        });
        match resolvable {
            Some(r) if r > self.default_delta_pct() => (
                r,
                Some(Diagnostic::DeltaRaised {
                    delta_pct: r,
                    level,
                    units,
                }),
            ),
            _ => (self.default_delta_pct(), None),
        }
    }
}
