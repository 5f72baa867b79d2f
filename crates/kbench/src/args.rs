//! Argument groups more than one command takes, and what they resolve to: the
//! commands flatten these rather than repeat them.
use crate::error::usage;
use kbench_runner::kernel_build::KernelBuild;
use kbench_runner::suites::{QUICK_REAL_SUITE, QUICK_SUITE, REAL_SUITE, SUITE};
use kbench_runner::{FigureOptions, Hooks, Plan, StopPolicy, WorkloadSpec};
use std::time::Duration;

const DEFAULT_RUNS: u32 = 100;
const QUICK_RUNS: u32 = 25;

/// What `kbench run` and `kbench calibrate` run in a session.
#[derive(Debug, Clone, clap::Args)]
pub struct SuiteArgs {
    /// Workloads: `pipe`, `pipe:-l 100000 --pingpong`, `messaging:-g 4`, ...
    /// [default: messaging, pipe and seccomp-notify]
    pub workloads: Vec<String>,
    /// Measured runs per workload [default: 100, or 25 with --quick].
    #[arg(long)]
    pub runs: Option<u32>,
    /// Warm-up runs per workload, recorded and excluded from statistics.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Smaller workloads and fewer runs: about a minute on two cores.
    #[arg(long)]
    pub quick: bool,
    /// Real work instead of the micro suite: blkio (O_DIRECT reads of a file in
    /// /var/tmp, a device interrupt each) and netrr (TCP transactions over loopback).
    /// A label that holds both suites' sessions gets, in `compare`, what each micro
    /// change predicts for each real workload.
    #[arg(long, conflicts_with = "workloads")]
    pub real: bool,
    /// With --real: the kernel source tarball built after the suite [default: Debian's
    /// /usr/src/linux-source-6.1.tar.xz, when installed].
    #[arg(long, value_name = "TARBALL", requires = "real")]
    pub kernel_source: Option<std::path::PathBuf>,
    /// With --real: measured kernel builds, minutes each [default: 3, 1 with --quick;
    /// 0 for none].
    #[arg(long, value_name = "N", requires = "real")]
    pub builds: Option<u32>,
    /// Pin every run: a cpulist (`0-3,6`) or a class (`class:big`, `class:Cortex-A72`).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Stop a run (and record it as failed) after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    pub run_timeout: f64,
    /// Seed of the run order [default: from the clock; recorded either way].
    #[arg(long)]
    pub seed: Option<u64>,
}

impl SuiteArgs {
    /// The plan of one session: the runs asked for, or until `precision` is met.
    pub fn plan(&self, counters: bool, precision: Option<Precision>) -> anyhow::Result<Plan> {
        let texts: Vec<String> = if self.workloads.is_empty() {
            let suite = match (self.real, self.quick) {
                (true, true) => QUICK_REAL_SUITE,
                (true, false) => REAL_SUITE,
                (false, true) => QUICK_SUITE,
                (false, false) => SUITE,
            };
            suite.iter().map(|s| s.to_string()).collect()
        } else {
            self.workloads.clone()
        };
        let specs = texts
            .iter()
            .map(|t| WorkloadSpec::parse(t).map(|s| s.with_counters(counters)))
            .collect::<Result<Vec<_>, _>>()
            .or_else(usage)?;
        if let Some(reason) = counters
            .then(kbench_workloads::counters::no_perf_events)
            .flatten()
        {
            return usage(format!("--counters: {reason}"));
        }
        let stopping = match precision {
            Some(precision) => precision.policy()?,
            None => StopPolicy::Runs(self.fixed_runs()?),
        };
        let cpus = resolve_optional_cpus(self.cpus.as_deref())?
            .map(|cpus| kbench_sys::format_cpulist(&cpus));
        Ok(Plan {
            specs,
            stopping,
            warmup: self.warmup,
            cpus,
            seed: self
                .seed
                .unwrap_or_else(|| crate::session::unix_now_ns() ^ u64::from(std::process::id())),
            run_timeout: run_timeout(self.run_timeout)?,
        })
    }

