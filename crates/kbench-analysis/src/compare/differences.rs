//! What a comparison says beside its rows: what was not compared, how the two
//! labels' environments and kernel configs differ, notes on each side, and how to
//! reproduce it.
use crate::group::{self, Key, SideObservations};
use crate::label::LabelData;
use crate::model::*;
use crate::AnalysisError;
use kbench_store::{RunRow, SessionRow, Store, SummaryRow};
use kbench_sys::kconfig::{self, KernelConfig};
use std::collections::{BTreeMap, BTreeSet};

/// Keys of one side with no exact match on the other, said plainly, one entry per
/// workload and reason (metrics of one run share their fate).
/// The key [`ReportNote::SessionsDiffer`] names when a side's sessions ran on
/// kernels of different configs.
pub const SESSIONS_DIFFER_KERNEL_CONFIG: &str = "kernel_config";

pub(super) fn unmatched(
    a: &BTreeMap<Key, SideObservations>,
    b: &BTreeMap<Key, SideObservations>,
) -> Vec<NotCompared> {
    let mut out: Vec<NotCompared> = Vec::new();
    for (mine, other, me) in [(a, b, SideName::Base), (b, a, SideName::New)] {
        for key in mine.keys().filter(|k| !other.contains_key(*k)) {
            let near = other
                .keys()
                .find(|o| o.run.workload == key.run.workload && o.metric == key.metric);
            let entry = match near {
                Some(o) => {
                    let (kb, kn) = if me == SideName::Base {
                        (&key.run, &o.run)
                    } else {
                        (&o.run, &key.run)
                    };
                    if kb.variant != kn.variant {
                        NotCompared::VariantsDiffer {
                            workload: key.run.workload.clone(),
                            base: kb.variant.clone(),
                            new: kn.variant.clone(),
                        }
                    } else {
                        NotCompared::ParamsDiffer {
                            workload: key.run.workload.clone(),
                            differences: params_diff(&kb.params, &kn.params),
                        }
                    }
                }
                None => NotCompared::OnlyIn {
                    side: me,
                    workload: key.run.workload.clone(),
                    variant: key.run.variant.clone(),
                    params: key.run.params.clone(),
                },
            };
            if !out.contains(&entry) {
                out.push(entry);
            }
        }
    }
    out
}

