//! The shared backend: a PostgreSQL server many machines write at once. The schema
//! is created and migrated in one transaction under an advisory lock, so two kbench
//! starting at once on a new database migrate it once. TLS is rustls (no OpenSSL, so
//! the static binary stays static), used where the URL asks for it
//! (`sslmode=require`), against the Mozilla roots or the file `sslrootcert` names.
use crate::db::busy_timeout;
use crate::db::{Cell, Db, Row};
use crate::error::StoreError;
use crate::location::PostgresTarget;
use crate::schema::{current_version, POSTGRES_BASELINE, POSTGRES_BASELINE_VERSION};
use futures_util::{SinkExt, TryStreamExt};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Statement};

/// The advisory lock migrations run under (any constant, the same in every kbench).
const MIGRATION_LOCK: i64 = 0x6b62_656e_6368_0001;

/// How long to wait for a server that does not answer, unless the URL says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The client library's keepalive idle time when the URL names none.
const DEFAULT_KEEPALIVES_IDLE: Duration = Duration::from_secs(2 * 60 * 60);

/// How long a closing connection waits to tell the server it goes.
const CLOSE_WITHIN: Duration = Duration::from_secs(1);

/// One connection, driven on a runtime of its own in the calling thread: each request
/// is one `block_on`, and a query's rows are all read in one. (The synchronous
/// `postgres` client enters its runtime once a row: for a label's 70,000 values, half
/// of what reading them cost the reader.)
pub struct PostgresDb {
    runtime: tokio::runtime::Runtime,
    /// `None` once closing ([`Drop`]), when it is dropped to end the connection.
    client: Option<Client>,
    connection: Connection,
    /// Prepared once per connection: a push runs the same few statements many times.
    statements: HashMap<String, Statement>,
}

/// The task that reads and writes the connection's socket, and the error it ended
/// with: a request made after that fails as "connection closed", and is given this
/// error instead (the server's shutdown, the network's reset).
struct Connection {
    task: Option<tokio::task::JoinHandle<()>>,
    ended_by: Arc<Mutex<Option<tokio_postgres::Error>>>,
}

/// What connecting needs: the client's configuration and, when TLS is asked for, the
/// roots to trust.
struct Connect {
    config: Config,
    tls: Option<Tls>,
}

struct Tls {
    /// `sslrootcert`: trust only this file's certificates, not the Mozilla roots.
    root_cert: Option<PathBuf>,
}

/// Connects and makes sure the schema is current. With `existing` (the commands that
/// only read), a database without kbench's tables is refused rather than given them.
pub fn open(target: &PostgresTarget, existing: bool) -> Result<PostgresDb, StoreError> {
    let where_ = crate::location::Location::Postgres(target.clone()).display();
    let connect = connect_options(target)?;
    let cannot = |why: String| StoreError::Unusable(format!("{where_}: cannot connect: {why}"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| cannot(e.to_string()))?;
    let (client, connection) = runtime.block_on(connect_within(connect)).map_err(cannot)?;
    let mut db = PostgresDb {
        runtime,
        client: Some(client),
        connection,
        statements: HashMap::new(),
    };
    db.make_current(&where_, existing)?;
    // Records, rusage and configs are compressed by the server as it stores them:
    // lz4 costs a fraction of the CPU of the default pglz, the largest part of a
    // push's server time, and compresses records about as well. A server built
    // without lz4 refuses the setting and keeps pglz.
    let _ = db.batch_execute("SET default_toast_compression = 'lz4'");
    Ok(db)
}

/// Connects, giving up when the server has not completed the startup (TLS, the
/// authentication) within three times the connect timeout (30 s unless the URL says):
/// the client library's own timeout covers only the TCP connect, and a server that
/// accepts and then says nothing must not hang kbench.
async fn connect_within(connect: Connect) -> Result<(Client, Connection), String> {
    let deadline = 3 * connect
        .config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT);
    let tls = match &connect.tls {
        Some(tls) => Some(rustls_connector(tls).map_err(|e| e.to_string())?),
        None => None,
    };
    let config = connect.config;
    let connected = tokio::time::timeout(deadline, async {
        match tls {
            None => config.connect(NoTls).await.map(Connection::spawn),
            Some(tls) => config.connect(tls).await.map(Connection::spawn),
        }
    })
    .await;
    match connected {
        Ok(Ok(connected)) => Ok(connected),
        Ok(Err(e)) => Err(describe_error(&e)),
        Err(_) => Err(format!(
            "the server did not complete the connection within {} s",
            deadline.as_secs()
        )),
    }
}