    /// The kernel build of `--real` (docs/real-workloads.md), when the source is here;
    /// `Err` for a tarball the user named that is not.
    pub fn kernel_build(&self) -> anyhow::Result<Option<KernelBuild>> {
        let builds = self.builds.unwrap_or(if self.quick { 1 } else { 3 });
        if !self.real || builds == 0 {
            return Ok(None);
        }
        let cache = kbench_runner::kernel_build::cache_dir();
        let default = std::path::Path::new(kbench_runner::kernel_build::DEBIAN_SOURCE);
        let tarball = self.kernel_source.as_deref().unwrap_or(default);
        let build = KernelBuild::of(tarball, &cache, builds, 0);
        if build.is_none() && self.kernel_source.is_some() {
            return usage(format!(
                "--kernel-source {}: no such file",
                tarball.display()
            ));
        }
        Ok(build)
    }

    fn fixed_runs(&self) -> anyhow::Result<u32> {
        let runs = self
            .runs
            .unwrap_or(if self.quick { QUICK_RUNS } else { DEFAULT_RUNS });
        if runs == 0 {
            return usage("--runs must be at least 1");
        }
        Ok(runs)
    }
}

/// `--precision PCT` with its `--max-time SECS`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    pub pct: f64,
    pub max_time_s: f64,
}

impl Precision {
    fn policy(self) -> anyhow::Result<StopPolicy> {
        let Precision { pct, max_time_s } = self;
        if !(pct > 0.0 && pct < 100.0 && max_time_s > 0.0 && max_time_s.is_finite()) {
            return usage("--precision takes a percentage in (0, 100) and --max-time a positive number of seconds");
        }
        Ok(StopPolicy::Precision {
            pct,
            min_runs: 5,
            max_time: Duration::from_secs_f64(max_time_s),
        })
    }
}

/// How a command's primary figure is chosen (`exec`, `ab`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FigureArgs {
    /// The primary metric, by name: one of the figures read from the command's output
    /// (`usecs_per_op`, `total_sec`, `time_elapsed_sec`, ...) or wall_sec, user_sec,
    /// sys_sec, max_rss_kib [default: what the output's reader declares, else wall_sec].
    #[arg(long, value_name = "NAME", conflicts_with = "no_parse")]
    pub metric: Option<String>,
    /// Do not read the command's output: wall_sec is the primary metric.
    #[arg(long)]
    pub no_parse: bool,
}

impl FigureArgs {
    pub fn options(&self) -> FigureOptions {
        FigureOptions {
            metric: self.metric.clone(),
            no_parse: self.no_parse,
        }
    }
}

/// The hooks of `kbench exec` and `kbench ab` (for ab they apply to each side).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HookArgs {
    /// Run CMD (sh -c) before every run, warm-ups included, untimed: drop the page
    /// cache, `make clean`.
    #[arg(long, value_name = "CMD")]
    pub prepare: Option<String>,
    /// Run CMD (sh -c) once before the first run (ab: once per side).
    #[arg(long, value_name = "CMD")]
    pub setup: Option<String>,
    /// Run CMD (sh -c) once after the last run (ab: once per side), also after a failed
    /// run or hook, unless the setup failed.
    #[arg(long, value_name = "CMD")]
    pub cleanup: Option<String>,
}

impl HookArgs {
    /// The hooks, with `prepare` in place of --prepare when given.
    pub fn hooks(&self, prepare: Option<&str>, show_output: bool) -> Hooks {
        Hooks {
            prepare: prepare.map(str::to_string).or_else(|| self.prepare.clone()),
            setup: self.setup.clone(),
            cleanup: self.cleanup.clone(),
            show_output,
        }
    }
}

/// `--run-timeout` as a duration; a positive number of seconds.
pub fn run_timeout(secs: f64) -> anyhow::Result<Duration> {
    if secs > 0.0 && secs.is_finite() && secs < 1e9 {
        Ok(Duration::from_secs_f64(secs))
    } else {
        usage("--run-timeout takes a positive number of seconds")
    }
}

