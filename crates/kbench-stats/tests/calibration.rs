//! Seeded Monte-Carlo calibration (`docs/statistics.md`, "Validation"). Print the table with
//! `cargo test -p kbench-stats --test calibration -- --nocapture`.

use kbench_stats::calibration::{format_table, run_calibration, CalibrationConfig, POWER_CELL};

#[test]
fn verdicts_hold_alpha_under_aa_noise_and_have_power() {
    let config = CalibrationConfig::default();
    let rows = run_calibration(&config);
    println!("{} trials per cell, seed {}", config.trials, config.seed);
    print!("{}", format_table(&rows));
    for row in rows.iter().filter(|r| r.shift_pct == 0.0) {
        assert!(
            row.claims_rate <= row.limit,
            "{} n={}: A/A claim rate {} > {}",
            row.model.name(),
            row.n,
            row.claims_rate,
            row.limit
        );
    }
    let (model, n, shift) = POWER_CELL;
    let power = rows
        .iter()
        .find(|r| r.model == model && r.n == n && r.shift_pct == shift)
        .unwrap();
    assert!(
        power.claims_up_rate >= 0.8,
        "power {} < 0.8",
        power.claims_up_rate
    );
}

#[test]
fn replicated_verdicts_hold_alpha_in_every_session_and_pooled_cell() {
    use kbench_stats::calibration::{format_nested_table, run_nested_calibration};
    let options = kbench_stats::CompareOptions::default();
    let rows = run_nested_calibration(2000, 20_261_201, &options);
    print!("{}", format_nested_table(&rows));
    for row in rows.iter().filter(|r| r.shift_pct == 0.0) {
        assert!(
            row.claims_rate <= row.limit,
            "{:?}: A/A claim rate {} > {}",
            row.cell,
            row.claims_rate,
            row.limit
        );
    }
    // Three sessions a side with 1 % session noise and 1 % run noise find +5 %.
    let found = rows
        .iter()
        .find(|r| {
            !r.cell.pooled
                && r.cell.session_sd_pct == 1.0
                && r.cell.within_cv_pct == 1.0
                && r.cell.sessions_per_side == 3
                && r.shift_pct == 5.0
        })
        .unwrap();
    assert!(
        found.claims_up_rate >= 0.8,
        "power {}",
        found.claims_up_rate
    );
}
