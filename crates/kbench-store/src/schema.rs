//! The versioned schema. Each migration moves `PRAGMA user_version` up by one; a
//! database newer than this kbench is refused rather than misread.

/// Migrations in order; migration `i` takes the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // 1: sessions, runs, their values, and summary-only results.
    r#"
    CREATE TABLE sessions (
        id              INTEGER PRIMARY KEY,
        label           TEXT NOT NULL,
        kind            TEXT NOT NULL,          -- run | exec | ab | import
        boot_id         TEXT,
        started_unix_ns INTEGER NOT NULL,
        ended_unix_ns   INTEGER,
        kbench_version  TEXT NOT NULL,
        command_line    TEXT NOT NULL,
        seed            INTEGER,
        environment     TEXT,                   -- JSON environment snapshot
        source          TEXT                    -- imported file and format, if imported
    );
    CREATE INDEX sessions_by_label ON sessions(label);

    CREATE TABLE runs (
        id              INTEGER PRIMARY KEY,
        session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        workload        TEXT NOT NULL,
        params          TEXT NOT NULL,          -- canonical JSON: the comparison key
        variant         TEXT NOT NULL,
        run_index       INTEGER NOT NULL,
        warmup          INTEGER NOT NULL DEFAULT 0,
        exit_status     INTEGER,
        start_unix_ns   INTEGER,
        end_unix_ns     INTEGER,
        pinned_cpus     TEXT,                   -- cpulist the run was pinned to, if any
        cpus_used       TEXT,                   -- cpulist the run's tasks were seen on
        rusage          TEXT,                   -- JSON
        tasks           TEXT,                   -- JSON: per task, the CPUs it ran on
        record          TEXT                    -- the full JSON record, when there is one
    );
    CREATE INDEX runs_by_session ON runs(session_id);

    CREATE TABLE run_values (
        run_id           INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        metric           TEXT NOT NULL,
        value            REAL NOT NULL,
        unit             TEXT NOT NULL,
        higher_is_better INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, metric)
    );

    CREATE TABLE summaries (
        id          INTEGER PRIMARY KEY,
        session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        workload    TEXT NOT NULL,
        metric      TEXT NOT NULL,
        unit        TEXT NOT NULL,
        mean        REAL NOT NULL,
        std_error   REAL NOT NULL,
        n           INTEGER NOT NULL
    );
    CREATE INDEX summaries_by_session ON summaries(session_id);
    "#,
    // 2: typed fields where strings carried meaning: the primary metric of a run.
    r#"
    ALTER TABLE run_values ADD COLUMN is_primary INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE summaries ADD COLUMN higher_is_better INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE summaries ADD COLUMN is_primary INTEGER NOT NULL DEFAULT 0;
    "#,
];

/// The schema version this kbench writes.
pub fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}
