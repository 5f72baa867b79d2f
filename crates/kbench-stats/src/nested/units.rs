//! Observations grouped into units (sessions or boots), each unit one estimate.

use super::design::{Level, Observation, UnitEstimate};
use crate::descriptive::{mean, sample_variance};
use std::collections::HashMap;
use std::hash::Hash;

/// Groups observations into units of `level`, in order of first appearance by
/// `order`; for boots, a unit's estimate is the mean of its sessions' means.
pub fn unit_estimates(obs: &[Observation], level: Level) -> Vec<UnitEstimate> {
    unit_estimates_with(obs, level, &f64::ln)
}

/// [`unit_estimates`] of `transform(value)` instead of the log value.
pub(super) fn unit_estimates_with(
    obs: &[Observation],
    level: Level,
    transform: &dyn Fn(f64) -> f64,
) -> Vec<UnitEstimate> {
    let mut ordered: Vec<&Observation> = obs.iter().collect();
    ordered.sort_by_key(|o| o.order);
    let sessions = group_sessions(&ordered, transform);
    if level != Level::Boot {
        return sessions;
    }
    boot_means(&sessions)
}

/// `items` grouped by `key`, the groups in order of first appearance. A side has a
/// hundred sessions and ten thousand runs: each key is found by hash, not by a walk
/// through the groups.
pub(crate) fn group_in_order<T, K: Eq + Hash + Clone>(
    items: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> K,
) -> Vec<(K, Vec<T>)> {
    let mut groups: Vec<(K, Vec<T>)> = Vec::new();
    let mut index: HashMap<K, usize> = HashMap::new();
    let mut last: Option<usize> = None;
    for item in items {
        let k = key(&item);
        // Runs come session after session: the last group is most often the one.
        let i = match last.filter(|&i| groups[i].0 == k) {
            Some(i) => i,
            None => *index.entry(k.clone()).or_insert_with(|| {
                groups.push((k, Vec::new()));
                groups.len() - 1
            }),
        };
        groups[i].1.push(item);
        last = Some(i);
    }
    groups
}

/// Session estimates averaged per boot (the variance of a mean of k sessions: Σ/k²).
pub(crate) fn boot_means(sessions: &[UnitEstimate]) -> Vec<UnitEstimate> {
    group_in_order(sessions, |s| s.boot.clone())
        .into_iter()
        .map(|(boot, list)| {
            let k = list.len() as f64;
            UnitEstimate {
                id: boot.clone(),
                boot,
                estimate: list.iter().map(|s| s.estimate).sum::<f64>() / k,
                within_var: list
                    .iter()
                    .map(|s| s.within_var)
                    .sum::<Option<f64>>()
                    .map(|v| v / (k * k)),
                runs: list.iter().map(|s| s.runs).sum(),
            }
        })
        .collect()
}

pub(super) fn group_sessions(
    ordered: &[&Observation],
    transform: &dyn Fn(f64) -> f64,
) -> Vec<UnitEstimate> {
    group_in_order(ordered.iter(), |o| &*o.session)
        .into_iter()
        .map(|(id, members)| {
            let values: Vec<f64> = members.iter().map(|o| transform(o.value)).collect();
            UnitEstimate {
                id: id.to_string(),
                boot: members[0].boot.to_string(),
                estimate: mean(&values),
                within_var: sample_variance(&values).map(|v| v / values.len() as f64),
                runs: values.len(),
            }
        })
        .collect()
}

/// Units of `level` a side has: its runs, or its distinct sessions or boots.
pub fn unit_count(obs: &[Observation], level: Level) -> usize {
    match level {
        Level::Run => obs.len(),
        Level::Session => group_in_order(obs, |o| &*o.session).len(),
        Level::Boot => group_in_order(obs, |o| &*o.boot).len(),
    }
}

pub(super) fn mean_within(units: &[UnitEstimate]) -> Option<f64> {
    let known: Vec<f64> = units.iter().filter_map(|u| u.within_var).collect();
    (!known.is_empty()).then(|| mean(&known))
}
