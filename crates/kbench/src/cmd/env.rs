//! `kbench env`: the machine on one screen and its noise checklist, in the manner of
//! `pyperf system show`; `--tune` applies the safe fixes and `--reset` undoes them.
use kbench_sys::checklist::{checklist, Check, CheckStatus};
use kbench_sys::snapshot::EnvSnapshot;
use kbench_sys::{format_cpulist, tune, Sysroot, Topology};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct EnvArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Read /sys and /proc under DIR instead of / (default: $KBENCH_SYSROOT or /).
    #[arg(long, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,
    /// Apply the fixes that are safe at run time (governor, boost/turbo, ASLR, clocksource)
    /// and record the original values (needs root on the real machine).
    #[arg(long, conflicts_with = "reset")]
    pub tune: bool,
    /// Restore everything `--tune` changed.
    #[arg(long)]
    pub reset: bool,
    /// The tune state file (default: $XDG_STATE_HOME/kbench/tune.json or
    /// ~/.local/state/kbench/tune.json).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
}

pub fn run(args: EnvArgs) -> anyhow::Result<i32> {
    let root = args
        .sysroot
        .clone()
        .map(Sysroot::new)
        .unwrap_or_else(Sysroot::from_env);
    if let Err(e) = root.validate() {
        return crate::error::usage(e.to_string());
    }
    if args.tune || args.reset {
        return run_tune_or_reset(&args, &root);
    }
    let topology = match Topology::read(&root) {
        Ok(t) => t,
        Err(e) => return crate::error::usage(e.to_string()),
    };
    let snapshot = EnvSnapshot::capture(&root);
    let checks = checklist(&snapshot, &root);
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&env_json(&root, &topology, &snapshot, &checks))?
        );
    } else {
        out!("{}", render_text(&root, &topology, &snapshot, &checks));
    }
    Ok(0)
}

/// Turns library errors into the CLI convention: user mistakes exit 2, I/O failures exit 1.
fn run_tune_or_reset(args: &EnvArgs, root: &Sysroot) -> anyhow::Result<i32> {
    if root.is_host() && !kbench_sys::is_root() {
        let flag = if args.tune { "--tune" } else { "--reset" };
        return crate::error::usage(format!(
            "kbench env {flag} writes to /sys and /proc: run it as root"
        ));
    }
    let state = args.state.clone().unwrap_or_else(tune::default_state_path);
    let result = if args.tune {
        tune::apply(root, &state)
    } else {
        tune::reset(root, &state)
    };
    let report = result?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        out!("{}", render_tune_report(args.tune, &report));
    }
    Ok(if report.failed.is_empty() { 0 } else { 1 })
}

fn render_tune_report(tuned: bool, report: &tune::TuneReport) -> String {
    let mut out = String::new();
    let verb = if tuned { "changed" } else { "restored" };
    if report.done.is_empty() && report.failed.is_empty() {
        out.push_str("kbench env: nothing to change\n");
    }
    for change in &report.done {
        let (from, to) = if tuned {
            (&change.original, &change.written)
        } else {
            (&change.written, &change.original)
        };
        out.push_str(&format!(
            "{verb} {}: {} -> {} ({})\n",
            change.path,
            from.trim(),
            to.trim(),
            change.reason
        ));
    }
    for (path, error) in &report.failed {
        out.push_str(&format!("FAILED {path}: {error}\n"));
    }
    if tuned && !report.done.is_empty() {
        out.push_str(&format!(
            "state saved in {}; undo with: kbench env --reset\n",
            report.state_file.display()
        ));
    }
    out
}

/// The JSON document: `cpus` and `classes` first (what scripts need), then the checks and
/// the full snapshot.
fn env_json(
    root: &Sysroot,
    topology: &Topology,
    snapshot: &EnvSnapshot,
    checks: &[Check],
) -> serde_json::Value {
    let classes: Vec<serde_json::Value> = topology
        .classes
        .iter()
        .map(|class| {
            let mut value = serde_json::to_value(class).unwrap_or_default();
            if let Some(map) = value.as_object_mut() {
                map.insert("cpulist".to_string(), class.cpulist().into());
            }
            value
        })
        .collect();
    serde_json::json!({
        "sysroot": root.root(),
        "arch": topology.arch,
        "cpus": topology.cpus,
        "classes": classes,
        "checks": checks,
        "snapshot": snapshot,
    })
}

