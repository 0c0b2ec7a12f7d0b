//! MySQL and MariaDB over the classic protocol (mysql_async, plain TCP: no TLS is built in).
//!
//! One connection per session; the session's statements are prepared once, in
//! [`Driver::open`], and executed with the binary protocol. What op *n* runs comes from
//! [`super`]: the TPC-B transaction of pgbench, one statement kind of the operation suite, or a
//! custom statement with `?` placeholders whose parameters are bound as text.
//!
//! Outcomes:
//! - success: [`Outcome::ok`] with *estimated* byte counts: `bytes_out` is the size of the
//!   bound parameter values and `bytes_in` the size of the returned column values, both as the
//!   binary protocol encodes them (8 bytes per integer, the length of a string). Packet headers,
//!   column definitions and OK packets are not counted (mysql_async does not expose the bytes
//!   on the wire), so the figures are lower bounds that compare runs of the same workload.
//! - a server error (1146 table doesn't exist, 1213 deadlock, 1062 duplicate key…): class
//!   `driver` with detail `MySQL 1146 (42S02): Table 'perfbase.x' doesn't exist`; a failed
//!   transaction is rolled back and the session stays usable.
//! - a broken connection (reset, EOF, killed by the server): class `read`; the session
//!   reports `read` from then on and the engine reopens it.
//! - failures in `open`: class `connect` for the connection and login (refused, 1045 access
//!   denied, 1049 unknown database), class `driver` when the connection works but a statement
//!   does not prepare (a missing table, a syntax error, a wrong parameter count).
//!
//! The password is taken out of the URL before anything else sees it: no message, error or
//! outcome detail contains it.
//!
//! Connections go to the host and port of the URL even on loopback (mysql_async would
//! otherwise switch to the server's Unix socket); `?prefer_socket=true` restores that.

use crate::sql::{custom_params, suite_key, suite_new_id, tpcb_params, SqlWorkload, SuiteOp};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Params, Row, Statement, Value};
use perfbase_core::{Class, Driver, Outcome, Session};
use std::sync::Arc;

mod config;
mod init;
#[cfg(test)]
mod tests;

use config::{first_words, io_text, Target, CONNECTION_GONE};
pub use config::{InitReport, MyError};
pub use init::{init_suite, init_tpcb, server_version, tpcb_scale};

/// pgbench's five statements (`pgbench -b tpcb-like`), in MySQL placeholders.
const TPCB_SQL: [&str; 5] = [
    "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?",
    "SELECT abalance FROM pgbench_accounts WHERE aid = ?",
    "UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?",
    "UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?",
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)",
];

/// The statements of one suite op, in the order its execution uses them.
fn suite_sql(op: SuiteOp) -> &'static [&'static str] {
    match op {
        SuiteOp::Insert => &["INSERT INTO perfbase_items (id, k, v) VALUES (?, ?, ?)"],
        SuiteOp::SelectPk => &["SELECT id, k, v FROM perfbase_items WHERE id = ?"],
        // IGNORE INDEX: InnoDB would otherwise count through the smaller index on k; the
        // suite's scan reads the table.
        SuiteOp::Scan => &["SELECT count(*), sum(k) FROM perfbase_items IGNORE INDEX (perfbase_items_k)"],
        SuiteOp::Update => &["UPDATE perfbase_items SET v = ? WHERE k = ?"],
        SuiteOp::Delete => &["DELETE FROM perfbase_items WHERE id = ?"],
        SuiteOp::Transaction => &[
            "SELECT id, k, v FROM perfbase_items WHERE id = ?",
            "UPDATE perfbase_items SET v = ? WHERE id = ?",
            "INSERT INTO perfbase_orders (item_id, qty) VALUES (?, ?)",
            "SELECT count(*), sum(qty) FROM perfbase_orders WHERE item_id = ?",
            "UPDATE perfbase_items SET v = ? WHERE id = ?",
        ],
        SuiteOp::Join => &["SELECT i.id, i.v, o.id, o.qty FROM perfbase_items i JOIN perfbase_orders o ON o.item_id = i.id WHERE i.id = ?"],
    }
}