/// Resolves `--cpus` (a cpulist or `class:NAME`) to CPUs of this machine.
pub fn resolve_cpus(spec: &str) -> anyhow::Result<Vec<u32>> {
    let root = kbench_sys::Sysroot::from_env();
    let topology = kbench_sys::Topology::read(&root).or_else(|e| usage(e.to_string()))?;
    topology
        .resolve_cpus(spec)
        .or_else(|e| usage(format!("--cpus {spec}: {e}")))
}

/// A `--cpus` option that may be absent.
pub fn resolve_optional_cpus(spec: Option<&str>) -> anyhow::Result<Option<Vec<u32>>> {
    spec.map(resolve_cpus).transpose()
}

/// Which kernel and which machine: `run`, `exec`, `ab` and `calibrate` store them with
/// their sessions, for `list`, `history --by commit` and `--machine`.
#[derive(Debug, Clone, clap::Args)]
pub struct IdentityArgs {
    /// The commit the running kernel was built from (a hash, a tag, `git describe`'s
    /// words), so that `kbench history --by commit` can order this label along the
    /// tree's history.
    #[arg(long, value_name = "REV", env = "KBENCH_COMMIT")]
    pub commit: Option<String>,
    /// Names this machine, in place of the id kbench reads (DMI product_uuid, else the
    /// device tree's serial-number, else a permanent MAC, else /etc/machine-id): what
    /// tells apart machines of one host name and CPU models in a lab's store.
    #[arg(long, value_name = "NAME", env = "KBENCH_MACHINE_ID")]
    pub machine_id: Option<String>,
}

impl IdentityArgs {
    /// `session` with the commit and the machine's name, when given; a commit that
    /// cannot be a git revision (empty, spaces, control characters, longer than 200)
    /// or a name that cannot be shown in brackets is refused.
    pub fn apply(
        &self,
        mut session: kbench_store::NewSession,
    ) -> anyhow::Result<kbench_store::NewSession> {
        let commit = checked_commit("--commit (or $KBENCH_COMMIT)", self.commit.as_deref())?;
        let machine_id = self.machine_id()?;
        if let Some(env) = session.environment.as_mut() {
            if commit.is_some() {
                env.kernel.kernel_commit = commit;
            }
            if let (Some(snapshot), Some(id)) = (env.snapshot.as_mut(), machine_id) {
                snapshot.machine_id = Some(id);
            }
        }
        Ok(session)
    }

    /// This machine's snapshot, with `--machine-id`'s name when given.
    pub fn snapshot(&self) -> anyhow::Result<kbench_sys::EnvSnapshot> {
        let mut snapshot = kbench_sys::EnvSnapshot::capture(&kbench_sys::Sysroot::from_env());
        if let Some(id) = self.machine_id()? {
            snapshot.machine_id = Some(id);
        }
        Ok(snapshot)
    }

    /// `--machine-id`'s name, checked.
    fn machine_id(&self) -> anyhow::Result<Option<String>> {
        let Some(name) = &self.machine_id else {
            return Ok(None);
        };
        if let Some(problem) = kbench_sys::machine_id::given_name_problem(name) {
            return usage(format!(
                "--machine-id (or $KBENCH_MACHINE_ID) {name:?} {problem}"
            ));
        }
        Ok(Some(name.clone()))
    }
}

/// `commit` as given to `option` (`None` when not given), unless it cannot be a git
/// revision (empty, spaces, control characters, longer than 200).
pub fn checked_commit(option: &str, commit: Option<&str>) -> anyhow::Result<Option<String>> {
    let Some(commit) = commit else {
        return Ok(None);
    };
    let plausible = !commit.is_empty()
        && commit.len() <= 200
        && !commit.chars().any(|c| c.is_whitespace() || c.is_control());
    if !plausible {
        return usage(format!(
            "{option} {commit:?} is not a git revision: one word, no spaces"
        ));
    }
    Ok(Some(commit.to_string()))
}
