//! `kbench run`'s closing table: per workload its runs, median, the precision of the
//! median, CV and metric, a row per placement where runs ran with more than one, and
//! the noise warnings.
use kbench_analysis::outcome::WorkloadOutcome;
use std::path::Path;
use std::time::Duration;

/// What the closing table's first line says.
pub struct RunHead<'a> {
    pub label: &'a str,
    pub session_id: i64,
    pub seed: u64,
    /// The cpulist every run was pinned to, if any.
    pub cpus: Option<&'a str>,
    pub elapsed: Duration,
    /// Where the runs are stored.
    pub db: &'a Path,
}

/// The closing table: per workload n, median, CI of the median, CV and warnings.
pub fn summary(head: &RunHead<'_>, outcomes: &[WorkloadOutcome]) -> String {
    let runs: usize = outcomes.iter().map(|o| o.values.len()).sum();
    let label = head.label;
    let mut out = format!(
        "kbench run: label {label}, session {}, {runs} runs in {:.1} s, seed {}{}\n\n",
        head.session_id,
        head.elapsed.as_secs_f64(),
        head.seed,
        head.cpus
            .map(|c| format!(", pinned to CPUs {c}"))
            .unwrap_or_default()
    );
    out.push_str(&format!(
        "{:<NAME_WIDTH$} {:>4} {:>11} {:>8} {:>6}  {}\n",
        "workload", "n", "median", "CI95 ±%", "CV%", "metric"
    ));
    for o in outcomes {
        out.push_str(&summary_row(o, &o.spec));
        out.push_str(&placement_rows(o));
    }
    let notes: Vec<String> = outcomes.iter().flat_map(warnings).collect();
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            out.push_str(&format!("  {note}\n"));
        }
    }
    out.push_str(&format!(
        "\nstored in {}; compare with: kbench compare BASE {label}\n",
        head.db.display()
    ));
    out
}

/// The width of the workload column of the run summary: with the widest metric name
/// (`ipi_round_trip_p50_ns`) a line is 80 columns.
const NAME_WIDTH: usize = 24;

/// One row per placement when a workload's runs ran with more than one.
fn placement_rows(o: &WorkloadOutcome) -> String {
    let kinds = kbench_analysis::group::distinct(o.placements.iter().flatten().copied());
    if kinds.len() < 2 {
        return String::new();
    }
    kinds
        .into_iter()
        .map(|kind| {
            let only = o.only_placement(kind);
            let name = format!("  {}", crate::compare::placement_words(kind));
            summary_row(&only, &name)
        })
        .collect()
}

fn summary_row(o: &WorkloadOutcome, name: &str) -> String {
    let d = kbench_stats::describe(&o.values);
    let fmt = |v: Option<f64>, prec: usize| {
        v.map(|v| format!("{v:.prec$}"))
            .unwrap_or_else(|| "-".into())
    };
    // A spec too long for its column gets a line of its own, so none is cut.
    let (own_line, name) = if name.chars().count() > NAME_WIDTH {
        (format!("{name}\n"), "")
    } else {
        (String::new(), name)
    };
    own_line
        + &format!(
            "{:<NAME_WIDTH$} {:>4} {:>11} {:>8} {:>6}  {}\n",
            name,
            d.n,
            crate::compare::figure(d.median),
            fmt(o.precision_pct(), 2),
            fmt(d.cv_pct, 2),
            o.metric
        )
}

/// Noise warnings for one workload, each naming the runs it concerns.
fn warnings(o: &WorkloadOutcome) -> Vec<String> {
    let mut notes = Vec::new();
    if !o.failures.is_empty() {
        notes.push(format!(
            "{}: {} failed run(s), not counted",
            o.spec,
            o.failures.len()
        ));
    }
    if o.values.len() < 5 {
        return notes;
    }
    let outliers = kbench_stats::mad_outliers(&o.values);
    if !outliers.is_empty() {
        let runs: Vec<String> = outliers.iter().map(|i| (i + 1).to_string()).collect();
        notes.push(format!(
            "{}: outlier runs {} (kept)",
            o.spec,
            runs.join(", ")
        ));
    }
    if let Some(groups) = kbench_analysis::modes::placement_modes(&o.values, &o.placements) {
        notes.push(format!(
            "{}: two populations, split by placement: {}",
            o.spec,
            crate::compare::placement_groups_text(&groups, &o.unit)
        ));
    } else if kbench_stats::bimodality(&o.values).bimodal {
        notes.push(format!("{}: bimodal: two populations of runs", o.spec));
    }
    if let Some(drift) = kbench_stats::drift(&o.values) {
        if drift.p_value < 0.05 {
            notes.push(format!(
                "{}: drifts over the session (Mann-Kendall p={:.3})",
                o.spec, drift.p_value
            ));
        }
    }
    if let Some(cv) = kbench_stats::describe(&o.values).cv_pct {
        if cv > 10.0 {
            notes.push(format!("{}: noisy, CV {cv:.1}%: see kbench env", o.spec));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_record::PlacementKind::{CrossCpu, SameCpu};

    fn outcome(
        values: &[f64],
        placements: &[Option<kbench_record::PlacementKind>],
    ) -> WorkloadOutcome {
        WorkloadOutcome {
            spec: "pipe:-l 100000".into(),
            metric: "usecs_per_op".into(),
            unit: "us/op".into(),
            values: values.to_vec(),
            placements: placements.to_vec(),
            failures: Vec::new(),
        }
    }

    #[test]
    fn runs_of_two_placements_get_a_row_each_and_explain_the_spread() {
        let values = [1.70, 1.71, 13.0, 1.69, 13.4, 12.8, 1.72, 1.70, 13.1];
        let placements: Vec<_> = values
            .iter()
            .map(|v| Some(if *v > 5.0 { CrossCpu } else { SameCpu }))
            .collect();
        let o = outcome(&values, &placements);
        let rows = placement_rows(&o);
        let lines: Vec<&str> = rows.lines().collect();
        assert_eq!(lines.len(), 2, "{rows}");
        assert!(
            lines[0].starts_with("  on one CPU ") && lines[0].contains(" 5 "),
            "{rows}"
        );
        assert!(
            lines[1].starts_with("  across CPUs ") && lines[1].contains(" 4 "),
            "{rows}"
        );
        let notes = warnings(&o).join("\n");
        assert!(
            notes.contains("two populations, split by placement: 5 runs on one CPU: 1.7000 us/op; 4 runs across CPUs: 13.050 us/op"),
            "{notes}"
        );
    }

    #[test]
    fn one_placement_adds_no_rows() {
        let o = outcome(&[1.7, 1.8, 1.75], &[Some(SameCpu); 3]);
        assert_eq!(placement_rows(&o), "");
        let unknown = outcome(&[1.7, 1.8, 1.75], &[None; 3]);
        assert_eq!(placement_rows(&unknown), "");
    }
}
