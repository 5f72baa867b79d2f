//! Workload specs on the command line: `pipe`, `pipe:-l 100000 --pingpong`,
//! `sched/messaging:-g 4`, or perf's own words `sched messaging -g 4`.
use kbench_workloads::perfopt::Parser;
use kbench_workloads::{Instruments, Workload};

/// A workload and its perf-style arguments, checked against its option table, and
/// what kbench adds to its measurement.
#[derive(Clone)]
pub struct WorkloadSpec {
    pub workload: &'static Workload,
    pub args: Vec<String>,
    pub instruments: Instruments,
}

impl std::fmt::Debug for WorkloadSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display())
    }
}

impl WorkloadSpec {
    /// Parses a spec; the error is one line saying what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (name, args): (&str, Vec<String>) = match text.split_once(':') {
            Some((name, args)) => (name.trim(), split_args(args)),
            None => {
                let mut words = text.split_whitespace();
                let first = words.next().unwrap_or("");
                if first == "sched" {
                    let name = words.next().unwrap_or("");
                    (name, words.map(str::to_string).collect())
                } else {
                    (first, words.map(str::to_string).collect())
                }
            }
        };
        let workload = find(name).ok_or_else(|| {
            format!(
                "unknown workload '{name}' in '{text}' (known: {})",
                known_names()
            )
        })?;
        let spec = WorkloadSpec {
            workload,
            args,
            instruments: Instruments::default(),
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The same spec with perf_event_open counters when `wanted` and the workload has
    /// them (`kbench run --counters` over a suite that holds wakeup and ipi too).
    pub fn with_counters(mut self, wanted: bool) -> Self {
        self.instruments.counters = wanted && self.workload.takes_counters;
        self
    }

    /// Whether `text` names a workload (rather than a shell command).
    pub fn looks_like_spec(text: &str) -> bool {
        let first = text.split([':', ' ']).next().unwrap_or("");
        let first = if first == "sched" {
            text.split_whitespace().nth(1).unwrap_or("")
        } else {
            first
        };
        find(first).is_some()
    }

    fn validate(&self) -> Result<(), String> {
        let parser = Parser {
            usage: self.workload.usage,
            specs: self.workload.options,
            stop_at_non_option: false,
        };
        let parsed = parser.parse(&self.args).map_err(|exit| {
            let first = exit
                .stderr
                .lines()
                .chain(exit.stdout.lines())
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("bad options")
                .trim_start_matches("Error: ")
                .to_string();
            format!("{}: {first}", self.display())
        })?;
        if !parsed.rest.is_empty() {
            return Err(format!(
                "{}: unexpected word '{}'",
                self.display(),
                parsed.rest[0]
            ));
        }
        (self.workload.check)(&parsed).map_err(|p| format!("{}: {}", self.display(), p.message))?;
        (self.workload.validate)(&parsed).map_err(|m| format!("{}: {m}", self.display()))
    }

    /// The canonical text form, `name:args`.
    pub fn display(&self) -> String {
        if self.args.is_empty() {
            self.workload.name.to_string()
        } else {
            format!("{}:{}", self.workload.name, self.args.join(" "))
        }
    }
}

fn split_args(args: &str) -> Vec<String> {
    args.split_whitespace().map(str::to_string).collect()
}

fn find(name: &str) -> Option<&'static Workload> {
    let name = name.strip_prefix("sched/").unwrap_or(name);
    kbench_workloads::REGISTRY
        .iter()
        .copied()
        .find(|w| w.name == name)
}

fn known_names() -> String {
    kbench_workloads::REGISTRY
        .iter()
        .map(|w| w.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_are_accepted() {
        assert_eq!(WorkloadSpec::parse("pipe").unwrap().display(), "pipe");
        assert_eq!(
            WorkloadSpec::parse("pipe:-l 1000 --pingpong").unwrap().args,
            vec!["-l", "1000", "--pingpong"]
        );
        assert_eq!(
            WorkloadSpec::parse("sched messaging -g 2")
                .unwrap()
                .display(),
            "messaging:-g 2"
        );
        assert_eq!(
            WorkloadSpec::parse("sched/seccomp-notify:-l 5")
                .unwrap()
                .display(),
            "seccomp-notify:-l 5"
        );
    }

    #[test]
    fn mistakes_are_one_line() {
        let e = WorkloadSpec::parse("pipe:-l abc").unwrap_err();
        assert!(e.contains("expects a numerical value"), "{e}");
        assert!(!e.contains('\n'));
        assert!(WorkloadSpec::parse("bogus")
            .unwrap_err()
            .contains("unknown workload"));
        assert!(WorkloadSpec::parse("pipe:-G nocomma")
            .unwrap_err()
            .contains("two cgroup names"));
        assert!(WorkloadSpec::parse("pipe:extra")
            .unwrap_err()
            .contains("unexpected word"));
    }

    #[test]
    fn shell_commands_are_not_specs() {
        assert!(WorkloadSpec::looks_like_spec("messaging -l 10"));
        assert!(WorkloadSpec::looks_like_spec("sched pipe"));
        assert!(!WorkloadSpec::looks_like_spec("sleep 0.1"));
        assert!(!WorkloadSpec::looks_like_spec("make -j2"));
    }
}
