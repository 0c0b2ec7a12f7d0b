//! PostgreSQL (feature `postgres`): the SQL workloads of [`super`] over tokio-postgres, plain TCP
//! without TLS.
//!
//! - **One connection per session.** `open` connects and spawns the connection future on the
//!   current worker with `tokio::task::spawn_local` (sessions live on the engine's
//!   single-threaded runtimes inside a `LocalSet`), then prepares the workload's statements
//!   once. A statement the server refuses to prepare (a missing table, a syntax error) does not
//!   fail `open`: it is prepared again on each `execute` and reported there as a `driver`
//!   outcome with its SQLSTATE, so a run shows the real cause instead of reconnecting.
//! - **TPC-B** runs pgbench's built-in script (`BEGIN`, three `UPDATE`s, a `SELECT`, an
//!   `INSERT`, `END`) statement by statement, as pgbench does in `-M prepared` mode;
//!   **TpcBFunction** runs `SELECT pgbench_tx($1, $2, $3, $4)`, see [`create_tpcb_function`].
//! - **Errors.** A server error (`ERROR` severity: 40001 serialization failure, 42P01
//!   undefined table, …) is class `driver` with detail `SQLSTATE 42P01: relation "…" does not
//!   exist`; a transaction it aborted is rolled back, so the session goes on. A lost connection
//!   (closed socket, or a `FATAL` such as 57P01 from `pg_terminate_backend`) is class `read`,
//!   which makes the engine drop the session and open a new one. `open` failures are class
//!   `connect` with the SQLSTATE and the server's text (28P01 wrong password, 3D000 missing
//!   database) or the socket error; the password never appears in any message.
//! - **Custom statements** are prepared with the parameter types the server infers, and every
//!   parameter is bound as *text* (the wire's text format, as psql and libpq send them), so the
//!   server parses `'42'` as whatever `$1` is: `SELECT * FROM t WHERE id = $1` works for an
//!   `int`, `bigint`, `numeric`, `uuid`, `date` or `text` column without casts. A statement
//!   whose parameter type the server cannot infer needs a cast (`$1::int`). Placeholders are
//!   PostgreSQL's `$1, $2, …`; one statement per workload.
//! - **Pipelining** ([`PgOptions::pipeline`] = N > 1, single-statement workloads only: the
//!   suite's insert/select-pk/scan/update/delete/join, TpcBFunction, Custom): each `execute(op)`
//!   runs the N ops `N·op … N·op+N−1` concurrently on the connection (tokio-postgres writes
//!   all N Bind/Execute/Sync requests before reading the answers) and returns one outcome for
//!   the batch, with the bytes summed; the caller counts [`PgDriver::ops_per_execute`] ops per
//!   execute. If any statement of the batch fails the batch's outcome is that failure (a
//!   connection loss first, otherwise the first error) and its detail says how many failed.
//!   **TPC-B** pipelines whole transactions: the 7 statements of each of the N transactions
//!   are written before any answer is read (one round trip for N transactions, as pgbench's
//!   `\startpipeline` scripts do); each transaction succeeds or fails on its own, since every
//!   statement carries its own Sync and a failed one only aborts its transaction, whose `END`
//!   then rolls it back. The suite's transaction uses a value it has just read, so it refuses
//!   N > 1.
//! - **Bytes** are the payload, counted exactly but without protocol framing: `bytes_out` is
//!   the bound parameters as sent in Bind (a 4-byte length plus the value per parameter),
//!   `bytes_in` the result rows as received in DataRow (a 4-byte length plus the value per
//!   column; results come in binary format). Statements that return no rows count 0 in.

use super::{
    custom_params, suite_key, suite_new_id, tpcb_params, SqlWorkload, SuiteOp, ACCOUNTS_PER_SCALE,
    BRANCHES_PER_SCALE, SUITE_ROWS, TELLERS_PER_SCALE,
};
use crate::workload::mix64;
use bytes::{Bytes, BytesMut};
use futures_util::future::join_all;
use futures_util::SinkExt;
use perfbase_core::{Class, Driver, Outcome, Session};
use std::cell::RefCell;
use std::error::Error as StdError;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio_postgres::error::Severity;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

/// pgbench switches `aid` to `bigint` from this scale on; the driver binds `int` values.
const SCALE_32BIT_THRESHOLD: u32 = 20_000;
/// pgbench's default fillfactor.
const FILLFACTOR: u32 = 100;
/// Bytes of COPY data sent per message while loading.
const COPY_CHUNK: usize = 256 * 1024;

/// Options of the PostgreSQL driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgOptions {
    /// Statements in flight per connection for single-statement workloads (≥ 1; 1 = none):
    /// each `execute` then runs this many ops at once, see the module docs.
    pub pipeline: usize,
}

impl Default for PgOptions {
    fn default() -> PgOptions {
        PgOptions { pipeline: 1 }
    }
}

