//! A bisection's lines: each look as it is made (on stderr, by the binary) and its
//! closing summary.
use kbench_analysis::bisect::{
    share_of_change, BisectEnd, BisectReport, Confirmation, StepOutcome,
};
use kbench_stats::bisect::{StepDecision, StepLook};
use kbench_stats::sequential::{Decision, Look};
use std::fmt::Write;

/// `+12.3% [+8.1%, +16.0%], regression (5 and 5 boots)`.
pub fn describe_look(look: &Look, delta_pct: f64) -> String {
    let shift = look.shift_pct.map_or("?".into(), |s| format!("{s:+.1}%"));
    let interval = look
        .interval_pct
        .map_or("interval not bounded".into(), |(lo, hi)| {
            format!("[{lo:+.1}%, {hi:+.1}%]")
        });
    let decision = match &look.decision {
        Decision::Regression => "regression".to_string(),
        Decision::Improvement => "improvement".to_string(),
        Decision::Changed => format!("changed, by less than δ = {delta_pct}% perhaps"),
        Decision::Equivalent => format!("no change larger than δ = {delta_pct}%"),
        Decision::Undecided => "undecided at the bound".to_string(),
        Decision::Continue { .. } => "open".to_string(),
    };
    format!(
        "{shift} {interval}, {decision} ({} and {} boots)",
        look.n_a, look.n_b
    )
}

/// `like bad after 4 boots: +201.0% from good [+150.2%, +260.0%], -2.1% from bad [...]`.
pub fn describe_step(look: &StepLook) -> String {
    let decision = match look.decision {
        StepDecision::LikeGood => "like good",
        StepDecision::LikeBad => "like bad",
        StepDecision::Neither => "like neither good nor bad",
        StepDecision::Continue => "open",
        StepDecision::Undecided => "undecided at the bound",
    };
    let part = |shift: Option<f64>, iv: Option<(f64, f64)>, from: &str| {
        let shift = shift.map_or("?".into(), |s| format!("{s:+.1}%"));
        let iv = iv.map_or("not bounded".into(), |(lo, hi)| {
            format!("[{lo:+.1}%, {hi:+.1}%]")
        });
        format!("{shift} from {from} {iv}")
    };
    format!(
        "{decision} after {} boots: {}, {}",
        look.boots,
        part(look.from_good_pct, look.from_good_interval_pct, "good"),
        part(look.from_bad_pct, look.from_bad_interval_pct, "bad")
    )
}

/// What a step came to, as one line.
pub fn describe_outcome(outcome: &StepOutcome) -> String {
    match outcome {
        StepOutcome::BuildFailed(reason) => format!("skipped: the build failed ({reason})"),
        StepOutcome::BootsFailed(n) => format!("skipped: {n} boots failed"),
        StepOutcome::Looked(look) if look.decision == StepDecision::Undecided => {
            format!("skipped: {}", describe_step(look))
        }
        StepOutcome::Looked(look) => describe_step(look),
    }
}

/// The first 12 hex digits of a commit, as every line shows it.
pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// The closing lines: the first bad commit and its confirmation when found, good
/// against bad, every step, what was built and booted, where git's log is; then how
/// it ended when no commit was found.
pub fn summary(r: &BisectReport) -> String {
    let mut out = String::new();
    let metric = &r.metric;
    if let BisectEnd::Found {
        commit,
        subject,
        confirmation,
    } = &r.end
    {
        let _ = writeln!(out, "first bad commit: {} {subject}", short(commit));
        let _ = writeln!(out, "{}", confirmation_line(confirmation, r));
        if let Confirmation::Look { look, .. } = confirmation {
            if let Some(share) = share_of_change(look, &r.endpoints) {
                let part = if share < 50.0 {
                    ": part of it only; the rest is elsewhere in the range"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "  that is {share:.0}% of good against bad's change{part}"
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "  good {} against bad {}: {metric}: {}",
        short(&r.good),
        short(&r.bad),
        describe_look(&r.endpoints, r.delta_pct)
    );
    for (i, step) in r.steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "  step {}: {} {}: {}",
            i + 1,
            short(&step.commit),
            step.subject,
            describe_outcome(&step.outcome)
        );
    }
    let c = &r.counts;
    let _ = writeln!(
        out,
        "  {} steps; builds: {} made, {} kept from before, {} failed; boots: {} made ({} failed), {} stored before; {:.0} s",
        r.steps.len(),
        c.built,
        c.kept_builds,
        c.failed_builds,
        c.booted,
        c.failed_boots,
        c.reused_boots,
        r.elapsed_s
    );
    let _ = writeln!(
        out,
        "  git bisect log: {}; any two commits: kbench compare {}@COMMIT {}@COMMIT",
        r.log_path, r.name, r.name
    );
    match &r.end {
        BisectEnd::Found { .. } => {}
        BisectEnd::OnlySkipped(commits) => {
            let commits: Vec<&str> = commits.iter().map(|c| short(c)).collect();
            let _ = writeln!(
                out,
                "no single commit: only skipped commits are left, and the first bad one is one of {}",
                commits.join(", ")
            );
        }
        BisectEnd::Drifted(why) => {
            let _ = writeln!(out, "stopped: {why}");
        }
        BisectEnd::Neither(commit) => {
            let _ = writeln!(
                out,
                "the change is not one step: {} is like neither good nor bad",
                short(commit)
            );
        }
    }
    out
}

fn confirmation_line(confirmation: &Confirmation, r: &BisectReport) -> String {
    match confirmation {
        Confirmation::Look { parent, look } => format!(
            "  {}: {} against its parent {} in fresh boots",
            r.metric,
            describe_look(look, r.delta_pct),
            short(parent)
        ),
        Confirmation::NoParent => "  (a root commit: no parent to confirm against)".into(),
        Confirmation::ParentDoesNotBuild(reason) => {
            format!("  not confirmed: its parent does not build ({reason})")
        }
        Confirmation::NoBoots => "  not confirmed: no boot of the pair measured the metric".into(),
    }
}
