//! Change points in a history: labels (kernels) in order, each with the log means of its
//! units (boots or sessions), split where the distribution of those means changes.
//!
//! The method is e-divisive means (Matteson & James 2014, "A nonparametric approach for
//! multiple change point analysis of multivariate data"), with the exponent α = 1 and
//! four choices of ours:
//! - A change can fall only between labels, never inside one: the units of a label
//!   ran one kernel.
//! - The permutation test shuffles whole labels (each label's units stay together), not
//!   units. A history whose kernels each carry an effect of their own (a build's code
//!   layout) is still exchangeable that way, where shuffling units would take every such
//!   effect for a change.
//! - A label moves only to a place whose label has as many units. With no change, the
//!   labels of one unit count are exchangeable; labels of different counts are not (a
//!   one-boot label's mean is noisier than a ten-boot one's, and where the small labels
//!   sit decides which splits of the units there are to choose from). Shuffled across
//!   counts, a history booted once a label and then ten times showed a change 1.7 % of
//!   the time at a significance of 1 %. Counts shared by too few labels join the next
//!   (`strata_by_unit_count`).
//! - Each side of a split holds at least `min_labels` labels, so one outlying kernel is
//!   never a segment of its own.
//!
//! One statistic is O(n log n) in the n units of a segment, every split point included: a
//! split moves one label at a time from the right to the left, and the sums of distances
//! it changes are read from two Fenwick trees over the units' ranks. A test stops
//! permuting once its p-value can no longer pass, which decides as the full count would.
use crate::descriptive::mean;
use crate::parametric::welch;
use crate::special::normal;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How change points are searched for and tested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePointOptions {
    /// A change point is kept when its permutation p-value is at most this. The first
    /// test is of the whole history, so an A/A history shows any change point with at
    /// most this probability.
    pub significance: f64,
    /// Labels on each side of a split, at least.
    pub min_labels: usize,
    /// Permutations per test; the smallest p-value is 1 / (permutations + 1).
    pub permutations: usize,
    /// Seed of the permutations, recorded with the result.
    pub seed: u64,
}

impl Default for ChangePointOptions {
    fn default() -> Self {
        ChangePointOptions {
            significance: 0.01,
            min_labels: 3,
            permutations: 499,
            seed: 20261203,
        }
    }
}

/// A change between label `index - 1` and label `index`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The first label after the change.
    pub index: usize,
    /// The permutation test's p-value when it was found.
    pub p_value: f64,
    /// The scaled energy statistic of the split (Matteson & James's Q̂).
    pub energy: f64,
}

/// The change points of `labels` (each label's unit values, log scale, in history
/// order), in order of index. Labels without units take part as empty labels: they
/// can sit on either side but add nothing.
pub fn e_divisive(labels: &[Vec<f64>], opts: &ChangePointOptions) -> Vec<ChangePoint> {
    let labels: Vec<Vec<f64>> = labels
        .iter()
        .map(|units| units.iter().map(|&v| at_resolution(v)).collect())
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let labels = thinned_to_shared_counts(labels, &mut rng);
    let labels = labels.as_slice();
    let min_labels = opts.min_labels.max(1);
    let mut bounds = vec![0, labels.len()];
    let mut found = Vec::new();
    loop {
        let segments: Vec<Segment> = bounds
            .windows(2)
            .map(|w| Segment::new(&labels[w[0]..w[1]], w[0], min_labels))
            .collect();
        let identity: Vec<Vec<usize>> = segments.iter().map(|s| s.identity()).collect();
        let Some((segment, split, energy)) = best_over(&segments, &identity, min_labels) else {
            break;
        };
        let Some(p_value) = permutation_p_value(&segments, energy, min_labels, opts, &mut rng)
        else {
            break;
        };
        let index = segments[segment].first_label + split;
        found.push(ChangePoint {
            index,
            p_value,
            energy,
        });
        bounds.push(index);
        bounds.sort_unstable();
    }
    found.sort_by_key(|c| c.index);
    found
}

