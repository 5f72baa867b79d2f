//! Run records from a kernel trace captured elsewhere (a board): the ftrace `trace` file
//! or `trace-cmd report` output, read by kbench-trace, its wake phases stored as runs so
//! that `compare` compares them as it compares live ones.
//!
//! A trace with kbench's region marks (`sched wakeup --trace` on the board) gives one
//! run per region, its warm-up left out; any other trace gives one run of every wake of
//! the selected tasks. Wakes that cannot be followed are counted by reason and said,
//! never completed by a guess.
use kbench_record::RunRecord;
use kbench_trace::{ParsedTrace, RegionWakes, Selection, TraceError, TraceFormat};
use kbench_workloads::wakephases::{self, TraceSource};
use std::collections::BTreeMap;

/// The workload key of imported wake phases.
pub const WORKLOAD: &str = "trace/wakeup";
/// The variant of imported wake phases.
pub const VARIANT: &str = "phases";

/// The runs read from one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedTrace {
    /// Which tool wrote the trace.
    pub format: TraceFormat,
    /// One per region (or one for an unmarked trace), in trace order.
    pub records: Vec<RunRecord>,
}

/// Why a trace gives no runs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TraceImportError {
    /// The text is not a trace kbench can read.
    #[error(transparent)]
    Unreadable(#[from] TraceError),
    #[error("no wake of the selected tasks in the trace")]
    NoWake,
    /// `reasons`: each reason a wake could not be followed, with its count.
    #[error("none of its {looked_at} wakes could be followed ({reasons})")]
    NoneFollowed { looked_at: u64, reasons: String },
    /// The wakes' phases could not be summarised (a duration out of the recorder's range).
    #[error("{0}")]
    Phases(String),
}

/// The run records of the wakes of `text` that `selection` picks; a trace in which no
/// wake could be followed is refused, with the reasons.
pub fn read_trace(text: &str, selection: &Selection) -> Result<ImportedTrace, TraceImportError> {
    let (parsed, regions) = kbench_trace::analyse(text, selection)?;
    let records = records_of(selection, &parsed, &regions)?;
    Ok(ImportedTrace {
        format: parsed.format,
        records,
    })
}

fn records_of(
    selection: &Selection,
    parsed: &ParsedTrace,
    regions: &[RegionWakes],
) -> Result<Vec<RunRecord>, TraceImportError> {
    let looked_at: u64 = regions.iter().map(|r| r.matched.looked_at).sum();
    if looked_at == 0 {
        return Err(TraceImportError::NoWake);
    }
    if regions.iter().all(|r| r.matched.wakes.is_empty()) {
        let mut reasons: BTreeMap<&str, u64> = BTreeMap::new();
        for region in regions {
            for (reason, n) in &region.matched.incomplete {
                *reasons.entry(reason.as_str()).or_default() += n;
            }
        }
        let said: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
        return Err(TraceImportError::NoneFollowed {
            looked_at,
            reasons: said.join(", "),
        });
    }
    regions
        .iter()
        .map(|region| record_of(selection, parsed, region))
        .collect()
}

fn record_of(
    selection: &Selection,
    parsed: &ParsedTrace,
    region: &RegionWakes,
) -> Result<RunRecord, TraceImportError> {
    let source = TraceSource {
        name: parsed.format.as_str(),
        clock: None,
        resolution_ns: parsed.resolution_ns,
        events: Vec::new(),
    };
    let (series, phases) =
        wakephases::phase_series(&region.matched, source).map_err(TraceImportError::Phases)?;
    let mut rec = RunRecord {
        workload: WORKLOAD.into(),
        params: params_of(selection, parsed, region),
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
    selection: &Selection,
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
        None if !selection.comms.is_empty() => {
            params.insert("comm".into(), selection.comms.join(",").into());
        }
        None => {}
    }
    params
}
