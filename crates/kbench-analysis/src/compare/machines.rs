//! Which machines a comparison takes its sessions from, when a label holds several.
use crate::label::LabelData;
use crate::model::*;
use crate::AnalysisError;
use kbench_store::SessionRow;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// Which machines' runs a comparison uses. Runs of different machines are never
/// pooled unless asked ([`Machines::Across`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Machines {
    /// The one machine both labels ran on; several such machines are an error that
    /// names them. Sessions without an environment belong to no known machine and
    /// count with whichever there is.
    #[default]
    Same,
    /// This machine's runs only (`--machine`).
    Only(String),
    /// Every machine's runs, each machine one unit of replication (`--across-machines`).
    Across,
}

/// The distinct known machines of a side's sessions, sorted.
pub fn machines_of(sessions: &[SessionRow]) -> Vec<String> {
    let known: BTreeSet<&String> = sessions.iter().filter_map(|s| s.machine.as_ref()).collect();
    known.into_iter().cloned().collect()
}

/// The machine of `known` that `--machine asked` names: the machine shown as
/// `asked`; or, for `name [id]` (what a session of this host knows of itself), the
/// bare `name` a store shows while one id is seen under it; or the one machine
/// shown as `... [asked]`, by its id alone. `None` when none does.
pub fn resolve_machine<'a>(
    known: impl IntoIterator<Item = &'a String> + Clone,
    asked: &str,
) -> Option<String> {
    if known.clone().into_iter().any(|m| m == asked) {
        return Some(asked.to_string());
    }
    if let Some((name, _)) = kbench_store::split_machine_key(asked) {
        if known.clone().into_iter().any(|m| m == name) {
            return Some(name.to_string());
        }
    }
    let mut by_id = known
        .into_iter()
        .filter(|m| kbench_store::split_machine_key(m).is_some_and(|(_, id)| id == asked));
    match (by_id.next(), by_id.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    }
}

/// Which machines of the two sides `choice` asks for, to narrow both to with
/// [`narrowed`]; `None` when the labels hold no two machines' runs.
pub(super) fn select_machines(
    a: &LabelData,
    b: &LabelData,
    choice: &Machines,
) -> Result<Option<MachinesCompared>, AnalysisError> {
    let (in_a, in_b) = (machines_of(&a.sessions), machines_of(&b.sessions));
    let all: BTreeSet<&String> = in_a.iter().chain(&in_b).collect();
    let resolved;
    let choice = match choice {
        Machines::Only(asked) => {
            resolved = Machines::Only(
                resolve_machine(all.iter().copied(), asked).unwrap_or_else(|| asked.clone()),
            );
            &resolved
        }
        other => other,
    };
    let one = |machine: &str| {
        let left_out = |side: &[String]| side.iter().filter(|m| *m != machine).cloned().collect();
        MachinesCompared::One {
            machine: machine.to_string(),
            base_left_out: left_out(&in_a),
            new_left_out: left_out(&in_b),
        }
    };
    if let Machines::Only(machine) = choice {
        for (label_side, machines) in [("BASE", &in_a), ("NEW", &in_b)] {
            if !machines.contains(machine) {
                return Err(AnalysisError::Usage(format!(
                    "{label_side} has no runs on machine '{machine}' (it ran on: {})",
                    listed(machines)
                )));
            }
        }
    }
    // The labels hold no two machines' runs: nothing to narrow, or to say.
    if all.len() <= 1 {
        return Ok(None);
    }
    match choice {
        Machines::Only(machine) => Ok(Some(one(machine))),
        Machines::Across => Ok(Some(MachinesCompared::Across {
            base: in_a.clone(),
            new: in_b.clone(),
        })),
        Machines::Same => {
            let common: Vec<&String> = in_a.iter().filter(|m| in_b.contains(m)).collect();
            match common[..] {
                [machine] => Ok(Some(one(machine))),
                _ => Err(AnalysisError::Usage(format!(
                    "the labels ran on more than one machine (BASE: {}; NEW: {}), whose runs \
                     are never pooled: name one with --machine NAME, or compare with \
                     --across-machines (machines as the units)",
                    listed(&in_a),
                    listed(&in_b)
                ))),
            }
        }
    }
}

/// A side's runs on the machines a comparison uses: the label itself when it holds
/// one machine's runs.
pub(super) fn narrowed<'a>(
    data: &'a LabelData,
    machines: Option<&MachinesCompared>,
) -> Cow<'a, LabelData> {
    match machines {
        None => Cow::Borrowed(data),
        Some(MachinesCompared::One { machine, .. }) => Cow::Owned(data.of_machine(machine)),
        Some(MachinesCompared::Across { .. }) => Cow::Owned(data.machines_as_boots()),
    }
}

pub(super) fn listed(machines: &[String]) -> String {
    if machines.is_empty() {
        "no known machine".into()
    } else {
        machines.join(", ")
    }
}
