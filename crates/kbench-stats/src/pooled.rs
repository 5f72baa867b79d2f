//! Percentiles of latency distributions pooled over runs, compared without
//! pseudo-replication.
//!
//! Every wake of every run pooled into one histogram describes the distribution well,
//! but its samples are not independent: runs (and sessions, and boots) carry their own
//! offsets, so an order-statistic interval that counts 125,000 wakes as 125,000
//! replicates is far too narrow. Here the runs are resampled instead. Runs interleaved
//! in one session: a bootstrap that resamples each side's runs (percentile interval of
//! the log ratio). Sides in different sessions or boots: each unit's pooled percentile
//! is one replicate, its within-unit variance comes from resampling that unit's runs,
//! and the units are compared as [`crate::nested::compare_units`] compares unit means.
//! Values within a run are not resampled: a resampled run already carries its own
//! sampling error, and resampling both stages overstates the variance (Davison &
//! Hinkley 1997, §3.8).

use crate::compare::{
    insufficient_comparison, threshold_rel, verdict_from_interval, CompareOptions, Comparison,
    Scale,
};
use crate::nested::{
    calibrated_between, choose_design, compare_units, group_in_order, Design, Level, NestedInfo,
    NoiseComponents, NoiseSource, Observation, UnitEstimate,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// One histogram bucket: the highest value it holds and how many samples it holds.
pub type Bucket = (f64, u64);

/// One run's latency histogram with where the run was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunHistogram {
    pub boot: String,
    pub session: String,
    pub order: u32,
    pub buckets: Vec<Bucket>,
}

/// Options of a pooled-percentile comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct PooledOptions {
    pub compare: CompareOptions,
    /// Bootstrap resamples for the interleaved design (and 1/5 of it per unit).
    pub resamples: usize,
    pub seed: u64,
    /// Calibrated noise of this pooled percentile, for one-unit sides.
    pub calibration: Option<NoiseComponents>,
}

impl Default for PooledOptions {
    fn default() -> Self {
        PooledOptions {
            compare: CompareOptions::default(),
            resamples: 1000,
            seed: 1,
            calibration: None,
        }
    }
}

/// Runs as sparse count vectors over one value grid shared by both sides.
struct Grid {
    values: Vec<f64>,
}

type Sparse = Vec<(u32, u64)>;

impl Grid {
    fn new<'a>(runs: impl Iterator<Item = &'a RunHistogram>) -> Grid {
        let mut values: Vec<f64> = runs
            .flat_map(|r| r.buckets.iter().map(|b| b.0))
            .filter(|v| v.is_finite())
            .collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        Grid { values }
    }

    fn sparse(&self, run: &RunHistogram) -> Sparse {
        run.buckets
            .iter()
            .filter(|b| b.1 > 0 && b.0.is_finite())
            .filter_map(|b| {
                let i = self.values.binary_search_by(|v| v.total_cmp(&b.0)).ok()?;
                Some((i as u32, b.1))
            })
            .collect()
    }

    /// The q-quantiles (the HDR convention: the bucket holding rank ⌈q·n⌉) of the
    /// pooled runs `picks`, in one pass; `None` when empty.
    fn quantiles(
        &self,
        runs: &[Sparse],
        picks: &[usize],
        qs: &[f64],
        dense: &mut Vec<u64>,
    ) -> Option<Vec<f64>> {
        dense.clear();
        dense.resize(self.values.len(), 0);
        let mut n = 0u64;
        for &p in picks {
            for &(i, c) in &runs[p] {
                dense[i as usize] += c;
                n += c;
            }
        }
        if n == 0 {
            return None;
        }
        let ranks: Vec<u64> = qs
            .iter()
            .map(|q| ((q * n as f64).ceil() as u64).clamp(1, n))
            .collect();
        let mut out = vec![f64::NAN; qs.len()];
        let mut seen = 0u64;
        let mut next = 0;
        // Ranks are not assumed sorted: answer each as the scan passes it.
        let mut order: Vec<usize> = (0..qs.len()).collect();
        order.sort_by_key(|&i| ranks[i]);
        for (i, &c) in dense.iter().enumerate() {
            seen += c;
            while next < order.len() && seen >= ranks[order[next]] {
                out[order[next]] = self.values[i];
                next += 1;
            }
            if next == order.len() {
                break;
            }
        }
        Some(out)
    }
}

