use super::*;
use crate::compare::threshold_rel;
use crate::settle::VarianceFrom;

fn obs(values: &[f64], boot: &str, session: &str, start: u32) -> Vec<Observation> {
    values
        .iter()
        .enumerate()
        .map(|(i, &value)| Observation {
            value,
            boot: boot.into(),
            session: session.into(),
            order: start + i as u32,
        })
        .collect()
}

const RUNS: [f64; 6] = [1.00, 1.01, 0.99, 1.02, 0.98, 1.00];

#[test]
fn the_design_is_the_highest_level_at_which_the_sides_differ() {
    let a = obs(&RUNS, "b1", "s1", 0);
    let other_boot = obs(&RUNS, "b2", "s2", 0);
    let other_session = obs(&RUNS, "b1", "s2", 0);
    let same_session = obs(&RUNS, "b1", "s1", 10);
    assert_eq!(
        choose_design(&a, &other_boot),
        Design::Unpaired(Level::Boot)
    );
    assert_eq!(
        choose_design(&a, &other_session),
        Design::Unpaired(Level::Session)
    );
    assert_eq!(choose_design(&a, &same_session), Design::Interleaved);
    let mut a2 = a.clone();
    a2.extend(obs(&RUNS, "b2", "s3", 6));
    let mut b2 = same_session.clone();
    b2.extend(obs(&RUNS, "b2", "s4", 16));
    assert_eq!(choose_design(&a2, &b2), Design::Paired(Level::Boot));
}

/// Boots that read a figure alike in every run and boot (a counted IPI round trip)
/// have no spread at all: the shift alone decides, as with a spread it would.
#[test]
fn boots_without_any_spread_are_decided_on_the_shift() {
    let boots = |value: f64| -> Vec<Observation> {
        (0..3)
            .flat_map(|i| {
                obs(
                    &[value; 3],
                    &format!("b{value}{i}"),
                    &format!("s{value}{i}"),
                    0,
                )
            })
            .collect()
    };
    let opts = NestedOptions::default();
    let same = compare_nested(&boots(1531.0), &boots(1531.0), &opts);
    assert_eq!(same.verdict, Verdict::Equivalent, "{same:?}");
    let slower = compare_nested(&boots(1531.0), &boots(1559.0), &opts);
    assert_eq!(slower.verdict, Verdict::Regression, "{slower:?}");
    assert!((slower.shift_pct.unwrap() - 1.829).abs() < 0.01);
}

#[test]
fn one_session_a_side_without_calibration_makes_no_claim() {
    let a = obs(&RUNS, "b1", "s1", 0);
    let b: Vec<Observation> = obs(&RUNS.map(|v| v * 1.2), "b1", "s2", 0);
    let c = compare_nested(&a, &b, &NestedOptions::default());
    assert_eq!(c.verdict, Verdict::Inconclusive);
    let info = c.nested.unwrap();
    assert_eq!(info.no_claim, Some(NoClaim::NoBetweenUnitVariance));
    assert_eq!(info.units_needed, None);
    assert_eq!(c.settle, Some(UnitsToSettle::unknown()));
    assert!((c.shift_pct.unwrap() - 20.0).abs() < 0.5);
}

/// The bounds of an `About`, or a panic naming what came instead.
fn about(settle: Option<UnitsToSettle>) -> (usize, usize, Option<usize>) {
    match settle {
        Some(UnitsToSettle::About {
            per_side,
            low,
            high,
            ..
        }) => (per_side, low, high),
        other => panic!("expected about, got {other:?}"),
    }
}

#[test]
fn units_to_settle_carry_the_uncertainty_of_the_spread() {
    let threshold = threshold_rel(Scale::Log, 1.0);
    let from = VarianceFrom::ThisComparison;
    // A spread of 0.5 % from 2 units a side (2 df): the range spans two orders of
    // magnitude around the point.
    let (point, low, high) = about(UnitsToSettle::from_spread(
        0.005, 2.0, threshold, 0.05, 2, from,
    ));
    let high = high.expect("within the practical bound");
    assert!(low < point && point < high, "{low} {point} {high}");
    assert!(high >= 20 * low, "{low} {high}");
    // The same spread from 30 units a side (58 df): within a factor of about 2.
    let (point, low, high) = about(UnitsToSettle::from_spread(
        0.005, 58.0, threshold, 0.05, 30, from,
    ));
    let high = high.unwrap();
    assert!(low <= point && point <= high, "{low} {point} {high}");
    assert!(high <= 3 * low, "{low} {high}");
    // A wider spread from 2 units: the upper end is past any practical number.
    let (point, low, high) = about(UnitsToSettle::from_spread(
        0.02, 2.0, threshold, 0.05, 2, from,
    ));
    assert!(low < point && high.is_none(), "{low} {point} {high:?}");
    // A spread that needs more than the bound even at its point estimate.
    match UnitsToSettle::from_spread(0.1, 2.0, threshold, 0.05, 2, from) {
        Some(UnitsToSettle::BeyondPractical { at_least, df, .. }) => {
            assert!(at_least > 100, "{at_least}");
            assert_eq!(df, 2.0);
        }
        other => panic!("expected beyond practical, got {other:?}"),
    }
}