/// Why the PostgreSQL driver or a setup step could not do its work. Messages never contain
/// the password.
#[derive(Debug, Error)]
pub enum PgError {
    /// The connection URL does not parse: use `postgres://user:password@host:port/database`
    /// (or libpq's `host=… user=… dbname=…` form).
    #[error("'{url}' is not a usable PostgreSQL URL ({reason}); use postgres://user:password@host:port/database")]
    Url { url: String, reason: String },
    /// No connection: the server is not running or not reachable, or it refused the login
    /// (wrong user or password: SQLSTATE 28P01, missing database: 3D000).
    #[error("cannot connect to {target}: {reason}; check that the server is running and that the user, password and database are right")]
    Connect { target: String, reason: String },
    /// A setup step (creating or filling tables, creating the function) failed: the message
    /// names the step and carries the server's SQLSTATE; the user needs the rights it asks for.
    #[error("{step} failed on {target}: {reason}")]
    Setup {
        target: String,
        step: String,
        reason: String,
    },
    /// A combination this driver does not support; the message says what to use instead.
    #[error("{0}")]
    Unsupported(String),
}

/// What [`init_tpcb`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitReport {
    /// Rows loaded (accounts, tellers and branches).
    pub rows: u64,
    /// Wall time of the whole initialisation.
    pub elapsed: Duration,
}

/// `url` with its password replaced by `***`, for messages (URL or `key=value` form).
pub fn redacted(url: &str) -> String {
    if let Some(scheme_end) = url.find("://") {
        let (scheme, rest) = url.split_at(scheme_end + 3);
        // The user info ends at the last '@' (a raw '@' or '/' may sit in the password).
        if let Some(at) = rest.rfind('@') {
            let userinfo = &rest[..at];
            if let Some(colon) = userinfo.find(':') {
                return format!("{scheme}{}:***{}", &userinfo[..colon], &rest[at..]);
            }
        }
        // A password can also be given as a query parameter.
        return redact_keyword(url, "password=", true);
    }
    redact_keyword(url, "password", false)
}

