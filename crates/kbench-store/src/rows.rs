//! A session as the rows a reading of its label gives (`Store::sessions_in`,
//! `Store::runs_for_analysis_in`), made from the session itself: a decision after each
//! boot looks at the boot it was just handed, not at its label read back.
use crate::machine::machine_of;
use crate::store::{RunRow, SessionRow};
use kbench_record::stored::{SessionWithRuns, SummaryRow};

/// `whole` under `session_id` (ids the caller keeps unique within a label; run ids
/// follow from it), as its label's rows: its session, its runs in order, and its
/// summaries.
pub fn rows_of(
    whole: &SessionWithRuns,
    session_id: i64,
) -> (SessionRow, Vec<RunRow>, Vec<SummaryRow>) {
    let s = &whole.session;
    let session = SessionRow {
        id: session_id,
        label: s.label.clone(),
        kind: s.kind.clone(),
        boot_id: s.boot_id.clone(),
        started_unix_ns: s.started_unix_ns,
        ended_unix_ns: whole.ended_unix_ns,
        kbench_version: s.kbench_version.clone(),
        command_line: s.command_line.clone(),
        seed: s.seed,
        environment: s.environment.clone(),
        source: s.source.clone(),
        interleave_group: s.interleave_group.clone(),
        runs: whole.runs.iter().filter(|r| r.is_measured()).count() as u64,
        kernel_config_hash: whole.kernel_config_hash.clone(),
        uuid: s.uuid.clone().unwrap_or_default(),
        machine: machine_of(s.environment.as_ref()),
    };
    let runs = whole
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| RunRow {
            id: session_id * RUN_IDS_PER_SESSION + i as i64,
            session_id,
            label: s.label.clone(),
            boot_id: s.boot_id.clone(),
            run: run.clone().with_facts(),
        })
        .collect();
    let summaries = whole
        .summaries
        .iter()
        .map(|m| SummaryRow {
            session_id,
            ..m.clone()
        })
        .collect();
    (session, runs, summaries)
}

/// Room for each session's runs among the run ids [`rows_of`] makes.
const RUN_IDS_PER_SESSION: i64 = 1 << 20;
