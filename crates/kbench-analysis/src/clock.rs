//! Which clock a label's figures were measured with, and what follows from it: counted
//! sessions (instructions, from boots under TCG's icount) are never pooled with timed
//! ones nor compared with them, and their default δ is what counting resolves.
use crate::AnalysisError;
use kbench_record::Clock;
use kbench_store::SessionRow;
use std::collections::BTreeSet;

/// The default floor of δ for counted sessions, percent. An A/A by counted boots
/// (docs/vm-ab.md, "Counted boots") reads boot means within 0.1-0.3% of each other
/// and some figures (the IPI round trip) identical in every boot: a 1% floor would
/// throw away most of what counting resolves, and 0.5% is what six boots a side of
/// the noisiest of them (pipe on one CPU) resolve with a fixed t interval.
pub const COUNTED_DEFAULT_DELTA_PCT: f64 = 0.5;

/// The default floor of δ for figures of `clock`, percent.
pub fn default_delta_pct(clock: Clock) -> f64 {
    match clock {
        Clock::Wall => crate::DEFAULT_DELTA_PCT,
        Clock::Instructions => COUNTED_DEFAULT_DELTA_PCT,
    }
}

/// The clocks of a label's sessions that have measured runs (a failed boot may have
/// said nothing of its clock).
fn clocks_of(sessions: &[SessionRow]) -> BTreeSet<Clock> {
    sessions
        .iter()
        .filter(|s| s.runs > 0)
        .map(|s| {
            s.environment
                .as_ref()
                .map(|e| e.clock())
                .unwrap_or_default()
        })
        .collect()
}

/// The one clock of a label's measured sessions; a label holding counted and timed
/// sessions is refused, since pooling instructions with times means nothing.
pub fn label_clock(label: &str, sessions: &[SessionRow]) -> Result<Clock, AnalysisError> {
    let clocks = clocks_of(sessions);
    match clocks.len() {
        0 => Ok(Clock::Wall),
        1 => Ok(*clocks.first().expect("one clock")),
        _ => Err(AnalysisError::Usage(format!(
            "'{label}' holds timed sessions and counted ones (vm-ab --clock instructions), \
             which are never pooled: store them under two labels"
        ))),
    }
}

/// The clock both labels were measured with; two labels of different clocks are
/// refused, since instructions and times cannot be compared.
pub fn shared_clock(
    (base, base_sessions): (&str, &[SessionRow]),
    (new, new_sessions): (&str, &[SessionRow]),
) -> Result<Clock, AnalysisError> {
    let (a, b) = (
        label_clock(base, base_sessions)?,
        label_clock(new, new_sessions)?,
    );
    // A label with no measured session says nothing of its clock.
    let measured = |s: &[SessionRow]| s.iter().any(|s| s.runs > 0);
    if a != b && measured(base_sessions) && measured(new_sessions) {
        return Err(AnalysisError::Usage(format!(
            "'{base}' is {} and '{new}' {} ({} against {}): instructions and times are \
             never compared",
            a.adjective(),
            b.adjective(),
            a.as_str(),
            b.as_str()
        )));
    }
    Ok(if measured(base_sessions) { a } else { b })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_record::SessionEnvironment;

    fn row(environment: Option<SessionEnvironment>, runs: u64) -> SessionRow {
        SessionRow {
            id: 1,
            label: "l".into(),
            kind: "vm-ab".into(),
            boot_id: None,
            started_unix_ns: 0,
            ended_unix_ns: None,
            kbench_version: String::new(),
            command_line: String::new(),
            seed: None,
            environment,
            source: None,
            interleave_group: None,
            runs,
            kernel_config_hash: None,
            uuid: String::new(),
            machine: None,
        }
    }

    fn session(clock: Option<Clock>, runs: u64) -> SessionRow {
        let mut env = SessionEnvironment::default();
        env.boot.vm_clock = clock;
        row(Some(env), runs)
    }

    #[test]
    fn counted_and_timed_sessions_are_never_pooled_or_compared() {
        let counted = [session(Some(Clock::Instructions), 5)];
        let timed = [session(None, 5)];
        assert_eq!(label_clock("c", &counted).unwrap(), Clock::Instructions);
        assert_eq!(label_clock("t", &timed).unwrap(), Clock::Wall);
        let mixed = [counted[0].clone(), timed[0].clone()];
        let e = label_clock("m", &mixed).unwrap_err().to_string();
        assert!(
            e.contains("'m' holds timed sessions and counted ones"),
            "{e}"
        );
        let e = shared_clock(("t", &timed), ("c", &counted))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "'t' is timed and 'c' counted (wall against instructions): instructions and times are never compared"
        );
        assert_eq!(
            shared_clock(("c", &counted), ("c2", &counted)).unwrap(),
            Clock::Instructions
        );
    }

    #[test]
    fn a_failed_boot_that_said_no_clock_does_not_make_a_label_mixed() {
        let failed = row(None, 0);
        let label = [session(Some(Clock::Instructions), 5), failed];
        assert_eq!(label_clock("c", &label).unwrap(), Clock::Instructions);
        assert_eq!(default_delta_pct(Clock::Instructions), 0.5);
        assert_eq!(default_delta_pct(Clock::Wall), 1.0);
    }
}