/// Replaces the value after each `key` (`password=` in a URL query, or `password = value` /
/// `password='…'` in a libpq key-value string) with `***`.
fn redact_keyword(s: &str, key: &str, query: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(key) {
        out.push_str(&rest[..i + key.len()]);
        let mut after = &rest[i + key.len()..];
        if !query {
            let trimmed = after.trim_start();
            let Some(eq) = trimmed.strip_prefix('=') else {
                rest = after;
                continue;
            };
            out.push_str(&after[..after.len() - trimmed.len()]);
            out.push('=');
            let value = eq.trim_start();
            out.push_str(&eq[..eq.len() - value.len()]);
            after = value;
        }
        out.push_str("***");
        let end = if query {
            after.find('&').unwrap_or(after.len())
        } else if let Some(quoted) = after.strip_prefix('\'') {
            // A quoted value ends at the next unescaped quote.
            let mut end = after.len();
            let mut escaped = false;
            for (j, c) in quoted.char_indices() {
                match c {
                    '\\' if !escaped => escaped = true,
                    '\'' if !escaped => {
                        end = j + 2;
                        break;
                    }
                    _ => escaped = false,
                }
            }
            end
        } else {
            after.find(char::is_whitespace).unwrap_or(after.len())
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The connection target as `postgres://user@host:port/database`, from the parsed config.
fn describe_target(config: &Config) -> String {
    use tokio_postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => match config.get_hostaddrs().first() {
            Some(a) => a.to_string(),
            None => "localhost".to_string(),
        },
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{host}:{port}/{db}")
}

fn parse_config(url: &str) -> Result<Config, PgError> {
    let mut config: Config = url.parse().map_err(|e| PgError::Url {
        url: redacted(url),
        reason: describe(&e),
    })?;
    if config.get_user().is_none() {
        return Err(PgError::Url {
            url: redacted(url),
            reason: "no user name".into(),
        });
    }
    if config.get_application_name().is_none() {
        config.application_name("perfbase");
    }
    Ok(config)
}

/// A one-line description of an error: `SQLSTATE code: message` for the server's errors,
/// the error and its cause otherwise.
fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("SQLSTATE {}: {}", db.code().code(), db.message());
    }
    match e.source() {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

/// Whether a server error means the connection is gone (`FATAL`, `PANIC`, or SQLSTATE class
/// 08, connection exception).
fn ends_connection(db: &tokio_postgres::error::DbError) -> bool {
    matches!(
        db.parsed_severity(),
        Some(Severity::Fatal) | Some(Severity::Panic)
    ) || db.code().code().starts_with("08")
}

/// A result cell's raw length; accepts every type (results arrive in binary format).
struct RawLen(usize);

impl<'a> FromSql<'a> for RawLen {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<RawLen, Box<dyn StdError + Sync + Send>> {
        Ok(RawLen(raw.len()))
    }

    fn from_sql_null(_: &Type) -> Result<RawLen, Box<dyn StdError + Sync + Send>> {
        Ok(RawLen(0))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// The DataRow payload of `rows`: per column a 4-byte length and the value.
fn rows_bytes(rows: &[Row]) -> u64 {
    rows.iter()
        .map(|row| {
            (0..row.len())
                .map(|i| 4 + row.try_get::<_, RawLen>(i).map_or(0, |r| r.0) as u64)
                .sum::<u64>()
        })
        .sum()
}

/// A custom statement's parameter, bound in text format whatever its type: the server
/// parses it as the type it inferred for the placeholder.
#[derive(Debug)]
struct TextParam(String);

impl ToSql for TextParam {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, _: &Type) -> tokio_postgres::types::Format {
        tokio_postgres::types::Format::Text
    }

    to_sql_checked!();
}

/// The suite's 32-character value for op `op` (hex, like the preloaded `md5` values).
fn suite_value(op: u64) -> String {
    format!("{:016x}{:016x}", mix64(op), mix64(op ^ 0x7375_6974))
}

/// The suite's order quantity for op `op` (1..=10).
fn suite_qty(op: u64) -> i32 {
    1 + (mix64(op ^ 0x0071_7479) % 10) as i32
}

/// The single statement of each single-statement suite op.
fn suite_sql(op: SuiteOp) -> Option<&'static str> {
    Some(match op {
        SuiteOp::Insert => "INSERT INTO perfbase_items (id, k, v) VALUES ($1, $2, $3)",
        SuiteOp::SelectPk => "SELECT id, k, v FROM perfbase_items WHERE id = $1",
        SuiteOp::Scan => "SELECT count(*), sum(k) FROM perfbase_items",
        SuiteOp::Update => "UPDATE perfbase_items SET v = $2 WHERE k = $1",
        SuiteOp::Delete => "DELETE FROM perfbase_items WHERE id = $1",
        SuiteOp::Join => {
            "SELECT i.id, i.v, o.id, o.qty FROM perfbase_items i \
             JOIN perfbase_orders o ON o.item_id = i.id WHERE i.id = $1"
        }
        SuiteOp::Transaction => return None,
    })
}

/// pgbench's built-in TPC-B script, prepared.
struct TpcbStatements {
    begin: Statement,
    update_account: Statement,
    select_account: Statement,
    update_teller: Statement,
    update_branch: Statement,
    insert_history: Statement,
    end: Statement,
}

/// The suite's 5-operation transaction, prepared.
struct TransactionStatements {
    begin: Statement,
    select_item: Statement,
    update_item: Statement,
    insert_order: Statement,
    select_orders: Statement,
    update_order: Statement,
    commit: Statement,
}

enum Statements {
    Tpcb(Box<TpcbStatements>),
    Transaction(Box<TransactionStatements>),
    /// One statement per op: suite single ops, TpcBFunction, Custom.
    Single(Statement),
}

async fn prepare(
    client: &Client,
    workload: &SqlWorkload,
) -> Result<Statements, tokio_postgres::Error> {
    Ok(match workload {
        SqlWorkload::TpcB { .. } => Statements::Tpcb(Box::new(TpcbStatements {
            begin: client.prepare("BEGIN").await?,
            update_account: client
                .prepare("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2")
                .await?,
            select_account: client
                .prepare("SELECT abalance FROM pgbench_accounts WHERE aid = $1")
                .await?,
            update_teller: client
                .prepare("UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2")
                .await?,
            update_branch: client
                .prepare("UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2")
                .await?,
            insert_history: client
                .prepare(
                    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
                     VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
                )
                .await?,
            end: client.prepare("END").await?,
        })),
        SqlWorkload::TpcBFunction { .. } => {
            Statements::Single(client.prepare("SELECT pgbench_tx($1, $2, $3, $4)").await?)
        }
        SqlWorkload::Suite(op) => match suite_sql(*op) {
            Some(sql) => Statements::Single(client.prepare(sql).await?),
            None => Statements::Transaction(Box::new(TransactionStatements {
                begin: client.prepare("BEGIN").await?,
                select_item: client
                    .prepare("SELECT k, v FROM perfbase_items WHERE id = $1")
                    .await?,
                update_item: client
                    .prepare("UPDATE perfbase_items SET v = $2 WHERE id = $1")
                    .await?,
                insert_order: client
                    .prepare(
                        "INSERT INTO perfbase_orders (item_id, qty) VALUES ($1, $2) RETURNING id",
                    )
                    .await?,
                select_orders: client
                    .prepare("SELECT count(*), sum(qty) FROM perfbase_orders WHERE item_id = $1")
                    .await?,
                update_order: client
                    .prepare("UPDATE perfbase_orders SET qty = qty + 1 WHERE id = $1")
                    .await?,
                commit: client.prepare("COMMIT").await?,
            })),
        },
        SqlWorkload::Custom { sql, .. } => Statements::Single(client.prepare(sql).await?),
    })
}

struct Shared {
    config: Config,
    /// `postgres://user@host:port/db`, for messages.
    target: String,
    workload: SqlWorkload,
    pipeline: usize,
}

/// The PostgreSQL driver: the parsed connection settings and the workload, shared by all
/// sessions.
pub struct PgDriver {
    shared: Arc<Shared>,
}

impl PgDriver {
    /// Checks the URL and the workload/options combination; connects only in `open`.
    pub fn new(url: &str, workload: SqlWorkload, options: PgOptions) -> Result<PgDriver, PgError> {
        let config = parse_config(url)?;
        if options.pipeline == 0 {
            return Err(PgError::Unsupported(
                "pipeline must be at least 1 (1 = no pipelining)".into(),
            ));
        }
        if options.pipeline > 1 && matches!(workload, SqlWorkload::Suite(SuiteOp::Transaction)) {
            return Err(PgError::Unsupported(format!(
                "pipeline {}: the suite's transaction updates the order it has just inserted, \
                 so its statements cannot be sent ahead; use pipeline 1",
                options.pipeline
            )));
        }
        if let SqlWorkload::Custom { sql, params, .. } = &workload {
            if !params.is_empty() && !sql.contains('$') {
                return Err(PgError::Unsupported(format!(
                    "the statement has no $1-style placeholder for its {} parameter(s): \
                     PostgreSQL numbers them $1, $2, … (not ?)",
                    params.len()
                )));
            }
        }
        Ok(PgDriver {
            shared: Arc::new(Shared {
                target: describe_target(&config),
                config,
                workload,
                pipeline: options.pipeline,
            }),
        })
    }

    /// Ops run by one `execute` (the pipeline depth).
    pub fn ops_per_execute(&self) -> usize {
        self.shared.pipeline
    }

    /// The connection target without the password, for messages.
    pub fn target(&self) -> &str {
        &self.shared.target
    }
}

impl Driver for PgDriver {
    type Session = PgSession;

    async fn open(&self, _worker: usize) -> Result<PgSession, Outcome> {
        let shared = self.shared.clone();
        let (client, connection) = shared.config.connect(NoTls).await.map_err(|e| {
            Outcome::error(
                Class::Connect,
                format!("connect {}: {}", shared.target, describe(&e)),
            )
        })?;
        let closed: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
        let why = closed.clone();
        tokio::task::spawn_local(async move {
            if let Err(e) = connection.await {
                *why.borrow_mut() = Some(describe(&e));
            }
        });
        let mut session = PgSession {
            client,
            shared,
            closed,
            statements: None,
        };
        match prepare(&session.client, &session.shared.workload).await {
            Ok(s) => session.statements = Some(s),
            Err(e) => {
                let outcome = session.failure(&e);
                if outcome.class.breaks_session() {
                    return Err(Outcome::error(
                        Class::Connect,
                        format!(
                            "connect {}: {}",
                            session.shared.target,
                            outcome.detail.as_deref().unwrap_or("connection lost")
                        ),
                    ));
                }
                // The server refused the statement: prepared again (and reported) per op.
            }
        }
        Ok(session)
    }
}

/// One connection with the workload's statements prepared.
pub struct PgSession {
    client: Client,
    shared: Arc<Shared>,
    /// Why the connection task ended, when it ended with an error.
    closed: Rc<RefCell<Option<String>>>,
    /// `None` while the server refuses to prepare them.
    statements: Option<Statements>,
}

/// One op's parameters for a single-statement workload.
enum Args {
    None,
    Key(i64),
    Insert(i64, String),
    Update(i64, String),
    Tpcb([i32; 4]),
    Text(Vec<TextParam>),
}

impl Args {
    fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        match self {
            Args::None => Vec::new(),
            Args::Key(k) => vec![k],
            Args::Insert(id, v) => vec![id, id, v],
            Args::Update(k, v) => vec![k, v],
            Args::Tpcb(p) => p.iter().map(|x| x as &(dyn ToSql + Sync)).collect(),
            Args::Text(t) => t.iter().map(|x| x as &(dyn ToSql + Sync)).collect(),
        }
    }

    /// The Bind payload: a 4-byte length and the value per parameter.
    fn bytes_out(&self) -> u64 {
        let n = |len: usize| 4 + len as u64;
        match self {
            Args::None => 0,
            Args::Key(_) => n(8),
            Args::Insert(_, v) => 2 * n(8) + n(v.len()),
            Args::Update(_, v) => n(8) + n(v.len()),
            Args::Tpcb(_) => 4 * n(4),
            Args::Text(t) => t.iter().map(|p| n(p.0.len())).sum(),
        }
    }
}

/// Runs one prepared statement: rows are read (and counted) when it returns columns.
async fn run_statement(
    client: &Client,
    statement: &Statement,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, tokio_postgres::Error> {
    if statement.columns().is_empty() {
        client.execute(statement, params).await?;
        Ok(0)
    } else {
        Ok(rows_bytes(&client.query(statement, params).await?))
    }
}

/// The ops of a pipelined batch as they come back: one outcome for the batch, counting every
/// op in it (the engine records each with the batch's latency). A failed batch carries its
/// worst failure — a lost connection first, else the first error — and how many failed.
#[derive(Default)]
struct BatchTally {
    bytes_in: u64,
    failed: u64,
    worst: Option<Outcome>,
}

impl BatchTally {
    fn ok(&mut self, bytes_in: u64) {
        self.bytes_in += bytes_in;
    }

    fn failed(&mut self, o: Outcome) {
        self.failed += 1;
        let replace = match &self.worst {
            None => true,
            Some(w) => o.class.breaks_session() && !w.class.breaks_session(),
        };
        if replace {
            self.worst = Some(o);
        }
    }

    /// The batch of `n` ops (`what`, for the message) that sent `out` bytes.
    fn outcome(self, n: u64, out: u64, what: &str) -> Outcome {
        match self.worst {
            None => Outcome::ok(self.bytes_in, out).batch_of(n as u32, n as u32),
            Some(o) => Outcome::error(
                o.class,
                format!(
                    "{} of {n} pipelined {what} failed: {}",
                    self.failed,
                    o.detail.as_deref().unwrap_or("")
                ),
            )
            .with_bytes(self.bytes_in, out)
            .batch_of(n as u32, (n - self.failed) as u32),
        }
    }
}

impl PgSession {
    /// The outcome of a failed statement.
    fn failure(&self, e: &tokio_postgres::Error) -> Outcome {
        if let Some(db) = e.as_db_error() {
            let class = if ends_connection(db) {
                Class::Read
            } else {
                Class::Driver
            };
            return Outcome::error(class, describe(e));
        }
        if e.is_closed() || self.client.is_closed() {
            let detail = match self.closed.borrow().as_deref() {
                Some(why) => format!("connection closed: {why}"),
                None => "connection closed by the server".to_string(),
            };
            return Outcome::error(Class::Read, detail);
        }
        let class = match e.source() {
            Some(cause) if cause.is::<std::io::Error>() => Class::Read,
            _ if e.to_string().starts_with("unexpected message") => Class::Protocol,
            // Client-side errors (a parameter that cannot be encoded, …): the connection is fine.
            _ => Class::Driver,
        };
        Outcome::error(class, describe(e))
    }

    /// The parameters of op `op` of a single-statement workload.
    fn args(&self, op: u64) -> Args {
        match &self.shared.workload {
            SqlWorkload::TpcBFunction { scale } => {
                let p = tpcb_params(op, *scale);
                Args::Tpcb([p.aid, p.tid, p.bid, p.delta])
            }
            SqlWorkload::Suite(s) => match s {
                SuiteOp::Insert => Args::Insert(suite_new_id(op), suite_value(op)),
                SuiteOp::SelectPk | SuiteOp::Join => Args::Key(suite_key(op)),
                SuiteOp::Scan => Args::None,
                SuiteOp::Update => Args::Update(suite_key(op), suite_value(op)),
                SuiteOp::Delete => Args::Key(suite_new_id(op)),
                SuiteOp::Transaction => Args::None,
            },
            SqlWorkload::Custom {
                params, corpora, ..
            } => Args::Text(
                custom_params(params, corpora, op)
                    .into_iter()
                    .map(TextParam)
                    .collect(),
            ),
            SqlWorkload::TpcB { .. } => Args::None,
        }
    }

    async fn single(&self, statement: &Statement, op: u64) -> Outcome {
        let n = self.shared.pipeline as u64;
        if n <= 1 {
            let args = self.args(op);
            let out = args.bytes_out();
            return match run_statement(&self.client, statement, &args.refs()).await {
                Ok(bytes_in) => Outcome::ok(bytes_in, out),
                Err(e) => self.failure(&e).with_bytes(0, out),
            };
        }
        let batch: Vec<Args> = (0..n)
            .map(|i| self.args(op.wrapping_mul(n).wrapping_add(i)))
            .collect();
        let refs: Vec<Vec<&(dyn ToSql + Sync)>> = batch.iter().map(Args::refs).collect();
        let results = join_all(
            refs.iter()
                .map(|r| run_statement(&self.client, statement, r)),
        )
        .await;
        let out: u64 = batch.iter().map(Args::bytes_out).sum();
        let mut tally = BatchTally::default();
        for r in &results {
            match r {
                Ok(b) => tally.ok(*b),
                Err(e) => tally.failed(self.failure(e)),
            }
        }
        tally.outcome(n, out, "statements")
    }

    /// The outcome of a transaction that returned `result`; after a server error the
    /// transaction is rolled back so the session can go on.
    async fn end_transaction(
        &self,
        result: Result<u64, tokio_postgres::Error>,
        out: u64,
    ) -> Outcome {
        match result {
            Ok(bytes_in) => Outcome::ok(bytes_in, out),
            Err(e) => {
                let outcome = self.failure(&e).with_bytes(0, out);
                if outcome.class.breaks_session() {
                    return outcome;
                }
                match self.client.batch_execute("ROLLBACK").await {
                    Ok(()) => outcome,
                    Err(e) => self.failure(&e).with_bytes(0, out),
                }
            }
        }
    }

    async fn tpcb(&self, s: &TpcbStatements, op: u64, scale: u32) -> Outcome {
        let p = tpcb_params(op, scale);
        let c = &self.client;
        // Parameters: 2 + 1 + 2 + 2 + 4 int4 values, each with its 4-byte length.
        let out = 11 * 8;
        let result = async {
            c.execute(&s.begin, &[]).await?;
            c.execute(&s.update_account, &[&p.delta, &p.aid]).await?;
            let rows = c.query(&s.select_account, &[&p.aid]).await?;
            c.execute(&s.update_teller, &[&p.delta, &p.tid]).await?;
            c.execute(&s.update_branch, &[&p.delta, &p.bid]).await?;
            c.execute(&s.insert_history, &[&p.tid, &p.bid, &p.aid, &p.delta])
                .await?;
            c.execute(&s.end, &[]).await?;
            Ok(rows_bytes(&rows))
        }
        .await;
        self.end_transaction(result, out).await
    }

    /// `pipeline` TPC-B transactions (ops `N·op …`), all their statements sent before any
    /// answer is read. A transaction counts as done when all 7 of its statements succeeded;
    /// one that failed was rolled back by its own `END`, and the others are unaffected.
    async fn tpcb_pipelined(&self, s: &TpcbStatements, op: u64, scale: u32) -> Outcome {
        let n = self.shared.pipeline as u64;
        let params: Vec<_> = (0..n)
            .map(|i| tpcb_params(op.wrapping_mul(n).wrapping_add(i), scale))
            .collect();
        // Per transaction, each statement with its parameters, in pgbench's order.
        type Params<'p> = Vec<&'p (dyn ToSql + Sync)>;
        let steps: Vec<[(&Statement, Params); 7]> = params
            .iter()
            .map(|p| {
                [
                    (&s.begin, vec![]),
                    (&s.update_account, vec![&p.delta as _, &p.aid as _]),
                    (&s.select_account, vec![&p.aid as _]),
                    (&s.update_teller, vec![&p.delta as _, &p.tid as _]),
                    (&s.update_branch, vec![&p.delta as _, &p.bid as _]),
                    (
                        &s.insert_history,
                        vec![&p.tid as _, &p.bid as _, &p.aid as _, &p.delta as _],
                    ),
                    (&s.end, vec![]),
                ]
            })
            .collect();
        let results = join_all(
            steps
                .iter()
                .flatten()
                .map(|(statement, args)| run_statement(&self.client, statement, args)),
        )
        .await;
        let out = 11 * 8 * n;
        let mut tally = BatchTally::default();
        for tx in results.chunks(7) {
            let mut bytes = 0;
            let mut first_error = None;
            for r in tx {
                match r {
                    Ok(b) => bytes += b,
                    Err(e) if first_error.is_none() => first_error = Some(self.failure(e)),
                    Err(_) => {}
                }
            }
            match first_error {
                None => tally.ok(bytes),
                Some(o) => {
                    tally.bytes_in += bytes;
                    tally.failed(o);
                }
            }
        }
        tally.outcome(n, out, "transactions")
    }

    async fn transaction(&self, s: &TransactionStatements, op: u64) -> Outcome {
        let id = suite_key(op);
        let value = suite_value(op);
        let qty = suite_qty(op);
        let c = &self.client;
        let out = 12 + (12 + 4 + value.len() as u64) + (12 + 8) + 12 + 12;
        let result = async {
            c.execute(&s.begin, &[]).await?;
            let mut bytes_in = rows_bytes(&c.query(&s.select_item, &[&id]).await?);
            c.execute(&s.update_item, &[&id, &value]).await?;
            let inserted = c.query(&s.insert_order, &[&id, &qty]).await?;
            bytes_in += rows_bytes(&inserted);
            bytes_in += rows_bytes(&c.query(&s.select_orders, &[&id]).await?);
            if let Some(row) = inserted.first() {
                let order: i64 = row.try_get(0)?;
                c.execute(&s.update_order, &[&order]).await?;
            }
            c.execute(&s.commit, &[]).await?;
            Ok(bytes_in)
        }
        .await;
        self.end_transaction(result, out).await
    }
}

impl Session for PgSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        if self.statements.is_none() {
            match prepare(&self.client, &self.shared.workload).await {
                Ok(s) => self.statements = Some(s),
                Err(e) => return self.failure(&e),
            }
        }
        let Some(statements) = self.statements.as_ref() else {
            return Outcome::error(Class::Driver, "statements not prepared");
        };
        match statements {
            Statements::Single(s) => self.single(s, op).await,
            Statements::Tpcb(s) => {
                let scale = self.shared.workload.tpcb_scale().unwrap_or(1);
                if self.shared.pipeline > 1 {
                    self.tpcb_pipelined(s, op, scale).await
                } else {
                    self.tpcb(s, op, scale).await
                }
            }
            Statements::Transaction(s) => self.transaction(s, op).await,
        }
    }
}

/// A connection for a setup step; the connection future runs as a tokio task.
async fn setup_client(url: &str) -> Result<(Client, String), PgError> {
    let config = parse_config(url)?;
    let target = describe_target(&config);
    let (client, connection) = config.connect(NoTls).await.map_err(|e| PgError::Connect {
        target: target.clone(),
        reason: describe(&e),
    })?;
    tokio::spawn(async move {
        // The error (if any) shows again in the statement that needed the connection.
        let _ = connection.await;
    });
    Ok((client, target))
}

fn setup_error(target: &str, step: &str) -> impl Fn(tokio_postgres::Error) -> PgError {
    let target = target.to_string();
    let step = step.to_string();
    move |e| PgError::Setup {
        target: target.clone(),
        step: step.clone(),
        reason: describe(&e),
    }
}

/// Appends `n` in decimal.
fn push_int(buf: &mut Vec<u8>, n: i64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if n < 0 {
        buf.push(b'-');
    }
    buf.extend_from_slice(&digits[i..]);
}

/// COPYs `rows` lines made by `line` into `table` (text format), in chunks.
async fn copy_rows(
    client: &Client,
    table: &str,
    freeze: bool,
    rows: i64,
    line: impl Fn(&mut Vec<u8>, i64),
) -> Result<u64, tokio_postgres::Error> {
    let sql = if freeze {
        format!("COPY {table} FROM STDIN WITH (FREEZE ON)")
    } else {
        format!("COPY {table} FROM STDIN")
    };
    let sink = client.copy_in::<_, Bytes>(sql.as_str()).await?;
    let mut sink = std::pin::pin!(sink);
    let mut buf = Vec::with_capacity(COPY_CHUNK + 128);
    for i in 0..rows {
        line(&mut buf, i);
        if buf.len() >= COPY_CHUNK {
            sink.send(Bytes::from(std::mem::take(&mut buf))).await?;
            buf.reserve(COPY_CHUNK + 128);
        }
    }
    if !buf.is_empty() {
        sink.send(Bytes::from(buf)).await?;
    }
    sink.as_mut().finish().await
}

/// The scale of the TPC-B tables on the server, read as pgbench reads it before a run: the
/// row count of `pgbench_branches`. None when the table is missing or empty.
pub async fn tpcb_scale(url: &str) -> Result<Option<u32>, PgError> {
    let (client, _) = setup_client(url).await?;
    Ok(client
        .query_one("SELECT count(*) FROM pgbench_branches", &[])
        .await
        .ok()
        .and_then(|row| row.try_get::<_, i64>(0).ok())
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n > 0))
}

