//! One label as stored, read once: its runs, sessions and summaries. The comparison,
//! the plausibility of a saving and the report's plot data are functions of it, so a
//! label compared against several others, and then drawn, is read from the store once.
use crate::AnalysisError;
use kbench_store::{RunRow, SessionRow, SessionScope, Store, SummaryRow};
use std::collections::{BTreeMap, BTreeSet};

/// A label's runs (warm-ups included, flagged), sessions and summary-only results.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelData {
    pub label: String,
    pub runs: Vec<RunRow>,
    pub sessions: Vec<SessionRow>,
    pub summaries: Vec<SummaryRow>,
}

impl LabelData {
    /// Reads `label` from `store` (four queries, whatever the number of runs).
    pub fn load(store: &Store, label: &str) -> Result<LabelData, AnalysisError> {
        LabelData::load_in(store, label, &SessionScope::all())
    }

    /// Reads the sessions of `label` in `scope` (one machine's) from `store`.
    pub fn load_in(
        store: &Store,
        label: &str,
        scope: &SessionScope,
    ) -> Result<LabelData, AnalysisError> {
        Ok(LabelData {
            label: label.to_string(),
            runs: store.runs_for_analysis_in(label, scope)?,
            sessions: store.sessions_in(label, scope)?,
            summaries: store.summaries_in(label, scope)?,
        })
    }

    /// Adds a session as its rows would read back (`kbench_store::rows_of`), under
    /// `session_id`: a decision after each boot grows its labels with the boots it was
    /// handed instead of reading them again.
    pub fn push_session(&mut self, whole: &kbench_store::SessionWithRuns, session_id: i64) {
        let (session, runs, summaries) = kbench_store::rows_of(whole, session_id);
        self.sessions.push(session);
        self.runs.extend(runs);
        self.summaries.extend(summaries);
    }

    /// Several labels of one experiment as one (an A/A's two sides, to calibrate from),
    /// under the first one's name.
    pub fn joined(labels: Vec<LabelData>) -> LabelData {
        let mut joined = LabelData::default();
        for (i, data) in labels.into_iter().enumerate() {
            if i == 0 {
                joined.label = data.label;
            }
            joined.runs.extend(data.runs);
            joined.sessions.extend(data.sessions);
            joined.summaries.extend(data.summaries);
        }
        joined.sessions.sort_by_key(|s| s.id);
        joined
    }

    /// Reads two labels at once: `second` on a connection of its own, in a thread of
    /// its own, while `first` is read on `store`'s. Where the database cannot be
    /// opened twice, one after the other.
    pub fn load_two(
        store: &Store,
        first: &str,
        second: &str,
    ) -> Result<(LabelData, LabelData), AnalysisError> {
        let reopen = store.reopener();
        let (second_there, first) = crate::parallel::join(
            move || {
                let other = reopen().ok()?;
                Some(LabelData::load(&other, second))
            },
            || LabelData::load(store, first),
        );
        let second = match second_there {
            Some(loaded) => loaded,
            None => LabelData::load(store, second),
        };
        Ok((first?, second?))
    }

    /// The sessions of `machine` with their runs and summaries.
    pub fn of_machine(&self, machine: &str) -> LabelData {
        self.of_sessions(|s| s.machine.as_deref() == Some(machine))
    }

    /// The sessions `keep` accepts, with their runs and summaries.
    pub fn of_sessions(&self, keep: impl Fn(&SessionRow) -> bool) -> LabelData {
        let sessions: Vec<SessionRow> = self.sessions.iter().filter(|s| keep(s)).cloned().collect();
        let ids: BTreeSet<i64> = sessions.iter().map(|s| s.id).collect();
        LabelData {
            label: self.label.clone(),
            runs: self
                .runs
                .iter()
                .filter(|r| ids.contains(&r.session_id))
                .cloned()
                .collect(),
            sessions,
            summaries: self
                .summaries
                .iter()
                .filter(|m| ids.contains(&m.session_id))
                .cloned()
                .collect(),
        }
    }

    /// The label with each machine as the top level of replication: its boots and
    /// sessions become one unit, nested in it.
    pub fn machines_as_boots(&self) -> LabelData {
        let machine_of: BTreeMap<i64, String> = self
            .sessions
            .iter()
            .map(|s| (s.id, machine_unit(s.machine.as_deref(), s.id)))
            .collect();
        let mut data = self.clone();
        for s in &mut data.sessions {
            s.boot_id = machine_of.get(&s.id).cloned();
        }
        for r in &mut data.runs {
            r.boot_id = machine_of.get(&r.session_id).cloned();
        }
        data
    }
}

fn machine_unit(machine: Option<&str>, session_id: i64) -> String {
    machine.map_or_else(
        || format!("machine:unknown:{session_id}"),
        |m| format!("machine:{m}"),
    )
}