struct Shared {
    target: Target,
    workload: SqlWorkload,
}

/// The MySQL/MariaDB driver: connection options and the workload, shared by all sessions.
pub struct MyDriver {
    shared: Arc<Shared>,
}

impl MyDriver {
    /// Checks the URL (`mysql://user:password@host:port/database`, or `mariadb://`) and the
    /// workload; connects only when sessions open. TPC-B as one function call is refused
    /// ([`MyError::Unsupported`]).
    pub fn new(url: &str, workload: SqlWorkload) -> Result<MyDriver, MyError> {
        let target = Target::parse(url)?;
        if let SqlWorkload::TpcBFunction { .. } = workload {
            return Err(MyError::Unsupported(
                "TPC-B as one function call (pgbench_tx) is PostgreSQL-only: stored functions \
                 differ in MySQL and MariaDB, so it is not offered; use the TPC-B workload, \
                 which sends the same five statements in one transaction"
                    .into(),
            ));
        }
        if workload.tpcb_scale() == Some(0) {
            return Err(MyError::Invalid(
                "the TPC-B scale must be at least 1 (the scale the tables were filled with)".into(),
            ));
        }
        Ok(MyDriver {
            shared: Arc::new(Shared { target, workload }),
        })
    }

    /// `host:port/database` of the server, for messages (never the password).
    pub fn target(&self) -> &str {
        &self.shared.target.shown
    }
}

impl Driver for MyDriver {
    type Session = MySession;

    async fn open(&self, _worker: usize) -> Result<MySession, Outcome> {
        let sh = &self.shared;
        let mut conn = sh
            .target
            .connect()
            .await
            .map_err(|e| Outcome::error(Class::Connect, e.to_string()))?;
        let sqls: Vec<&str> = match &sh.workload {
            SqlWorkload::TpcB { .. } | SqlWorkload::TpcBFunction { .. } => TPCB_SQL.to_vec(),
            SqlWorkload::TpcBSelect { .. } => vec![TPCB_SQL[1]],
            SqlWorkload::Suite(op) => suite_sql(*op).to_vec(),
            SqlWorkload::Custom { sql, .. } => vec![sql.as_str()],
        };
        let mut stmts = Vec::with_capacity(sqls.len());
        for sql in sqls {
            match conn.prep(sql).await {
                Ok(s) => stmts.push(s),
                Err(e) => {
                    let (class, detail) = classify(&sh.target, e);
                    // A connection that answered the login but broke now is still a
                    // connection failure; a statement the server refuses is the statement's.
                    let class = match class {
                        Class::ServerError => Class::ServerError,
                        _ => Class::Connect,
                    };
                    return Err(Outcome::error(
                        class,
                        format!("preparing '{}': {detail}", first_words(sql)),
                    ));
                }
            }
        }
        if let SqlWorkload::Custom { params, .. } = &sh.workload {
            let wanted = stmts.first().map_or(0, |s| s.num_params() as usize);
            if wanted != params.len() {
                return Err(Outcome::error(
                    Class::ServerError,
                    format!(
                        "the statement has {wanted} placeholder(s) (?) but {} parameter(s) are given",
                        params.len()
                    ),
                ));
            }
        }
        Ok(MySession {
            shared: sh.clone(),
            conn: Some(conn),
            stmts,
        })
    }
}

/// One connection and its prepared statements.
pub struct MySession {
    shared: Arc<Shared>,
    /// `None` once the connection broke: every later op reports `read`.
    conn: Option<Conn>,
    stmts: Vec<Statement>,
}

impl MySession {
    /// The server's id of this session's connection (what `KILL` and the processlist use);
    /// `None` after the connection broke.
    pub fn connection_id(&self) -> Option<u32> {
        self.conn.as_ref().map(|c| c.id())
    }
}

/// Estimated bytes of one op (see the module documentation).
#[derive(Default)]
struct Io {
    bytes_in: u64,
    bytes_out: u64,
}