/// Creates and fills the TPC-B tables exactly as `pgbench -i -s scale` does (its default
/// steps `dtgvp`): drop the four tables, create them (fillfactor 100 on accounts, tellers and
/// branches), fill branches, tellers and accounts with COPY in one transaction that first
/// truncates them (`FREEZE` from PostgreSQL 14 on, as pgbench 14+), `VACUUM ANALYZE` each
/// table, then add the primary keys. Branch and teller fillers are NULL, account fillers
/// blank, all balances 0, history empty.
pub async fn init_tpcb(url: &str, scale: u32) -> Result<InitReport, PgError> {
    if scale == 0 || scale >= SCALE_32BIT_THRESHOLD {
        return Err(PgError::Unsupported(format!(
            "scale {scale}: use a scale from 1 to {} (pgbench switches account ids to bigint \
             from {SCALE_32BIT_THRESHOLD} on)",
            SCALE_32BIT_THRESHOLD - 1
        )));
    }
    let started = Instant::now();
    let (client, target) = setup_client(url).await?;
    let err = |step: &str| setup_error(&target, step);
    client
        .batch_execute(
            "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, \
             pgbench_tellers",
        )
        .await
        .map_err(err("dropping the pgbench tables"))?;
    let ddl = [
        (
            "pgbench_history",
            "tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)",
            false,
        ),
        (
            "pgbench_tellers",
            "tid int not null,bid int,tbalance int,filler char(84)",
            true,
        ),
        (
            "pgbench_accounts",
            "aid    int not null,bid int,abalance int,filler char(84)",
            true,
        ),
        (
            "pgbench_branches",
            "bid int not null,bbalance int,filler char(88)",
            true,
        ),
    ];
    for (table, columns, fillfactor) in ddl {
        let mut sql = format!("create table {table}({columns})");
        if fillfactor {
            sql.push_str(&format!(" with (fillfactor={FILLFACTOR})"));
        }
        client
            .batch_execute(&sql)
            .await
            .map_err(err(&format!("creating {table}")))?;
    }

    let version: i32 = client
        .query_one("SELECT current_setting('server_version_num')::int", &[])
        .await
        .map_err(err("reading the server version"))?
        .try_get(0)
        .map_err(err("reading the server version"))?;
    let freeze = version >= 140_000;
    let s = scale as i64;
    let (branches, tellers, accounts) = (
        BRANCHES_PER_SCALE * s,
        TELLERS_PER_SCALE * s,
        ACCOUNTS_PER_SCALE * s,
    );
    let load = err("loading the pgbench tables");
    client
        .batch_execute(
            "begin; truncate table pgbench_accounts, pgbench_branches, pgbench_history, \
             pgbench_tellers",
        )
        .await
        .map_err(&load)?;
    let mut rows = copy_rows(&client, "pgbench_branches", freeze, branches, |b, i| {
        push_int(b, i + 1);
        b.extend_from_slice(b"\t0\t\\N\n");
    })
    .await
    .map_err(&load)?;
    rows += copy_rows(&client, "pgbench_tellers", freeze, tellers, |b, i| {
        push_int(b, i + 1);
        b.push(b'\t');
        push_int(b, i / TELLERS_PER_SCALE + 1);
        b.extend_from_slice(b"\t0\t\\N\n");
    })
    .await
    .map_err(&load)?;
    rows += copy_rows(&client, "pgbench_accounts", freeze, accounts, |b, i| {
        push_int(b, i + 1);
        b.push(b'\t');
        push_int(b, i / ACCOUNTS_PER_SCALE + 1);
        b.extend_from_slice(b"\t0\t\n");
    })
    .await
    .map_err(&load)?;
    client.batch_execute("commit").await.map_err(&load)?;

    for table in [
        "pgbench_branches",
        "pgbench_tellers",
        "pgbench_accounts",
        "pgbench_history",
    ] {
        client
            .batch_execute(&format!("vacuum analyze {table}"))
            .await
            .map_err(err(&format!("vacuum analyze {table}")))?;
    }
    for sql in [
        "alter table pgbench_branches add primary key (bid)",
        "alter table pgbench_tellers add primary key (tid)",
        "alter table pgbench_accounts add primary key (aid)",
    ] {
        client
            .batch_execute(sql)
            .await
            .map_err(err("adding the primary keys"))?;
    }
    Ok(InitReport {
        rows,
        elapsed: started.elapsed(),
    })
}

