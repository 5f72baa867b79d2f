//! What the store holds at a glance: its labels and machines.
use super::handle::Store;
use super::scope::{SessionScope, MEASURED_RUNS_SQL};
use crate::cells;
use crate::db::{parse_json, Cell};
use crate::error::StoreError;
use crate::machine::MACHINE_SQL;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One label at a glance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelInfo {
    pub label: String,
    pub sessions: u64,
    pub runs: u64,
    pub boots: u64,
    pub first_unix_ns: u64,
    pub last_unix_ns: u64,
}

/// The kernel a label's last session ran, as `kbench list` shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelKernel {
    /// `uname -r`.
    pub release: Option<String>,
    /// The commit it was built from, when recorded.
    pub commit: Option<String>,
}

/// Which machines hold a label's sessions (`kbench list --machines`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineLabel {
    /// [`crate::machine_of`]; `None` for sessions that recorded no environment.
    pub machine: Option<String>,
    pub label: String,
    pub sessions: u64,
    pub runs: u64,
    pub first_unix_ns: u64,
    pub last_unix_ns: u64,
}

impl Store {
    /// Every label with its counts (runs: the measured ones), oldest first.
    pub fn labels(&self) -> Result<Vec<LabelInfo>, StoreError> {
        let rows = self.db().query(
            &format!(
                "SELECT s.label, count(*), CAST(coalesce(sum({MEASURED_RUNS_SQL}), 0) AS BIGINT),
                        count(DISTINCT s.boot_id), min(s.started_unix_ns),
                        max(coalesce(s.ended_unix_ns, s.started_unix_ns))
                 FROM sessions s GROUP BY s.label"
            ),
            &[],
        )?;
        // Sorted here: PostgreSQL's ORDER BY on text follows the server's collation.
        let mut labels = rows
            .into_iter()
            .map(|r| {
                Ok(LabelInfo {
                    label: r.str(0)?.to_string(),
                    sessions: r.u64(1)?,
                    runs: r.u64(2)?,
                    boots: r.u64(3)?,
                    first_unix_ns: r.u64(4)?,
                    last_unix_ns: r.u64(5)?,
                })
            })
            .collect::<Result<Vec<LabelInfo>, StoreError>>()?;
        labels.sort_by(|a, b| (a.first_unix_ns, &a.label).cmp(&(b.first_unix_ns, &b.label)));
        Ok(labels)
    }

    /// Per label, the kernel its last session recorded: one environment read a label,
    /// not one a session, and only for the callers that show it.
    pub fn label_kernels(&self) -> Result<BTreeMap<String, LabelKernel>, StoreError> {
        let rows = self.db().query(
            "SELECT s.label, s.environment FROM sessions s
             WHERE s.id IN (SELECT max(id) FROM sessions GROUP BY label)",
            &[],
        )?;
        rows.into_iter()
            .map(|r| {
                let env: Option<kbench_record::SessionEnvironment> = parse_json(r.opt_str(1)?);
                let release = env
                    .as_ref()
                    .and_then(|e| e.snapshot.as_ref()?.kernel_release.clone());
                let commit = env.and_then(|e| e.kernel.kernel_commit);
                Ok((r.str(0)?.to_string(), LabelKernel { release, commit }))
            })
            .collect()
    }

    /// Whether any session carries `label`.
    pub fn has_label(&self, label: &str) -> Result<bool, StoreError> {
        Ok(self
            .db()
            .as_mut()
            .query_opt(
                "SELECT 1 FROM sessions WHERE label = ?1 LIMIT 1",
                cells![label],
            )?
            .is_some())
    }

    /// Every machine the store holds sessions of, as [`MACHINE_SQL`] shows them, sorted.
    pub fn machines(&self) -> Result<Vec<String>, StoreError> {
        let rows = self.db().query(
            &format!("SELECT DISTINCT {MACHINE_SQL} FROM sessions s WHERE s.machine IS NOT NULL"),
            &[],
        )?;
        let mut machines = rows
            .iter()
            .map(|r| Ok(r.str(0)?.to_string()))
            .collect::<Result<Vec<String>, StoreError>>()?;
        machines.sort();
        Ok(machines)
    }

    /// The sessions of `machine` as [`MACHINE_SQL`] shows it: by the name, with any id
    /// or none while one id at most is seen under the name, else only those without
    /// one; `name [id]` by both. A machine the store does not hold has no sessions.
    pub fn machine_scope(&self, machine: &str) -> Result<SessionScope, StoreError> {
        let row = self.db().as_mut().query_one(
            "SELECT count(DISTINCT machine_id), count(*) FROM sessions WHERE machine = ?1",
            cells![machine],
        )?;
        let (ids, sessions) = (row.i64(0)?, row.i64(1)?);
        let scope = |condition: &str, params: Vec<Cell>| SessionScope {
            condition: condition.to_string(),
            params,
        };
        if sessions > 0 {
            let condition = match ids > 1 {
                true => " AND s.machine = ?2 AND s.machine_id IS NULL",
                false => " AND s.machine = ?2",
            };
            return Ok(scope(condition, vec![machine.into()]));
        }
        match crate::machine::split_machine_key(machine) {
            Some((name, id)) => Ok(scope(
                " AND s.machine = ?2 AND s.machine_id = ?3",
                vec![name.into(), id.into()],
            )),
            None => Ok(scope(" AND 1 = 0", Vec::new())),
        }
    }

    /// Which machines hold which labels: per machine and label, the sessions and
    /// measured runs, machine then first session order.
    pub fn machine_labels(&self) -> Result<Vec<MachineLabel>, StoreError> {
        let rows = self.db().query(
            &format!(
                "SELECT m.machine, m.label, count(*), CAST(coalesce(sum(m.runs), 0) AS BIGINT),
                        min(m.started_unix_ns), max(coalesce(m.ended_unix_ns, m.started_unix_ns))
                 FROM (SELECT s.label, s.started_unix_ns, s.ended_unix_ns,
                              {MACHINE_SQL} AS machine, {MEASURED_RUNS_SQL} AS runs
                       FROM sessions s) m
                 GROUP BY m.machine, m.label"
            ),
            &[],
        )?;
        let mut machines = rows
            .into_iter()
            .map(|r| {
                Ok(MachineLabel {
                    machine: r.opt_str(0)?.map(str::to_string),
                    label: r.str(1)?.to_string(),
                    sessions: r.u64(2)?,
                    runs: r.u64(3)?,
                    first_unix_ns: r.u64(4)?,
                    last_unix_ns: r.u64(5)?,
                })
            })
            .collect::<Result<Vec<MachineLabel>, StoreError>>()?;
        // Known machines by name, the unknown last; each machine's labels oldest first.
        machines.sort_by(|a, b| {
            let key = |m: &MachineLabel| {
                (
                    m.machine.is_none(),
                    m.machine.clone(),
                    m.first_unix_ns,
                    m.label.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        Ok(machines)
    }
}

/// Labels name sides in reports and shell commands: 1-128 letters, digits and
/// `- _ . + @ : / = ,` (`=` and `,` for the kernel command-line words a vm-ab label
/// names). Anything else is the user's to mend.
pub fn check_label(label: &str) -> Result<(), StoreError> {
    let ok = !label.is_empty()
        && label.len() <= 128
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.+@:/=,".contains(c));
    match ok {
        true => Ok(()),
        false => Err(StoreError::Unusable(format!(
            "bad label '{label}': use 1-128 letters, digits and - _ . + @ : / = ,"
        ))),
    }
}
