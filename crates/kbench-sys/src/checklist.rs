//! The noise checklist of `kbench env`, in the manner of `pyperf system show`: one line per
//! item, pass or warn, and for each warning the exact command that fixes it.
use crate::snapshot::EnvSnapshot;
use crate::{format_cpulist, parse_cpulist, Sysroot};
use serde::{Deserialize, Serialize};

/// The verdict on one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// Nothing to do.
    Pass,
    /// A known source of noise; see the fix.
    Warn,
    /// Recorded, not judged (idle states, THP: kbench measures them as configured).
    Info,
}

/// One checklist item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// A short stable id (`governor`, `boost`, `smt`...).
    pub item: String,
    /// Pass, warn or info.
    pub status: CheckStatus,
    /// What was found, one line.
    pub summary: String,
    /// The exact command that would fix a warning, when there is one.
    pub fix: Option<String>,
    /// True when `kbench env --tune` applies this fix.
    pub tunable: bool,
}

fn check(item: &str, status: CheckStatus, summary: String) -> Check {
    Check {
        item: item.to_string(),
        status,
        summary,
        fix: None,
        tunable: false,
    }
}

impl Check {
    fn with_fix(mut self, fix: String, tunable: bool) -> Check {
        self.fix = Some(fix);
        self.tunable = tunable;
        self
    }
}

/// Load averages at or above this are reported as a busy machine.
const BUSY_LOAD: f64 = 1.0;