fn resample(rng: &mut ChaCha8Rng, from: &[usize], into: &mut Vec<usize>) {
    into.clear();
    into.extend((0..from.len()).map(|_| from[rng.random_range(0..from.len())]));
}

/// Where each run was made, as observations (for [`choose_design`] and unit counts).
pub fn positions(runs: &[RunHistogram]) -> Vec<Observation> {
    runs.iter()
        .map(|r| Observation {
            value: 1.0,
            boot: r.boot.as_str().into(),
            session: r.session.as_str().into(),
            order: r.order,
        })
        .collect()
}

/// The q-quantile of the histograms of `runs` merged.
pub fn pooled_quantile(runs: &[RunHistogram], q: f64) -> Option<f64> {
    let grid = Grid::new(runs.iter());
    let sparse: Vec<Sparse> = runs.iter().map(|r| grid.sparse(r)).collect();
    let all: Vec<usize> = (0..runs.len()).collect();
    grid.quantiles(&sparse, &all, &[q], &mut Vec::new())?
        .first()
        .copied()
}

/// Per-session estimates (log of the pooled q-quantile of the session's runs, and its
/// within-session variance from resampling the runs): what `kbench calibrate` turns
/// into the between-session and between-boot components of a pooled percentile.
pub fn session_estimates(
    runs: &[RunHistogram],
    q: f64,
    resamples: usize,
    seed: u64,
) -> Vec<UnitEstimate> {
    let grid = Grid::new(runs.iter());
    let sparse: Vec<Sparse> = runs.iter().map(|r| grid.sparse(r)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    sessions(runs)
        .into_iter()
        .filter_map(|(id, boot, members)| {
            unit_estimate(
                &grid,
                &sparse,
                id,
                boot,
                &members,
                &[q],
                resamples,
                &mut rng,
            )
            .pop()
        })
        .collect()
}

/// Runs a side below which the interleaved bootstrap gives no interval.
pub const MIN_INTERLEAVED_RUNS: usize = 5;

/// The ids of a side's units of `level`, in order of first run (none for runs).
fn unit_ids(runs: &[RunHistogram], level: Level) -> Vec<String> {
    let sessions = sessions(runs);
    match level {
        Level::Run => Vec::new(),
        Level::Session => sessions.into_iter().map(|(id, _, _)| id).collect(),
        Level::Boot => group_in_order(sessions, |(_, boot, _)| boot.clone())
            .into_iter()
            .map(|(boot, _)| boot)
            .collect(),
    }
}

/// Groups run indices into sessions (id, boot, runs), in order of first run.
fn sessions(runs: &[RunHistogram]) -> Vec<(String, String, Vec<usize>)> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| runs[i].order);
    group_in_order(order, |&i| runs[i].session.clone())
        .into_iter()
        .map(|(id, members)| (id, runs[members[0]].boot.clone(), members))
        .collect()
}

