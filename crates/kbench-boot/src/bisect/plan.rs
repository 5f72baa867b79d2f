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
        let plan: BisectPlan = serde_json::from_slice(&text).map_err(|e| {
            BisectError::Usage(format!(
                "{}: not a bisection's saved plan ({e})",
                path.display()
            ))
        })?;
        plan.check().map_err(|why| {
            BisectError::Usage(format!(
                "{}: not a bisection's saved plan ({why})",
                path.display()
            ))
        })?;
        Ok(plan)
    }

    /// What the options that made the plan checked, checked again of a plan read
    /// back: a file edited by hand must not reach the bisection.
    fn check(&self) -> Result<(), String> {
        let commit = |c: &str| c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit());
        if !commit(&self.good) || !commit(&self.bad) {
            return Err("good and bad are not commits".into());
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(format!("α {} is not in (0, 1)", self.alpha));
        }
        if !(self.delta_pct >= 0.0 && self.delta_pct.is_finite()) {
            return Err(format!("δ {} is not a percentage", self.delta_pct));
        }
        if self.max_boots_per_step < 2 || self.refresh_every < 1 {
            return Err("a step's bound is under two boots, or ends are never refreshed".into());
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qemu::{Deadlines, QemuSetup};
    use std::time::Duration;

    fn plan() -> BisectPlan {
        BisectPlan {
            name: "pti".into(),
            good_rev: "v6.1".into(),
            bad_rev: "HEAD".into(),
            good: "a".repeat(40),
            bad: "b".repeat(40),
            build: "make -j2 && cp arch/x86/boot/bzImage $KBENCH_OUT/image".into(),
            metric: Some("pipe:usecs_per_op".into()),
            delta_pct: 0.5,
            alpha: 0.05,
            max_boots_per_step: 10,
            refresh_every: 2,
            machine: MachineConfig {
                setup: QemuSetup {
                    qemu: None,
                    cpu: Some("max".into()),
                    smp: 2,
                    mem_mib: 1024,
                    qemu_args: vec!["-device".into(), "virtio-rng-pci".into()],
                    kernel_words: vec!["kbench.runs=5".into(), "pti=on".into()],
                    disk: None,
                    clock: kbench_record::Clock::Instructions,
                },
                deadlines: Deadlines {
                    begin: Duration::from_secs(300),
                    end: Duration::from_secs(900),
                    exit: Duration::from_secs(60),
                },
                pins: None,
                accel: "tcg".into(),
                init: None,
                kind: "bisect".into(),
                command_line: "kbench bisect --db postgres://me:secret@lab/kbench".into(),
            },
            db: Some("postgres://me@lab/kbench".into()),
        }
    }

    #[test]
    fn a_plan_reads_back_as_it_was_saved_without_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("pti");
        plan().save(&state).unwrap();
        let text = std::fs::read_to_string(state.join(PLAN_FILE)).unwrap();
        // The host's command line is this process's, never a saved one.
        assert!(!text.contains("secret"), "{text}");
        let read = BisectPlan::load(&state).unwrap();
        let mut expected = plan();
        expected.machine.command_line = String::new();
        assert_eq!(read, expected);
        assert_eq!(read.label(&read.good), format!("pti@{}", "a".repeat(12)));
        assert_eq!(
            read.confirm_label(&read.bad),
            format!("pti:confirm@{}", "b".repeat(12))
        );
    }

    #[test]
    fn a_second_plan_under_one_name_and_a_bad_one_are_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("pti");
        plan().save(&state).unwrap();
        let again = plan().save(&state).unwrap_err();
        assert!(again.is_usage());
        assert!(
            again.to_string().contains("--resume continues it"),
            "{again}"
        );
        std::fs::write(state.join(PLAN_FILE), "{").unwrap();
        let bad = BisectPlan::load(&state).unwrap_err();
        assert!(bad.is_usage());
        assert!(
            bad.to_string().contains("not a bisection's saved plan"),
            "{bad}"
        );
        assert_eq!(saved_names(dir.path()), ["pti"]);
        let (name, found) = state_dir(dir.path(), None, dir.path()).unwrap();
        assert_eq!((name.as_str(), found), ("pti", state));
        let none = state_dir(dir.path(), Some("other"), dir.path()).unwrap_err();
        assert!(
            none.to_string().contains("no bisection named other"),
            "{none}"
        );
    }
}
