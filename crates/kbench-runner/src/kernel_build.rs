//! The kernel build of `kbench run --real`: `make -jN vmlinux` of a small
//! configuration (tinyconfig) of Debian's `linux-source-6.1`, timed as a whole, where
//! the host has the source. It exercises what a developer's day does: fork and exec by
//! the thousand, page faults, the page cache, pipes between make and the compilers,
//! and every CPU busy at once, so the scheduler's load balancing too.
//!
//! Hooks, as `kbench exec` has them: the setup unpacks the tarball into a tree of
//! kbench's own (once: a tree already configured is kept) and runs `make tinyconfig`;
//! every run is preceded by `make clean`, untimed, so each run builds everything. A
//! build with few runs, apart from the suite's blocks: one takes minutes, not seconds.
use crate::executor::CommandExecutor;
use crate::figures::{FigureOptions, FigureReader, WALL_METRIC};
use crate::hooks::Hooks;
use crate::scheduler::{self, ArmOutcome};
use crate::sink::RunSink;
use crate::suite::WorkloadOutcome;
use crate::RunnerError;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where Debian's `linux-source-6.1` package puts the source.
pub const DEBIAN_SOURCE: &str = "/usr/src/linux-source-6.1.tar.xz";
/// The longest one build may take before it is stopped and recorded as failed.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);

/// A kernel tree to build, and how many times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelBuild {
    pub tarball: PathBuf,
    /// The unpacked, configured tree: kbench's, under its cache directory.
    pub tree: PathBuf,
    pub runs: u32,
    pub warmup: u32,
}

impl KernelBuild {
    /// The build of `tarball` in `cache`, when the tarball is there.
    pub fn of(tarball: &Path, cache: &Path, runs: u32, warmup: u32) -> Option<KernelBuild> {
        tarball.is_file().then(|| KernelBuild {
            tarball: tarball.to_path_buf(),
            tree: cache.join("kernel-build/linux-source-6.1"),
            runs,
            warmup,
        })
    }

    /// The untimed hooks: the tree unpacked and configured once, cleaned before each
    /// build.
    pub fn hooks(&self) -> Hooks {
        let tree = quoted(&self.tree);
        let tarball = quoted(&self.tarball);
        Hooks {
            setup: Some(format!(
                "set -e; if [ ! -f {tree}/.config ]; then rm -rf {tree}; mkdir -p {tree}; \
                 tar -xaf {tarball} -C {tree} --strip-components=1; \
                 make -s -C {tree} tinyconfig >/dev/null; fi"
            )),
            prepare: Some(format!("make -s -C {tree} clean")),
            cleanup: None,
            show_output: false,
        }
    }

    /// The timed command: every CPU building vmlinux.
    pub fn command(&self) -> String {
        format!(
            "make -s -C {} -j\"$(nproc)\" vmlinux >/dev/null",
            quoted(&self.tree)
        )
    }

    /// Runs the builds (setup, warm-ups, `runs` measured), each handed to `sink`.
    pub fn run(&self, sink: &mut dyn RunSink) -> Result<ArmOutcome, RunnerError> {
        let command = self.command();
        let figures = FigureOptions {
            metric: None,
            no_parse: true,
        };
        let mut executor = CommandExecutor::shell(
            &command,
            FigureReader::new(&figures, &command),
            BUILD_TIMEOUT,
        );
        scheduler::run_alone(&mut executor, self.warmup, self.runs, self.hooks(), sink)
    }

    /// The builds' runs as a row of `run`'s closing table: wall time, and every failed
    /// build or hook.
    pub fn outcome(&self, arm: &ArmOutcome) -> WorkloadOutcome {
        let failures = arm.failures.iter().map(|f| f.message.clone());
        let hook_failures = arm.hook_failures.iter().map(|f| f.message.clone());
        let walls: Vec<f64> = arm
            .measured
            .iter()
            .filter_map(|run| run.values.iter().find(|v| v.primary))
            .map(|wall| wall.value)
            .collect();
        WorkloadOutcome {
            spec: format!("kernel build ({})", self.tree.display()),
            metric: WALL_METRIC.to_string(),
            unit: "s".to_string(),
            placements: vec![None; walls.len()],
            values: walls,
            failures: failures.chain(hook_failures).collect(),
        }
    }
}

/// kbench's cache directory: `$XDG_CACHE_HOME/kbench`, else `~/.cache/kbench`.
pub fn cache_dir() -> PathBuf {
    let home = || std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache"));
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(home)
        .unwrap_or_else(|| PathBuf::from("/var/cache"))
        .join("kbench")
}

/// `path` in single quotes for `sh -c`.
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}
