//! Set-up steps outside the load: pgbench's tables (`init_tpcb`, loaded with COPY as pgbench
//! does), its TPC-B function, the suite's tables, and reading the tables' scale and the
//! server's version.

use super::config::{describe, describe_target, parse_config, InitReport, PgError};
use crate::sql::{ACCOUNTS_PER_SCALE, BRANCHES_PER_SCALE, SUITE_ROWS, TELLERS_PER_SCALE};
use bytes::Bytes;
use futures_util::SinkExt;
use std::time::Instant;
use tokio_postgres::{Client, NoTls};

/// pgbench switches `aid` to `bigint` from this scale on; the driver binds `int` values.
const SCALE_32BIT_THRESHOLD: u32 = 20_000;
/// pgbench's default fillfactor.
const FILLFACTOR: u32 = 100;
/// Bytes of COPY data sent per message while loading.
const COPY_CHUNK: usize = 256 * 1024;
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
pub(super) fn push_int(buf: &mut Vec<u8>, n: i64) {
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

/// The server's product and version for a report, e.g. `PostgreSQL 15.10 (Debian
/// 15.10-0+deb12u1)`: `server_version` as the server reports it, which keeps the packager's
/// suffix (`version()` would add the compiler and platform, too long for a table cell).
pub async fn server_version(url: &str) -> Result<String, PgError> {
    let (client, target) = setup_client(url).await?;
    let row = client
        .query_one("SHOW server_version", &[])
        .await
        .map_err(setup_error(&target, "SHOW server_version"))?;
    let version: String = row
        .try_get(0)
        .map_err(setup_error(&target, "reading server_version"))?;
    Ok(format!("PostgreSQL {}", version.trim()))
}

/// Creates and fills the TPC-B tables exactly as `pgbench -i -s scale` does (its default
/// steps `dtgvp`): drop the four tables, create them (fillfactor 100 on accounts, tellers and
/// branches), fill branches, tellers and accounts with COPY in one transaction that first
/// truncates them (`FREEZE` from PostgreSQL 14 on, as pgbench 14+), `VACUUM ANALYZE` each
/// table, then add the primary keys. Branch and teller fillers are NULL, account fillers
/// blank, all balances 0, history empty.
pub async fn init_tpcb(url: &str, scale: u32) -> Result<InitReport, PgError> {
    check_tpcb_scale(scale)?;
    let started = Instant::now();
    let (client, target) = setup_client(url).await?;
    create_tpcb_tables(&client, &target).await?;
    let version: i32 = client
        .query_one("SELECT current_setting('server_version_num')::int", &[])
        .await
        .map_err(setup_error(&target, "reading the server version"))?
        .try_get(0)
        .map_err(setup_error(&target, "reading the server version"))?;
    let freeze = version >= 140_000;
    let rows = load_tpcb_tables(&client, &target, scale, freeze).await?;
    vacuum_and_add_tpcb_keys(&client, &target).await?;
    Ok(InitReport {
        rows,
        elapsed: started.elapsed(),
    })
}

/// Refuses scale 0, and the scales from which pgbench makes account ids `bigint`.
fn check_tpcb_scale(scale: u32) -> Result<(), PgError> {
    if scale == 0 || scale >= SCALE_32BIT_THRESHOLD {
        return Err(PgError::Unsupported(format!(
            "scale {scale}: use a scale from 1 to {} (pgbench switches account ids to bigint \
             from {SCALE_32BIT_THRESHOLD} on)",
            SCALE_32BIT_THRESHOLD - 1
        )));
    }
    Ok(())
}

/// Drops the four TPC-B tables and creates them afresh, as pgbench's steps `d` and `t`.
async fn create_tpcb_tables(client: &Client, target: &str) -> Result<(), PgError> {
    let err = |step: &str| setup_error(target, step);
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
    Ok(())
}

/// Fills branches, tellers and accounts for `scale` with COPY (`freeze`: with FREEZE) in one
/// transaction that first truncates the tables, as pgbench's step `g`; the rows loaded.
async fn load_tpcb_tables(
    client: &Client,
    target: &str,
    scale: u32,
    freeze: bool,
) -> Result<u64, PgError> {
    let s = scale as i64;
    let (branches, tellers, accounts) = (
        BRANCHES_PER_SCALE * s,
        TELLERS_PER_SCALE * s,
        ACCOUNTS_PER_SCALE * s,
    );
    let load = setup_error(target, "loading the pgbench tables");
    client
        .batch_execute(
            "begin; truncate table pgbench_accounts, pgbench_branches, pgbench_history, \
             pgbench_tellers",
        )
        .await
        .map_err(&load)?;
    let mut rows = copy_rows(client, "pgbench_branches", freeze, branches, |b, i| {
        push_int(b, i + 1);
        b.extend_from_slice(b"\t0\t\\N\n");
    })
    .await
    .map_err(&load)?;
    rows += copy_rows(client, "pgbench_tellers", freeze, tellers, |b, i| {
        push_int(b, i + 1);
        b.push(b'\t');
        push_int(b, i / TELLERS_PER_SCALE + 1);
        b.extend_from_slice(b"\t0\t\\N\n");
    })
    .await
    .map_err(&load)?;
    rows += copy_rows(client, "pgbench_accounts", freeze, accounts, |b, i| {
        push_int(b, i + 1);
        b.push(b'\t');
        push_int(b, i / ACCOUNTS_PER_SCALE + 1);
        b.extend_from_slice(b"\t0\t\n");
    })
    .await
    .map_err(&load)?;
    client.batch_execute("commit").await.map_err(&load)?;
    Ok(rows)
}

/// `VACUUM ANALYZE` on each table, then the primary keys, as pgbench's steps `v` and `p`.
async fn vacuum_and_add_tpcb_keys(client: &Client, target: &str) -> Result<(), PgError> {
    for table in [
        "pgbench_branches",
        "pgbench_tellers",
        "pgbench_accounts",
        "pgbench_history",
    ] {
        client
            .batch_execute(&format!("vacuum analyze {table}"))
            .await
            .map_err(setup_error(target, &format!("vacuum analyze {table}")))?;
    }
    for sql in [
        "alter table pgbench_branches add primary key (bid)",
        "alter table pgbench_tellers add primary key (tid)",
        "alter table pgbench_accounts add primary key (aid)",
    ] {
        client
            .batch_execute(sql)
            .await
            .map_err(setup_error(target, "adding the primary keys"))?;
    }
    Ok(())
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
