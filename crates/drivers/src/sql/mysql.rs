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

use super::{
    custom_params, suite_key, suite_new_id, tpcb_params, SqlWorkload, SuiteOp, ACCOUNTS_PER_SCALE,
    BRANCHES_PER_SCALE, SUITE_ROWS, TELLERS_PER_SCALE,
};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Params, Row, Statement, Value};
use perfbase_core::{Class, Driver, Outcome, Session};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a MySQL driver could not be built, or a schema not be initialised. Each variant says
/// what to do about it; none contains the password.
#[derive(Debug, Error)]
pub enum MyError {
    /// The URL does not parse: write it as `mysql://user:password@host:port/database`
    /// (`mariadb://` is accepted too).
    #[error("'{url}': {reason}; use mysql://user:password@host:port/database")]
    Url { url: String, reason: String },
    /// The workload cannot run on MySQL. Only TPC-B as one stored-function call is refused:
    /// stored functions are written differently in MySQL and MariaDB (another language, other
    /// rules on what a function may do), so PostgreSQL's `pgbench_tx` has no faithful
    /// counterpart and the workload is not offered; run the plain TPC-B workload instead,
    /// which sends the same five statements in one transaction.
    #[error("{0}")]
    Unsupported(String),
    /// A setting out of range (a scale of 0): use a value the message names.
    #[error("{0}")]
    Invalid(String),
    /// No connection could be made: start the server (`scripts/services.sh up mariadb`) or
    /// fix the host and port.
    #[error("cannot connect to {target}: {reason}; is the server running (scripts/services.sh up mariadb)?")]
    Connect { target: String, reason: String },
    /// The server refused the login or the database (1045 access denied, 1049 unknown
    /// database): fix the user, password or database in the URL, or the user's grants.
    #[error("{target}: MySQL {code} ({state}): {message}; check the user, password and database in the URL")]
    Login {
        target: String,
        code: u16,
        state: String,
        message: String,
    },
    /// A statement failed on the server: the message has the server's code and text (1142
    /// means the user lacks a privilege on the database, 1050 a table in the way).
    #[error("{context}: MySQL {code} ({state}): {message}")]
    Server {
        context: String,
        code: u16,
        state: String,
        message: String,
    },
    /// The connection broke half-way (server restarted, connection killed): run it again.
    #[error("{context}: {reason}; the connection was lost, run it again")]
    Lost { context: String, reason: String },
}

/// What [`init_tpcb`] did: rows inserted (branches, tellers and accounts) and the time taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitReport {
    pub rows: u64,
    pub elapsed: Duration,
}

/// Rows per multi-row INSERT when filling tables (about 150 kB of SQL, well under the default
/// 16 MB `max_allowed_packet`).
const BATCH_ROWS: i64 = 5_000;

/// Server codes after which the connection is gone even though the server answered.
const CONNECTION_GONE: [u16; 4] = [
    1053, // ER_SERVER_SHUTDOWN
    1152, // ER_ABORTING_CONNECTION
    1927, // ER_CONNECTION_KILLED (MariaDB)
    4031, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
];

/// The connection options without the password (the URL's text is never shown as given).
struct Target {
    opts: Opts,
    /// `host:port/database`, for messages.
    shown: String,
    /// The password, kept only to scrub it from any message that might echo it.
    password: Option<String>,
    /// The user, host and database names, for [`Target::scrub`].
    names: String,
}

impl Target {
    fn parse(raw: &str) -> Result<Target, MyError> {
        let redacted = perfbase_core::redact::url(raw);
        let bad = |reason: String| MyError::Url {
            url: redacted.clone(),
            reason,
        };
        let mut url = url::Url::parse(raw).map_err(|e| bad(e.to_string()))?;
        match url.scheme() {
            "mysql" => {}
            "mariadb" => url
                .set_scheme("mysql")
                .map_err(|()| bad("cannot use this URL as mysql://".into()))?,
            other => return Err(bad(format!("unsupported scheme '{other}'"))),
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("the URL has no host".into()))?
            .to_string();
        let password = url.password().map(percent_decode);
        url.set_password(None)
            .map_err(|()| bad("the URL cannot carry a password".into()))?;
        let prefer_socket_given = url.query_pairs().any(|(k, _)| k == "prefer_socket");
        let opts = Opts::from_url(url.as_str()).map_err(|e| bad(e.to_string()))?;
        let shown = format!(
            "{host}:{}/{}",
            opts.tcp_port(),
            opts.db_name().unwrap_or_default()
        );
        let names = format!("{} {shown}", opts.user().unwrap_or_default());
        let mut builder = OptsBuilder::from_opts(opts).pass(password.clone());
        if !prefer_socket_given {
            builder = builder.prefer_socket(false);
        }
        Ok(Target {
            opts: builder.into(),
            shown,
            password,
            names,
        })
    }

