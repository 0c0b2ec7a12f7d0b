//! PostgreSQL (feature `postgres`): the SQL workloads of [`super`], plain TCP without TLS.
//!
//! - **One connection per session**, over TCP to the URL's first host (a Unix-domain socket
//!   is refused with a message saying so), logged in by tokio-postgres and then driven by the
//!   session itself through [`wire`]: the extended-query protocol framed by hand, the measured
//!   hot path (the figures are in `wire`'s docs and `bench/README.md`). `open` prepares the
//!   workload's statements once, as `s0`, `s1`, …. A statement the server refuses to prepare
//!   (a missing table, a syntax error) does not fail `open`: it is prepared again on each
//!   `execute` and reported there as a `driver` outcome with its SQLSTATE, so a run shows the
//!   real cause instead of reconnecting.
//! - **TPC-B** runs pgbench's built-in script (`BEGIN`, three `UPDATE`s, a `SELECT`, an
//!   `INSERT`, `END`) statement by statement, one round trip each, as pgbench does in
//!   `-M prepared` mode; **TpcBSelect** is pgbench's select-only script (`-S`), one `SELECT`;
//!   **TpcBFunction** runs `SELECT pgbench_tx($1, $2, $3, $4)`, see [`create_tpcb_function`].
//! - **Errors.** A server error (`ERROR` severity: 40001 serialization failure, 42P01
//!   undefined table, …) is class `driver` with detail `SQLSTATE 42P01: relation "…" does not
//!   exist`; a transaction it aborted is rolled back, so the session goes on. A lost connection
//!   (closed socket, or a `FATAL` such as 57P01 from `pg_terminate_backend`) is class `read`,
//!   which makes the engine drop the session and open a new one. `open` failures are class
//!   `connect` with the SQLSTATE and the server's text (28P01 wrong password, 3D000 missing
//!   database) or the socket error; the password never appears in any message.
//! - **Parameters.** Integers are bound in binary; custom statements' parameters are bound
//!   as *text* (the wire's text format, as psql and libpq send them), so the server parses
//!   `'42'` as whatever `$1` is: `SELECT * FROM t WHERE id = $1` works for an `int`,
//!   `bigint`, `numeric`, `uuid`, `date` or `text` column without casts. A statement whose
//!   parameter type the server cannot infer needs a cast (`$1::int`). Placeholders are
//!   PostgreSQL's `$1, $2, …`; one statement per workload.
//! - **Pipelining** ([`PgOptions::pipeline`] = N > 1): each `execute(op)` runs the N ops
//!   `N·op … N·op+N−1`, all written before any answer is read, and returns one outcome for the
//!   batch, with the bytes summed; the caller counts [`PgDriver::ops_per_execute`] ops per
//!   execute. Each op is its own group (it ends with a Sync), so a failed op affects no other;
//!   the batch's outcome is then its worst failure (a lost connection first, otherwise the
//!   first error) and its detail says how many failed. **TPC-B** pipelines whole
//!   transactions in one group, as pgbench's `\startpipeline` scripts do: one Sync, so the
//!   server flushes its answers once. Each transaction still commits at its own `END`. An
//!   error makes the server skip the rest of the group: the failed transaction is rolled
//!   back, and the ones after it, which never ran, are sent again in a new group (where
//!   pgbench abandons them), so exactly the failing transactions fail. The suite's
//!   transaction uses a value it has just read, so it refuses N > 1.
//! - **Bytes** are the payload, counted exactly but without protocol framing: `bytes_out` is
//!   the bound parameters as sent in Bind (a 4-byte length plus the value per parameter),
//!   `bytes_in` the result rows as received in DataRow (a 4-byte length plus the value per
//!   column; results come in binary format). Statements that return no rows count 0 in.

mod config;
mod init;
#[cfg(test)]
mod tests;
mod wire;

