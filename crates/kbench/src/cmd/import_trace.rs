//! `kbench import-trace FILE --label L`: the wake phases of a kernel trace captured
//! elsewhere (a board), read into runs by [`kbench_import::trace`] and stored, so that
//! `compare` compares them as it compares live ones. `--pid`/`--comm` select the tasks
//! of a trace without kbench's region marks.
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_import::trace::TraceImportError;
use kbench_report::bench::latency_text::phase_tables;
use kbench_trace::Selection;

#[derive(Debug, clap::Args)]
pub struct ImportTraceArgs {
    /// The ftrace `trace` file or `trace-cmd report` output (`-` for standard input).
    pub file: String,
    /// The label the runs are stored under.
    #[arg(long)]
    pub label: String,
    /// Only wakes of this task id (repeatable); ignored for kbench's marked regions.
    #[arg(long, value_name = "PID")]
    pub pid: Vec<i32>,
    /// Only wakes of tasks of this name (repeatable); ignored for kbench's marked regions.
    #[arg(long, value_name = "NAME")]
    pub comm: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub fn run(args: ImportTraceArgs) -> anyhow::Result<i32> {
    session::check_label(&args.label)?;
    let text = crate::input::read_text(&args.file)?;
    let selection = Selection {
        pids: args.pid.clone(),
        comms: args.comm.clone(),
    };
    let trace = match kbench_import::trace::read_trace(&text, &selection) {
        Ok(trace) => trace,
        Err(TraceImportError::Phases(message)) => return Err(anyhow::Error::msg(message)),
        Err(e) => return usage(format!("{}: {e}", args.file)),
    };
    let format = trace.format.as_str();
    let records = trace.records;
    let mut store = args.db.open()?;
    let session = session::new_session(&args.label, "import", None);
    let session = session.measured_elsewhere(&args.file, format, &text);
    store.refuse_imported(&session, "wakes")?;
    store.import_records(session, &records)?;
    out!("{}", phase_tables(&records));
    outln!(
        "imported {} run(s) of wake phases from {} ({}) as {}",
        records.len(),
        args.file,
        format,
        args.label
    );
    Ok(0)
}
