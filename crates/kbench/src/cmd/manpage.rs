//! `kbench manpage [SUBCOMMAND]`: kbench(1), or kbench-SUBCOMMAND(1), in roff, on
//! stdout (`kbench manpage compare | man -l -`).
use crate::error::UsageError;

#[derive(Debug, clap::Args)]
pub struct ManpageArgs {
    /// The subcommand whose page to print (`compare` for kbench-compare(1)); kbench(1)
    /// without one.
    pub subcommand: Option<String>,
}

/// Prints a man page of `cli`, the whole kbench command line.
pub fn run(args: ManpageArgs, cli: clap::Command) -> anyhow::Result<i32> {
    let page_of = match &args.subcommand {
        None => cli,
        Some(name) => subcommand_page(&cli, name)?,
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(page_of).render(&mut page)?;
    crate::output::write_stdout(&page)?;
    Ok(0)
}

/// `kbench NAME` as its own page: titled kbench-NAME, the name kbench(1) lists it
/// under, with `kbench NAME` as the synopsis.
fn subcommand_page(cli: &clap::Command, name: &str) -> anyhow::Result<clap::Command> {
    let parent = cli.get_name();
    let sub = cli.find_subcommand(name).ok_or_else(|| {
        let known: Vec<&str> = cli.get_subcommands().map(clap::Command::get_name).collect();
        UsageError(format!(
            "no subcommand '{name}' (known: {})",
            known.join(", ")
        ))
    })?;
    Ok(sub
        .clone()
        .name(format!("{parent}-{name}"))
        .bin_name(format!("{parent} {name}")))
}