impl Connection {
    /// Drives `connection` in a task of the current runtime, which runs whenever a
    /// request is waited for.
    fn spawn<S, T>(
        (client, connection): (Client, tokio_postgres::Connection<S, T>),
    ) -> (Client, Connection)
    where
        tokio_postgres::Connection<S, T>:
            std::future::Future<Output = Result<(), tokio_postgres::Error>> + Send + 'static,
    {
        let ended_by = Arc::new(Mutex::new(None));
        let keep = Arc::clone(&ended_by);
        let task = tokio::spawn(async move {
            if let Err(e) = connection.await {
                if let Ok(mut slot) = keep.lock() {
                    *slot = Some(e);
                }
            }
        });
        let connection = Connection {
            task: Some(task),
            ended_by,
        };
        (client, connection)
    }

    /// `error`, or when it is only "connection closed", why the connection ended.
    fn explained(&self, error: StoreError) -> StoreError {
        match error {
            StoreError::Postgres(e) if e.is_closed() => {
                let why = self.ended_by.lock().ok().and_then(|mut slot| slot.take());
                StoreError::Postgres(why.unwrap_or(e))
            }
            other => other,
        }
    }
}

impl Drop for PostgresDb {
    /// Tells the server the client goes, as the synchronous client did: the client
    /// dropped, its connection sends Terminate and ends.
    fn drop(&mut self) {
        self.statements.clear();
        self.client = None;
        if let Some(task) = self.connection.task.take() {
            // The timer is made inside the runtime, which it needs.
            let _ = self
                .runtime
                .block_on(async { tokio::time::timeout(CLOSE_WITHIN, task).await });
        }
    }
}