#[test]
fn two_sessions_a_side_settle_from_their_own_spread() {
    let mut a = obs(&RUNS, "b1", "s1", 0);
    a.extend(obs(&RUNS.map(|v| v * 1.004), "b1", "s2", 6));
    let mut b = obs(&RUNS.map(|v| v * 1.005), "b1", "s3", 0);
    b.extend(obs(&RUNS.map(|v| v * 1.001), "b1", "s4", 6));
    let c = compare_nested(&a, &b, &NestedOptions::default());
    assert_eq!(c.verdict, Verdict::Inconclusive, "{c:?}");
    let (point, low, _) = about(c.settle.clone());
    assert_eq!(Some(point), c.nested.unwrap().units_needed);
    assert!(low >= 3 && low <= point, "{low} {point}");
}

#[test]
fn a_calibration_lets_one_session_a_side_find_a_large_change() {
    let a = obs(&RUNS, "b1", "s1", 0);
    let b: Vec<Observation> = obs(&RUNS.map(|v| v * 1.2), "b1", "s2", 0);
    let cal = NoiseComponents {
        runs: 50,
        sessions: 5,
        boots: 1,
        within_sd: Some(0.01),
        session_sd: Some(0.01),
        session_df: 4,
        runs_per_session: 10.0,
        session_within_var: 0.00001,
        ..NoiseComponents::default()
    };
    let opts = NestedOptions {
        calibration: Some(cal.clone()),
        ..NestedOptions::default()
    };
    let c = compare_nested(&a, &b, &opts);
    assert_eq!(c.verdict, Verdict::Regression, "{c:?}");
    let between = c.nested.unwrap().between.unwrap();
    assert_eq!(between.source, NoiseSource::Calibration);
    // A 1 % change is inside that noise: not claimed.
    let small: Vec<Observation> = obs(&RUNS.map(|v| v * 1.01), "b1", "s2", 0);
    assert!(!compare_nested(&a, &small, &opts)
        .verdict
        .claims_difference());
}

#[test]
fn components_recover_a_session_effect() {
    // Sessions offset by ±5 %, runs exactly equal within: the session SD is ~5 %.
    let mut all = Vec::new();
    for (i, offset) in [1.05, 0.95, 1.05, 0.95].iter().enumerate() {
        let values: Vec<f64> = RUNS.iter().map(|_| *offset).collect();
        all.extend(obs(&values, "b1", &format!("s{i}"), 10 * i as u32));
    }
    let c = noise_components(&all);
    assert_eq!((c.sessions, c.boots, c.session_df), (4, 1, 3));
    assert!((c.session_sd.unwrap() - 0.0577).abs() < 0.003);
    let sd = c.between_session_sd.unwrap();
    assert!((sd - 0.0577).abs() < 0.003, "{sd}");
    assert!(c.within_sd.unwrap() < 1e-9);
    assert_eq!(c.between_boot_sd, None);
}

#[test]
fn paired_boots_cancel_a_boot_offset() {
    // Each boot shifts both sides alike by a large offset; B is 3 % slower in each.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (i, offset) in [1.0, 1.3, 0.8, 1.1].iter().enumerate() {
        let boot = format!("b{i}");
        let runs_a: Vec<f64> = RUNS.iter().map(|v| v * offset).collect();
        let runs_b: Vec<f64> = runs_a.iter().map(|v| v * 1.03).collect();
        a.extend(obs(&runs_a, &boot, &format!("sa{i}"), 10 * i as u32));
        b.extend(obs(&runs_b, &boot, &format!("sb{i}"), 10 * i as u32));
    }
    let c = compare_nested(&a, &b, &NestedOptions::default());
    assert_eq!(
        c.nested.as_ref().unwrap().design,
        Design::Paired(Level::Boot)
    );
    assert_eq!(c.verdict, Verdict::Regression, "{c:?}");
}

#[test]
fn satterthwaite_of_one_term_is_its_df() {
    assert!((satterthwaite(&[(2.0, 7.0)]) - 7.0).abs() < 1e-12);
    let two = satterthwaite(&[(1.0, 4.0), (1.0, 4.0)]);
    assert!((two - 8.0).abs() < 1e-12);
}