/// Runs every check on a snapshot. `root` only shapes the paths in the fix commands, so
/// that they are exact for the tree that was read.
pub fn checklist(env: &EnvSnapshot, root: &Sysroot) -> Vec<Check> {
    let path = |abs: &str| root.path(abs).display().to_string();
    vec![
        check_governor(env, &path),
        check_boost(env, &path),
        check_smt(env, &path),
        check_isolation(env),
        check_nohz_full_intel_pstate(env),
        check_idle(env),
        check_load(env),
        check_virtualization(env),
        check_clocksource(env, &path),
        check_aslr(env, &path),
        check_thp(env),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn check_governor(env: &EnvSnapshot, path: &dyn Fn(&str) -> String) -> Option<Check> {
    if env.cpufreq.is_empty() {
        return Some(check(
            "governor",
            CheckStatus::Info,
            "no cpufreq: frequency is set by firmware or the host".to_string(),
        ));
    }
    let slow: Vec<u32> = env
        .cpufreq
        .iter()
        .filter(|s| s.governor.as_deref() != Some("performance"))
        .map(|s| s.cpu)
        .collect();
    if slow.is_empty() {
        return Some(check(
            "governor",
            CheckStatus::Pass,
            "performance on every CPU".to_string(),
        ));
    }
    let governors: Vec<String> = env
        .cpufreq
        .iter()
        .filter(|s| slow.contains(&s.cpu))
        .filter_map(|s| s.governor.clone())
        .fold(Vec::new(), |mut acc, g| {
            if !acc.contains(&g) {
                acc.push(g);
            }
            acc
        });
    let summary = format!(
        "{} on CPUs {}: frequency follows load (want performance)",
        governors.join("/"),
        format_cpulist(&slow)
    );
    let target = path("/sys/devices/system/cpu/cpufreq/policy*/scaling_governor");
    Some(
        check("governor", CheckStatus::Warn, summary)
            .with_fix(format!("echo performance | sudo tee {target}"), true),
    )
}

fn check_boost(env: &EnvSnapshot, path: &dyn Fn(&str) -> String) -> Option<Check> {
    match env.boost_enabled {
        None => Some(check(
            "boost",
            CheckStatus::Info,
            "no boost/turbo control".to_string(),
        )),
        Some(false) => Some(check(
            "boost",
            CheckStatus::Pass,
            "boost/turbo off".to_string(),
        )),
        Some(true) => {
            let fix = if env.boost.intel_no_turbo == Some(false) {
                format!(
                    "echo 1 | sudo tee {}",
                    path("/sys/devices/system/cpu/intel_pstate/no_turbo")
                )
            } else if env.boost.cpufreq_boost == Some(true) {
                format!(
                    "echo 0 | sudo tee {}",
                    path("/sys/devices/system/cpu/cpufreq/boost")
                )
            } else {
                format!(
                    "echo 0 | sudo tee {}",
                    path("/sys/devices/system/cpu/cpufreq/policy*/boost")
                )
            };
            Some(
                check(
                    "boost",
                    CheckStatus::Warn,
                    "boost/turbo on: clock speed depends on temperature and busy cores".to_string(),
                )
                .with_fix(fix, true),
            )
        }
    }
}

fn check_smt(env: &EnvSnapshot, path: &dyn Fn(&str) -> String) -> Option<Check> {
    if !env.smt.siblings_online {
        let control = env.smt.control.as_deref().unwrap_or("no SMT");
        return Some(check(
            "smt",
            CheckStatus::Pass,
            format!("no SMT siblings online ({control})"),
        ));
    }
    Some(
        check(
            "smt",
            CheckStatus::Warn,
            "SMT siblings online: a busy sibling slows its twin; pin one thread per core or turn SMT off"
                .to_string(),
        )
        .with_fix(format!("echo off | sudo tee {}", path("/sys/devices/system/cpu/smt/control")), false),
    )
}

fn check_isolation(env: &EnvSnapshot) -> Option<Check> {
    let isolated = env.isolation.isolated_cpus();
    if !isolated.is_empty() {
        let nohz = env.isolation.nohz_full.clone().unwrap_or_default();
        return Some(check(
            "isolation",
            CheckStatus::Pass,
            format!(
                "isolated CPUs {} (nohz_full {})",
                format_cpulist(&isolated),
                if nohz.is_empty() {
                    "-".to_string()
                } else {
                    format_cpulist(&nohz)
                }
            ),
        ));
    }
    let online = env
        .online_cpus
        .as_deref()
        .and_then(|s| parse_cpulist(s).ok())
        .unwrap_or_default();
    if online.len() < 2 {
        return Some(check(
            "isolation",
            CheckStatus::Info,
            "one CPU: nothing to isolate".to_string(),
        ));
    }
    // Suggest the upper half of the CPUs, the way pyperf's advice reads: housekeeping keeps
    // CPU 0 and its neighbours, benchmarks get the rest.
    let suggested = format_cpulist(&online[online.len() / 2..]);
    Some(
        check(
            "isolation",
            CheckStatus::Warn,
            "no isolated CPUs: benchmark threads share CPUs with daemons, IRQs and timers".to_string(),
        )
        .with_fix(
            format!(
                "add 'isolcpus=nohz,domain,managed_irq,{suggested} nohz_full={suggested} rcu_nocbs={suggested}' to the kernel command line and reboot"
            ),
            false,
        ),
    )
}

fn check_nohz_full_intel_pstate(env: &EnvSnapshot) -> Option<Check> {
    let nohz = env.isolation.nohz_full.clone().unwrap_or_default();
    let intel_pstate = env
        .cpufreq
        .iter()
        .any(|s| s.driver.as_deref() == Some("intel_pstate"));
    (!nohz.is_empty() && intel_pstate).then(|| {
        check(
            "nohz_full",
            CheckStatus::Warn,
            format!(
                "nohz_full CPUs {} with intel_pstate: the driver may not raise their frequency",
                format_cpulist(&nohz)
            ),
        )
        .with_fix(
            "add 'intel_pstate=disable' to the kernel command line and reboot".to_string(),
            false,
        )
    })
}

fn check_idle(env: &EnvSnapshot) -> Option<Check> {
    let idle = &env.cpuidle;
    let driver = idle.driver.as_deref().unwrap_or("none");
    let deepest = idle.states.iter().max_by_key(|s| s.latency_us.unwrap_or(0));
    let summary = match deepest {
        Some(state) => format!(
            "driver {driver}, {} states, deepest {} exit {} us (measured as configured)",
            idle.states.len(),
            state.name,
            state.latency_us.map_or("?".to_string(), |l| l.to_string())
        ),
        None => format!("driver {driver}, no idle states"),
    };
    Some(check("idle", CheckStatus::Info, summary))
}

fn check_load(env: &EnvSnapshot) -> Option<Check> {
    let load = env.load_average?;
    let summary = format!("load {:.2} {:.2} {:.2}", load[0], load[1], load[2]);
    if load[0] < BUSY_LOAD {
        return Some(check("load", CheckStatus::Pass, summary));
    }
    Some(
        check(
            "load",
            CheckStatus::Warn,
            format!("{summary}: something else is running"),
        )
        .with_fix(
            "ps -eo pid,pcpu,comm --sort=-pcpu | head".to_string(),
            false,
        ),
    )
}

fn check_virtualization(env: &EnvSnapshot) -> Option<Check> {
    match &env.virtualization.hypervisor {
        None => Some(check("virtualization", CheckStatus::Pass, "bare metal (no hypervisor found)".to_string())),
        Some(name) => Some(check(
            "virtualization",
            CheckStatus::Warn,
            format!(
                "virtual machine ({name}; {}): IPIs and timers cost VM exits, results do not transfer to bare metal",
                env.virtualization.evidence.join(", ")
            ),
        )),
    }
}

fn check_clocksource(env: &EnvSnapshot, path: &dyn Fn(&str) -> String) -> Option<Check> {
    let current = env.clocksource.as_deref()?;
    // hpet and acpi_pm are read through I/O, microseconds per read and no vDSO: every
    // clock_gettime() becomes a system call.
    if !matches!(current, "hpet" | "acpi_pm" | "jiffies") {
        return Some(check("clocksource", CheckStatus::Pass, current.to_string()));
    }
    let warn = check(
        "clocksource",
        CheckStatus::Warn,
        format!("{current}: slow to read and not usable from the vDSO"),
    );
    if env.clocksources_available.iter().any(|c| c == "tsc") {
        let file = path("/sys/devices/system/clocksource/clocksource0/current_clocksource");
        Some(warn.with_fix(format!("echo tsc | sudo tee {file}"), true))
    } else {
        Some(warn)
    }
}

fn check_aslr(env: &EnvSnapshot, path: &dyn Fn(&str) -> String) -> Option<Check> {
    let aslr = env.aslr?;
    if aslr == 2 {
        return Some(check(
            "aslr",
            CheckStatus::Pass,
            "full randomization (2)".to_string(),
        ));
    }
    // Like pyperf: with ASLR off every run gets the same layout, so one lucky or unlucky
    // cache alignment is repeated instead of averaged out.
    Some(
        check(
            "aslr",
            CheckStatus::Warn,
            format!("randomize_va_space={aslr}: one memory layout repeated in every run"),
        )
        .with_fix(
            format!(
                "echo 2 | sudo tee {}",
                path("/proc/sys/kernel/randomize_va_space")
            ),
            true,
        ),
    )
}

fn check_thp(env: &EnvSnapshot) -> Option<Check> {
    let enabled = env.thp_enabled.as_deref()?;
    let defrag = env.thp_defrag.as_deref().unwrap_or("-");
    Some(check(
        "thp",
        CheckStatus::Info,
        format!("enabled={enabled} defrag={defrag}"),
    ))
}