fn connect_options(target: &PostgresTarget) -> Result<Connect, StoreError> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let (mut config, tls) = match target {
        PostgresTarget::Url(url) => {
            let (url, tls) = kbench_url_options(url)?;
            let config: Config = url.parse().map_err(|e: tokio_postgres::Error| {
                StoreError::Unusable(format!(
                    "{}: not a PostgreSQL URL: {}",
                    crate::location::without_password(&url),
                    describe_error(&e)
                ))
            })?;
            (config, tls)
        }
        PostgresTarget::SocketDir { dir, port } => {
            let mut config = Config::new();
            config.host_path(dir).port(*port);
            if let Some(db) = env("PGDATABASE") {
                config.dbname(&db);
            }
            (config, None)
        }
    };
    if config.get_user().is_none() {
        match env("PGUSER")
            .or_else(|| env("USER"))
            .or_else(|| env("LOGNAME"))
        {
            Some(user) => config.user(&user),
            None => {
                return Err(StoreError::Unusable(
                    "no PostgreSQL user: name one in the URL (postgres://USER@HOST/DB) or $PGUSER"
                        .into(),
                ))
            }
        };
    }
    if config.get_password().is_none() {
        if let Some(password) = env("PGPASSWORD") {
            config.password(password);
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    // A server that stops answering (a board's network gone) is noticed in about a
    // minute rather than hours: keepalives while idle, and a limit on unacknowledged
    // data while a push writes. A URL's own keepalive settings stand.
    if config.get_keepalives() && config.get_keepalives_idle() == DEFAULT_KEEPALIVES_IDLE {
        config
            .keepalives_idle(Duration::from_secs(30))
            .keepalives_interval(Duration::from_secs(10))
            .keepalives_retries(3);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(Duration::from_secs(60));
    }
    // A lock held by another writer (the migration's, a session being pushed by
    // another push) is waited for as long as SQLite's busy timeout, then refused.
    let lock_timeout = format!("-c lock_timeout={}", busy_timeout().as_millis());
    let options = match config.get_options() {
        Some(own) => format!("{own} {lock_timeout}"),
        None => lock_timeout,
    };
    config.options(&options);
    config.application_name("kbench");
    Ok(Connect { config, tls })
}

/// Takes out of a URL what kbench reads itself: `sslrootcert=FILE`, and `sslmode`
/// `verify-ca` or `verify-full` (rustls always verifies the server's certificate and
/// name, so both are `require` to the client library). Returns the URL left and
/// whether TLS is asked for.
fn kbench_url_options(url: &str) -> Result<(String, Option<Tls>), StoreError> {
    let (base, Some(query)) = crate::location::split_query(url) else {
        return Ok((url.to_string(), None));
    };
    let mut kept = Vec::new();
    let mut root_cert = None;
    let mut tls = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "sslrootcert" => root_cert = Some(PathBuf::from(percent_decoded(value))),
            "sslmode" => match value {
                "disable" | "prefer" | "allow" => kept.push("sslmode=disable".to_string()),
                "require" | "verify-ca" | "verify-full" => {
                    tls = true;
                    kept.push("sslmode=require".to_string());
                }
                other => {
                    return Err(StoreError::Unusable(format!(
                        "sslmode={other}: not disable, prefer, require, verify-ca or verify-full"
                    )))
                }
            },
            _ => kept.push(pair.to_string()),
        }
    }
    if root_cert.is_some() && !tls {
        return Err(StoreError::Unusable(
            "sslrootcert names the server's CA, but the URL asks for no TLS: add sslmode=require"
                .into(),
        ));
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, tls.then_some(Tls { root_cert })))
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn rustls_connector(tls: &Tls) -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    match &tls.root_cert {
        Some(path) => {
            let unreadable = |e: &dyn std::fmt::Display| {
                StoreError::Unusable(format!("sslrootcert {}: {e}", path.display()))
            };
            let certs = rustls_pki_types::CertificateDer::pem_file_iter(path)
                .map_err(|e| unreadable(&e))?;
            for cert in certs {
                roots
                    .add(cert.map_err(|e| unreadable(&e))?)
                    .map_err(|e| unreadable(&e))?;
            }
            if roots.is_empty() {
                return Err(unreadable(&"no certificate in it"));
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Unusable(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl PostgresDb {
    /// Creates or migrates the schema unless it is current; a reader that finds it
    /// current writes nothing, so a read-only role can compare.
    fn make_current(&mut self, where_: &str, existing: bool) -> Result<(), StoreError> {
        match schema_version_at_open(self)? {
            Some(v) if v == current_version() => return Ok(()),
            Some(v) if v > current_version() => return Err(newer(where_, v)),
            // A version table without its row is no more a kbench database.
            None | Some(0) if existing => {
                return Err(StoreError::Unusable(format!(
                    "{where_}: no kbench database there (kbench run --db URL makes one)"
                )))
            }
            _ => {}
        }
        (self as &mut dyn Db).in_transaction(|db| {
            db.execute(
                "SELECT pg_advisory_xact_lock(?1)",
                &[Cell::Int(MIGRATION_LOCK)],
            )?;
            // Under the lock: another kbench may have made it current meanwhile.
            let version = if let Some(version) = schema_version(db)? {
                version
            } else {
                let sessions = db.query_one(&table_exists("sessions"), &[])?.flag(0)?;
                if sessions {
                    return Err(StoreError::Unusable(format!(
                        "{where_}: a PostgreSQL database with a sessions table, but not kbench's"
                    )));
                }
                for statement in split_statements(POSTGRES_BASELINE) {
                    db.execute(statement, &[])?;
                }
                db.execute(
                    "INSERT INTO kbench_schema (version) VALUES (?1)",
                    &[Cell::Int(POSTGRES_BASELINE_VERSION)],
                )?;
                POSTGRES_BASELINE_VERSION
            };
            if version > current_version() {
                return Err(newer(where_, version));
            }
            for (i, sql) in crate::schema::POSTGRES_MIGRATIONS
                .iter()
                .enumerate()
                .skip((version - POSTGRES_BASELINE_VERSION).max(0) as usize)
            {
                for statement in split_statements(sql) {
                    db.execute(statement, &[])?;
                }
                db.execute(
                    "UPDATE kbench_schema SET version = ?1",
                    &[Cell::Int(POSTGRES_BASELINE_VERSION + i as i64 + 1)],
                )?;
            }
            Ok(())
        })
    }

    /// Runs one request of the client to its end.
    fn request<T>(
        &self,
        request: impl AsyncFnOnce(&Client) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let Some(client) = &self.client else {
            return Err(StoreError::Unusable("the connection is closed".into()));
        };
        self.runtime
            .block_on(request(client))
            .map_err(|e| self.connection.explained(e))
    }

    fn statement(&mut self, sql: &str) -> Result<Statement, StoreError> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let text = numbered_parameters(sql);
        let statement = self.request(async |client| Ok(client.prepare(&text).await?))?;
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    fn batch_execute(&self, sql: &str) -> Result<(), StoreError> {
        self.request(async |client| Ok(client.batch_execute(sql).await?))
    }
}

/// [`schema_version`] outside a transaction, in one statement: the version table
/// read, and "no such table" taken for no kbench tables. (An error would end a
/// transaction, and the catalog view costs a new server process more than a
/// millisecond to plan, on every command's way in.)
fn schema_version_at_open(db: &mut dyn Db) -> Result<Option<i64>, StoreError> {
    match stored_version(db) {
        Ok(version) => Ok(Some(version)),
        Err(StoreError::Postgres(e)) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The version kbench_schema holds (0 for no row).
fn stored_version(db: &mut dyn Db) -> Result<i64, StoreError> {
    let version = db.query_one("SELECT max(version) FROM kbench_schema", &[])?;
    Ok(version.opt_i64(0)?.unwrap_or(0))
}

/// The version of kbench's schema; `None` when the database has no kbench tables
/// (0 for a version table with no row).
fn schema_version(db: &mut dyn Db) -> Result<Option<i64>, StoreError> {
    if !db.query_one(&table_exists("kbench_schema"), &[])?.flag(0)? {
        return Ok(None);
    }
    stored_version(db).map(Some)
}

/// Whether the schema kbench uses has table `name`. Read from pg_tables, not with
/// to_regclass: the catalog cache may still hold "no such table" from before the
/// migration lock was taken (an advisory lock does not refresh it).
fn table_exists(name: &str) -> String {
    format!(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables
                        WHERE schemaname = current_schema() AND tablename = '{name}')"
    )
}

fn newer(where_: &str, version: i64) -> StoreError {
    StoreError::Unusable(format!(
        "{where_}: schema version {version} is newer than this kbench understands ({})",
        current_version()
    ))
}

/// The statements of a schema text, one by one: the extended protocol runs one at a
/// time, and the texts hold no `;` but between statements.
fn split_statements(sql: &str) -> impl Iterator<Item = &str> {
    sql.split(';').map(str::trim).filter(|s| !s.is_empty())
}

/// `?1` as PostgreSQL writes it, `$1`. The store's SQL has no `?` in a literal.
fn numbered_parameters(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

impl ToSql for Cell {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut tokio_postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Cell::Null => Ok(IsNull::Yes),
            Cell::Int(v) => match *ty {
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::FLOAT8 => (*v as f64).to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Cell::Real(v) => match *ty {
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            // PostgreSQL's text holds no NUL (a console's stray byte in an error
            // message): it is kept as U+FFFD rather than failing the write.
            Cell::Text(v) if v.contains('\0') => {
                v.replace('\0', "\u{fffd}").as_str().to_sql(ty, out)
            }
            Cell::Text(v) => v.as_str().to_sql(ty, out),
            Cell::Blob(v) => v.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        // Which conversion fits is decided per value in to_sql.
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// Sets `cell` to column `i` of `row`, in the cell's own text buffer where it has one.
fn fill_cell(cell: &mut Cell, row: &tokio_postgres::Row, i: usize) -> Result<(), StoreError> {
    let ty = row.columns()[i].type_();
    let value = match *ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Cell::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)?
            .map(|v| Cell::Int(i64::from(v))),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)?
            .map(|v| Cell::Int(i64::from(v))),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)?
            .map(|v| Cell::Int(i64::from(v))),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map(Cell::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)?
            .map(|v| Cell::Real(f64::from(v))),
        Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i)?.map(Cell::Blob),
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
            match row.try_get::<_, Option<&str>>(i)? {
                Some(text) => {
                    cell.set_text(text);
                    return Ok(());
                }
                None => None,
            }
        }
        ref other => {
            return Err(StoreError::Corrupt(format!(
                "column {i} is of type {other}, which kbench does not read"
            )))
        }
    };
    *cell = value.unwrap_or(Cell::Null);
    Ok(())
}

/// COPY's binary format: the signature, no flags, no header extension.
const COPY_BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// A field of COPY's binary format: its length (-1 for NULL), then the column type's
/// binary form. The server reads the bytes as the column's type whatever they were, so
/// a cell that is not of the column's kind is refused here rather than stored as
/// something else. Binary, not text: the server neither splits lines nor parses
/// numbers, and a run's record goes in without a scan for characters to escape.
fn push_copy_binary(cell: &Cell, ty: &Type, out: &mut Vec<u8>) -> Result<(), String> {
    let field = |out: &mut Vec<u8>, bytes: &[u8]| {
        out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
        out.extend_from_slice(bytes);
    };
    match (cell, ty) {
        (Cell::Null, _) => out.extend_from_slice(&(-1i32).to_be_bytes()),
        (Cell::Int(v), &Type::INT8) => field(out, &v.to_be_bytes()),
        (Cell::Int(v), &Type::FLOAT8) => field(out, &(*v as f64).to_be_bytes()),
        (Cell::Real(v), &Type::FLOAT8) => field(out, &v.to_be_bytes()),
        // PostgreSQL's text holds no NUL (a console's stray byte in an error message):
        // it is kept as U+FFFD rather than failing the write, as ToSql does.
        (Cell::Text(v), &Type::TEXT) if v.contains('\0') => {
            field(out, v.replace('\0', "\u{fffd}").as_bytes())
        }
        (Cell::Text(v), &Type::TEXT) => field(out, v.as_bytes()),
        (Cell::Blob(v), &Type::BYTEA) => field(out, v),
        (cell, ty) => {
            let kind = match cell {
                Cell::Int(_) => "an integer",
                Cell::Real(_) => "a real",
                Cell::Text(_) => "text",
                Cell::Blob(_) => "bytes",
                Cell::Null => "NULL",
            };
            return Err(format!("{kind} does not go into a column of type {ty}"));
        }
    }
    Ok(())
}

fn as_params(params: &[Cell]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Db for PostgresDb {
    fn execute(&mut self, sql: &str, params: &[Cell]) -> Result<u64, StoreError> {
        let statement = self.statement(sql)?;
        self.request(async |client| Ok(client.execute(&statement, &as_params(params)).await?))
    }

    fn query_each(
        &mut self,
        sql: &str,
        params: &[Cell],
        each: &mut dyn FnMut(&mut Row) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let statement = self.statement(sql)?;
        let columns = statement.columns().len();
        // Rows as they arrive: the next ones come while these are turned into runs.
        self.request(async |client| {
            let rows = client.query_raw(&statement, as_params(params)).await?;
            let mut rows = std::pin::pin!(rows);
            let mut row = Row::default();
            while let Some(r) = rows.try_next().await? {
                row.refill(columns, |i, cell| fill_cell(cell, &r, i))?;
                each(&mut row)?;
            }
            Ok(())
        })
    }

    fn begin_write(&mut self) -> Result<(), StoreError> {
        self.batch_execute("BEGIN")
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.batch_execute("COMMIT")
    }

    fn rollback(&mut self) {
        // A lost connection rolls the transaction back on the server by itself.
        let _ = self.batch_execute("ROLLBACK");
    }

    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Cell>],
    ) -> Result<(), StoreError> {
        if rows.is_empty() {
            return Ok(());
        }
        let columns = columns.join(", ");
        let types: Vec<Type> = self
            .statement(&format!("SELECT {columns} FROM {table} LIMIT 0"))?
            .columns()
            .iter()
            .map(|c| c.type_().clone())
            .collect();
        let mut data = Vec::with_capacity(COPY_BINARY_HEADER.len() + 64 * rows.len());
        data.extend_from_slice(COPY_BINARY_HEADER);
        for row in rows {
            data.extend_from_slice(&(row.len() as i16).to_be_bytes());
            for (cell, ty) in row.iter().zip(&types) {
                push_copy_binary(cell, ty, &mut data)
                    .map_err(|e| StoreError::Unusable(format!("rows of {table}: {e}")))?;
            }
        }
        data.extend_from_slice(&(-1i16).to_be_bytes());
        let copy = format!("COPY {table} ({columns}) FROM STDIN (FORMAT binary)");
        self.request(async |client| {
            let sink = client.copy_in::<_, bytes::Bytes>(&copy).await?;
            let mut sink = std::pin::pin!(sink);
            sink.send(bytes::Bytes::from(data)).await?;
            sink.finish().await?;
            Ok(())
        })
    }

    fn refresh_statistics(&mut self) -> Result<(), StoreError> {
        // Not the runs' rusage, tasks and record: no query filters or joins on them,
        // and sampling them decompresses thousands of records, a third of the time.
        self.batch_execute(
            "ANALYZE sessions, run_values, runs (id, session_id, workload, params, variant,
                 run_index, warmup, exit_status, start_unix_ns, end_unix_ns, pinned_cpus,
                 cpus_used, error, ab_side, placement, has_series)",
        )?;
        Ok(())
    }

    fn reserve_ids(&mut self, table: &str, n: usize) -> Result<Vec<i64>, StoreError> {
        // OFFSET 0 keeps the sequence's name a subquery the planner cannot pull up, so
        // it is looked up once, not once an id.
        self.query(
            &format!(
                "SELECT nextval(s.seq) FROM (SELECT pg_get_serial_sequence('{table}', 'id')::regclass
                     AS seq OFFSET 0) s, generate_series(1, ?1)"
            ),
            &[Cell::Int(n as i64)],
        )?
        .iter()
        .map(|r| r.i64(0))
        .collect()
    }

    fn integrity_check(&mut self) -> Result<String, StoreError> {
        // The server keeps its own pages; what kbench can check is that no row
        // outlives what it belongs to: a value's run has no foreign key here (schema
        // migration 11).
        let orphans = self
            .query(
                "SELECT (SELECT count(*) FROM runs r WHERE NOT EXISTS
                            (SELECT 1 FROM sessions s WHERE s.id = r.session_id))
                      + (SELECT count(*) FROM run_values v WHERE NOT EXISTS
                            (SELECT 1 FROM runs r WHERE r.id = v.run_id))",
                &[],
            )?
            .first()
            .map(|r| r.opt_i64(0))
            .transpose()?
            .flatten()
            .unwrap_or(0);
        Ok(if orphans == 0 {
            "ok".into()
        } else {
            format!("{orphans} rows without their session or run")
        })
    }
}