    /// `text` with the password replaced, should a server or library ever echo it. Passwords
    /// shorter than 3 characters, and passwords that are part of the user, host or database
    /// name (shown anyway), are left alone: replacing them would garble the text.
    fn scrub(&self, text: String) -> String {
        match &self.password {
            Some(p) if p.len() >= 3 && text.contains(p.as_str()) && !self.names.contains(p) => {
                text.replace(p.as_str(), perfbase_core::redact::REDACTED)
            }
            _ => text,
        }
    }

    async fn connect(&self) -> Result<Conn, MyError> {
        Conn::new(self.opts.clone()).await.map_err(|e| match e {
            mysql_async::Error::Server(s) => MyError::Login {
                target: self.shown.clone(),
                code: s.code,
                state: s.state,
                message: self.scrub(s.message),
            },
            e => MyError::Connect {
                target: self.shown.clone(),
                reason: self.scrub(io_text(&e)),
            },
        })
    }

    /// A failed setup statement as an error naming `context`.
    fn setup_error(&self, context: &str, e: mysql_async::Error) -> MyError {
        match e {
            mysql_async::Error::Server(s) => MyError::Server {
                context: context.to_string(),
                code: s.code,
                state: s.state,
                message: self.scrub(s.message),
            },
            e => MyError::Lost {
                context: context.to_string(),
                reason: self.scrub(io_text(&e)),
            },
        }
    }
}

/// An error's text, for I/O errors the operating system's words alone (mysql_async wraps them
/// as "Input/output error: Input/output error: Connection refused").
fn io_text(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Io(mysql_async::IoError::Io(io)) => io.to_string(),
        e => e.to_string(),
    }
}

/// Decodes `%XX` escapes (a URL's password); invalid escapes stay as they are.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs setup statements one by one, naming the failing one.
async fn run_all(conn: &mut Conn, target: &Target, sqls: &[&str]) -> Result<(), MyError> {
    for sql in sqls {
        conn.query_drop(*sql)
            .await
            .map_err(|e| target.setup_error(first_words(sql), e))?;
    }
    Ok(())
}

/// The first words of a statement, to name it in messages.
fn first_words(sql: &str) -> &str {
    let end = sql
        .char_indices()
        .filter(|(_, c)| *c == '(')
        .map(|(i, _)| i)
        .next()
        .unwrap_or(sql.len())
        .min(60);
    let mut end = end;
    while !sql.is_char_boundary(end) {
        end -= 1;
    }
    sql[..end].trim_end()
}

/// Inserts rows `1..=count` into a table with multi-row INSERTs of [`BATCH_ROWS`] rows;
/// `row(i, out)` appends the parenthesised values of row `i`.
async fn insert_batches(
    conn: &mut Conn,
    target: &Target,
    head: &str,
    count: i64,
    row: impl Fn(i64, &mut String),
) -> Result<u64, MyError> {
    let mut sql = String::with_capacity(head.len() + BATCH_ROWS as usize * 24);
    let mut first = 1;
    while first <= count {
        let last = (first + BATCH_ROWS - 1).min(count);
        sql.clear();
        sql.push_str(head);
        for i in first..=last {
            if i > first {
                sql.push(',');
            }
            row(i, &mut sql);
        }
        conn.query_drop(sql.as_str())
            .await
            .map_err(|e| target.setup_error(first_words(head), e))?;
        first = last + 1;
    }
    Ok(count.max(0) as u64)
}

