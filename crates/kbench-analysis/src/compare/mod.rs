//! From stored runs of two labels to a [`CompareReport`]: group, never pool what
//! differs, compare at the level of replication the runs have, and say everything
//! else.
mod context;
mod differences;
mod machines;
mod options;
mod rows;

use crate::calibration::{self, Calibration, ComponentKey, Fingerprint};
use crate::group::{self, Key, RunKey, SideObservations};
use crate::label::LabelData;
use crate::model::*;
use crate::AnalysisError;
use context::Context;
pub use differences::SESSIONS_DIFFER_KERNEL_CONFIG;
use differences::{
    boots, config_differences, environment_differences, reproduce, side_notes, unmatched,
    unmatched_summaries,
};
use kbench_stats::Verdict;
use kbench_store::Store;
pub use machines::{machines_of, resolve_machine, Machines};
use machines::{narrowed, select_machines};
pub use options::{ReportOptions, ALPHA, DEFAULT_DELTA_PCT};
use rows::{adjust_for_multiple_rows, compare_summaries, key_rows, pooled_percentile_rows};
use std::collections::BTreeSet;

fn side_summary(label: &str, loaded: &LabelData) -> SideSummary {
    let sessions: BTreeSet<String> = loaded.sessions.iter().map(group::session_unit).collect();
    SideSummary {
        label: label.to_string(),
        runs: loaded.runs.iter().filter(|r| r.is_measured()).count(),
        sessions: sessions.len(),
        boots: boots(&loaded.sessions),
    }
}

/// Compares `new` against `base`, on the one machine they share.
pub fn compare_labels(
    store: &Store,
    base: &str,
    new: &str,
    opts: ReportOptions,
) -> Result<CompareReport, AnalysisError> {
    compare_labels_on(store, base, new, opts, &Machines::Same)
}

/// Compares `new` against `base` on the machines `machines` chooses.
pub fn compare_labels_on(
    store: &Store,
    base: &str,
    new: &str,
    opts: ReportOptions,
    machines: &Machines,
) -> Result<CompareReport, AnalysisError> {
    refuse_same(base, new)?;
    for label in [base, new] {
        check_label(store, label)?;
    }
    let (a, b) = (LabelData::load(store, base)?, LabelData::load(store, new)?);
    compare_loaded(store, &a, &b, opts, machines)
}

/// Each of `news` compared against `base`, each label read once, in order: the
/// comparisons with the labels they were drawn from (for the plots).
pub fn compare_each(
    store: &Store,
    base: &str,
    news: &[String],
    opts: ReportOptions,
    machines: &Machines,
) -> Result<Comparisons, AnalysisError> {
    let mut base_data: Option<LabelData> = None;
    let (mut loaded, mut reports) = (Vec::new(), Vec::new());
    for new in news {
        refuse_same(base, new)?;
        for label in [base, new.as_str()] {
            check_label(store, label)?;
        }
        let (a, b) = match base_data.take() {
            Some(a) => (a, LabelData::load(store, new)?),
            None => LabelData::load_two(store, base, new)?,
        };
        let report = compare_loaded(store, &a, &b, opts, machines)?;
        base_data = Some(a);
        loaded.push(b);
        reports.push(report);
    }
    Ok(Comparisons {
        base: base_data.unwrap_or_default(),
        news: loaded,
        reports,
    })
}

/// The comparisons of NEW labels against one BASE, with the labels as read.
#[derive(Debug, Clone, Default)]
pub struct Comparisons {
    pub base: LabelData,
    /// The NEW labels, in the order asked.
    pub news: Vec<LabelData>,
    /// The comparison of each NEW label against BASE, in the same order.
    pub reports: Vec<CompareReport>,
}

/// NEW labels are columns: one named twice is a mistake, refused before anything is read.
pub fn check_distinct(news: &[String]) -> Result<(), AnalysisError> {
    for (i, label) in news.iter().enumerate() {
        if news[..i].contains(label) {
            return Err(AnalysisError::Usage(format!("'{label}' is named twice")));
        }
    }
    Ok(())
}

fn refuse_same(base: &str, new: &str) -> Result<(), AnalysisError> {
    if base == new {
        return Err(AnalysisError::Usage(format!(
            "BASE and NEW are both '{base}': name two labels"
        )));
    }
    Ok(())
}