/// Width of the label column.
const LABEL: usize = 13;
/// Width of the label column of the checklist (`WARN virtualization `).
const CHECK_LABEL: usize = 21;
/// Text output stays within this many columns (long values wrap).
const WIDTH: usize = 80;

/// One `  label        value` line, wrapping long values under the value column.
fn row(label: &str, value: &str) -> String {
    row_with(LABEL, label, value)
}

/// A row whose label column is `label_width` wide.
fn row_with(label_width: usize, label: &str, value: &str) -> String {
    let indent = 2 + label_width;
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in value.split_whitespace() {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > WIDTH {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    let mut out = format!("  {label:<label_width$}{}\n", lines[0]);
    for rest in &lines[1..] {
        out.push_str(&format!("{:indent$}{rest}\n", ""));
    }
    out
}

fn or_dash(value: Option<&str>) -> &str {
    value.filter(|v| !v.is_empty()).unwrap_or("-")
}

fn cpulist_or_dash(cpus: &[u32]) -> String {
    if cpus.is_empty() {
        "-".to_string()
    } else {
        format_cpulist(cpus)
    }
}

fn render_text(root: &Sysroot, topology: &Topology, env: &EnvSnapshot, checks: &[Check]) -> String {
    let mut out = String::new();
    out.push_str(&format!("Machine (sysroot {})\n", root.root().display()));
    out.push_str(&render_machine(topology, env));
    out.push_str("\nCPU classes (least to most capable)\n");
    out.push_str(&render_classes(topology));
    out.push_str("\nFrequency, idle, isolation\n");
    out.push_str(&render_tuning_state(env));
    out.push_str("\nNoise checklist\n");
    out.push_str(&render_checks(checks));
    out
}

fn render_machine(topology: &Topology, env: &EnvSnapshot) -> String {
    let online = topology.online_cpus();
    let kernel = format!(
        "{} ({})",
        or_dash(env.kernel_release.as_deref()),
        or_dash(env.kernel_version.as_deref())
    );
    let cpus = format!(
        "{} online ({}) of {}; {}",
        online.len(),
        cpulist_or_dash(&online),
        topology.cpus.len(),
        env.cpu_models.join(", ")
    );
    let virt = match &env.virtualization.hypervisor {
        Some(name) => format!("{name} ({})", env.virtualization.evidence.join("; ")),
        None => "none found".to_string(),
    };
    let clocksource = format!(
        "{} (available: {})",
        or_dash(env.clocksource.as_deref()),
        env.clocksources_available.join(" ")
    );
    let load = match (env.load_average, env.runnable_tasks) {
        (Some(l), r) => format!(
            "{:.2} {:.2} {:.2}, {} runnable",
            l[0],
            l[1],
            l[2],
            r.map_or("?".to_string(), |r| r.to_string())
        ),
        (None, _) => "-".to_string(),
    };
    let machine = match &env.machine_id {
        Some(id) => format!("{} [{id}]", or_dash(env.hostname.as_deref())),
        None => format!("{} (no machine id)", or_dash(env.hostname.as_deref())),
    };
    let mut out = String::new();
    out.push_str(&row("machine", &machine));
    out.push_str(&row("kernel", &kernel));
    out.push_str(&row("cmdline", or_dash(env.cmdline.as_deref())));
    out.push_str(&row("CPUs", &cpus));
    out.push_str(&row("virtual", &virt));
    out.push_str(&row("clocksource", &clocksource));
    out.push_str(&row("load", &load));
    out.push_str(&row("boot id", or_dash(env.boot_id.as_deref())));
    out
}

fn render_classes(topology: &Topology) -> String {
    let mut out = format!(
        "  {:<28}{:<14}{:<10}{:<9}{}\n",
        "class", "cpus", "capacity", "max MHz", "source"
    );
    for class in &topology.classes {
        let capacity = class.capacity.map_or("-".to_string(), |c| c.to_string());
        let mhz = class
            .max_khz
            .map_or("-".to_string(), |k| (k / 1000).to_string());
        let source = serde_json::to_value(class.source)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        // A long model name gets its own line so the columns stay within 80.
        let name = if class.name.len() >= 28 {
            out.push_str(&format!("  {}\n", class.name));
            ""
        } else {
            class.name.as_str()
        };
        out.push_str(&format!(
            "  {:<28}{:<14}{:<10}{:<9}{}\n",
            name,
            class.cpulist(),
            capacity,
            mhz,
            source
        ));
    }
    let offline: Vec<u32> = topology
        .cpus
        .iter()
        .filter(|c| !c.online)
        .map(|c| c.cpu)
        .collect();
    if !offline.is_empty() {
        out.push_str(&format!("  offline: {}\n", format_cpulist(&offline)));
    }
    out
}

fn render_tuning_state(env: &EnvSnapshot) -> String {
    let flat = env.flatten();
    let get = |key: &str| flat.get(key).map(String::as_str);
    let mut out = String::new();
    out.push_str(&row(
        "cpufreq",
        &format!("driver {}", or_dash(get("cpufreq.driver"))),
    ));
    out.push_str(&row("governor", or_dash(get("cpufreq.governor"))));
    let boost = match env.boost_enabled {
        Some(true) => "on",
        Some(false) => "off",
        None => "no control",
    };
    out.push_str(&row("boost/turbo", boost));
    let smt = format!(
        "{}{}",
        or_dash(env.smt.control.as_deref()),
        if env.smt.siblings_online {
            ", siblings online"
        } else {
            ", no siblings online"
        }
    );
    out.push_str(&row("SMT", &smt));
    let iso = &env.isolation;
    let isolation = format!(
        "isolcpus {}, nohz_full {}, isolated {}, rcu_nocbs {}",
        cpulist_or_dash(&iso.isolcpus),
        cpulist_or_dash(iso.nohz_full.as_deref().unwrap_or_default()),
        cpulist_or_dash(iso.isolated.as_deref().unwrap_or_default()),
        or_dash(iso.rcu_nocbs_param.as_deref())
    );
    out.push_str(&row("isolation", &isolation));
    out.push_str(&row("idle", &render_idle(env)));
    let thp = format!(
        "{} (defrag {})",
        or_dash(env.thp_enabled.as_deref()),
        or_dash(env.thp_defrag.as_deref())
    );
    out.push_str(&row("THP", &thp));
    out
}

fn render_idle(env: &EnvSnapshot) -> String {
    let idle = &env.cpuidle;
    let states: Vec<String> = idle
        .states
        .iter()
        .map(|s| {
            let latency = s.latency_us.map_or("?".to_string(), |l| l.to_string());
            let disabled = if s.disabled_cpus.is_empty() {
                String::new()
            } else {
                format!(" [off on {}]", format_cpulist(&s.disabled_cpus))
            };
            format!("{} {latency}us{disabled}", s.name)
        })
        .collect();
    format!(
        "driver {}, governor {}; states: {}",
        or_dash(idle.driver.as_deref()),
        or_dash(idle.governor.as_deref()),
        if states.is_empty() {
            "-".to_string()
        } else {
            states.join(", ")
        }
    )
}

fn render_checks(checks: &[Check]) -> String {
    let mut out = String::new();
    for check in checks {
        let mark = match check.status {
            CheckStatus::Pass => "ok  ",
            CheckStatus::Warn => "WARN",
            CheckStatus::Info => "info",
        };
        out.push_str(&row_with(
            CHECK_LABEL,
            &format!("{mark} {}", check.item),
            &check.summary,
        ));
        if let Some(fix) = &check.fix {
            let tag = if check.tunable {
                "fix (--tune):"
            } else {
                "fix:"
            };
            // Never wrapped: the command must survive copy and paste.
            out.push_str(&format!("{:w$}{tag} {fix}\n", "", w = 2 + CHECK_LABEL));
        }
    }
    let warnings = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Warn)
        .count();
    let tunable = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Warn && c.tunable)
        .count();
    out.push_str(&format!(
        "\n{warnings} warning(s); {tunable} fixed by `kbench env --tune` (as root), undone by `--reset`.\n"
    ));
    out
}
