//! Prints the Monte-Carlo calibration table of the verdicts.
//!
//! `cargo run -p kbench-stats --example calibration --release [-- TRIALS [SEED]]`
//!
//! Rows marked `*` show design errors (pooling runs of different boots, running A then B)
//! and are not expected to hold α.
use kbench_stats::calibration::{format_table, run_calibration, CalibrationConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut config = CalibrationConfig {
        include_reference_rows: true,
        ..CalibrationConfig::default()
    };
    if let Some(trials) = args.next().and_then(|t| t.parse().ok()) {
        config.trials = trials;
    }
    if let Some(seed) = args.next().and_then(|s| s.parse().ok()) {
        config.seed = seed;
    }
    println!(
        "{} trials per cell, seed {}, alpha {}, delta {} %",
        config.trials, config.seed, config.options.alpha, config.options.delta_pct
    );
    println!(
        "claims = rate of regression/improvement/changed (A/A: false claims; shift > 0: power)"
    );
    print!("{}", format_table(&run_calibration(&config)));
}