/// A usage error unless `store` holds runs labelled `label`.
pub fn check_label(store: &Store, label: &str) -> Result<(), AnalysisError> {
    if !store.has_label(label)? {
        return Err(AnalysisError::Usage(format!(
            "no runs labelled '{label}' in {}",
            store.path().display()
        )));
    }
    Ok(())
}

/// Compares the loaded label `new` against `base` on the machines `machines` chooses;
/// the store gives only this machine's calibration and the kernel configs.
pub fn compare_loaded(
    store: &Store,
    base_data: &LabelData,
    new_data: &LabelData,
    opts: ReportOptions,
    machines: &Machines,
) -> Result<CompareReport, AnalysisError> {
    let (base, new) = (base_data.label.as_str(), new_data.label.as_str());
    refuse_same(base, new)?;
    let clock = crate::clock::shared_clock((base, &base_data.sessions), (new, &new_data.sessions))?;
    let machines = select_machines(base_data, new_data, machines)?;
    let (a, b) = (
        narrowed(base_data, machines.as_ref()),
        narrowed(new_data, machines.as_ref()),
    );
    // A calibration describes one machine: both sides must have run on it.
    let machine = match (
        calibration::fingerprint_of(&a.sessions),
        calibration::fingerprint_of(&b.sessions),
    ) {
        (Some(fa), Some(fb)) if fa.same_machine(&fb) => Some(fb),
        _ => None,
    };
    // Nor is one machine's noise the noise of machines as units.
    let across = matches!(machines, Some(MachinesCompared::Across { .. }));
    let calibration = match (&machine, opts.use_calibration && !across) {
        (Some(m), true) => calibration::matching(store, m)?,
        _ => None,
    };
    let ctx = Context {
        opts,
        calibration: calibration.as_ref(),
        clock,
    };
    let (groups_b, groups_a) = crate::parallel::join(
        || group::group(&b.runs, &b.sessions),
        || group::group(&a.runs, &a.sessions),
    );
    let keys: Vec<(&Key, &SideObservations, &SideObservations)> = groups_a
        .iter()
        .filter_map(|(key, side_a)| Some((key, side_a, groups_b.get(key)?)))
        .collect();
    let mut rows: Vec<CompareRow> = crate::parallel::map_ordered(&keys, |(key, side_a, side_b)| {
        key_rows(key, side_a, side_b, &ctx, (&a, &b))
    })
    .into_iter()
    .flatten()
    .collect();
    rows.extend(compare_summaries(&a.summaries, &b.summaries, &ctx));
    rows.extend(pooled_percentile_rows(&a, &b, &ctx));
    // The headline figure first, then its mechanism rows.
    rows.sort_by_key(|r| {
        (
            r.workload.clone(),
            r.params.clone(),
            !r.is_primary(),
            matches!(r.kind, RowKind::PooledPercentile { .. }),
            r.metric.clone(),
        )
    });
    adjust_for_multiple_rows(&mut rows, opts.alpha);
    let mut tally = Tally::default();
    for row in rows.iter().filter(|r| r.is_primary() && !r.is_split()) {
        tally.add(row.verdict);
    }
    let not_compared = unmatched(&groups_a, &groups_b)
        .into_iter()
        .chain(unmatched_summaries(&a.summaries, &b.summaries))
        .collect();
    let mut notes = side_notes(SideName::Base, &a);
    notes.extend(side_notes(SideName::New, &b));
    if rows.is_empty() {
        notes.push(ReportNote::NothingToCompare);
    }
    if clock == kbench_record::Clock::Instructions {
        notes.push(ReportNote::Counted);
    }
    let calibration_used = calibration
        .as_ref()
        .map(|c| calibration_used(c, machine.as_ref(), &rows, &ctx));
    let carried = crate::carried::carried_over(&rows);
    Ok(CompareReport {
        base: side_summary(base, &a),
        new: side_summary(new, &b),
        delta: DeltaChoice {
            pct: ctx.delta_or_default(),
            explicit: opts.delta_pct.is_some(),
        },
        calibration: calibration_used,
        tally,
        rows,
        not_compared,
        environment_differences: environment_differences(&a.sessions, &b.sessions),
        config_differences: config_differences(store, &a.sessions, &b.sessions)?,
        notes,
        reproduce: reproduce(
            base,
            new,
            &a.sessions,
            &b.sessions,
            opts.delta_pct,
            machines.as_ref(),
        ),
        seed: opts.seed,
        machines,
        carried,
        clock,
    })
}

