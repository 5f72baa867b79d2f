//! The Monte-Carlo of `docs/history.md`: histories of 100 labels with 1-10 boots each
//! (or as many as a layout gives each place), 5 runs a boot, a within-boot CV of 1-5 %
//! and a boot effect of 1 % (the per-boot calibration cell), searched with the defaults
//! of `kbench history`. Each test prints its row; the rates are quoted in the docs.
use kbench_stats::changepoint::{
    history_monte_carlo, BootLayout, ChangePointOptions, HistoryModel, HistoryRow, LOCATION_SLACK,
};

const HISTORIES: usize = 200;
const LABELS: usize = 100;
const STEP_AT: usize = 60;

fn model(step_pct: f64, outlier_pct: f64) -> HistoryModel {
    HistoryModel {
        labels: LABELS,
        boot_sd: 0.01,
        label_sd: 0.0,
        step_pct,
        step_at: if step_pct == 0.0 { LABELS } else { STEP_AT },
        outlier_pct,
        boots: BootLayout::default(),
    }
}

fn run(model: HistoryModel, seed: u64) -> HistoryRow {
    run_many(model, HISTORIES, seed)
}

fn run_many(model: HistoryModel, histories: usize, seed: u64) -> HistoryRow {
    let row = history_monte_carlo(model, histories, &ChangePointOptions::default(), seed);
    eprintln!(
        "step {:+}% at label {}, outlier {:+}%, kernel effect {}%, boots {:?}: {} of {} histories with a change point, \
         the step found (within {LOCATION_SLACK} labels) in {}, one elsewhere in {}, mean location error {:.2} labels (seed {})",
        model.step_pct,
        model.step_at,
        model.outlier_pct,
        model.label_sd * 100.0,
        model.boots,
        row.with_any,
        row.histories,
        row.found,
        row.elsewhere,
        row.mean_location_error,
        row.seed
    );
    row
}

#[test]
fn aa_histories_show_a_change_point_at_most_one_time_in_twenty() {
    let row = run(model(0.0, 0.0), 27_001);
    assert!(row.with_any * 20 <= row.histories, "{row:?}");
}

/// Each kernel a little off the others (its build's layout), and no step: whole labels
/// are what the permutations shuffle, so those offsets are noise, not changes.
#[test]
fn aa_histories_of_kernels_with_effects_of_their_own_show_none_either() {
    let row = run(
        HistoryModel {
            label_sd: 0.005,
            ..model(0.0, 0.0)
        },
        27_005,
    );
    assert!(row.with_any * 20 <= row.histories, "{row:?}");
}

#[test]
fn one_outlying_label_is_not_a_change_point() {
    let row = run(model(0.0, 10.0), 27_002);
    assert!(row.with_any * 20 <= row.histories, "{row:?}");
}

#[test]
fn steps_of_two_and_five_percent_are_found_where_they_are() {
    // (step, seed, found at least this share, mean location error at most)
    for (step_pct, seed, found, error) in [(2.0, 27_003, 0.90, 0.75), (-5.0, 27_004, 0.99, 0.25)] {
        let row = run(model(step_pct, 0.0), seed);
        assert!(row.found as f64 >= found * row.histories as f64, "{row:?}");
        assert!(row.mean_location_error <= error, "{row:?}");
        assert!(row.elsewhere * 20 <= row.histories, "{row:?}");
    }
}

/// Histories whose labels are booted once each and then ten times each, or the other
/// way round, with no step. With labels shuffled across all places, 1.6-1.7 % of the
/// histories booted once and then ten times showed a change point at a significance of
/// 1 %: the permutations must keep each place's number of units. 10,000 histories make
/// the rate's standard error 0.1 % at 1 %; 4,000, 0.16 %.
#[test]
fn aa_histories_whose_boots_per_label_change_keep_the_promised_rate() {
    let half = LABELS / 2;
    // (boots before and after the middle, kernel effect, histories, seed)
    for (before, after, label_sd, histories, seed) in [
        (1, 10, 0.0, 10_000, 27_006),
        (10, 1, 0.0, 4_000, 27_007),
        (1, 10, 0.005, 4_000, 27_008),
        // Two-boot labels thinned to one beside one-boot labels (the next test).
        (1, 2, 0.0, 4_000, 27_009),
    ] {
        let model = HistoryModel {
            label_sd,
            boots: BootLayout::Switch {
                at: half,
                before,
                after,
            },
            ..model(0.0, 0.0)
        };
        let row = run_many(model, histories, seed);
        assert!(
            row.with_any as f64 <= promised_rate_limit(histories) * histories as f64,
            "{row:?}"
        );
    }
}

/// The significance plus two standard errors of a rate over `histories` histories.
fn promised_rate_limit(histories: usize) -> f64 {
    let alpha = ChangePointOptions::default().significance;
    alpha + 2.0 * (alpha * (1.0 - alpha) / histories as f64).sqrt()
}

/// A lab that began booting the newer kernels twice when the change came: the step sits
/// where the boots per label change. Beside one-boot labels a two-boot label keeps one
/// boot, drawn at random, and the permutations exchange them, so the step is found;
/// kept apart at their own counts, it was found in 1 of 500 histories.
#[test]
fn a_step_where_the_boots_per_label_double_is_found() {
    let model = HistoryModel {
        boots: BootLayout::Switch {
            at: STEP_AT,
            before: 1,
            after: 2,
        },
        ..model(2.0, 0.0)
    };
    let row = run(model, 27_010);
    assert!(row.found * 2 >= row.histories, "{row:?}");
}