/// The server-side TPC-B transaction of the TpcBFunction workload.
const TPCB_FUNCTION: &str = "
CREATE OR REPLACE FUNCTION pgbench_tx(p_aid int, p_tid int, p_bid int, p_delta int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_abalance int;
BEGIN
    UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid;
    SELECT abalance INTO v_abalance FROM pgbench_accounts WHERE aid = p_aid;
    UPDATE pgbench_tellers SET tbalance = tbalance + p_delta WHERE tid = p_tid;
    UPDATE pgbench_branches SET bbalance = bbalance + p_delta WHERE bid = p_bid;
    INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
        VALUES (p_tid, p_bid, p_aid, p_delta, CURRENT_TIMESTAMP);
    RETURN v_abalance;
END
$$";

/// Creates (or replaces) `pgbench_tx(aid, tid, bid, delta)`: pgbench's three UPDATEs, the
/// SELECT and the history INSERT in one call (one transaction), returning the account's
/// new balance. Needs the tables of [`init_tpcb`] (or `pgbench -i`).
pub async fn create_tpcb_function(url: &str) -> Result<(), PgError> {
    let (client, target) = setup_client(url).await?;
    client
        .batch_execute(TPCB_FUNCTION)
        .await
        .map_err(setup_error(&target, "creating the function pgbench_tx"))
}

/// Creates the suite's tables: `perfbase_items(id bigint PK, k bigint, v text)` with
/// [`SUITE_ROWS`] rows (id = k = 1…10 000, v = md5(id), 32 characters) and an index on `k`,
/// and `perfbase_orders(id bigserial PK, item_id bigint, qty int)` with 3 orders per item
/// and an index on `item_id`; then ANALYZE. Drops earlier versions first.
pub async fn init_suite(url: &str) -> Result<(), PgError> {
    let (client, target) = setup_client(url).await?;
    let sql = format!(
        "DROP TABLE IF EXISTS perfbase_orders, perfbase_items;
         CREATE TABLE perfbase_items (id bigint PRIMARY KEY, k bigint NOT NULL, v text NOT NULL);
         INSERT INTO perfbase_items (id, k, v)
             SELECT g, g, md5(g::text) FROM generate_series(1, {SUITE_ROWS}) g;
         CREATE INDEX perfbase_items_k ON perfbase_items (k);
         CREATE TABLE perfbase_orders (id bigserial PRIMARY KEY, item_id bigint NOT NULL,
             qty int NOT NULL);
         INSERT INTO perfbase_orders (item_id, qty)
             SELECT g, q FROM generate_series(1, {SUITE_ROWS}) g, generate_series(1, 3) q
             ORDER BY g, q;
         CREATE INDEX perfbase_orders_item_id ON perfbase_orders (item_id);"
    );
    client
        .batch_execute(&sql)
        .await
        .map_err(setup_error(&target, "creating the suite tables"))?;
    client
        .batch_execute("ANALYZE perfbase_items; ANALYZE perfbase_orders")
        .await
        .map_err(setup_error(&target, "analyzing the suite tables"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_passwords() {
        assert_eq!(
            redacted("postgres://u:s3cret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(
            redacted("postgres://u:p@ss/w@rd@h/db"),
            "postgres://u:***@h/db"
        );
        assert_eq!(redacted("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redacted("postgres://u@h/db?password=s3cret&sslmode=disable"),
            "postgres://u@h/db?password=***&sslmode=disable"
        );
        assert_eq!(
            redacted("host=h user=u password=s3cret dbname=d"),
            "host=h user=u password=*** dbname=d"
        );
        assert_eq!(
            redacted("host=h password = 'a b\\' c' dbname=d"),
            "host=h password = *** dbname=d"
        );
    }

    #[test]
    fn bad_urls_and_options_are_refused_without_the_password() {
        let bad = PgDriver::new(
            "postgres://u:s3cret@h:notaport/db",
            SqlWorkload::Suite(SuiteOp::SelectPk),
            PgOptions::default(),
        );
        let msg = match bad {
            Err(e @ PgError::Url { .. }) => e.to_string(),
            other => panic!("{:?}", other.err()),
        };
        assert!(!msg.contains("s3cret"), "{msg}");
        let url = "postgres://u:s3cret@127.0.0.1:5432/db";
        for (workload, pipeline) in [
            (SqlWorkload::Suite(SuiteOp::Transaction), 2),
            (SqlWorkload::Suite(SuiteOp::SelectPk), 0),
            (
                SqlWorkload::Custom {
                    sql: "SELECT * FROM t WHERE id = ?".into(),
                    params: vec![crate::workload::Template::parse("1", &[]).unwrap()],
                    corpora: Vec::new(),
                },
                1,
            ),
        ] {
            assert!(matches!(
                PgDriver::new(url, workload, PgOptions { pipeline }),
                Err(PgError::Unsupported(_))
            ));
        }
        let d = PgDriver::new(
            url,
            SqlWorkload::TpcBFunction { scale: 1 },
            PgOptions { pipeline: 8 },
        )
        .unwrap();
        assert_eq!(d.ops_per_execute(), 8);
        assert_eq!(d.target(), "postgres://u@127.0.0.1:5432/db");
    }

    #[test]
    fn integers_format_like_display() {
        for n in [0, 7, -7, 10, 99_999, i64::MAX, i64::MIN] {
            let mut b = Vec::new();
            push_int(&mut b, n);
            assert_eq!(String::from_utf8(b).unwrap(), n.to_string());
        }
    }

    #[test]
    fn suite_values_are_32_characters() {
        assert_eq!(suite_value(3).len(), 32);
        assert!((1..=10).contains(&suite_qty(5)));
    }
}