/// The share of permuted histories (the observed one counted among them) whose largest
/// split is at least `energy`, or `None` as soon as that share must exceed
/// `opts.significance`: an A/A history is then done after a few permutations, not all,
/// and every decision is the one the full count would make.
fn permutation_p_value(
    segments: &[Segment],
    energy: f64,
    min_labels: usize,
    opts: &ChangePointOptions,
    rng: &mut impl Rng,
) -> Option<f64> {
    let p_value =
        |at_least_as_large: usize| (at_least_as_large + 1) as f64 / (opts.permutations + 1) as f64;
    let mut at_least_as_large = 0;
    for _ in 0..opts.permutations {
        let orders: Vec<Vec<usize>> = segments.iter().map(|s| s.shuffled(rng)).collect();
        if best_over(segments, &orders, min_labels).is_some_and(|(_, _, q)| q >= energy) {
            at_least_as_large += 1;
            if p_value(at_least_as_large) > opts.significance {
                return None;
            }
        }
    }
    Some(p_value(at_least_as_large)).filter(|&p| p <= opts.significance)
}

/// The finest difference of log values the search sees: 1e-9, a change of 1e-7 %.
/// Equal values that came by different sums differ in their last bits (a count per op
/// that is 4.0 in every run, copies of one session); every permutation then ties with
/// the data but for rounding, and rounding alone made dozens of change points.
pub const LOG_RESOLUTION: f64 = 1e-9;

fn at_resolution(v: f64) -> f64 {
    (v / LOG_RESOLUTION).round() * LOG_RESOLUTION
}

