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
    // 2: typed fields where strings carried meaning. Older rows are rewritten in place.
    r#"
    -- The primary metric of a run (one per run; older runs: see legacy_primary), and
    -- the direction and role of summary rows. run_values is clustered by its key, so
    -- the values of a label's runs are one walk of one b-tree.
    CREATE TABLE run_values_v2 (
        run_id           INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        metric           TEXT NOT NULL,
        value            REAL NOT NULL,
        unit             TEXT NOT NULL,
        higher_is_better INTEGER NOT NULL DEFAULT 0,
        is_primary       INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, metric)
    ) WITHOUT ROWID;
    INSERT INTO run_values_v2 (run_id, metric, value, unit, higher_is_better)
        SELECT run_id, metric, value, unit, higher_is_better FROM run_values;
    DROP TABLE run_values;
    ALTER TABLE run_values_v2 RENAME TO run_values;
    ALTER TABLE summaries ADD COLUMN higher_is_better INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE summaries ADD COLUMN is_primary INTEGER NOT NULL DEFAULT 0;

    -- Why a run failed, where variant 'failed' and record {"error": ...} said it.
    ALTER TABLE runs ADD COLUMN error TEXT;
    -- A `kbench ab` run's side, JSON {side, workload, params, variant}, where the
    -- record held it with the workload's own record one level down.
    ALTER TABLE runs ADD COLUMN ab_side TEXT;

    UPDATE runs SET
        ab_side = json_object(
            'side', json_extract(record, '$.side'),
            'workload', coalesce(json_extract(record, '$.workload'), ''),
            'params', json(coalesce(
                json_remove(json_extract(record, '$.params'), '$.signed_loops'), '{}')),
            'variant', CASE coalesce(json_extract(record, '$.variant'), 'failed')
                WHEN 'failed' THEN '' ELSE json_extract(record, '$.variant') END),
        record = json_extract(record, '$.record')
    WHERE workload = 'ab' AND json_valid(record) AND json_type(record, '$.side') = 'text';

    UPDATE runs SET
        error = coalesce(
            CASE WHEN json_valid(record) THEN json_extract(record, '$.error') END, 'failed'),
        variant = CASE workload WHEN 'ab' THEN 'ab' ELSE '' END,
        record = NULL
    WHERE variant = 'failed';

    -- pipe's signed loop count: a record field, no longer a parameter.
    UPDATE runs SET
        params = json_remove(params, '$.signed_loops'),
        record = CASE
            WHEN json_valid(record) AND json_type(record, '$.params.signed_loops') IS NOT NULL
            THEN json_set(json_remove(record, '$.params.signed_loops'),
                          '$.perf_signed_loops', json_extract(record, '$.params.signed_loops'))
            ELSE record END
    WHERE json_valid(params) AND json_type(params, '$.signed_loops') IS NOT NULL;

    -- The import source as fields, where one text said `FILE (FORMAT, content HASH)`.
    ALTER TABLE sessions ADD COLUMN source_file TEXT;
    ALTER TABLE sessions ADD COLUMN source_format TEXT;
    ALTER TABLE sessions ADD COLUMN source_hash TEXT;
    UPDATE sessions SET source_file = p.file, source_format = p.format, source_hash = p.hash
    FROM (
        SELECT id, substr(head, 1, length(head) - 2) AS file,
               substr(prefix, length(head) + 1) AS format, hash
        FROM (
            -- FORMAT is letters, digits and dashes: trimming them leaves `FILE (`.
            SELECT id, prefix, hash,
                   rtrim(prefix, 'abcdefghijklmnopqrstuvwxyz0123456789-') AS head
            FROM (
                SELECT id, substr(source, 1, length(source) - 27) AS prefix,
                       substr(source, -17, 16) AS hash
                FROM sessions WHERE source LIKE '%, content ________________)'
            )
        )
        WHERE head LIKE '% ('
    ) AS p
    WHERE sessions.id = p.id;
    UPDATE sessions SET source_file = source, source_format = ''
    WHERE source IS NOT NULL AND source_file IS NULL;
    ALTER TABLE sessions DROP COLUMN source;

    -- A label's runs in session then run order straight from the indexes, no sort.
    DROP INDEX sessions_by_label;
    CREATE INDEX sessions_by_label ON sessions(label, started_unix_ns);
    DROP INDEX runs_by_session;
    CREATE INDEX runs_by_session ON runs(session_id, run_index);
    "#,
    // 3: interleave groups (`kbench ab`'s two sessions alternate runs, so they share a
    // session effect) and calibrations of a machine's noise (`kbench calibrate`).
    r#"
    ALTER TABLE sessions ADD COLUMN interleave_group TEXT;
    -- An older `kbench ab` began its two sessions one after the other, with one
    -- command line in one boot: pair each with its nearest such session in time.
    CREATE TEMP TABLE ab_sessions AS
        SELECT id, label, command_line, coalesce(boot_id, 'unknown') AS boot,
               started_unix_ns AS started
        FROM sessions WHERE kind = 'ab';
    CREATE TEMP TABLE ab_pairs AS
        SELECT x.id AS id, x.boot AS boot, min(x.id, coalesce(
            (SELECT min(y.id) FROM ab_sessions y
             WHERE y.id != x.id AND y.label != x.label AND y.command_line = x.command_line
               AND y.boot = x.boot
               AND abs(y.started - x.started) = (
                   SELECT min(abs(z.started - x.started)) FROM ab_sessions z
                   WHERE z.id != x.id AND z.label != x.label
                     AND z.command_line = x.command_line AND z.boot = x.boot)),
            x.id)) AS first
        FROM ab_sessions x;
    UPDATE sessions SET interleave_group = (
        SELECT 'legacy-ab-' || p.boot || '-' || p.first FROM ab_pairs p WHERE p.id = sessions.id)
    WHERE kind = 'ab';
    DROP TABLE ab_pairs;
    DROP TABLE ab_sessions;

    CREATE TABLE calibrations (
        id              INTEGER PRIMARY KEY,
        label           TEXT NOT NULL,          -- the label its sessions are stored under
        created_unix_ns INTEGER NOT NULL,
        kbench_version  TEXT NOT NULL,
        fingerprint     TEXT NOT NULL,          -- JSON: host, CPU models, kernel, cmdline hash
        sessions        INTEGER NOT NULL,
        boots           INTEGER NOT NULL
    );

    CREATE TABLE calibration_components (
        calibration_id  INTEGER NOT NULL REFERENCES calibrations(id) ON DELETE CASCADE,
        workload        TEXT NOT NULL,
        params          TEXT NOT NULL,          -- the comparison key's parameter words
        variant         TEXT NOT NULL,
        metric          TEXT NOT NULL,          -- a metric, or a latency series
        pooled_quantile REAL,                   -- set for a pooled percentile of a series
        components      TEXT NOT NULL           -- JSON: the noise components
    );
    CREATE INDEX calibration_components_by_id ON calibration_components(calibration_id);
    "#,
    // 4: the console log of a booted session (`kbench vm-ab`), gzip-compressed, kept
    // with the session whether or not the boot succeeded.
    r#"
    ALTER TABLE sessions ADD COLUMN console_log BLOB;
    "#,
    // 5: the kernel config a session ran on, kept once per content: the sessions of one
    // kernel share a row, and a config differing between two labels is said by compare.
    r#"
    CREATE TABLE kernel_configs (
        hash            TEXT PRIMARY KEY,       -- sha256 (hex) of the normalized text
        config          BLOB NOT NULL           -- that text, gzip-compressed
    ) WITHOUT ROWID;
    ALTER TABLE sessions ADD COLUMN kernel_config_hash TEXT REFERENCES kernel_configs(hash);
    "#,
    // 6: a session's identity across databases (`kbench push` copies it once), and the
    // machine it ran on (crate::machine_of: `host: model + model`), as a level.
    r#"
    ALTER TABLE sessions ADD COLUMN uuid TEXT;
    ALTER TABLE sessions ADD COLUMN machine TEXT;
    -- Random version-4 UUIDs for the sessions there are.
    UPDATE sessions SET uuid = lower(
        hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' ||
        substr(hex(randomblob(2)), 2) || '-' ||
        substr('89AB', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' ||
        hex(randomblob(6)));
    CREATE UNIQUE INDEX sessions_by_uuid ON sessions(uuid);
    UPDATE sessions SET machine =
        CASE json_type(environment, '$.hostname')
            WHEN 'text' THEN json_extract(environment, '$.hostname') ELSE 'unknown host' END
        || coalesce(': ' || (SELECT group_concat(value, ' + ') FROM json_each(environment, '$.cpu_models')
                             WHERE type = 'text'), '')
    WHERE json_valid(environment) AND json_type(environment) = 'object';
    CREATE INDEX sessions_by_machine ON sessions(machine, label);
    "#,
    // 7: a sequential comparison's design and its looks (kbench_record::sequential), so
    // that a later compare of the two labels looks with the design they ran under.
    r#"
    CREATE TABLE sequential_designs (
        id                 INTEGER PRIMARY KEY,
        base_label         TEXT NOT NULL,
        new_label          TEXT NOT NULL,
        designed_by        TEXT NOT NULL,       -- ab | vm-ab | compare
        created_unix_ns    INTEGER NOT NULL,
        kbench_version     TEXT NOT NULL,
        command_line       TEXT NOT NULL,
        alpha              REAL NOT NULL,
        delta_pct          REAL NOT NULL,
        max_units_per_side INTEGER NOT NULL,
        max_time_s         REAL,
        use_calibration    INTEGER NOT NULL
    );
    CREATE INDEX sequential_designs_by_labels ON sequential_designs(base_label, new_label);
    CREATE TABLE sequential_looks (
        design_id       INTEGER NOT NULL REFERENCES sequential_designs(id) ON DELETE CASCADE,
        look_index      INTEGER NOT NULL,
        at_unix_ns      INTEGER NOT NULL,
        workload        TEXT NOT NULL,
        params          TEXT NOT NULL,
        variant         TEXT NOT NULL,
        metric          TEXT NOT NULL,
        n_a             INTEGER NOT NULL,
        n_b             INTEGER NOT NULL,
        shift_pct       REAL,
        low_pct         REAL,
        high_pct        REAL,
        outcome         TEXT NOT NULL           -- continue | regression | ... | undecided
    );
    CREATE INDEX sequential_looks_by_design ON sequential_looks(design_id, look_index);
    "#,
    // 8: what the analysis reads of a run's record, in columns: where its two tasks ran
    // (kbench_record::ObservedPlacement as JSON) and whether it has latency series, so
    // that compare reads a record only when it has series to pool.
    r#"
    ALTER TABLE runs ADD COLUMN placement TEXT;
    ALTER TABLE runs ADD COLUMN has_series INTEGER NOT NULL DEFAULT 0;
    UPDATE runs SET placement = json_extract(record, '$.placement')
    WHERE record LIKE '%"placement"%' AND json_valid(record)
      AND json_type(record, '$.placement') = 'object';
    UPDATE runs SET has_series = 1
    WHERE record LIKE '%"series"%' AND json_valid(record)
      AND json_type(record, '$.series') = 'array' AND json_array_length(record, '$.series') > 0;
    "#,
    // 9: which of several machines of one name a session ran on
    // (kbench_sys::machine_id); sessions stored before have none, and keep their
    // machine (crate::machine::MACHINE_SQL).
    r#"
    ALTER TABLE sessions ADD COLUMN machine_id TEXT;
    CREATE INDEX sessions_by_machine_id ON sessions(machine, machine_id);
    "#,
    // 10: the measured runs of each session (store::MEASURED_RUNS_SQL, term for term), so
    // that counting them reads an index, not every run's row: `list` and each label's
    // sessions count them, and a run's row is mostly its record. And a label's sessions
    // on one machine (store::SessionScope), found in an index: the machine's columns
    // come after a session's environment, which is most of its row.
    r#"
    CREATE INDEX runs_measured_by_session ON runs(session_id)
    WHERE warmup = 0 AND error IS NULL AND coalesce(exit_status, 0) = 0;
    CREATE INDEX sessions_by_label_machine ON sessions(label, machine, machine_id);
    "#,
    // 11: nothing here. PostgreSQL's twin drops run_values' foreign key; SQLite keeps
    // it: its check is one lookup in a page it holds, not a query.
    "",
    // 12: what a sequential look's units were (run | session | boot): the first look
    // fixes it for the whole design (kbench_record::sequential::LookRow::unit_level);
    // and the boundary a design is read against (NULL: always valid, as every design
    // was before).
    r#"
    ALTER TABLE sequential_looks ADD COLUMN unit_level TEXT;
    ALTER TABLE sequential_designs ADD COLUMN boundary TEXT;
    "#,
];