use crate::batch::BatchTally;
use crate::sql::{
    custom_params, suite_key, suite_new_id, tpcb_params, SqlWorkload, SuiteOp, TpcbParams,
};
use crate::workload::mix64;
use config::{describe_target, parse_config};
pub use config::{redacted, InitReport, PgError, PgOptions};
pub use init::{create_tpcb_function, init_suite, init_tpcb, server_version, tpcb_scale};
use perfbase_core::{Class, Driver, Outcome, Session};
use std::sync::Arc;
use tokio_postgres::Config;
use wire::{Param, Reply, ServerError, Wire, WireError};

/// The names the statements are prepared under, in the order of [`statements`].
const NAMES: [&str; 7] = ["s0", "s1", "s2", "s3", "s4", "s5", "s6"];

/// pgbench's built-in TPC-B script.
const TPCB_SQL: [&str; 7] = [
    "BEGIN",
    "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
    "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
    "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2",
    "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2",
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
     VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
    "END",
];

/// The suite's 5-operation transaction.
const TRANSACTION_SQL: [&str; 7] = [
    "BEGIN",
    "SELECT k, v FROM perfbase_items WHERE id = $1",
    "UPDATE perfbase_items SET v = $2 WHERE id = $1",
    "INSERT INTO perfbase_orders (item_id, qty) VALUES ($1, $2) RETURNING id",
    "SELECT count(*), sum(qty) FROM perfbase_orders WHERE item_id = $1",
    "UPDATE perfbase_orders SET qty = qty + 1 WHERE id = $1",
    "COMMIT",
];

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

/// The workload's statements, prepared as [`NAMES`] in this order.
fn statements(workload: &SqlWorkload) -> Vec<String> {
    let own = |sqls: &[&str]| sqls.iter().map(|s| s.to_string()).collect();
    match workload {
        SqlWorkload::TpcB { .. } => own(&TPCB_SQL),
        SqlWorkload::TpcBSelect { .. } => own(&[TPCB_SQL[2]]),
        SqlWorkload::TpcBFunction { .. } => own(&["SELECT pgbench_tx($1, $2, $3, $4)"]),
        SqlWorkload::Suite(op) => match suite_sql(*op) {
            Some(sql) => own(&[sql]),
            None => own(&TRANSACTION_SQL),
        },
        SqlWorkload::Custom { sql, .. } => vec![sql.clone()],
    }
}

/// The parameters of each statement of pgbench's TPC-B script, in [`TPCB_SQL`]'s order: the
/// values, of which the first `n` are bound.
fn tpcb_steps(p: &TpcbParams) -> [([i32; 4], usize); 7] {
    let TpcbParams {
        aid,
        tid,
        bid,
        delta,
    } = *p;
    [
        ([0; 4], 0),
        ([delta, aid, 0, 0], 2),
        ([aid, 0, 0, 0], 1),
        ([delta, tid, 0, 0], 2),
        ([delta, bid, 0, 0], 2),
        ([tid, bid, aid, delta], 4),
        ([0; 4], 0),
    ]
}

struct Shared {
    config: Config,
    /// `postgres://user@host:port/db`, for messages.
    target: String,
    workload: SqlWorkload,
    statements: Vec<String>,
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
                statements: statements(&workload),
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
        let wire = wire::connect(&shared.config).await.map_err(|e| {
            Outcome::error(Class::Connect, format!("connect {}: {e}", shared.target))
        })?;
        let mut session = PgSession {
            wire,
            shared,
            prepared: 0,
            written: None,
        };
        if let Err(outcome) = session.prepare().await {
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
            // The server refused a statement: prepared again (and reported) per op.
        }
        Ok(session)
    }
}

/// One connection with the workload's statements prepared.
pub struct PgSession {
    wire: Wire,
    shared: Arc<Shared>,
    /// How many of the workload's statements are prepared (in order).
    prepared: usize,
    /// The parameter bytes of the op in progress, for [`Session::bytes_of_abandoned_op`].
    written: Option<u64>,
}