pub use crate::error::describe_error;

pub use crate::backend_errors::{is_connection_lost, is_lock_timeout, is_permission_denied};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_binary_fields_are_the_column_types_binary_forms() {
        let field = |cell: Cell, ty: Type| {
            let mut out = Vec::new();
            push_copy_binary(&cell, &ty, &mut out).map(|()| out)
        };
        assert_eq!(field(Cell::Null, Type::TEXT).unwrap(), [0xff; 4]);
        assert_eq!(
            field(Cell::Int(-2), Type::INT8).unwrap(),
            [0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]
        );
        let real = field(Cell::Real(8.25), Type::FLOAT8).unwrap();
        assert_eq!(real[..4], [0, 0, 0, 8]);
        assert_eq!(f64::from_be_bytes(real[4..].try_into().unwrap()), 8.25);
        let widened = field(Cell::Int(3), Type::FLOAT8).unwrap();
        assert_eq!(f64::from_be_bytes(widened[4..].try_into().unwrap()), 3.0);
        assert_eq!(
            field(Cell::Text("µs\t".into()), Type::TEXT).unwrap(),
            b"\0\0\0\x04\xc2\xb5s\t"
        );
        assert_eq!(
            field(Cell::Text("nul\0".into()), Type::TEXT).unwrap()[4..],
            *"nul\u{fffd}".as_bytes()
        );
        assert_eq!(
            field(Cell::Blob(vec![0, 0xab]), Type::BYTEA).unwrap(),
            [0, 0, 0, 2, 0, 0xab]
        );
        assert_eq!(
            field(Cell::Text("12345678".into()), Type::INT8).unwrap_err(),
            "text does not go into a column of type int8"
        );
        assert!(field(Cell::Real(0.5), Type::INT8).is_err());
    }

    #[test]
    fn numbered_parameters_become_dollars() {
        assert_eq!(
            numbered_parameters("SELECT 1 WHERE a = ?1 AND b = ?12 AND c = '?'"),
            "SELECT 1 WHERE a = $1 AND b = $12 AND c = '?'"
        );
    }

    #[test]
    fn kbench_reads_its_own_url_options() {
        let (url, tls) =
            kbench_url_options("postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Fca.pem")
                .unwrap();
        assert_eq!(url, "postgres://u@h/db?sslmode=require");
        assert_eq!(tls.unwrap().root_cert, Some(PathBuf::from("/ca.pem")));
        let (url, tls) = kbench_url_options("postgres://u@h/db?host=/run/pg").unwrap();
        assert_eq!(url, "postgres://u@h/db?host=/run/pg");
        assert!(tls.is_none());
        assert!(kbench_url_options("postgres://u@h/db?sslmode=bogus").is_err());
        assert!(kbench_url_options("postgres://u@h/db?sslrootcert=/ca.pem").is_err());
    }

    #[test]
    fn the_baseline_splits_into_statements() {
        let statements: Vec<&str> = split_statements(POSTGRES_BASELINE).collect();
        assert!(statements.iter().all(|s| !s.contains(';')));
        assert!(statements.len() >= 10);
    }
}