/// `(name, base value, new value)` for the parameters that differ.
pub(super) fn params_diff(a: &str, b: &str) -> Vec<(String, String, String)> {
    let split = |s: &str| -> BTreeMap<String, String> {
        s.split(' ')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let (ma, mb) = (split(a), split(b));
    let keys: BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
    keys.into_iter()
        .filter(|k| ma.get(*k) != mb.get(*k))
        .map(|k| {
            let show =
                |m: &BTreeMap<String, String>| m.get(k).cloned().unwrap_or_else(|| "-".into());
            (k.clone(), show(&ma), show(&mb))
        })
        .collect()
}

pub(super) fn unmatched_summaries(a: &[SummaryRow], b: &[SummaryRow]) -> Vec<NotCompared> {
    let mut out = Vec::new();
    for (mine, other, me) in [(a, b, SideName::Base), (b, a, SideName::New)] {
        for s in mine {
            if !other
                .iter()
                .any(|o| o.workload == s.workload && o.metric == s.metric)
            {
                out.push(NotCompared::OnlyIn {
                    side: me,
                    workload: s.workload.clone(),
                    variant: "summary".into(),
                    params: s.metric.clone(),
                });
            }
        }
    }
    out
}

pub(super) fn environment_differences(a: &[SessionRow], b: &[SessionRow]) -> Vec<EnvDifference> {
    fn latest(sessions: &[SessionRow]) -> Option<&kbench_sys::EnvSnapshot> {
        sessions.iter().rev().find_map(crate::snapshot)
    }
    match (latest(a), latest(b)) {
        (Some(ea), Some(eb)) => kbench_sys::EnvSnapshot::differences(ea, eb)
            .into_iter()
            .filter(|(key, _, _)| key != "boot_id")
            .map(|(key, base, new)| EnvDifference { key, base, new })
            .collect(),
        _ => Vec::new(),
    }
}

/// The newest session's config of each side, compared option by option.
pub(super) fn config_differences(
    store: &Store,
    a: &[SessionRow],
    b: &[SessionRow],
) -> Result<ConfigDifferences, AnalysisError> {
    let newest = |sessions: &[SessionRow]| -> Result<Option<(String, String)>, AnalysisError> {
        let Some(hash) = sessions
            .iter()
            .rev()
            .find_map(|s| s.kernel_config_hash.clone())
        else {
            return Ok(None);
        };
        Ok(store.kernel_config_by_hash(&hash)?.map(|text| (hash, text)))
    };
    let (base, new) = match (newest(a)?, newest(b)?) {
        (Some(base), Some(new)) => (base, new),
        (base, new) => {
            let sides = [
                (SideName::Base, base.is_none()),
                (SideName::New, new.is_none()),
            ]
            .into_iter()
            .filter_map(|(side, unknown)| unknown.then_some(side))
            .collect();
            return Ok(ConfigDifferences::Unknown { sides });
        }
    };
    let base_config = KernelConfig::parse(&base.1);
    let new_config = if new.0 == base.0 {
        base_config.clone()
    } else {
        KernelConfig::parse(&new.1)
    };
    let mut differences = kconfig::differences(&base_config, &new_config);
    // What a changed value does is the likelier surprise than an option one kernel
    // lacks: those first.
    differences.sort_by_key(|d| !d.is_change());
    let count = |f: &dyn Fn(&kconfig::ConfigDifference) -> bool| {
        differences.iter().filter(|d| f(d)).count()
    };
    Ok(ConfigDifferences::Compared(ConfigComparison {
        same_text: base.0 == new.0,
        base_hash: base.0,
        new_hash: new.0,
        base_options_set: base_config.set_count(),
        new_options_set: new_config.set_count(),
        changed: count(&|d| d.is_change()),
        only_base: count(&|d| d.base.is_set() && !d.new.is_set()),
        only_new: count(&|d| !d.base.is_set() && d.new.is_set()),
        differences,
    }))
}

/// Findings about one side's sessions as a whole.
pub(super) fn side_notes(side: SideName, loaded: &LabelData) -> Vec<ReportNote> {
    let snapshots: Vec<_> = loaded.sessions.iter().filter_map(crate::snapshot).collect();
    let mut notes = Vec::new();
    let attempted = loaded.runs.iter().filter(|r| !r.run.warmup).count();
    if attempted > 0 && !loaded.runs.iter().any(RunRow::is_measured) {
        notes.push(ReportNote::AllRunsFailed {
            side,
            attempted,
            first_error: loaded.runs.iter().find_map(|r| r.run.error.clone()),
        });
    }
    let mut keys = BTreeSet::new();
    if let Some(first) = snapshots.first() {
        for other in &snapshots[1..] {
            for (key, _, _) in kbench_sys::EnvSnapshot::differences(first, other) {
                if key != "boot_id" && key != "load_average" && key != "runnable_tasks" {
                    keys.insert(key);
                }
            }
        }
    }
    let configs: BTreeSet<&String> = loaded
        .sessions
        .iter()
        .filter_map(|s| s.kernel_config_hash.as_ref())
        .collect();
    if configs.len() > 1 {
        keys.insert(SESSIONS_DIFFER_KERNEL_CONFIG.to_string());
    }
    if !keys.is_empty() {
        notes.push(ReportNote::SessionsDiffer {
            side,
            keys: keys.into_iter().collect(),
        });
    }
    if boots(&loaded.sessions) == 1 {
        notes.push(ReportNote::OneBoot { side });
    }
    notes
}

pub(super) fn reproduce(
    base: &str,
    new: &str,
    a: &[SessionRow],
    b: &[SessionRow],
    delta_pct: Option<f64>,
    machines: Option<&MachinesCompared>,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for s in a.iter().chain(b) {
        let line = s
            .source
            .as_ref()
            .map(|src| match src.format.as_str() {
                // import-trace's own command line: its --pid and --comm chose the wakes.
                "ftrace" | "trace-cmd" if !s.command_line.is_empty() => s.command_line.clone(),
                _ => format!("kbench import {} --label {}", src.file, s.label),
            })
            .unwrap_or_else(|| s.command_line.clone());
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    let mut compare = format!("kbench compare {base} {new}");
    if let Some(d) = delta_pct {
        compare.push_str(&format!(" --delta {d}"));
    }
    if let Some(m) = machines {
        compare.push_str(&m.compare_option());
    }
    lines.push(compare);
    lines
}

/// Boots as the analysis counts them ([`group::boot_of_session`]).
pub(super) fn boots(sessions: &[SessionRow]) -> usize {
    sessions
        .iter()
        .map(|s| group::boot_of_session(s.id, s.boot_id.as_deref()))
        .collect::<BTreeSet<_>>()
        .len()
}