/// The scale of the TPC-B tables on the server, read as pgbench reads it before a run: the
/// row count of `pgbench_branches`. None when the table is missing or empty.
pub async fn tpcb_scale(url: &str) -> Result<Option<u32>, MyError> {
    let target = Target::parse(url)?;
    let mut conn = target.connect().await?;
    let n: Option<i64> = conn
        .query_first("SELECT count(*) FROM pgbench_branches")
        .await
        .unwrap_or(None);
    let _ = conn.disconnect().await;
    Ok(n.and_then(|n| u32::try_from(n).ok()).filter(|&n| n > 0))
}

/// Creates pgbench's four tables (InnoDB, MySQL types) in the URL's database, replacing any
/// that exist, and fills them as `pgbench -i -s scale` does: 100 000 accounts, 10 tellers
/// and 1 branch per scale unit, every balance 0, the history empty.
pub async fn init_tpcb(url: &str, scale: u32) -> Result<InitReport, MyError> {
    if scale == 0 {
        return Err(MyError::Invalid(
            "the TPC-B scale must be at least 1 (100 000 accounts per unit)".into(),
        ));
    }
    let started = Instant::now();
    let target = Target::parse(url)?;
    let mut conn = target.connect().await?;
    run_all(
        &mut conn,
        &target,
        &[
            "DROP TABLE IF EXISTS pgbench_history, pgbench_tellers, pgbench_accounts, pgbench_branches",
            "CREATE TABLE pgbench_branches (bid INT NOT NULL PRIMARY KEY, bbalance INT, filler CHAR(88)) ENGINE=InnoDB",
            "CREATE TABLE pgbench_tellers (tid INT NOT NULL PRIMARY KEY, bid INT, tbalance INT, filler CHAR(84)) ENGINE=InnoDB",
            "CREATE TABLE pgbench_accounts (aid INT NOT NULL PRIMARY KEY, bid INT, abalance INT, filler CHAR(84)) ENGINE=InnoDB",
            "CREATE TABLE pgbench_history (tid INT, bid INT, aid INT, delta INT, mtime DATETIME, filler CHAR(22)) ENGINE=InnoDB",
        ],
    )
    .await?;
    let s = scale as i64;
    let mut rows = insert_batches(
        &mut conn,
        &target,
        "INSERT INTO pgbench_branches (bid, bbalance, filler) VALUES ",
        BRANCHES_PER_SCALE * s,
        |i, out| {
            let _ = write!(out, "({i},0,'')");
        },
    )
    .await?;
    rows += insert_batches(
        &mut conn,
        &target,
        "INSERT INTO pgbench_tellers (tid, bid, tbalance, filler) VALUES ",
        TELLERS_PER_SCALE * s,
        |i, out| {
            let bid = (i - 1) / TELLERS_PER_SCALE + 1;
            let _ = write!(out, "({i},{bid},0,'')");
        },
    )
    .await?;
    rows += insert_batches(
        &mut conn,
        &target,
        "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES ",
        ACCOUNTS_PER_SCALE * s,
        |i, out| {
            let bid = (i - 1) / ACCOUNTS_PER_SCALE + 1;
            let _ = write!(out, "({i},{bid},0,'')");
        },
    )
    .await?;
    run_all(
        &mut conn,
        &target,
        &["ANALYZE TABLE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history"],
    )
    .await?;
    let _ = conn.disconnect().await;
    Ok(InitReport {
        rows,
        elapsed: started.elapsed(),
    })
}

