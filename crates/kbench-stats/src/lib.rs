//! kbench-stats: the statistics engine of kbench.
//!
//! Pure functions (no I/O, no global state, deterministic) that compare two sets of
//! benchmark values and return a verdict with its numbers and diagnostics. The method set and
//! its evidence are in `docs/statistics.md`: Hodges-Lehmann shift of log values with the
//! exact Moses interval, a verdict against a practical threshold δ, and diagnostics for
//! outliers, bimodality, drift and shape next to every verdict.
//!
//! Entry points: [`compare`], [`compare_nested`], [`compare_pooled_quantiles`],
//! [`compare_summaries`],
//! [`describe`], [`percentile_ci`], [`benjamini_hochberg`]; [`look`] is the sequential rule (its boundaries: [`Boundary`], [`group_sequential`]), [`bisect::step_look`] a bisection's step; [`parse_numbers`] reads the
//! files of numbers `kbench stat` compares.

pub mod bisect;
pub mod calibration;
pub mod changepoint;
pub mod compare;
pub mod descriptive;
pub mod diagnostics;
pub mod group_sequential;
pub mod ks;
pub mod multiple;
pub mod nested;
pub mod numbers;
pub mod parametric;
pub mod percentiles;
pub mod pooled;
pub mod rank;
pub mod sequential;
pub mod settle;
pub mod special;

pub use compare::{
    compare, compare_summaries, CompareOptions, Comparison, Diagnostics, Scale, ShapeTest,
    SideDiagnostics, SummaryStats, Verdict,
};
pub use descriptive::{
    describe, percentile_ci, percentiles_with_ci, quantile_sorted, PercentileCi, Summary,
};
pub use diagnostics::{
    bimodality, drift, drift_if_significant, mad_outliers, mann_kendall, theil_sen_slope,
    Bimodality, Drift,
};
pub use ks::{ks_two_sample, KolmogorovSmirnov};
pub use multiple::benjamini_hochberg;
pub use nested::{
    choose_design, compare_nested, compare_units, components_from_units, noise_components,
    resolvable_change_pct, unit_count, units_needed, BetweenUnit, Design, Level, NestedInfo,
    NestedOptions, NoClaim, NoiseComponents, NoiseSource, Observation, UnitEstimate, UnitsToSettle,
};
pub use numbers::{parse_numbers, NumbersError};
pub use parametric::{fieller_ratio_ci, welch, welch_from_moments, Welch};
pub use percentiles::{compare_percentile, histogram_percentile_ci, PercentileShift};
pub use pooled::{compare_pooled_quantiles, pooled_quantile, PooledOptions, RunHistogram};
pub use rank::{
    hodges_lehmann, kth_pairwise_difference, mann_whitney, moses_rank, MannWhitney, PMethod,
    ShiftEstimate,
};
pub use sequential::{
    confidence_sequence, design_interval, look, stops, Boundary, Decision, KnownNoise, LogInterval,
    Look, MoreEstimate, NoiseAdvice, NoiseWanted, SequentialDesign, VarianceFrom,
};
