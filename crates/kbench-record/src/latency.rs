//! Latency distributions as a run record carries them: exact count, min, max, mean
//! and stddev, the reported percentiles and the HDR buckets. The recorder that builds
//! them (an HDR histogram) lives with the workloads.
//!
//! A percentile is `None` when the run had too few samples to report it (see the
//! recorder's rule in `kbench_workloads::latency`).
use serde::{Deserialize, Serialize};

/// The quantiles every series reports, with their names.
pub const QUANTILES: [(&str, f64); 4] = [
    ("p50", 0.50),
    ("p90", 0.90),
    ("p99", 0.99),
    ("p99.9", 0.999),
];

/// The reported percentiles; `None` when the series has too few samples (see module doc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: Option<u64>,
    pub p90: Option<u64>,
    pub p99: Option<u64>,
    #[serde(rename = "p99.9")]
    pub p99_9: Option<u64>,
}

impl Percentiles {
    /// `(name, value)` in ascending quantile order.
    pub fn named(&self) -> [(&'static str, Option<u64>); 4] {
        [
            (QUANTILES[0].0, self.p50),
            (QUANTILES[1].0, self.p90),
            (QUANTILES[2].0, self.p99),
            (QUANTILES[3].0, self.p99_9),
        ]
    }
}

/// One latency distribution of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySeries {
    /// `wake_latency`, `waker_cost`, `ipi_round_trip`, ...
    pub name: String,
    /// What was timed, e.g. `t2 - t0: wake call to wakee running`.
    #[serde(default)]
    pub description: String,
    /// Always `ns`.
    pub unit: String,
    /// Exact count, min, max, mean and sample stddev of the valid samples.
    pub count: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    pub percentiles: Percentiles,
    /// Every non-empty HDR bucket: `[highest value in the bucket, count]`, ascending.
    pub buckets: Vec<[u64; 2]>,
}

/// One power-of-two bin of the compact text histogram: values `low..=high`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Log2Bin {
    pub low_ns: u64,
    pub high_ns: u64,
    pub count: u64,
}

impl LatencySeries {
    /// The buckets folded into power-of-two bins, from the first non-empty bin to the last
    /// (empty bins in between included, so gaps in the distribution show).
    ///
    /// Exact: an HDR bucket never straddles a power of two, so its upper value decides
    /// the bin of every value in it.
    pub fn log2_bins(&self) -> Vec<Log2Bin> {
        let mut counts = [0u64; 65];
        for [upper_ns, count] in &self.buckets {
            counts[bit_length(*upper_ns)] += count;
        }
        let Some(first) = counts.iter().position(|&c| c > 0) else {
            return Vec::new();
        };
        let last = counts.iter().rposition(|&c| c > 0).unwrap_or(first);
        (first..=last)
            .map(|bits| Log2Bin {
                low_ns: if bits == 0 { 0 } else { 1u64 << (bits - 1) },
                high_ns: if bits == 0 {
                    0
                } else if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                },
                count: counts[bits],
            })
            .collect()
    }

    /// The p50, if reported.
    pub fn p50(&self) -> Option<u64> {
        self.percentiles.p50
    }
}

/// Number of significant bits: 0 for 0, 1 for 1, 2 for 2..=3, ...
fn bit_length(value: u64) -> usize {
    (u64::BITS - value.leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(buckets: Vec<[u64; 2]>) -> LatencySeries {
        LatencySeries {
            name: "s".into(),
            unit: "ns".into(),
            count: buckets.iter().map(|b| b[1]).sum(),
            buckets,
            ..LatencySeries::default()
        }
    }

    #[test]
    fn log2_bins_fold_buckets_and_keep_gaps() {
        let s = series(vec![[1, 1], [3, 2], [7, 2], [8, 1], [1023, 2], [1024, 1]]);
        let bins = s.log2_bins();
        let find = |low: u64| bins.iter().find(|b| b.low_ns == low).unwrap().count;
        assert_eq!(find(1), 1);
        assert_eq!(find(2), 2);
        assert_eq!(find(4), 2);
        assert_eq!(find(8), 1);
        assert_eq!(find(16), 0);
        assert_eq!(find(512), 2);
        assert_eq!(find(1024), 1);
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), s.count);
    }

    #[test]
    fn extreme_buckets_do_not_panic() {
        assert!(series(Vec::new()).log2_bins().is_empty());
        let bins = series(vec![[0, 1], [u64::MAX, 1]]).log2_bins();
        assert_eq!(bins.first().map(|b| b.low_ns), Some(0));
        assert_eq!(bins.last().map(|b| b.high_ns), Some(u64::MAX));
    }

    #[test]
    fn percentiles_keep_perf_style_names_in_json() {
        let p = Percentiles {
            p50: Some(1),
            p99_9: None,
            ..Percentiles::default()
        };
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains("\"p99.9\":null"), "{json}");
        assert_eq!(serde_json::from_str::<Percentiles>(&json).unwrap(), p);
        assert_eq!(p.named()[3].0, "p99.9");
    }
}