/// One op's parameters for a single-statement workload.
enum Args {
    None,
    Key(i64),
    Insert(i64, String),
    Update(i64, String),
    Tpcb([i32; 4]),
    Aid(i32),
    Text(Vec<String>),
}

impl Args {
    /// Queues the op's Bind and Execute of statement `s0`; returns the parameter bytes.
    fn bind(&self, wire: &mut Wire) -> u64 {
        let name = NAMES[0];
        match self {
            Args::None => wire.bind_execute(name, &[]),
            Args::Key(k) => wire.bind_execute(name, &[Param::I64(*k)]),
            Args::Insert(id, v) => {
                wire.bind_execute(name, &[Param::I64(*id), Param::I64(*id), Param::Text(v)])
            }
            Args::Update(k, v) => wire.bind_execute(name, &[Param::I64(*k), Param::Text(v)]),
            Args::Tpcb(p) => wire.bind_execute(name, &p.map(Param::I32)),
            Args::Aid(a) => wire.bind_execute(name, &[Param::I32(*a)]),
            Args::Text(t) => {
                let params: Vec<Param> = t.iter().map(|s| Param::Text(s)).collect();
                wire.bind_execute(name, &params)
            }
        }
    }
}

/// The outcome of a server error: the connection goes on unless the error says otherwise.
fn server_failure(e: &ServerError) -> Outcome {
    let class = if e.ends_connection() {
        Class::Read
    } else {
        Class::ServerError
    };
    Outcome::error(class, e.to_string())
}

impl PgSession {
    /// The outcome of a connection that cannot go on: a socket that failed or closed is
    /// named by the error the server sent before it closed, when that is already here.
    fn lost(&mut self, e: WireError) -> Outcome {
        let fallback = match e {
            WireError::Fatal(server) => return Outcome::error(Class::Read, server.to_string()),
            WireError::Protocol(what) => return Outcome::error(Class::Malformed, what),
            WireError::Io(io) => format!("connection lost: {io}"),
            WireError::Closed => "connection closed by the server".to_string(),
        };
        let detail = match self.wire.error_already_sent() {
            Some(server) => server.to_string(),
            None => fallback,
        };
        Outcome::error(Class::Read, detail)
    }

    /// Writes what is queued and reads the oldest group's answer.
    async fn round_trip(&mut self) -> Result<Reply, WireError> {
        self.wire.flush().await?;
        self.wire.reply().await
    }

    /// Prepares the statements not prepared yet, each in its own group so that the ones
    /// before a refused statement stay prepared.
    async fn prepare(&mut self) -> Result<(), Outcome> {
        if self.prepared == self.shared.statements.len() {
            return Ok(());
        }
        let shared = self.shared.clone();
        while let Some(sql) = shared.statements.get(self.prepared) {
            self.wire
                .parse(NAMES[self.prepared], sql)
                .map_err(|e| self.lost(e))?;
            self.wire.sync();
            match self.round_trip().await {
                Ok(Reply { error: None, .. }) => self.prepared += 1,
                Ok(Reply { error: Some(e), .. }) => return Err(server_failure(&e)),
                Err(e) => return Err(self.lost(e)),
            }
        }
        Ok(())
    }

