//! `kbench completions SHELL`: the shell's completion script for kbench, on stdout.
use clap_complete::Shell;

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script for `cli`, the whole kbench command line.
pub fn run(args: CompletionsArgs, mut cli: clap::Command) -> anyhow::Result<i32> {
    let name = cli.get_name().to_string();
    // Into memory first: clap_complete panics when its writer fails, and a closed
    // stdout is no reason to panic.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, name, &mut script);
    crate::output::write_stdout(&script)?;
    Ok(0)
}
