//! `kbench env`: the machine on one screen and its noise checklist, in the manner of
//! `pyperf system show`; `--tune` applies the safe fixes and `--reset` undoes them.
use kbench_report::env::Env;
use kbench_sys::checklist::checklist;
use kbench_sys::snapshot::EnvSnapshot;
use kbench_sys::{tune, Sysroot, Topology};
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
    let env = Env {
        root: &root,
        topology: &topology,
        snapshot: &snapshot,
        checks: &checks,
    };
    if args.json {
        out!("{}", kbench_report::env::json(&env));
    } else {
        out!("{}", kbench_report::env::text(&env));
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
        out!("{}", kbench_report::env::tune_json(&report));
    } else {
        out!("{}", kbench_report::env::tune_text(args.tune, &report));
    }
    Ok(if report.failed.is_empty() { 0 } else { 1 })
}
