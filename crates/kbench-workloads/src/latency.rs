//! Latency distributions: an HDR histogram beside exact count, min, max, mean and
//! stddev, summarised into the [`LatencySeries`] a run record carries.
//!
//! Percentile rule: the HDR rule, i.e. the highest value equivalent (at 3 significant
//! digits, <= 0.1 % apart) to the order statistic `sorted[ceil(q * n) - 1]`, capped at
//! the exact maximum so a percentile never exceeds the reported max. A percentile is
//! only reported when the run has at least `10 / (1 - q)` samples (p99 needs 1,000,
//! p99.9 needs 10,000); otherwise it is `null` in JSON and `n/a` in text, because a
//! tail percentile from too few samples is just the maximum under another name.
use hdrhistogram::Histogram;
pub use kbench_record::latency::{LatencySeries, Log2Bin, Percentiles, QUANTILES};

/// The trackable range, in ns: 1 ns to 60 s. Larger values saturate in the histogram
/// (the exact max is kept beside it).
const LOWEST_DISCERNIBLE_NS: u64 = 1;
const HIGHEST_TRACKABLE_NS: u64 = 60_000_000_000;
/// 3 significant digits: quantisation <= 0.1 %.
const SIGNIFICANT_DIGITS: u8 = 3;

/// Fewest samples for which quantile `q` is reported: `10 / (1 - q)`.
pub fn min_samples_for(quantile: f64) -> u64 {
    (10.0 / (1.0 - quantile)).round() as u64
}

/// Collects one series of nanosecond values.
pub struct LatencyRecorder {
    histogram: Histogram<u64>,
    count: u64,
    min_ns: u64,
    max_ns: u64,
    /// Welford's running mean and sum of squared deviations (numerically stable).
    mean_ns: f64,
    m2: f64,
}

impl LatencyRecorder {
    /// An empty recorder (allocates the histogram, ~200 KB: do it before the hot path).
    pub fn new() -> Result<Self, String> {
        let histogram = Histogram::new_with_bounds(
            LOWEST_DISCERNIBLE_NS,
            HIGHEST_TRACKABLE_NS,
            SIGNIFICANT_DIGITS,
        )
        .map_err(|e| format!("creating the latency histogram: {e:?}"))?;
        Ok(Self {
            histogram,
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            mean_ns: 0.0,
            m2: 0.0,
        })
    }

    /// Adds one value.
    pub fn record(&mut self, value_ns: u64) {
        self.histogram.saturating_record(value_ns);
        self.count += 1;
        self.min_ns = self.min_ns.min(value_ns);
        self.max_ns = self.max_ns.max(value_ns);
        let value = value_ns as f64;
        let delta = value - self.mean_ns;
        self.mean_ns += delta / self.count as f64;
        self.m2 += delta * (value - self.mean_ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The HDR value at `quantile`, capped at the exact max; `None` when empty.
    pub fn value_at_quantile(&self, quantile: f64) -> Option<u64> {
        (self.count > 0).then(|| self.histogram.value_at_quantile(quantile).min(self.max_ns))
    }

    /// The serialisable summary, named `name` with a one-line `description`.
    pub fn summary(&self, name: &str, description: &str) -> LatencySeries {
        let reported = |q: f64| {
            if self.count >= min_samples_for(q) {
                self.value_at_quantile(q)
            } else {
                None
            }
        };
        let empty = self.count == 0;
        LatencySeries {
            name: name.to_string(),
            description: description.to_string(),
            unit: "ns".into(),
            count: self.count,
            min: if empty { 0 } else { self.min_ns },
            max: self.max_ns,
            mean: if empty { 0.0 } else { self.mean_ns },
            stddev: if self.count > 1 {
                (self.m2 / (self.count - 1) as f64).sqrt()
            } else {
                0.0
            },
            percentiles: Percentiles {
                p50: reported(0.50),
                p90: reported(0.90),
                p99: reported(0.99),
                p99_9: reported(0.999),
            },
            buckets: self.buckets(),
        }
    }

    /// Every non-empty HDR bucket as `[highest equivalent value, count]`, ascending.
    fn buckets(&self) -> Vec<[u64; 2]> {
        self.histogram
            .iter_recorded()
            .map(|v| [v.value_iterated_to(), v.count_at_value()])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The order statistic HDR's rule approximates: `sorted[ceil(q * n) - 1]`.
    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank - 1]
    }

    fn check_against_exact(values: &[u64]) {
        let mut recorder = LatencyRecorder::new().unwrap();
        for &v in values {
            recorder.record(v);
        }
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let series = recorder.summary("s", "");
        assert_eq!(series.count, values.len() as u64);
        assert_eq!(series.min, sorted[0]);
        assert_eq!(series.max, *sorted.last().unwrap());
        for (name, value) in series.percentiles.named() {
            let q = QUANTILES.iter().find(|(n, _)| *n == name).unwrap().1;
            let exact = exact_quantile(&sorted, q);
            let got = value.expect("enough samples for every quantile");
            // HDR reports the top of the bucket holding the order statistic: never below
            // it, and at most one part in 1000 above it (3 significant digits).
            assert!(got >= exact, "{name}: {got} < exact {exact}");
            assert!(
                got <= exact + exact / 1000 + 1,
                "{name}: {got} too far above exact {exact}"
            );
        }
        let bucket_total: u64 = series.buckets.iter().map(|b| b[1]).sum();
        assert_eq!(bucket_total, series.count);
        let bin_total: u64 = series.log2_bins().iter().map(|b| b.count).sum();
        assert_eq!(bin_total, series.count);
    }

    #[test]
    fn percentiles_match_order_statistics_on_uniform_data() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let values: Vec<u64> = (0..20_000)
            .map(|_| rng.random_range(1_000..200_000))
            .collect();
        check_against_exact(&values);
    }