/// The segment, split (labels on its left) and statistic of the largest split over
/// all segments, each with its labels in the order given.
fn best_over(
    segments: &[Segment],
    orders: &[Vec<usize>],
    min_labels: usize,
) -> Option<(usize, usize, f64)> {
    segments
        .iter()
        .zip(orders)
        .enumerate()
        .filter_map(|(i, (segment, order))| {
            segment
                .best_split(order, min_labels)
                .map(|(split, q)| (i, split, q))
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
}

/// A run of labels between two change points, its units ranked once.
struct Segment {
    first_label: usize,
    /// Per label: the ranks of its units among the segment's.
    ranks: Vec<Vec<usize>>,
    /// Unit values in rank order.
    sorted: Vec<f64>,
    /// Places whose labels a permutation may exchange ([`strata_by_unit_count`]).
    strata: Vec<Vec<usize>>,
}

/// The places of a segment's labels grouped by their labels' unit counts, for the
/// permutations to exchange labels within a group only.
///
/// A count shared by fewer than `2 * min_labels` labels joins the next larger count (the
/// largest joins the one below it): such a group cannot hold a split of its own, and
/// kept apart it would pin its labels where they are, so that a change at their edge
/// (the newest kernels, booted fewer times so far) could never be seen. Joined counts
/// are close to exchangeable, no longer exactly (docs/history.md). Two-unit labels beside
/// one-unit ones were thinned to one before ([`thinned_to_shared_counts`]).
fn strata_by_unit_count(labels: &[Vec<f64>], min_labels: usize) -> Vec<Vec<usize>> {
    let mut by_count: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (place, units) in labels.iter().enumerate() {
        by_count.entry(units.len()).or_default().push(place);
    }
    let mut strata: Vec<Vec<usize>> = Vec::new();
    let mut joining: Vec<usize> = Vec::new();
    for places in by_count.into_values() {
        joining.extend(places);
        if joining.len() >= 2 * min_labels {
            strata.push(std::mem::take(&mut joining));
        }
    }
    match strata.last_mut() {
        Some(largest) => largest.append(&mut joining),
        None => strata.push(joining),
    }
    strata
}

/// The labels' units, with a two-unit label thinned to one of them (seeded, at random)
/// where the history also has one-unit labels. A label thinned to one unit is
/// distributed as a label of one, so the permutations may exchange the two exactly. Kept
/// at their own counts, labels booted once and twice could not be exchanged at all, and
/// a change that came with the second boot (a lab that began booting the newer kernels
/// twice, or a developer who booted the suspect ones again) could never be seen;
/// exchanged unthinned, one boot against two showed change points in about 1.05 % of A/A
/// histories at 1 %. Larger counts keep their units: thinned in the same way (3-6 boots
/// to 3, 7-14 to 7), histories of 1-10 boots a label found a +2 % step less often, and
/// one boot against ten is a change of layout no thinning should pay for.
fn thinned_to_shared_counts(labels: Vec<Vec<f64>>, rng: &mut impl Rng) -> Vec<Vec<f64>> {
    if !labels.iter().any(|units| units.len() == 1) {
        return labels;
    }
    labels
        .into_iter()
        .map(|mut units| {
            if units.len() == 2 {
                units.shuffle(rng);
                units.truncate(1);
            }
            units
        })
        .collect()
}

impl Segment {
    fn new(labels: &[Vec<f64>], first_label: usize, min_labels: usize) -> Segment {
        let mut all: Vec<(f64, usize, usize)> = labels
            .iter()
            .enumerate()
            .flat_map(|(l, units)| units.iter().enumerate().map(move |(u, &v)| (v, l, u)))
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut ranks: Vec<Vec<usize>> = labels.iter().map(|u| vec![0; u.len()]).collect();
        for (rank, &(_, l, u)) in all.iter().enumerate() {
            ranks[l][u] = rank;
        }
        // Distances do not change when every value moves; from the smallest, the sums
        // the Fenwick trees difference are of small numbers, and equal values are 0.
        let smallest = all.first().map_or(0.0, |a| a.0);
        Segment {
            first_label,
            strata: strata_by_unit_count(labels, min_labels),
            ranks,
            sorted: all.into_iter().map(|(v, _, _)| v - smallest).collect(),
        }
    }

    fn identity(&self) -> Vec<usize> {
        (0..self.ranks.len()).collect()
    }

    /// The labels in a random order that, with no change, is as likely as the observed
    /// one: each label moves only to a place whose label has as many units, so that
    /// every place keeps its number of units.
    fn shuffled(&self, rng: &mut impl Rng) -> Vec<usize> {
        let mut order = self.identity();
        for places in &self.strata {
            let mut labels = places.clone();
            labels.shuffle(rng);
            for (&place, label) in places.iter().zip(labels) {
                order[place] = label;
            }
        }
        order
    }

    /// The split with the largest statistic when the labels come in `order`: how many
    /// labels go left, and Q̂. `None` when no split leaves `min_labels` labels and two
    /// units on each side.
    fn best_split(&self, order: &[usize], min_labels: usize) -> Option<(usize, f64)> {
        let n_units = self.sorted.len();
        let mut left = Fenwick::new(n_units);
        let mut right = Fenwick::new(n_units);
        for (rank, &v) in self.sorted.iter().enumerate() {
            right.add(rank, v, 1);
        }
        let mut within_right = pairwise_sum_sorted(&self.sorted);
        let (mut within_left, mut across) = (0.0, 0.0);
        let mut best: Option<(usize, f64)> = None;
        for (moved, &label) in order.iter().enumerate() {
            for &rank in &self.ranks[label] {
                let v = self.sorted[rank];
                right.add(rank, -v, -1);
                let to_right = right.distance_sum(rank, v);
                let to_left = left.distance_sum(rank, v);
                within_right -= to_right;
                within_left += to_left;
                across += to_right - to_left;
                left.add(rank, v, 1);
            }
            let labels_left = moved + 1;
            if labels_left < min_labels || order.len() - labels_left < min_labels {
                continue;
            }
            let (n, m) = (left.len(), right.len());
            if n < 2 || m < 2 {
                continue;
            }
            let q = energy_q(n, m, across, within_left, within_right);
            if best.is_none_or(|(_, b)| q > b) {
                best = Some((labels_left, q));
            }
        }
        best
    }
}

/// Matteson & James's Q̂ from the sums of distances across and within the two sides.
fn energy_q(n: usize, m: usize, across: f64, within_left: f64, within_right: f64) -> f64 {
    let (n, m) = (n as f64, m as f64);
    let e = 2.0 * across / (n * m)
        - 2.0 * within_left / (n * (n - 1.0))
        - 2.0 * within_right / (m * (m - 1.0));
    n * m / (n + m) * e
}

/// Σ_{i<k} |x_i − x_k| of sorted values.
fn pairwise_sum_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len() as f64;
    sorted
        .iter()
        .enumerate()
        .map(|(k, &x)| x * (2.0 * k as f64 - n + 1.0))
        .sum()
}

/// Counts and sums of the values present, by rank, for Σ |v − x| over them.
struct Fenwick {
    count: Vec<i64>,
    sum: Vec<f64>,
    total_count: i64,
    total_sum: f64,
}

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick {
            count: vec![0; n + 1],
            sum: vec![0.0; n + 1],
            total_count: 0,
            total_sum: 0.0,
        }
    }

    fn len(&self) -> usize {
        self.total_count as usize
    }

    fn add(&mut self, rank: usize, value: f64, count: i64) {
        self.total_count += count;
        self.total_sum += value;
        let mut i = rank + 1;
        while i < self.count.len() {
            self.count[i] += count;
            self.sum[i] += value;
            i += i & i.wrapping_neg();
        }
    }

    /// Count and sum of the values of rank below `rank`.
    fn below(&self, rank: usize) -> (i64, f64) {
        let (mut count, mut sum) = (0, 0.0);
        let mut i = rank;
        while i > 0 {
            count += self.count[i];
            sum += self.sum[i];
            i -= i & i.wrapping_neg();
        }
        (count, sum)
    }

    /// Σ |v − x| over the values present, `v` being the value of rank `rank`.
    fn distance_sum(&self, rank: usize, v: f64) -> f64 {
        let (count_below, sum_below) = self.below(rank);
        let (count_above, sum_above) = (self.total_count - count_below, self.total_sum - sum_below);
        (v * count_below as f64 - sum_below) + (sum_above - v * count_above as f64)
    }
}