/// One unit's estimates for each q, with the bootstrap variance of each over its runs.
#[allow(clippy::too_many_arguments)]
fn unit_estimate(
    grid: &Grid,
    sparse: &[Sparse],
    id: String,
    boot: String,
    members: &[usize],
    qs: &[f64],
    resamples: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<UnitEstimate> {
    let mut dense = Vec::new();
    let Some(point) = grid.quantiles(sparse, members, qs, &mut dense) else {
        return Vec::new();
    };
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); qs.len()];
    if members.len() >= 2 {
        let mut picks = Vec::new();
        for _ in 0..resamples {
            resample(rng, members, &mut picks);
            if let Some(values) = grid.quantiles(sparse, &picks, qs, &mut dense) {
                for (d, v) in draws.iter_mut().zip(values) {
                    d.push(v.ln());
                }
            }
        }
    }
    point
        .iter()
        .zip(draws)
        .map(|(p, d)| UnitEstimate {
            id: id.clone(),
            boot: boot.clone(),
            estimate: p.ln(),
            within_var: crate::descriptive::sample_variance(&d),
            runs: members.len(),
        })
        .collect()
}

/// Compares the q-quantiles (each of `qs`) of B's pooled runs against A's, one
/// [`Comparison`] per q. The medians of the comparison are the pooled percentiles of
/// all runs of each side; the interval and verdict come from the replication design
/// (see the module documentation). The seed is in `method`.
pub fn compare_pooled_quantiles(
    a: &[RunHistogram],
    b: &[RunHistogram],
    qs: &[f64],
    opts: &PooledOptions,
) -> Vec<Comparison> {
    let design = choose_design(&positions(a), &positions(b));
    let grid = Grid::new(a.iter().chain(b));
    let (sa, sb): (Vec<Sparse>, Vec<Sparse>) = (
        a.iter().map(|r| grid.sparse(r)).collect(),
        b.iter().map(|r| grid.sparse(r)).collect(),
    );
    let mut dense = Vec::new();
    let (all_a, all_b): (Vec<usize>, Vec<usize>) = ((0..a.len()).collect(), (0..b.len()).collect());
    let point_a = grid.quantiles(&sa, &all_a, qs, &mut dense);
    let point_b = grid.quantiles(&sb, &all_b, qs, &mut dense);
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let level = design.level();
    let (ids_a, ids_b) = (unit_ids(a, level), unit_ids(b, level));
    let mut results: Vec<Comparison> = qs
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let mut c = insufficient_comparison(&[], &[], &opts.compare, Scale::Log);
            c.n_a = a.len();
            c.n_b = b.len();
            c.median_a = point_a.as_ref().map(|p| p[i]);
            c.median_b = point_b.as_ref().map(|p| p[i]);
            c.nested = Some(NestedInfo {
                units_a: ids_a.clone(),
                units_b: ids_b.clone(),
                ..NestedInfo::new(design, a.len(), b.len())
            });
            c
        })
        .collect();
    let positive = |p: &Option<Vec<f64>>| p.as_ref().is_some_and(|v| v.iter().all(|x| *x > 0.0));
    if !positive(&point_a) || !positive(&point_b) || a.len() < 2 || b.len() < 2 {
        for c in &mut results {
            c.notes.push(
                "too few runs (2 a side) or no positive samples for a pooled percentile".into(),
            );
        }
        return results;
    }
    if design == Design::Interleaved {
        // With few runs a side, complete separation of the runs' percentiles (2/C(2n, n)
        // under A/A: 10 % for 3 runs) puts every resample on one side of 0.
        if a.len().min(b.len()) < MIN_INTERLEAVED_RUNS {
            for c in &mut results {
                c.notes.push(format!(
                    "fewer than {MIN_INTERLEAVED_RUNS} runs a side: no interval for a pooled percentile"
                ));
            }
            return results;
        }
        bootstrap_interleaved(&grid, (&sa, &sb), qs, opts, &mut rng, &mut results);
        return results;
    }
    let side_units = |runs: &[RunHistogram],
                      sparse: &[Sparse],
                      rng: &mut ChaCha8Rng|
     -> Vec<Vec<UnitEstimate>> {
        let mut per_q: Vec<Vec<UnitEstimate>> = vec![Vec::new(); qs.len()];
        // Sessions first; a boot's estimate is the mean of its sessions' estimates, as
        // for per-run metrics and as the calibration measures a boot.
        for (id, boot, members) in sessions(runs) {
            let estimates = unit_estimate(
                &grid,
                sparse,
                id,
                boot,
                &members,
                qs,
                opts.resamples / 5,
                rng,
            );
            for (q, e) in per_q.iter_mut().zip(estimates) {
                q.push(e);
            }
        }
        if level == Level::Boot {
            per_q = per_q
                .into_iter()
                .map(|s| crate::nested::boot_means(&s))
                .collect();
        }
        per_q
    };
    let (ua, ub) = (side_units(a, &sa, &mut rng), side_units(b, &sb, &mut rng));
    let between = opts
        .calibration
        .as_ref()
        .and_then(|cal| calibrated_between(cal, level, 1));
    let paired = matches!(design, Design::Paired(_));
    for (i, c) in results.iter_mut().enumerate() {
        let Some(u) = compare_units(
            &ua[i],
            &ub[i],
            level,
            paired,
            between.clone(),
            &opts.compare,
        ) else {
            c.notes
                .push(format!("too few {}s for an interval", level.as_str()));
            continue;
        };
        c.method = format!(
            "pooled percentile per {}, {}s as units{}, runs resampled within units (seed {})",
            level.as_str(),
            level.as_str(),
            match &u.between {
                Some(b) if b.source == NoiseSource::Calibration =>
                    ", calibrated between-unit variance",
                Some(_) => ", the other side's between-unit variance",
                None => "",
            },
            opts.seed
        );
        let now = ua[i].len().max(ub[i].len());
        crate::nested::fill_from_units(c, u, Scale::Log, now, &opts.compare);
    }
    results
}

