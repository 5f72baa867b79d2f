//! `kbench env`: the machine on one screen and its noise checklist.

#[derive(Debug, clap::Args)]
pub struct EnvArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(_args: EnvArgs) -> anyhow::Result<i32> {
    crate::error::usage("kbench env: not implemented yet")
}