/// The step at a change point: from the units of the segment before it to those of the
/// segment after it, in percent, with Welch's interval on the log scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub change_pct: f64,
    pub ci_pct: (f64, f64),
}

/// [`Step`] from the log unit values before and after; `None` with fewer than two on a
/// side.
pub fn step_between(before: &[f64], after: &[f64], confidence: f64) -> Option<Step> {
    let w = welch(before, after, confidence)?;
    let pct = |log: f64| log.exp_m1() * 100.0;
    Some(Step {
        change_pct: pct(w.difference),
        ci_pct: (pct(w.ci.0), pct(w.ci.1)),
    })
}

/// A simulated history for the Monte-Carlo of `docs/history.md`: `labels` kernels with
/// boots as `boots` lays them out (1-10 each by default) and `RUNS_PER_BOOT` runs a boot,
/// a boot effect of `boot_sd`, a kernel's own effect of `label_sd` (its build's code
/// layout) and a within-boot CV drawn per history between 1 % and 5 % (log scale
/// throughout).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistoryModel {
    pub labels: usize,
    pub boot_sd: f64,
    pub label_sd: f64,
    /// The step's size in percent and the first label after it; 0 % for an A/A history.
    pub step_pct: f64,
    pub step_at: usize,
    /// One label (at `labels / 3`) this many percent off the rest; 0 for none.
    pub outlier_pct: f64,
    /// How many boots each label has; absent (rows from before it) is 1-10 at random.
    #[serde(default)]
    pub boots: BootLayout,
}

/// The boots of each label along a simulated history.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BootLayout {
    /// Each label `min..=max` boots, drawn independently of its place.
    Random { min: usize, max: usize },
    /// `before` boots a label up to label `at`, `after` from there on: a lab that
    /// changed how often it boots each kernel.
    Switch {
        at: usize,
        before: usize,
        after: usize,
    },
}

impl Default for BootLayout {
    fn default() -> Self {
        BootLayout::Random { min: 1, max: 10 }
    }
}

impl BootLayout {
    /// The boots of label `label`.
    fn boots(&self, label: usize, rng: &mut impl Rng) -> usize {
        match *self {
            BootLayout::Random { min, max } => rng.random_range(min..=max),
            BootLayout::Switch { at, before, after } => {
                if label < at {
                    before
                } else {
                    after
                }
            }
        }
    }
}

/// Runs in each simulated boot.
pub const RUNS_PER_BOOT: usize = 5;

impl HistoryModel {
    /// One history: each label's boot means (log scale).
    pub fn draw(&self, rng: &mut impl Rng) -> Vec<Vec<f64>> {
        let within_sd = rng.random_range(0.01..=0.05);
        let outlier_at = self.labels / 3;
        (0..self.labels)
            .map(|label| {
                let mut level = self.label_sd * normal(rng);
                if label >= self.step_at {
                    level += (self.step_pct / 100.0).ln_1p();
                }
                if label == outlier_at {
                    level += (self.outlier_pct / 100.0).ln_1p();
                }
                let boots = self.boots.boots(label, rng);
                (0..boots)
                    .map(|_| {
                        let boot = level + self.boot_sd * normal(rng);
                        let runs: Vec<f64> = (0..RUNS_PER_BOOT)
                            .map(|_| boot + within_sd * normal(rng))
                            .collect();
                        mean(&runs)
                    })
                    .collect()
            })
            .collect()
    }
}