fn calibration_used(
    c: &Calibration,
    machine: Option<&Fingerprint>,
    rows: &[CompareRow],
    ctx: &Context,
) -> CalibrationUsed {
    let mut warnings = Vec::new();
    if let Some(m) = machine {
        if !c.fingerprint.same_kernel(m) {
            warnings.push(CalibrationWarning::OtherKernel {
                calibrated: c.fingerprint.kernel_text(),
                compared: m.kernel_text(),
            });
        }
        if c.fingerprint.kbench_version != m.kbench_version {
            warnings.push(CalibrationWarning::OtherVersion {
                calibrated: c.fingerprint.kbench_version.clone(),
            });
        }
    }
    let age_days = ctx.opts.now_unix_ns.saturating_sub(c.row.created_unix_ns) as f64 / 86_400e9;
    if ctx.opts.now_unix_ns > 0 && age_days > calibration::STALE_AFTER_DAYS {
        warnings.push(CalibrationWarning::Old {
            age_days,
            limit_days: calibration::STALE_AFTER_DAYS,
        });
    }
    let headline = rows.iter().filter(|r| r.is_primary()).find_map(|r| {
        let key = ComponentKey {
            run: RunKey {
                workload: r.workload.clone(),
                params: r.params.clone(),
                variant: r.variant.clone(),
            },
            metric: r.metric.clone(),
            pooled_quantile: None,
        };
        let sd = c.find(&key)?.between_session_sd?;
        Some(100.0 * sd.exp_m1())
    });
    CalibrationUsed {
        id: c.row.id,
        created_unix_ns: c.row.created_unix_ns,
        sessions: c.row.sessions as usize,
        boots: c.row.boots as usize,
        kernel_release: c.fingerprint.kernel_release.clone(),
        headline_between_session_cv_pct: headline,
        warnings,
    }
}

/// When `--fail-on` makes a comparison fail, judged on each primary row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailOn {
    /// A row that got worse.
    Regression,
    /// Any real change, better or worse.
    Change,
}

impl FailOn {
    pub const ALL: [FailOn; 2] = [FailOn::Regression, FailOn::Change];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FailOn::Regression => "regression",
            FailOn::Change => "change",
        }
    }

    /// Whether a primary row of `reports` (the table's, per-class and per-placement
    /// rows included) fails the comparison.
    pub fn fails_any(self, reports: &[CompareReport]) -> bool {
        let primary = reports
            .iter()
            .flat_map(|r| &r.rows)
            .filter(|r| r.is_primary());
        primary.into_iter().any(|r| self.fails(r.verdict))
    }

    /// Whether a row of `verdict` fails the comparison.
    pub fn fails(self, verdict: Verdict) -> bool {
        match self {
            FailOn::Regression => verdict == Verdict::Regression,
            FailOn::Change => verdict.claims_difference(),
        }
    }
}

impl std::str::FromStr for FailOn {
    type Err = AnalysisError;

    fn from_str(name: &str) -> Result<FailOn, AnalysisError> {
        FailOn::ALL
            .into_iter()
            .find(|rule| rule.name() == name)
            .ok_or_else(|| AnalysisError::Usage(format!("unknown --fail-on rule '{name}'")))
    }
}

#[cfg(test)]
mod tests {
    use super::resolve_machine;

    #[test]
    fn a_machine_is_named_whole_by_its_id_or_as_a_session_knows_itself() {
        let known: Vec<String> = ["host: X [dt:aa]", "host: X [dt:bb]", "host: X", "solo: Y"]
            .map(String::from)
            .to_vec();
        let resolve = |asked| resolve_machine(&known, asked);
        assert_eq!(
            resolve("host: X [dt:aa]").as_deref(),
            Some("host: X [dt:aa]")
        );
        assert_eq!(resolve("dt:bb").as_deref(), Some("host: X [dt:bb]"));
        // The sessions stored before ids, by the bare name.
        assert_eq!(resolve("host: X").as_deref(), Some("host: X"));
        // A session of `solo` knows its id; the store shows it bare (one id).
        assert_eq!(resolve("solo: Y [mac:01]").as_deref(), Some("solo: Y"));
        assert_eq!(resolve("dt:cc"), None);
        assert_eq!(resolve("host"), None);
    }
}
