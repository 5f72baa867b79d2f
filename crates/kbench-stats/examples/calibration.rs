//! Prints the Monte-Carlo calibration table of the verdicts.
//!
//! `cargo run -p kbench-stats --example calibration --release [-- TRIALS [SEED]]`
//!
//! Rows marked `*` show design errors (pooling runs of different boots, running A then B)
//! and are not expected to hold α.
use kbench_stats::calibration::{
    format_nested_table, format_table, run_calibration, run_nested_calibration, CalibrationConfig,
};

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
    println!();
    println!(
        "sessions as units: 10 runs a session, {} trials per cell (pooled cells: 1/4), seed {}",
        config.trials, config.seed
    );
    println!("sess% = SD of session offsets, cv% = run-to-run CV, sess = sessions a side,");
    println!("cal = calibration from 5 A/A sessions, noclm = no-claim rate, pow+N = power at +N%");
    print!(
        "{}",
        format_nested_table(&run_nested_calibration(
            config.trials,
            config.seed,
            &config.options
        ))
    );
}