/// The binary-protocol size of a value (without length prefixes).
fn value_size(v: &Value) -> u64 {
    match v {
        Value::NULL => 0,
        Value::Bytes(b) => b.len() as u64,
        Value::Float(_) => 4,
        Value::Int(_) | Value::UInt(_) | Value::Double(_) => 8,
        Value::Date(..) => 11,
        Value::Time(..) => 12,
    }
}

fn row_size(row: &Row) -> u64 {
    (0..row.len())
        .filter_map(|i| row.as_ref(i))
        .map(value_size)
        .sum()
}

/// Executes `stmt` with `params`, reading (and sizing) every row it returns.
async fn run(
    conn: &mut Conn,
    stmt: &Statement,
    params: Vec<Value>,
    io: &mut Io,
) -> Result<(), mysql_async::Error> {
    io.bytes_out += params.iter().map(value_size).sum::<u64>();
    let params = if params.is_empty() {
        Params::Empty
    } else {
        Params::Positional(params)
    };
    io.bytes_in += conn
        .exec_fold(stmt, params, 0u64, |acc, row: Row| acc + row_size(&row))
        .await?;
    Ok(())
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

fn text(s: String) -> Value {
    Value::Bytes(s.into_bytes())
}

/// The TPC-B transaction's statements, between START TRANSACTION and COMMIT.
async fn tpcb_body(
    conn: &mut Conn,
    s: &[Statement],
    op: u64,
    scale: u32,
    io: &mut Io,
) -> Result<(), mysql_async::Error> {
    let p = tpcb_params(op, scale);
    let (aid, tid, bid, delta) = (p.aid as i64, p.tid as i64, p.bid as i64, p.delta as i64);
    run(conn, &s[0], vec![int(delta), int(aid)], io).await?;
    run(conn, &s[1], vec![int(aid)], io).await?;
    run(conn, &s[2], vec![int(delta), int(tid)], io).await?;
    run(conn, &s[3], vec![int(delta), int(bid)], io).await?;
    run(
        conn,
        &s[4],
        vec![int(tid), int(bid), int(aid), int(delta)],
        io,
    )
    .await?;
    conn.query_drop("COMMIT").await
}

/// The suite's 5-operation transaction, between START TRANSACTION and COMMIT.
async fn suite_tx_body(
    conn: &mut Conn,
    s: &[Statement],
    op: u64,
    io: &mut Io,
) -> Result<(), mysql_async::Error> {
    let key = suite_key(op);
    run(conn, &s[0], vec![int(key)], io).await?;
    run(conn, &s[1], vec![text(format!("tx-{op}")), int(key)], io).await?;
    run(conn, &s[2], vec![int(key), int(1 + (op % 5) as i64)], io).await?;
    run(conn, &s[3], vec![int(key)], io).await?;
    run(
        conn,
        &s[4],
        vec![text(format!("tx-{op}-done")), int(key)],
        io,
    )
    .await?;
    conn.query_drop("COMMIT").await
}

/// Whether an error leaves the connection unusable.
fn is_fatal(e: &mysql_async::Error) -> bool {
    match e {
        mysql_async::Error::Server(s) => CONNECTION_GONE.contains(&s.code),
        _ => true,
    }
}

/// The class and detail of an execution error.
fn classify(target: &Target, e: mysql_async::Error) -> (Class, String) {
    use mysql_async::{DriverError, Error};
    match e {
        Error::Server(s) if CONNECTION_GONE.contains(&s.code) => (
            Class::Read,
            format!(
                "connection closed by the server: MySQL {} ({}): {}",
                s.code,
                s.state,
                target.scrub(s.message)
            ),
        ),
        Error::Server(s) => (
            Class::ServerError,
            format!(
                "MySQL {} ({}): {}",
                s.code,
                s.state,
                target.scrub(s.message)
            ),
        ),
        e @ Error::Io(_) => (Class::Read, format!("connection lost: {}", io_text(&e))),
        Error::Driver(DriverError::ConnectionClosed) => {
            (Class::Read, "connection closed by the server".to_string())
        }
        Error::Driver(
            d @ (DriverError::PacketOutOfOrder
            | DriverError::UnexpectedPacket { .. }
            | DriverError::PacketTooLarge
            | DriverError::BadCompressedPacketHeader),
        ) => (Class::Malformed, format!("protocol error: {d}")),
        e => (Class::Read, target.scrub(e.to_string())),
    }
}

impl MySession {
    /// Runs op `op` on `conn`. `Err` carries the error and whether a transaction was open.
    /// `stmts` are the workload's statements as `open` prepared them (TPCB_SQL, suite_sql,
    /// or the custom one), so their indexes exist.
    async fn attempt(
        conn: &mut Conn,
        stmts: &[Statement],
        workload: &SqlWorkload,
        op: u64,
        io: &mut Io,
    ) -> Result<(), (mysql_async::Error, bool)> {
        let plain = |e| (e, false);
        match workload {
            SqlWorkload::TpcB { scale } | SqlWorkload::TpcBFunction { scale } => {
                conn.query_drop("START TRANSACTION").await.map_err(plain)?;
                tpcb_body(conn, stmts, op, *scale, io)
                    .await
                    .map_err(|e| (e, true))
            }
            SqlWorkload::TpcBSelect { scale } => {
                let aid = tpcb_params(op, *scale).aid as i64;
                run(conn, &stmts[0], vec![int(aid)], io)
                    .await
                    .map_err(plain)
            }
            SqlWorkload::Suite(kind) => {
                // `open` prepared every statement of `suite_sql(kind)`, at least one.
                let s = &stmts[0];
                match kind {
                    SuiteOp::Insert => {
                        let id = suite_new_id(op);
                        run(
                            conn,
                            s,
                            vec![int(id), int(id), text(format!("item-{id}"))],
                            io,
                        )
                        .await
                    }
                    SuiteOp::SelectPk | SuiteOp::Join => {
                        run(conn, s, vec![int(suite_key(op))], io).await
                    }
                    SuiteOp::Scan => run(conn, s, Vec::new(), io).await,
                    SuiteOp::Update => {
                        let v = text(format!("updated-{op}"));
                        run(conn, s, vec![v, int(suite_key(op))], io).await
                    }
                    SuiteOp::Delete => run(conn, s, vec![int(suite_new_id(op))], io).await,
                    SuiteOp::Transaction => {
                        conn.query_drop("START TRANSACTION").await.map_err(plain)?;
                        return suite_tx_body(conn, stmts, op, io)
                            .await
                            .map_err(|e| (e, true));
                    }
                }
                .map_err(plain)
            }
            SqlWorkload::Custom {
                params, corpora, ..
            } => {
                let values = custom_params(params, corpora, op)
                    .into_iter()
                    .map(text)
                    .collect();
                run(conn, &stmts[0], values, io).await.map_err(plain)
            }
        }
    }
}

impl Session for MySession {
    async fn execute(&mut self, op: u64) -> Outcome {
        let Some(conn) = self.conn.as_mut() else {
            return Outcome::error(
                Class::Read,
                "the connection was lost on an earlier operation; reopen the session",
            );
        };
        let sh = &self.shared;
        let mut io = Io::default();
        let (e, in_tx) = match Self::attempt(conn, &self.stmts, &sh.workload, op, &mut io).await {
            Ok(()) => return Outcome::ok(io.bytes_in, io.bytes_out),
            Err(x) => x,
        };
        let fatal = is_fatal(&e);
        let (mut class, mut detail) = classify(&sh.target, e);
        if in_tx && !fatal {
            // The server keeps the transaction open after a failed statement (a deadlock
            // has already rolled it back; ROLLBACK is then a no-op): end it so that the
            // session's next op starts clean.
            if let Err(r) = conn.query_drop("ROLLBACK").await {
                if is_fatal(&r) {
                    let (c, d) = classify(&sh.target, r);
                    class = c;
                    detail = format!("{detail}; then ROLLBACK failed: {d}");
                }
            }
        }
        if class.breaks_session() {
            self.conn = None;
        }
        Outcome::error(class, detail).with_bytes(io.bytes_in, io.bytes_out)
    }
}
