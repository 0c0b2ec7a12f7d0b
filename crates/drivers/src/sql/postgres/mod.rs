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

mod config;
mod init;
#[cfg(test)]
mod tests;

use crate::sql::{custom_params, suite_key, suite_new_id, tpcb_params, SqlWorkload, SuiteOp};
use crate::workload::mix64;
use bytes::BytesMut;
use config::{describe, describe_target, ends_connection, parse_config};
pub use config::{redacted, InitReport, PgError, PgOptions};
use futures_util::future::join_all;
pub use init::{create_tpcb_function, init_suite, init_tpcb, server_version, tpcb_scale};
use perfbase_core::{Class, Driver, Outcome, Session};
use std::cell::RefCell;
use std::error::Error as StdError;
use std::rc::Rc;
use std::sync::Arc;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Row, Statement};
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