    #[test]
    fn percentiles_match_order_statistics_on_bimodal_data() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let values: Vec<u64> = (0..20_000)
            .map(|i| {
                if i % 10 == 0 {
                    rng.random_range(900_000..1_100_000)
                } else {
                    rng.random_range(5_000..6_000)
                }
            })
            .collect();
        check_against_exact(&values);
    }

    #[test]
    fn percentiles_match_order_statistics_on_a_heavy_tail() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Pareto-like: 1 us / u^2 spans five decades.
        let values: Vec<u64> = (0..20_000)
            .map(|_| {
                let u: f64 = rng.random_range(0.003..1.0);
                (1_000.0 / (u * u)) as u64
            })
            .collect();
        check_against_exact(&values);
    }

    #[test]
    fn mean_and_stddev_are_exact() {
        let mut recorder = LatencyRecorder::new().unwrap();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            recorder.record(v);
        }
        let s = recorder.summary("s", "");
        assert!((s.mean - 5.0).abs() < 1e-12);
        // Sample stddev of the classic example: sqrt(32 / 7).
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn too_few_samples_leave_tail_percentiles_unreported() {
        let mut recorder = LatencyRecorder::new().unwrap();
        for v in 1..=500u64 {
            recorder.record(v * 100);
        }
        let p = recorder.summary("s", "").percentiles;
        assert!(p.p50.is_some() && p.p90.is_some());
        assert_eq!(p.p99, None);
        assert_eq!(p.p99_9, None);
    }

    #[test]
    fn empty_and_extreme_values_do_not_panic() {
        let empty = LatencyRecorder::new().unwrap().summary("e", "");
        assert_eq!((empty.count, empty.min, empty.max), (0, 0, 0));
        assert!(empty.log2_bins().is_empty());
        let mut recorder = LatencyRecorder::new().unwrap();
        recorder.record(0);
        recorder.record(u64::MAX);
        let s = recorder.summary("x", "");
        assert_eq!((s.min, s.max), (0, u64::MAX));
        let bins = s.log2_bins();
        assert_eq!(bins.first().map(|b| b.low_ns), Some(0));
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 2);
    }

    #[test]
    fn log2_bins_cover_powers_of_two() {
        let mut recorder = LatencyRecorder::new().unwrap();
        for v in [1, 2, 3, 4, 7, 8, 1_000, 1_023, 1_024] {
            recorder.record(v);
        }
        let bins = recorder.summary("s", "").log2_bins();
        let find = |low: u64| bins.iter().find(|b| b.low_ns == low).unwrap().count;
        assert_eq!(find(1), 1);
        assert_eq!(find(2), 2);
        assert_eq!(find(4), 2);
        assert_eq!(find(8), 1);
        assert_eq!(find(512), 2);
        assert_eq!(find(1024), 1);
        assert_eq!(find(16), 0);
    }

    #[test]
    fn series_round_trips_through_json() {
        let mut recorder = LatencyRecorder::new().unwrap();
        for v in 1..=100u64 {
            recorder.record(v * 1_000);
        }
        let s = recorder.summary("wake_latency", "t2 - t0");
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"p99.9\":null"));
        let back: LatencySeries = serde_json::from_str(&json).unwrap();
        assert_eq!(back.percentiles, s.percentiles);
        assert_eq!(back.buckets, s.buckets);
        assert_eq!((back.count, back.min, back.max), (s.count, s.min, s.max));
        assert!((back.stddev - s.stddev).abs() < 1e-6);
    }
}
