//! Two populations of runs explained by what the runs record: the CPU classes they
//! ran on, or where their two tasks ran. Used by `compare` and by `kbench run`'s
//! summary alike.
use crate::group::distinct;
use crate::model::PlacementRuns;
use kbench_record::PlacementKind;

/// When `values` are bimodal and the groups named by `labels` (one per value; empty:
/// unknown) are two or more and do not overlap, the groups' medians, lowest first.
pub fn modes_are_groups(values: &[f64], labels: &[impl AsRef<str>]) -> Option<Vec<(String, f64)>> {
    if values.len() < 5 || !kbench_stats::bimodality(values).bimodal {
        return None;
    }
    separated_groups(values, labels)
}

/// When the groups named by `labels` are two or more, each of at least two values,
/// and their ranges do not overlap, the groups' medians, lowest first.
pub fn separated_groups(values: &[f64], labels: &[impl AsRef<str>]) -> Option<Vec<(String, f64)>> {
    let labels: Vec<&str> = labels.iter().map(AsRef::as_ref).collect();
    let names = distinct(labels.iter().copied().filter(|l| !l.is_empty()));
    let size = |name: &str| labels.iter().filter(|l| **l == name).count();
    if names.len() < 2 || names.iter().any(|n| size(n) < 2) {
        return None;
    }
    let mut groups: Vec<(String, f64, f64, f64)> = names
        .iter()
        .map(|name| {
            let v: Vec<f64> = (0..values.len())
                .filter(|&i| labels[i] == *name)
                .map(|i| values[i])
                .collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (
                name.to_string(),
                kbench_stats::descriptive::median(&v),
                lo,
                hi,
            )
        })
        .collect();
    groups.sort_by(|x, y| x.1.total_cmp(&y.1));
    let separated = groups.windows(2).all(|w| w[0].3 < w[1].2);
    separated.then(|| groups.into_iter().map(|(c, m, _, _)| (c, m)).collect())
}

/// The runs by placement (one per value, `None`: not recorded), each group with its
/// median, in order of first appearance.
pub fn placement_groups(
    values: &[f64],
    placements: &[Option<PlacementKind>],
) -> Vec<PlacementRuns> {
    distinct(placements.iter().flatten().copied())
        .into_iter()
        .map(|kind| {
            let members: Vec<usize> = (0..values.len())
                .filter(|&i| placements[i] == Some(kind))
                .collect();
            let v: Vec<f64> = members.iter().map(|&i| values[i]).collect();
            PlacementRuns {
                placement: kind,
                runs: members.iter().map(|&i| i as u32 + 1).collect(),
                median: kbench_stats::descriptive::median(&v),
            }
        })
        .collect()
}

/// The placement groups, lowest median first, when their ranges do not overlap: two
/// populations of runs, whether or not the bimodality test fires (with two thirds
/// of the runs on one CPU it often flags the others as outliers instead).
pub fn placement_modes(
    values: &[f64],
    placements: &[Option<PlacementKind>],
) -> Option<Vec<PlacementRuns>> {
    let labels: Vec<String> = placements
        .iter()
        .map(|p| p.map(|k| k.as_str().to_string()).unwrap_or_default())
        .collect();
    let medians = separated_groups(values, &labels)?;
    // Disjoint ranges alone happen by chance in small samples; ask for five runs and
    // medians at least 10% apart.
    let (lowest, highest) = (medians.first()?.1, medians.last()?.1);
    if values.len() < 5 || !(lowest > 0.0 && highest >= 1.1 * lowest) {
        return None;
    }
    let mut groups = placement_groups(values, placements);
    groups.sort_by(|x, y| x.median.total_cmp(&y.median));
    Some(groups)
}
