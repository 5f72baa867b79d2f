//! `kbench stat A_FILE B_FILE`: ministat-style comparison of two files of numbers.
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct StatArgs {
    pub a_file: PathBuf,
    pub b_file: PathBuf,
}

pub fn run(_args: StatArgs) -> anyhow::Result<i32> {
    crate::error::usage("kbench stat: not implemented yet")
}
