//! What each boot of `vm-ab`, `bisect` and `lava-job` runs, as the guest (kbench-boot's
//! [`kbench_boot::guest`], kbench as the booted kernel's /init) reads it back.
use kbench_boot::guest::DEFAULT_RUNS;
use kbench_runner::suites::GUEST_REAL_SUITE;
use kbench_runner::WorkloadSpec;

/// What each boot runs, as `vm-ab` and `lava-job` ask for it: written onto the kernel
/// command line by [`GuestSuiteArgs::kernel_words`], read back by the guest.
#[derive(Debug, Clone, clap::Args)]
pub struct GuestSuiteArgs {
    /// Workload specs run in each boot [default: `pipe:-l 2000 --placement same-cpu`].
    #[arg(long, value_name = "SPEC")]
    pub suite: Vec<String>,
    /// The quick suite of `kbench run` in each boot.
    #[arg(long, conflicts_with = "suite")]
    pub quick: bool,
    /// Real work in each boot: blkio's O_DIRECT reads on vm-ab's scratch disk
    /// (`/dev/vda`, a virtio-blk device) and netrr's TCP transactions over loopback.
    /// On a board, give `--suite 'blkio:--path DEVICE'` instead.
    #[arg(long, conflicts_with_all = ["suite", "quick"])]
    pub real: bool,
    /// Measured runs per workload and boot.
    #[arg(long, default_value_t = DEFAULT_RUNS)]
    pub runs: u32,
}

impl GuestSuiteArgs {
    /// The `kbench.runs`, `kbench.quick` or `kbench.suite` words the guest reads. Each
    /// spec must parse, and the suite travels as one double-quoted value, `;`-separated,
    /// inside the single quotes of u-boot's `setenv bootargs '...'` on a board.
    pub fn kernel_words(&self) -> anyhow::Result<Vec<String>> {
        if self.runs == 0 {
            return crate::error::usage("--runs must be at least 1");
        }
        let mut words = vec![format!("kbench.runs={}", self.runs)];
        let real: Vec<String> = GUEST_REAL_SUITE.iter().map(|s| s.to_string()).collect();
        let suite = if self.real { &real } else { &self.suite };
        if self.quick {
            words.push("kbench.quick".into());
        } else if !suite.is_empty() {
            for spec in suite {
                if spec.contains(['"', ';', '\'']) {
                    return crate::error::usage(format!(
                        "--suite {spec}: a spec on a kernel command line cannot hold \" ; or '"
                    ));
                }
                WorkloadSpec::parse(spec)
                    .or_else(|e| crate::error::usage(format!("--suite: {e}")))?;
            }
            words.push(format!("kbench.suite=\"{}\"", suite.join(";")));
        }
        Ok(words)
    }
}
