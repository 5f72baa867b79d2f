//! `kbench import-trace FILE --label L`: the wake phases of a kernel trace captured
//! elsewhere (a board), the ftrace `trace` file or `trace-cmd report` output, stored as
//! runs so that `compare` compares them as it compares live ones.
//!
//! A trace with kbench's region marks (`sched wakeup --trace` on the board) gives one
//! run per region, its warm-up left out; any other trace gives one run of every wake of
//! the tasks `--pid`/`--comm` select. Wakes that cannot be followed are counted by
//! reason and said, never completed by a guess.
use crate::error::usage;
use crate::session::{self, DbArgs};
use kbench_record::RunRecord;
use kbench_store::{ImportSource, NewSession, SessionWithRuns};
use kbench_trace::{ParsedTrace, RegionWakes, Selection};
use kbench_workloads::wakephases::{self, TraceSource};
use std::collections::BTreeMap;

/// The workload key of imported wake phases.
const WORKLOAD: &str = "trace/wakeup";
const VARIANT: &str = "phases";

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
    let (parsed, regions) = kbench_trace::analyse(&text, &selection)
        .or_else(|e| usage(format!("{}: {e}", args.file)))?;
    let records = records_of(&args, &parsed, &regions)?;
    let mut store = args.db.open()?;
    let content_hash = format!("{:016x}", crate::cmd::import::fnv1a(text.as_bytes()));
    if store
        .has_source_content(&args.label, &content_hash)
        .map_err(session::store_error)?
    {
        return usage(format!(
            "{}: already imported into label {}; importing it again would count its wakes twice",
            args.file, args.label
        ));
    }
    let session = imported_session(&args, parsed.format.as_str(), content_hash);
    let runs = records
        .iter()
        .enumerate()
        .map(|(i, rec)| kbench_record::stored_run(rec, i as u32, false, None, String::new()))
        .collect();
    let ended_unix_ns = Some(session.started_unix_ns);
    store
        .insert_sessions(
            &[SessionWithRuns {
                session,
                ended_unix_ns,
                runs,
                summaries: Vec::new(),
                kernel_config_hash: None,
            }],
            &BTreeMap::new(),
        )
        .map_err(session::store_error)?;
    for rec in &records {
        if let Some(phases) = &rec.wake_phases {
            out!(
                "{}",
                kbench_report::bench::latency_text::phase_table(rec, phases)
            );
        }
    }
    outln!(
        "imported {} run(s) of wake phases from {} ({}) as {}",
        records.len(),
        args.file,
        parsed.format.as_str(),
        args.label
    );
    Ok(0)
}

/// One run record per region; a trace in which no wake could be followed is refused,
/// with the reasons.
fn records_of(
    args: &ImportTraceArgs,
    parsed: &ParsedTrace,
    regions: &[RegionWakes],
) -> anyhow::Result<Vec<RunRecord>> {
    let looked_at: u64 = regions.iter().map(|r| r.matched.looked_at).sum();
    if looked_at == 0 {
        return usage(format!(
            "{}: no wake of the selected tasks in the trace",
            args.file
        ));
    }
    if regions.iter().all(|r| r.matched.wakes.is_empty()) {
        let mut reasons: BTreeMap<&str, u64> = BTreeMap::new();
        for region in regions {
            for (reason, n) in &region.matched.incomplete {
                *reasons.entry(reason.as_str()).or_default() += n;
            }
        }
        let said: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
        return usage(format!(
            "{}: none of its {looked_at} wakes could be followed ({})",
            args.file,
            said.join(", ")
        ));
    }
    regions
        .iter()
        .map(|region| record_of(args, parsed, region))
        .collect()
}

fn record_of(
    args: &ImportTraceArgs,
    parsed: &ParsedTrace,
    region: &RegionWakes,
) -> anyhow::Result<RunRecord> {
    let source = TraceSource {
        name: parsed.format.as_str(),
        clock: None,
        resolution_ns: parsed.resolution_ns,
        events: Vec::new(),
    };
    let (series, phases) =
        wakephases::phase_series(&region.matched, source).map_err(anyhow::Error::msg)?;
    let mut rec = RunRecord {
        workload: WORKLOAD.into(),
        params: params_of(args, parsed, region),
        variant: VARIANT.into(),
        series,
        warnings: wakephases::incomplete_warning(&phases)
            .into_iter()
            .collect(),
        wake_phases: Some(phases),
        ..RunRecord::default()
    };
    rec.metrics = kbench_workloads::metrics::latency(&rec);
    Ok(rec)
}

/// What makes two imported runs comparable: the timestamp step (microsecond and
/// nanosecond traces quantise phases differently), the CPUs of a kbench region, and
/// the task names selected. Pids are not: they differ from boot to boot.
fn params_of(
    args: &ImportTraceArgs,
    parsed: &ParsedTrace,
    region: &RegionWakes,
) -> BTreeMap<String, serde_json::Value> {
    let mut params = BTreeMap::from([(
        "timestamp_resolution_ns".to_string(),
        parsed.resolution_ns.into(),
    )]);
    match &region.region {
        Some(r) => {
            params.insert("waker-cpu".into(), r.waker_cpu.into());
            params.insert("wakee-cpu".into(), r.wakee_cpu.into());
        }
        None if !args.comm.is_empty() => {
            params.insert("comm".into(), args.comm.join(",").into());
        }
        None => {}
    }
    params
}

/// The session of an imported trace: measured elsewhere, so without this machine's
/// boot and environment.
fn imported_session(args: &ImportTraceArgs, format: &str, content_hash: String) -> NewSession {
    NewSession {
        source: Some(ImportSource {
            file: args.file.clone(),
            format: format.to_string(),
            content_hash: Some(content_hash),
        }),
        boot_id: None,
        environment: None,
        ..session::new_session(&args.label, "import", None)
    }
}