/// The tail probability of Hesterberg's (2015) expanded percentile interval: the
/// plain percentile interval is too narrow for small n (about 5.6 % A/A claims with 10
/// runs a side, in the Monte-Carlo), so its levels are those of a t interval scaled by
/// √(n/(n − 1)): Φ(−√(n/(n − 1))·t(1 − α/2, n − 1)).
fn expanded_tail(alpha: f64, n: usize) -> f64 {
    if n < 2 {
        return alpha / 2.0;
    }
    let n = n as f64;
    let t = crate::special::t_quantile(1.0 - alpha / 2.0, n - 1.0);
    crate::special::normal_cdf(-(n / (n - 1.0)).sqrt() * t)
}

/// Runs interleaved in one session: resample each side's runs, the expanded
/// percentile interval of the log ratio of the pooled percentiles, and a two-sided
/// bootstrap p.
fn bootstrap_interleaved(
    grid: &Grid,
    (sa, sb): (&[Sparse], &[Sparse]),
    qs: &[f64],
    opts: &PooledOptions,
    rng: &mut ChaCha8Rng,
    results: &mut [Comparison],
) {
    let (all_a, all_b): (Vec<usize>, Vec<usize>) =
        ((0..sa.len()).collect(), (0..sb.len()).collect());
    let mut dense = Vec::new();
    let (mut pa, mut pb) = (Vec::new(), Vec::new());
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(opts.resamples); qs.len()];
    for _ in 0..opts.resamples {
        resample(rng, &all_a, &mut pa);
        resample(rng, &all_b, &mut pb);
        let (Some(qa), Some(qb)) = (
            grid.quantiles(sa, &pa, qs, &mut dense),
            grid.quantiles(sb, &pb, qs, &mut dense),
        ) else {
            continue;
        };
        for (i, d) in draws.iter_mut().enumerate() {
            d.push((qb[i] / qa[i]).ln());
        }
    }
    let threshold = threshold_rel(Scale::Log, opts.compare.delta_pct);
    for (c, mut d) in results.iter_mut().zip(draws) {
        if d.len() < 100 {
            continue;
        }
        d.sort_by(f64::total_cmp);
        let at = |p: f64| crate::descriptive::quantile_sorted(&d, p);
        let tail = expanded_tail(opts.compare.alpha, sa.len().min(sb.len()));
        let (lo, hi) = (at(tail), at(1.0 - tail));
        let (ma, mb) = (
            c.median_a.unwrap_or(f64::NAN),
            c.median_b.unwrap_or(f64::NAN),
        );
        let shift = (mb / ma).ln();
        c.shift_log = Some(shift);
        c.shift_pct = Some(100.0 * shift.exp_m1());
        c.ci_low_pct = Some(100.0 * lo.exp_m1());
        c.ci_high_pct = Some(100.0 * hi.exp_m1());
        let below = d.iter().filter(|x| **x <= 0.0).count() as f64;
        let above = d.iter().filter(|x| **x >= 0.0).count() as f64;
        c.p_value = Some((2.0 * below.min(above) / d.len() as f64).min(1.0));
        c.verdict = verdict_from_interval((lo, hi), threshold, opts.compare.higher_is_better);
        c.method = format!(
            "pooled percentile, runs resampled per side ({} resamples, seed {}), expanded percentile interval",
            opts.resamples, opts.seed
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Verdict;

    /// A run of `n` values spread evenly over [lo, lo·1.5] as 1-value buckets.
    fn run(lo: f64, n: usize, session: &str, order: u32) -> RunHistogram {
        let buckets = (0..n)
            .map(|i| ((lo * (1.0 + 0.5 * i as f64 / n as f64)).round(), 1))
            .collect();
        RunHistogram {
            boot: "b".into(),
            session: session.into(),
            order,
            buckets,
        }
    }

    #[test]
    fn the_pooled_quantile_is_read_off_the_merged_histogram() {
        let runs = [run(1000.0, 100, "s", 0), run(2000.0, 100, "s", 1)];
        let median = pooled_quantile(&runs, 0.5).unwrap();
        // Half the samples are at or below 1500 (the top of the first run).
        assert!((1490.0..=1500.0).contains(&median), "{median}");
    }

    #[test]
    fn interleaved_runs_with_their_own_offsets_give_wide_intervals() {
        // Runs offset by up to ±10 %: a 1 % difference in pooled medians is noise.
        let offsets = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.08, 0.92];
        let a: Vec<RunHistogram> = offsets
            .iter()
            .enumerate()
            .map(|(i, o)| run(1000.0 * o, 500, "s", 2 * i as u32))
            .collect();
        let b: Vec<RunHistogram> = offsets
            .iter()
            .rev()
            .enumerate()
            .map(|(i, o)| run(1010.0 * o, 500, "s", 2 * i as u32 + 1))
            .collect();
        let c = &compare_pooled_quantiles(&a, &b, &[0.5], &PooledOptions::default())[0];
        assert!(!c.verdict.claims_difference(), "{c:?}");
        assert!(
            c.ci_high_pct.unwrap() - c.ci_low_pct.unwrap() > 4.0,
            "{c:?}"
        );
        // A 30 % slower B is found.
        let slow: Vec<RunHistogram> = a
            .iter()
            .map(|r| RunHistogram {
                buckets: r.buckets.iter().map(|(v, c)| (v * 1.3, *c)).collect(),
                ..r.clone()
            })
            .collect();
        let c = &compare_pooled_quantiles(&a, &slow, &[0.5, 0.9], &PooledOptions::default());
        assert_eq!(c[0].verdict, Verdict::Regression, "{:?}", c[0]);
        assert_eq!(c[1].verdict, Verdict::Regression);
    }

    #[test]
    fn one_session_a_side_makes_no_claim_without_calibration() {
        let a: Vec<RunHistogram> = (0..5).map(|i| run(1000.0, 200, "s1", i)).collect();
        let b: Vec<RunHistogram> = (0..5).map(|i| run(1500.0, 200, "s2", i)).collect();
        let c = &compare_pooled_quantiles(&a, &b, &[0.5], &PooledOptions::default())[0];
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!(c.nested.as_ref().unwrap().no_claim.is_some());
    }
}
