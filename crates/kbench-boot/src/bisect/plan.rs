//! A bisection's plan, saved in its state directory when it starts and read back by
//! `--resume` and `--status`: typed, so nothing is parsed twice, and with the
//! database's password masked, as every stored command line has it.
use super::BisectError;
use crate::machine::MachineConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file, in a bisection's state directory, that keeps its plan.
pub const PLAN_FILE: &str = "plan.json";

/// The file an older kbench kept a bisection's command line in.
const OLD_COMMAND_FILE: &str = "command.json";

/// Everything a bisection was started with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectPlan {
    pub name: String,
    /// Good and bad as the user named them, and as commits.
    pub good_rev: String,
    pub bad_rev: String,
    pub good: String,
    pub bad: String,
    /// How a commit is built (`sh -c`).
    pub build: String,
    /// `METRIC` or `WORKLOAD:METRIC`; the primary metric good and bad differ on when
    /// `None`.
    pub metric: Option<String>,
    pub delta_pct: f64,
    /// The false-claim rate of the whole bisection.
    pub alpha: f64,
    pub max_boots_per_step: u32,
    pub refresh_every: u32,
    /// The machine every commit boots on, its suite in its kernel words.
    pub machine: MachineConfig,
    /// The database, as given, its password masked; `None` for the default.
    pub db: Option<String>,
}

impl BisectPlan {
    /// `NAME@COMMIT` (12 hex digits): the label of a commit's boots.
    pub fn label(&self, commit: &str) -> String {
        format!("{}@{}", self.name, &commit[..12.min(commit.len())])
    }

    /// The label of a commit's boots in the confirmation against its parent.
    pub fn confirm_label(&self, commit: &str) -> String {
        format!("{}:confirm@{}", self.name, &commit[..12.min(commit.len())])
    }

    /// Saves the plan in `dir`, which must hold none yet.
    pub fn save(&self, dir: &Path) -> Result<(), BisectError> {
        if dir.join(PLAN_FILE).exists() || dir.join(OLD_COMMAND_FILE).exists() {
            return Err(BisectError::Usage(format!(
                "a bisection named {} is in {}: --resume continues it, --status shows it, --name starts another",
                self.name,
                dir.display()
            )));
        }
        std::fs::create_dir_all(dir)?;
        let path = dir.join(PLAN_FILE);
        let partial = dir.join(format!("{PLAN_FILE}.partial"));
        std::fs::write(&partial, serde_json::to_vec_pretty(self)?)?;
        std::fs::rename(partial, path)?;
        Ok(())
    }

    /// The plan saved in `dir`.
    pub fn load(dir: &Path) -> Result<BisectPlan, BisectError> {
        let path = dir.join(PLAN_FILE);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(_) if dir.join(OLD_COMMAND_FILE).is_file() => {
                return Err(BisectError::Usage(format!(
                    "{}: a bisection an older kbench started; start it again with another --name",
                    dir.display()
                )))
            }
            Err(_) => {
                return Err(BisectError::Usage(format!(
                    "no bisection in {}",
                    dir.display()
                )))
            }
        };
        serde_json::from_slice(&text).map_err(|e| {
            BisectError::Usage(format!(
                "{}: not a bisection's saved plan ({e})",
                path.display()
            ))
        })
    }
}

/// The names of the bisections kept in `states`.
pub fn saved_names(states: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(states)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| {
                    e.path().join(PLAN_FILE).is_file() || e.path().join(OLD_COMMAND_FILE).is_file()
                })
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The state directory of the bisection `name`, or of the only one in `states`.
pub fn state_dir(
    states: &Path,
    name: Option<&str>,
    tree: &Path,
) -> Result<(String, PathBuf), BisectError> {
    let names = saved_names(states);
    let name = match (name, names.as_slice()) {
        (Some(name), _) => name.to_string(),
        (None, [only]) => only.clone(),
        (None, []) => {
            return Err(BisectError::Usage(format!(
                "{}: no bisection to resume or show",
                tree.display()
            )))
        }
        (None, many) => {
            return Err(BisectError::Usage(format!(
                "{} bisections in {}: name one with --name ({})",
                many.len(),
                tree.display(),
                many.join(", ")
            )))
        }
    };
    let dir = states.join(&name);
    if !dir.join(PLAN_FILE).is_file() && !dir.join(OLD_COMMAND_FILE).is_file() {
        return Err(BisectError::Usage(format!(
            "no bisection named {name} in {}",
            tree.display()
        )));
    }
    Ok((name, dir))
}
