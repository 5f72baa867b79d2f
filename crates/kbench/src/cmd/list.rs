//! `kbench list`: every label in the database, or with `--machines`, which machines
//! hold which labels.
use crate::session::DbArgs;

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Per machine (host name and CPU models, and its id where machines of one model
    /// share them), the labels it holds runs of.
    #[arg(long)]
    pub machines: bool,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ListArgs) -> anyhow::Result<i32> {
    let store = args.db.open_existing()?;
    let text = match args.machines {
        true => kbench_report::list::machines_text(store.path(), &store.machine_labels()?),
        false => {
            let (labels, kernels) = (store.labels()?, store.label_kernels()?);
            kbench_report::list::labels_text(store.path(), &labels, &kernels)
        }
    };
    crate::output::write_stdout(text.as_bytes())?;
    Ok(0)
}