    /// The parameters of op `op` of a single-statement workload.
    fn args(&self, op: u64) -> Args {
        match &self.shared.workload {
            SqlWorkload::TpcBFunction { scale } => {
                let p = tpcb_params(op, *scale);
                Args::Tpcb([p.aid, p.tid, p.bid, p.delta])
            }
            SqlWorkload::TpcBSelect { scale } => Args::Aid(tpcb_params(op, *scale).aid),
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
            } => Args::Text(custom_params(params, corpora, op)),
            SqlWorkload::TpcB { .. } => Args::None,
        }
    }

    /// A single-statement op, or `pipeline` of them, each in its own group.
    async fn single(&mut self, op: u64) -> Outcome {
        let n = self.shared.pipeline as u64;
        if n <= 1 {
            let out = self.args(op).bind(&mut self.wire);
            self.wire.sync();
            self.written = Some(out);
            return match self.round_trip().await {
                Ok(Reply {
                    error: None,
                    bytes_in,
                    ..
                }) => Outcome::ok(bytes_in, out),
                Ok(Reply { error: Some(e), .. }) => server_failure(&e).with_bytes(0, out),
                Err(e) => self.lost(e).with_bytes(0, out),
            };
        }
        let mut out = 0;
        for i in 0..n {
            out += self
                .args(op.wrapping_mul(n).wrapping_add(i))
                .bind(&mut self.wire);
            self.wire.sync();
        }
        self.written = Some(out);
        let mut tally = BatchTally::default();
        if let Err(e) = self.wire.flush().await {
            tally.failed(self.lost(e), n);
            return tally.outcome(n, out, "statements");
        }
        for i in 0..n {
            match self.wire.reply().await {
                Ok(Reply {
                    error: None,
                    bytes_in,
                    ..
                }) => tally.ok(bytes_in),
                Ok(Reply {
                    error: Some(e),
                    bytes_in,
                    ..
                }) => {
                    tally.bytes_in += bytes_in;
                    tally.failed(server_failure(&e), 1);
                }
                Err(e) => {
                    tally.failed(self.lost(e), n - i);
                    break;
                }
            }
        }
        tally.outcome(n, out, "statements")
    }

    /// Runs statement `index` with `params` in its own round trip.
    async fn step(&mut self, index: usize, params: &[Param<'_>], out: &mut u64) -> Step {
        *out += self.wire.bind_execute(NAMES[index], params);
        self.wire.sync();
        self.written = Some(*out);
        match self.round_trip().await {
            Ok(Reply {
                error: None,
                bytes_in,
                first_int,
                ..
            }) => Step::Done(bytes_in, first_int),
            Ok(Reply { error: Some(e), .. }) => Step::Failed(e),
            Err(e) => Step::Lost(self.lost(e)),
        }
    }

    /// The outcome of a transaction whose statement failed with `e`: rolled back, so that
    /// the session can go on, unless the connection is gone.
    async fn rolled_back(&mut self, e: ServerError, bytes_in: u64, out: u64) -> Outcome {
        let mut outcome = server_failure(&e);
        if !outcome.class.breaks_session() {
            if let Some(failed) = self.rollback().await {
                outcome = failed;
            }
        }
        outcome.with_bytes(bytes_in, out)
    }

    /// Ends a failed transaction block; the outcome when that fails too.
    async fn rollback(&mut self) -> Option<Outcome> {
        self.wire.query("ROLLBACK");
        match self.round_trip().await {
            Ok(Reply { error: None, .. }) => None,
            Ok(Reply { error: Some(e), .. }) => Some(server_failure(&e)),
            Err(e) => Some(self.lost(e)),
        }
    }

    /// pgbench's TPC-B script, one round trip per statement.
    async fn tpcb(&mut self, op: u64, scale: u32) -> Outcome {
        let p = tpcb_params(op, scale);
        let (mut bytes_in, mut out) = (0, 0);
        for (index, (values, n)) in tpcb_steps(&p).into_iter().enumerate() {
            match self
                .step(index, &values.map(Param::I32)[..n], &mut out)
                .await
            {
                Step::Done(b, _) => bytes_in += b,
                Step::Failed(e) => return self.rolled_back(e, bytes_in, out).await,
                Step::Lost(o) => return o.with_bytes(bytes_in, out),
            }
        }
        Outcome::ok(bytes_in, out)
    }

    /// `pipeline` TPC-B transactions (ops `N·op …`), all written before any answer is read,
    /// in one group (see the module docs). After a failed statement the server skipped the
    /// rest of the group: its transaction is rolled back, and the transactions after it, which
    /// never ran, are written again as a new group. At most `pipeline` groups.
    async fn tpcb_pipelined(&mut self, op: u64, scale: u32) -> Outcome {
        let n = self.shared.pipeline;
        let (mut out, mut tally) = (0, BatchTally::default());
        // The first transaction not done yet.
        let mut next = 0;
        while next < n {
            for i in next..n {
                let p = tpcb_params(op.wrapping_mul(n as u64).wrapping_add(i as u64), scale);
                for (index, (values, k)) in tpcb_steps(&p).into_iter().enumerate() {
                    out += self
                        .wire
                        .bind_execute(NAMES[index], &values.map(Param::I32)[..k]);
                }
            }
            self.wire.sync();
            self.written = Some(out);
            let reply = match self.round_trip().await {
                Ok(r) => r,
                Err(e) => {
                    tally.failed(self.lost(e), (n - next) as u64);
                    break;
                }
            };
            tally.bytes_in += reply.bytes_in;
            let Some(e) = reply.error else { break };
            // Each transaction completes its 7 statements before the next one starts.
            next += reply.completed / TPCB_SQL.len() + 1;
            let failure = server_failure(&e);
            if failure.class.breaks_session() {
                tally.failed(failure, (n - next) as u64 + 1);
                break;
            }
            tally.failed(failure, 1);
            if reply.status == b'E' {
                if let Some(failure) = self.rollback().await {
                    tally.failed(failure, (n - next) as u64);
                    break;
                }
            }
        }
        tally.outcome(n as u64, out, "transactions")
    }

    /// The suite's transaction, one round trip per statement.
    async fn transaction(&mut self, op: u64) -> Outcome {
        let id = suite_key(op);
        let value = suite_value(op);
        let qty = suite_qty(op);
        let (mut bytes_in, mut out) = (0, 0);
        let key = [Param::I64(id)];
        let update = [Param::I64(id), Param::Text(&value)];
        let insert = [Param::I64(id), Param::I32(qty)];
        let mut order = None;
        for index in 0..TRANSACTION_SQL.len() {
            let params: &[Param] = match index {
                1 | 4 => &key,
                2 => &update,
                3 => &insert,
                5 => match &order {
                    Some(o) => std::slice::from_ref(o),
                    // The insert returned no id: nothing to update.
                    None => continue,
                },
                _ => &[],
            };
            match self.step(index, params, &mut out).await {
                Step::Done(b, first) => {
                    bytes_in += b;
                    if index == 3 {
                        order = first.map(Param::I64);
                    }
                }
                Step::Failed(e) => return self.rolled_back(e, bytes_in, out).await,
                Step::Lost(o) => return o.with_bytes(bytes_in, out),
            }
        }
        Outcome::ok(bytes_in, out)
    }
}

/// How one statement of a transaction ended.
enum Step {
    /// Its rows' bytes and first integer cell.
    Done(u64, Option<i64>),
    Failed(ServerError),
    Lost(Outcome),
}

impl Session for PgSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        if self.wire.abandoned() {
            // The engine dropped an earlier op mid-exchange and kept the session.
            return Outcome::error(
                Class::Malformed,
                "an earlier op was abandoned mid-exchange; the connection is out of step",
            );
        }
        self.written = None;
        if let Err(outcome) = self.prepare().await {
            return outcome;
        }
        let outcome = match &self.shared.workload {
            SqlWorkload::TpcB { scale } if self.shared.pipeline > 1 => {
                self.tpcb_pipelined(op, *scale).await
            }
            SqlWorkload::TpcB { scale } => self.tpcb(op, *scale).await,
            SqlWorkload::Suite(SuiteOp::Transaction) => self.transaction(op).await,
            _ => self.single(op).await,
        };
        self.written = None;
        outcome
    }

    fn bytes_of_abandoned_op(&mut self) -> (u64, u64) {
        (0, self.written.take().unwrap_or(0))
    }
}
