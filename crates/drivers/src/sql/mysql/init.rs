//! Set-up steps outside the load: pgbench's tables at a scale, the suite's tables, and reading
//! the tables' scale and the server's version.

use super::config::{first_words, InitReport, MyError, Target, BATCH_ROWS};
use crate::sql::{ACCOUNTS_PER_SCALE, BRANCHES_PER_SCALE, SUITE_ROWS, TELLERS_PER_SCALE};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use std::fmt::Write as _;
use std::time::Instant;

/// Runs setup statements one by one, naming the failing one.
async fn run_all(conn: &mut Conn, target: &Target, sqls: &[&str]) -> Result<(), MyError> {
    for sql in sqls {
        conn.query_drop(*sql)
            .await
            .map_err(|e| target.setup_error(first_words(sql), e))?;
    }
    Ok(())
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

/// The server's product and version for a report, e.g. `MariaDB 10.11.6-MariaDB-0+deb12u1`
/// or `MySQL 8.0.36`: `VERSION()` as the server gives it. MariaDB speaks the same protocol and
/// is told apart only by the "MariaDB" in that string.
pub async fn server_version(url: &str) -> Result<String, MyError> {
    let target = Target::parse(url)?;
    let mut conn = target.connect().await?;
    let version: Result<Option<String>, _> = conn.query_first("SELECT VERSION()").await;
    let _ = conn.disconnect().await;
    let version = version
        .map_err(|e| target.setup_error("SELECT VERSION()", e))?
        .unwrap_or_default();
    let product = if version.contains("MariaDB") {
        "MariaDB"
    } else {
        "MySQL"
    };
    Ok(format!("{product} {}", version.trim()))
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