/// What the Monte-Carlo found over many histories of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryRow {
    pub model: HistoryModel,
    pub histories: usize,
    /// Histories with any change point.
    pub with_any: usize,
    /// Histories with a change point within `LOCATION_SLACK` labels of the step.
    pub found: usize,
    /// Histories with a change point farther than that from the step (any, in A/A).
    pub elsewhere: usize,
    /// Over the histories where it was found: the mean distance, in labels, between the
    /// nearest change point and the step.
    pub mean_location_error: f64,
    pub seed: u64,
}

/// How far from the planted step a change point may be and still count as found.
pub const LOCATION_SLACK: usize = 2;

/// `histories` seeded histories of `model`, each searched with `opts` (its seed varied
/// per history).
pub fn history_monte_carlo(
    model: HistoryModel,
    histories: usize,
    opts: &ChangePointOptions,
    seed: u64,
) -> HistoryRow {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut with_any, mut found, mut elsewhere, mut error_sum) = (0, 0, 0, 0usize);
    for h in 0..histories {
        let labels = model.draw(&mut rng);
        let opts = ChangePointOptions {
            seed: opts.seed.wrapping_add(h as u64),
            ..opts.clone()
        };
        let points = e_divisive(&labels, &opts);
        if !points.is_empty() {
            with_any += 1;
        }
        let distances: Vec<usize> = points
            .iter()
            .map(|p| p.index.abs_diff(model.step_at))
            .collect();
        if distances.iter().any(|&d| d > LOCATION_SLACK) {
            elsewhere += 1;
        }
        let nearest = distances.into_iter().min();
        if let Some(distance) = nearest.filter(|&d| d <= LOCATION_SLACK) {
            found += 1;
            error_sum += distance;
        }
    }
    HistoryRow {
        model,
        histories,
        with_any,
        found,
        elsewhere,
        mean_location_error: if found > 0 {
            error_sum as f64 / found as f64
        } else {
            f64::NAN
        },
        seed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q̂ by its definition, every pair counted, for the fast sums to be checked against.
    fn q_by_definition(left: &[f64], right: &[f64]) -> f64 {
        let across: f64 = left
            .iter()
            .flat_map(|a| right.iter().map(move |b| (a - b).abs()))
            .sum();
        let within = |x: &[f64]| -> f64 {
            let mut s = 0.0;
            for i in 0..x.len() {
                for k in i + 1..x.len() {
                    s += (x[i] - x[k]).abs();
                }
            }
            s
        };
        energy_q(left.len(), right.len(), across, within(left), within(right))
    }

    #[test]
    fn every_split_matches_the_statistic_by_its_definition() {
        let labels = vec![
            vec![1.0, 1.5],
            vec![0.2],
            vec![3.0, 2.5, 2.5],
            vec![-1.0, 0.0],
            vec![4.0],
            vec![2.0, 2.0],
        ];
        let segment = Segment::new(&labels, 0, 1);
        let order = [3, 0, 5, 1, 4, 2];
        for min_labels in 1..=3 {
            let (split, q) = segment.best_split(&order, min_labels).unwrap();
            let expected = (min_labels..=order.len() - min_labels)
                .map(|k| {
                    let side = |ls: &[usize]| -> Vec<f64> {
                        ls.iter().flat_map(|&l| labels[l].clone()).collect()
                    };
                    (k, q_by_definition(&side(&order[..k]), &side(&order[k..])))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            assert_eq!(split, expected.0);
            assert!((q - expected.1).abs() < 1e-9, "{q} against {}", expected.1);
        }
    }

    fn labels_of_counts(counts: &[usize]) -> Vec<Vec<f64>> {
        counts
            .iter()
            .enumerate()
            .map(|(l, &n)| vec![l as f64; n])
            .collect()
    }

    #[test]
    fn permutations_keep_each_places_unit_count() {
        let counts: Vec<usize> = (0..40).map(|l| [1, 10, 3, 10, 1][l % 5]).collect();
        let segment = Segment::new(&labels_of_counts(&counts), 0, 3);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut moved = false;
        for _ in 0..20 {
            let order = segment.shuffled(&mut rng);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, segment.identity(), "a permutation of the labels");
            for (place, &label) in order.iter().enumerate() {
                assert_eq!(counts[label], counts[place], "{order:?}");
                moved |= label != place;
            }
        }
        assert!(moved);
    }

    #[test]
    fn two_unit_labels_are_thinned_to_one_beside_one_unit_labels() {
        let counts = [1, 2, 3, 4, 0, 2];
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let thinned = thinned_to_shared_counts(labels_of_counts(&counts), &mut rng);
        let kept: Vec<usize> = thinned.iter().map(Vec::len).collect();
        assert_eq!(kept, [1, 1, 3, 4, 0, 1]);
        // Without one-unit labels, nothing is thinned.
        let thinned = thinned_to_shared_counts(labels_of_counts(&[2, 4, 2]), &mut rng);
        assert_eq!(thinned.iter().map(Vec::len).collect::<Vec<_>>(), [2, 4, 2]);
        // A subset of the label's own units.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let thinned = thinned_to_shared_counts(vec![vec![1.0], vec![2.0, 3.0]], &mut rng);
        assert!(thinned[1] == [2.0] || thinned[1] == [3.0], "{thinned:?}");
    }

    #[test]
    fn unit_counts_of_too_few_labels_join_the_next() {
        let strata = |counts: &[usize]| {
            let mut strata = strata_by_unit_count(&labels_of_counts(counts), 3);
            strata.iter_mut().for_each(|places| places.sort_unstable());
            strata
        };
        // Fifty labels of one boot, then fifty of ten: two strata.
        let switch: Vec<usize> = (0..100).map(|l| if l < 50 { 1 } else { 10 }).collect();
        assert_eq!(
            strata(&switch),
            vec![(0..50).collect::<Vec<_>>(), (50..100).collect()]
        );
        // The three newest labels booted twice, the rest five times: one stratum, or
        // the three would be pinned at the end.
        let newest: Vec<usize> = (0..20).map(|l| if l < 17 { 5 } else { 2 }).collect();
        assert_eq!(strata(&newest), vec![(0..20).collect::<Vec<_>>()]);
        // The largest count, too rare, joins the one below it.
        assert_eq!(
            strata(&[2, 2, 2, 2, 2, 2, 7, 2]),
            vec![(0..8).collect::<Vec<_>>()]
        );
        assert_eq!(strata(&[]), vec![Vec::<usize>::new()]);
    }

    #[test]
    fn a_clear_step_is_found_between_the_right_labels() {
        let labels: Vec<Vec<f64>> = (0..12)
            .map(|l| {
                let level = if l < 7 { 0.0 } else { 0.1 };
                vec![level - 0.01, level, level + 0.012]
            })
            .collect();
        let points = e_divisive(&labels, &ChangePointOptions::default());
        assert_eq!(points.len(), 1, "{points:?}");
        assert_eq!(points[0].index, 7);
        assert!(points[0].p_value <= 0.01);
        let step = step_between(&labels[..7].concat(), &labels[7..].concat(), 0.95).unwrap();
        assert!((step.change_pct - 10.517).abs() < 0.01, "{step:?}");
        assert!(step.ci_pct.0 < step.change_pct && step.change_pct < step.ci_pct.1);
    }

    #[test]
    fn equal_values_have_no_change_point() {
        // Copies of one session: every unit the same, 8.754 us/op. The sums of
        // distances from two Fenwick trees are differences of sums in the thousands,
        // whose rounding once made 80 change points of such a history.
        let labels = vec![vec![8.754298220135569f64.ln(); 5]; 300];
        assert!(e_divisive(&labels, &ChangePointOptions::default()).is_empty());
        // And values equal but for their last bits: a count per op that is 4.0 in
        // every run, its log summed in another order.
        let ln4 = 4f64.ln();
        let other = (ln4 * 3.0 + ln4) / 4.0 + 1e-15;
        assert_ne!(ln4, other);
        let labels: Vec<Vec<f64>> = (0..300)
            .map(|l| vec![if l % 7 < 3 { ln4 } else { other }; 5])
            .collect();
        assert!(e_divisive(&labels, &ChangePointOptions::default()).is_empty());
    }

    #[test]
    fn too_few_labels_for_two_sides_is_no_change_point() {
        let labels = vec![vec![0.0, 0.1], vec![5.0, 5.1], vec![9.0], vec![9.5]];
        assert!(e_divisive(&labels, &ChangePointOptions::default()).is_empty());
        assert!(e_divisive(&[], &ChangePointOptions::default()).is_empty());
    }
}