/// Creates the suite's tables in the URL's database, replacing any that exist:
/// `perfbase_items` with 10 000 rows (`id` = `k` = 1..=10 000, `v` = `item-<id>`, an index on
/// `k`) and `perfbase_orders` with 3 orders per item (an index on `item_id`). Run it before
/// every run of the `insert` op: inserted ids restart at 10 001 each run.
pub async fn init_suite(url: &str) -> Result<(), MyError> {
    let target = Target::parse(url)?;
    let mut conn = target.connect().await?;
    run_all(
        &mut conn,
        &target,
        &[
            "DROP TABLE IF EXISTS perfbase_orders, perfbase_items",
            "CREATE TABLE perfbase_items (id BIGINT NOT NULL PRIMARY KEY, k BIGINT NOT NULL, v VARCHAR(64) NOT NULL, INDEX perfbase_items_k (k)) ENGINE=InnoDB",
            "CREATE TABLE perfbase_orders (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, item_id BIGINT NOT NULL, qty INT NOT NULL, INDEX perfbase_orders_item (item_id)) ENGINE=InnoDB",
        ],
    )
    .await?;
    insert_batches(
        &mut conn,
        &target,
        "INSERT INTO perfbase_items (id, k, v) VALUES ",
        SUITE_ROWS,
        |i, out| {
            let _ = write!(out, "({i},{i},'item-{i}')");
        },
    )
    .await?;
    insert_batches(
        &mut conn,
        &target,
        "INSERT INTO perfbase_orders (item_id, qty) VALUES ",
        SUITE_ROWS * 3,
        |i, out| {
            let item = (i - 1) / 3 + 1;
            let qty = (i - 1) % 3 + 1;
            let _ = write!(out, "({item},{qty})");
        },
    )
    .await?;
    run_all(
        &mut conn,
        &target,
        &["ANALYZE TABLE perfbase_items, perfbase_orders"],
    )
    .await?;
    let _ = conn.disconnect().await;
    Ok(())
}

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
        if let SqlWorkload::TpcB { scale: 0 } = workload {
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
                        Class::Driver => Class::Driver,
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
                    Class::Driver,
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
            Class::Driver,
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
        ) => (Class::Protocol, format!("protocol error: {d}")),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_without_keeping_the_password_in_messages() {
        let t = Target::parse("mysql://perfbase:s%40cret@127.0.0.1:53306/perfbase").unwrap();
        assert_eq!(t.shown, "127.0.0.1:53306/perfbase");
        assert_eq!(t.password.as_deref(), Some("s@cret"));
        assert_eq!(t.opts.pass(), Some("s@cret"));
        assert_eq!(t.opts.user(), Some("perfbase"));
        assert!(!t.opts.prefer_socket());
        let t = Target::parse("mariadb://u:pw@db.example/app?prefer_socket=true").unwrap();
        assert_eq!(t.shown, "db.example:3306/app");
        assert!(t.opts.prefer_socket());

        for bad in [
            "postgres://u:topsecret@h/db",
            "mysql://u:topsecret@/db",
            "mysql://u:topsecret@h:99999/db",
            "mysql://u:topsecret@h/db?nonsense=1",
        ] {
            let e = Target::parse(bad).err().unwrap().to_string();
            assert!(!e.contains("topsecret"), "{e}");
            assert!(e.contains("use mysql://"), "{e}");
        }
    }

    #[test]
    fn scrub_and_decode() {
        let t = Target::parse("mysql://u:hunter22@h/db").unwrap();
        assert_eq!(
            t.scrub("x hunter22 y".into()),
            format!("x {} y", perfbase_core::redact::REDACTED)
        );
        // A password that is also the user's name is shown with the user anyway.
        let t = Target::parse("mysql://perfbase:perfbase@h/perfbase_x").unwrap();
        assert_eq!(t.scrub("user 'perfbase'@'%'".into()), "user 'perfbase'@'%'");
        assert_eq!(percent_decode("a%2Fb%zz%4"), "a/b%zz%4");
        assert_eq!(percent_decode("%41%42"), "AB");
    }

    #[test]
    fn the_function_workload_is_refused_and_names_the_alternative() {
        let e = MyDriver::new(
            "mysql://u:p@127.0.0.1/db",
            SqlWorkload::TpcBFunction { scale: 1 },
        )
        .err()
        .unwrap();
        assert!(matches!(e, MyError::Unsupported(_)));
        assert!(e.to_string().contains("TPC-B workload"), "{e}");
    }

    #[test]
    fn statements_are_named_by_their_first_words() {
        assert_eq!(
            first_words("INSERT INTO perfbase_items (id, k, v) VALUES (?, ?, ?)"),
            "INSERT INTO perfbase_items"
        );
        assert_eq!(first_words("SELECT 1"), "SELECT 1");
        for op in SuiteOp::ALL {
            assert!(!suite_sql(op).is_empty());
        }
    }

    #[test]
    fn sizes_follow_the_binary_protocol() {
        assert_eq!(value_size(&Value::Int(7)), 8);
        assert_eq!(value_size(&text("abc".into())), 3);
        assert_eq!(value_size(&Value::NULL), 0);
    }
}