/// A PostgreSQL database starts at this version, with [`POSTGRES_BASELINE`]: no
/// kbench wrote one before. Later versions add a migration to each list.
pub const POSTGRES_BASELINE_VERSION: i64 = 6;

/// The schema of [`POSTGRES_BASELINE_VERSION`], table for table and column for column
/// the SQLite schema after its migrations (a test compares the two), in PostgreSQL's
/// types: integers are BIGINT (flags 0 and 1 too, so one SQL text serves both).
pub const POSTGRES_BASELINE: &str = r#"
    CREATE TABLE kbench_schema (version BIGINT NOT NULL);
    CREATE TABLE kernel_configs (
        hash            TEXT PRIMARY KEY,
        config          BYTEA NOT NULL
    );
    CREATE TABLE sessions (
        id               BIGSERIAL PRIMARY KEY,
        label            TEXT NOT NULL,
        kind             TEXT NOT NULL,
        boot_id          TEXT,
        started_unix_ns  BIGINT NOT NULL,
        ended_unix_ns    BIGINT,
        kbench_version   TEXT NOT NULL,
        command_line     TEXT NOT NULL,
        seed             BIGINT,
        environment      TEXT,
        source_file      TEXT,
        source_format    TEXT,
        source_hash      TEXT,
        interleave_group TEXT,
        console_log      BYTEA,
        kernel_config_hash TEXT REFERENCES kernel_configs(hash),
        uuid             TEXT UNIQUE,
        machine          TEXT
    );
    CREATE INDEX sessions_by_label ON sessions(label, started_unix_ns);
    CREATE INDEX sessions_by_machine ON sessions(machine, label);
    CREATE TABLE runs (
        id              BIGSERIAL PRIMARY KEY,
        session_id      BIGINT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        workload        TEXT NOT NULL,
        params          TEXT NOT NULL,
        variant         TEXT NOT NULL,
        run_index       BIGINT NOT NULL,
        warmup          BIGINT NOT NULL DEFAULT 0,
        exit_status     BIGINT,
        start_unix_ns   BIGINT,
        end_unix_ns     BIGINT,
        pinned_cpus     TEXT,
        cpus_used       TEXT,
        rusage          TEXT,
        tasks           TEXT,
        record          TEXT,
        error           TEXT,
        ab_side         TEXT
    );
    CREATE INDEX runs_by_session ON runs(session_id, run_index);
    CREATE TABLE run_values (
        run_id           BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        metric           TEXT NOT NULL,
        value            DOUBLE PRECISION NOT NULL,
        unit             TEXT NOT NULL,
        higher_is_better BIGINT NOT NULL DEFAULT 0,
        is_primary       BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, metric)
    );
    CREATE TABLE summaries (
        id               BIGSERIAL PRIMARY KEY,
        session_id       BIGINT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        workload         TEXT NOT NULL,
        metric           TEXT NOT NULL,
        unit             TEXT NOT NULL,
        mean             DOUBLE PRECISION NOT NULL,
        std_error        DOUBLE PRECISION NOT NULL,
        n                BIGINT NOT NULL,
        higher_is_better BIGINT NOT NULL DEFAULT 0,
        is_primary       BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX summaries_by_session ON summaries(session_id);
    CREATE TABLE calibrations (
        id              BIGSERIAL PRIMARY KEY,
        label           TEXT NOT NULL,
        created_unix_ns BIGINT NOT NULL,
        kbench_version  TEXT NOT NULL,
        fingerprint     TEXT NOT NULL,
        sessions        BIGINT NOT NULL,
        boots           BIGINT NOT NULL
    );
    CREATE TABLE calibration_components (
        calibration_id  BIGINT NOT NULL REFERENCES calibrations(id) ON DELETE CASCADE,
        workload        TEXT NOT NULL,
        params          TEXT NOT NULL,
        variant         TEXT NOT NULL,
        metric          TEXT NOT NULL,
        pooled_quantile DOUBLE PRECISION,
        components      TEXT NOT NULL
    );
    CREATE INDEX calibration_components_by_id ON calibration_components(calibration_id);
"#;

/// Migrations of a PostgreSQL database past [`POSTGRES_BASELINE_VERSION`], in order;
/// each has its SQLite twin at the same index past the baseline in [`MIGRATIONS`].
pub const POSTGRES_MIGRATIONS: &[&str] = &[
    // 7
    r#"
    CREATE TABLE sequential_designs (
        id                 BIGSERIAL PRIMARY KEY,
        base_label         TEXT NOT NULL,
        new_label          TEXT NOT NULL,
        designed_by        TEXT NOT NULL,
        created_unix_ns    BIGINT NOT NULL,
        kbench_version     TEXT NOT NULL,
        command_line       TEXT NOT NULL,
        alpha              DOUBLE PRECISION NOT NULL,
        delta_pct          DOUBLE PRECISION NOT NULL,
        max_units_per_side BIGINT NOT NULL,
        max_time_s         DOUBLE PRECISION,
        use_calibration    BIGINT NOT NULL
    );
    CREATE INDEX sequential_designs_by_labels ON sequential_designs(base_label, new_label);
    CREATE TABLE sequential_looks (
        design_id       BIGINT NOT NULL REFERENCES sequential_designs(id) ON DELETE CASCADE,
        look_index      BIGINT NOT NULL,
        at_unix_ns      BIGINT NOT NULL,
        workload        TEXT NOT NULL,
        params          TEXT NOT NULL,
        variant         TEXT NOT NULL,
        metric          TEXT NOT NULL,
        n_a             BIGINT NOT NULL,
        n_b             BIGINT NOT NULL,
        shift_pct       DOUBLE PRECISION,
        low_pct         DOUBLE PRECISION,
        high_pct        DOUBLE PRECISION,
        outcome         TEXT NOT NULL
    );
    CREATE INDEX sequential_looks_by_design ON sequential_looks(design_id, look_index);
    "#,
    // 8: records are kbench's own JSON, written whole, so the casts cannot fail.
    r#"
    ALTER TABLE runs ADD COLUMN placement TEXT;
    ALTER TABLE runs ADD COLUMN has_series BIGINT NOT NULL DEFAULT 0;
    UPDATE runs SET placement = (record::jsonb -> 'placement')::text
    WHERE record LIKE '%"placement"%' AND jsonb_typeof(record::jsonb -> 'placement') = 'object';
    UPDATE runs SET has_series = 1
    WHERE record LIKE '%"series"%' AND jsonb_typeof(record::jsonb -> 'series') = 'array'
      AND jsonb_array_length(record::jsonb -> 'series') > 0;
    "#,
    // 9
    r#"
    ALTER TABLE sessions ADD COLUMN machine_id TEXT;
    CREATE INDEX sessions_by_machine_id ON sessions(machine, machine_id);
    "#,
    // 10
    r#"
    CREATE INDEX runs_measured_by_session ON runs(session_id)
    WHERE warmup = 0 AND error IS NULL AND coalesce(exit_status, 0) = 0;
    CREATE INDEX sessions_by_label_machine ON sessions(label, machine, machine_id);
    "#,
    // 11: the server checks a foreign key with a query per inserted row, run after the
    // COPY: seven a run for its values, half of its work in a push. A run's values go
    // in with the run, in one transaction, under the id just reserved for it, and
    // nothing is ever deleted; the store's integrity check counts any value without
    // its run. A run still names a session that must exist (one check a run): a caller
    // of `Store::insert_run` gives that id.
    r#"
    ALTER TABLE run_values DROP CONSTRAINT IF EXISTS run_values_run_id_fkey;
    "#,
    // 12
    r#"
    ALTER TABLE sequential_looks ADD COLUMN unit_level TEXT;
    ALTER TABLE sequential_designs ADD COLUMN boundary TEXT;
    "#,
];

/// The schema version this kbench writes.
pub fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}
