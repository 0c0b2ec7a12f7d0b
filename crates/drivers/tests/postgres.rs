//! The PostgreSQL driver against a real server: `PERFBASE_POSTGRES_URL` (from
//! `eval "$(scripts/services.sh up postgres)"`). Without it the tests print a note and pass,
//! unless `PERFBASE_REQUIRE_SERVICES=1`, which makes them fail.
//!
//! The tests share the pgbench and suite tables, so they take one lock each.
#![cfg(feature = "postgres")]

use perfbase_core::{Class, Driver, Outcome, Session};
use perfbase_drivers::sql::postgres::{
    create_tpcb_function, init_suite, init_tpcb, PgDriver, PgOptions, PgSession,
};
use perfbase_drivers::sql::{SqlWorkload, SuiteOp};
use perfbase_drivers::workload::{Corpus, Pick, Template, Values};
use perfbase_drivers::Operation;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio_postgres::{Client, NoTls};

static DB: Mutex<()> = Mutex::new(());

/// The server URL and the lock on its tables, or `None` (after a note) when no server is set.
fn server() -> Option<(String, MutexGuard<'static, ()>)> {
    match std::env::var("PERFBASE_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some((url, DB.lock().unwrap_or_else(|e| e.into_inner()))),
        _ => {
            if std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() == Ok("1") {
                panic!("PERFBASE_POSTGRES_URL is not set: run eval \"$(scripts/services.sh up postgres)\"");
            }
            eprintln!("note: PERFBASE_POSTGRES_URL is not set; skipping the PostgreSQL test");
            None
        }
    }
}

/// Runs `f` on a current-thread runtime inside a LocalSet, as the engine's workers do.
fn local<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio::task::LocalSet::new().block_on(&rt, f)
}

async fn client(url: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
    tokio::task::spawn_local(async move {
        let _ = connection.await;
    });
    client
}

async fn scalar(c: &Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).await.unwrap().get(0)
}

async fn session(url: &str, workload: SqlWorkload, pipeline: usize) -> PgSession {
    let driver = PgDriver::new(url, workload, PgOptions { pipeline }).unwrap();
    match driver.open(0).await {
        Ok(s) => s,
        Err(o) => panic!("open: {o:?}"),
    }
}

fn assert_ok(o: &Outcome) {
    assert_eq!(o.class, Class::Ok, "{o:?}");
}

/// sum(abalance) = sum(tbalance) = sum(bbalance) = sum(delta), and the history's row count.
async fn tpcb_invariant(c: &Client) -> (i64, i64) {
    let row = c
        .query_one(
            "SELECT (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts)::bigint,
                    (SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers)::bigint,
                    (SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches)::bigint,
                    (SELECT coalesce(sum(delta), 0) FROM pgbench_history)::bigint,
                    (SELECT count(*) FROM pgbench_history)",
            &[],
        )
        .await
        .unwrap();
    let (a, t, b, d, n): (i64, i64, i64, i64, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
    assert_eq!(a, b, "accounts vs branches");
    assert_eq!(t, b, "tellers vs branches");
    assert_eq!(d, b, "history vs branches");
    (n, d)
}

#[test]
fn init_tpcb_loads_pgbench_tables() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        let report = init_tpcb(&url, 1).await.unwrap();
        assert_eq!(report.rows, 100_011);
        let c = client(&url).await;
        assert_eq!(
            scalar(&c, "SELECT count(*) FROM pgbench_accounts").await,
            100_000
        );
        assert_eq!(scalar(&c, "SELECT count(*) FROM pgbench_tellers").await, 10);
        assert_eq!(scalar(&c, "SELECT count(*) FROM pgbench_branches").await, 1);
        assert_eq!(scalar(&c, "SELECT count(*) FROM pgbench_history").await, 0);
        assert_eq!(
            scalar(&c, "SELECT sum(abalance)::bigint FROM pgbench_accounts").await,
            0
        );
        assert_eq!(
            scalar(&c, "SELECT count(DISTINCT bid) FROM pgbench_accounts").await,
            1
        );
    });
}

#[test]
fn tpcb_transactions_keep_the_invariant() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        init_tpcb(&url, 1).await.unwrap();
        let mut s = session(&url, SqlWorkload::TpcB { scale: 1 }, 1).await;
        for op in 0..500 {
            let o = s.execute(op).await;
            assert_ok(&o);
            assert_eq!(o.bytes_in, 8, "one int4 balance");
            assert_eq!(o.bytes_out, 88);
        }
        let c = client(&url).await;
        let (n, delta) = tpcb_invariant(&c).await;
        assert_eq!(n, 500);
        assert_ne!(delta, 0);
    });
}

#[test]
fn tpcb_rolls_back_a_failed_transaction_and_goes_on() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        init_tpcb(&url, 1).await.unwrap();
        let c = client(&url).await;
        let mut s = session(&url, SqlWorkload::TpcB { scale: 1 }, 1).await;
        assert_ok(&s.execute(0).await);
        // The INSERT, after the three UPDATEs of the transaction, now fails.
        // NOT VALID: the row already there is not checked.
        c.batch_execute(
            "ALTER TABLE pgbench_history ADD CONSTRAINT perfbase_never \
             CHECK (delta > 100000) NOT VALID",
        )
        .await
        .unwrap();
        let o = s.execute(1).await;
        assert_eq!(o.class, Class::ServerError, "{o:?}");
        assert!(o.detail.as_deref().unwrap().contains("23514"), "{o:?}");
        // Rolled back: the updates of op 1 are gone.
        assert_eq!(tpcb_invariant(&c).await.0, 1);
        c.batch_execute("ALTER TABLE pgbench_history DROP CONSTRAINT perfbase_never")
            .await
            .unwrap();
        for op in 2..10 {
            assert_ok(&s.execute(op).await);
        }
        assert_eq!(tpcb_invariant(&c).await.0, 9);
    });
}

#[test]
fn pipelined_tpcb_transactions_keep_the_invariant_and_fail_alone() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        init_tpcb(&url, 1).await.unwrap();
        let c = client(&url).await;
        // 8 transactions, 56 statements, one round trip per execute.
        let mut s = session(&url, SqlWorkload::TpcB { scale: 1 }, 8).await;
        for op in 0..50 {
            let o = s.execute(op).await;
            assert_ok(&o);
            assert_eq!(o.batch, 8);
            assert_eq!((o.bytes_in, o.bytes_out), (64, 704));
        }
        assert_eq!(tpcb_invariant(&c).await.0, 400);
        // Transactions whose delta is negative now fail at their INSERT: each is rolled back
        // by its own END, and the others of the batch commit.
        c.batch_execute(
            "ALTER TABLE pgbench_history ADD CONSTRAINT perfbase_positive \
             CHECK (delta >= 0) NOT VALID",
        )
        .await
        .unwrap();
        let negative = (50 * 8..51 * 8)
            .filter(|&op| perfbase_drivers::sql::tpcb_params(op, 1).delta < 0)
            .count() as u32;
        assert!((1..8).contains(&negative), "a mixed batch: {negative} of 8");
        let o = s.execute(50).await;
        assert_eq!(o.class, Class::ServerError, "{o:?}");
        assert_eq!((o.batch, o.batch_ok), (8, 8 - negative), "{o:?}");
        let detail = o.detail.as_deref().unwrap();
        assert!(
            detail.contains(&format!("{negative} of 8 pipelined transactions failed"))
                && detail.contains("23514"),
            "{detail}"
        );
        // Sums still agree: no half-applied transaction.
        assert_eq!(tpcb_invariant(&c).await.0, 400 + (8 - negative) as i64);
        c.batch_execute("ALTER TABLE pgbench_history DROP CONSTRAINT perfbase_positive")
            .await
            .unwrap();
        assert_ok(&s.execute(51).await);
    });
}

#[test]
fn select_only_reads_one_balance_per_op_and_pipelines() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        init_tpcb(&url, 1).await.unwrap();
        let c = client(&url).await;
        let before = tpcb_invariant(&c).await;
        for pipeline in [1, 32] {
            let mut s = session(&url, SqlWorkload::TpcBSelect { scale: 1 }, pipeline).await;
            for op in 0..20 {
                let o = s.execute(op).await;
                assert_ok(&o);
                // Per op one int4 balance (4 + 4 bytes) and one int4 key.
                let n = pipeline as u64;
                assert_eq!((o.bytes_in, o.bytes_out), (8 * n, 8 * n), "{o:?}");
            }
        }
        // Nothing was written.
        assert_eq!(tpcb_invariant(&c).await, before);
    });
}

#[test]
fn tpcb_function_keeps_the_invariant_and_pipelines() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        init_tpcb(&url, 1).await.unwrap();
        create_tpcb_function(&url).await.unwrap();
        let mut s = session(&url, SqlWorkload::TpcBFunction { scale: 1 }, 1).await;
        for op in 0..300 {
            let o = s.execute(op).await;
            assert_ok(&o);
            assert_eq!((o.bytes_in, o.bytes_out), (8, 32));
        }
        let c = client(&url).await;
        assert_eq!(tpcb_invariant(&c).await.0, 300);
        // Pipelined: 8 calls per execute, ops 8·op … 8·op+7 (distinct from the ones above).
        let mut p = session(&url, SqlWorkload::TpcBFunction { scale: 1 }, 8).await;
        for op in 100..150 {
            let o = p.execute(op).await;
            assert_ok(&o);
            assert_eq!((o.bytes_in, o.bytes_out), (8 * 8, 8 * 32));
        }
        assert_eq!(tpcb_invariant(&c).await.0, 300 + 50 * 8);
    });
}

#[test]
fn suite_ops_each_succeed() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        init_suite(&url).await.unwrap();
        let c = client(&url).await;
        assert_eq!(
            scalar(&c, "SELECT count(*) FROM perfbase_items").await,
            10_000
        );
        assert_eq!(
            scalar(&c, "SELECT count(*) FROM perfbase_orders").await,
            30_000
        );
        for &op in SuiteOp::ALL {
            let mut s = session(&url, SqlWorkload::Suite(op), 1).await;
            let o = s.execute(7).await;
            assert_ok(&o);
            match op {
                SuiteOp::SelectPk | SuiteOp::Scan | SuiteOp::Transaction => {
                    assert!(o.bytes_in > 0, "{op:?}: {o:?}")
                }
                // One item with its three orders: 3 rows of 4 columns.
                // The item with its orders (3 preloaded, 1 from the transaction of the same
                // op): per row id 4+8, v 4+32, order id 4+8, qty 4+4.
                SuiteOp::Join => assert_eq!(o.bytes_in, 4 * 68, "{o:?}"),
                _ => assert_eq!(o.bytes_in, 0, "{op:?}"),
            }
        }
        assert_eq!(
            scalar(&c, "SELECT count(*) FROM perfbase_items").await,
            10_000
        );
        assert_eq!(
            scalar(&c, "SELECT count(*) FROM perfbase_orders").await,
            30_001
        );
        // The transaction updated the order it inserted, by the id its INSERT returned: the
        // quantity drawn for op 7 (1..=10), plus one.
        let qty = 1 + (perfbase_drivers::workload::mix64(7 ^ 0x0071_7479) % 10) as i64;
        assert_eq!(
            scalar(
                &c,
                &format!(
                    "SELECT qty::bigint FROM perfbase_orders WHERE item_id = {} \
                     ORDER BY id DESC LIMIT 1",
                    perfbase_drivers::sql::suite_key(7)
                )
            )
            .await,
            qty + 1
        );
        // Pipelined inserts then deletes of the same ops leave the table as it was.
        for op in [SuiteOp::Insert, SuiteOp::Delete] {
            let mut s = session(&url, SqlWorkload::Suite(op), 16).await;
            for n in 0..10 {
                assert_ok(&s.execute(1_000 + n).await);
            }
            let expected = if op == SuiteOp::Insert {
                10_160
            } else {
                10_000
            };
            assert_eq!(
                scalar(&c, "SELECT count(*) FROM perfbase_items").await,
                expected
            );
        }
        let mut s = session(&url, SqlWorkload::Suite(SuiteOp::SelectPk), 4).await;
        let o = s.execute(3).await;
        assert_ok(&o);
        assert_eq!(o.bytes_in, 4 * (12 + 12 + 36));
    });
}

fn custom(sql: &str, params: &[&str]) -> SqlWorkload {
    // 1..=100, made on demand like a plan's `pattern = "{n}"`.
    let ids = Values::pattern("{n}", 1, 100);
    let corpora = vec![Arc::new(
        Corpus::new("ids", ids, None, Pick::Sequential, 0.0).unwrap(),
    )];
    let params = params
        .iter()
        .map(|p| Template::parse(p, &corpora).unwrap())
        .collect();
    SqlWorkload::Custom {
        sql: sql.into(),
        params,
        corpora,
    }
}

#[test]
fn custom_statements_bind_text_parameters() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        init_suite(&url).await.unwrap();
        // bigint and text parameters, all bound as text.
        let w = custom(
            "SELECT id, v FROM perfbase_items WHERE id = $1 AND v <> $2 AND k < $3",
            &["{{ids}}", "x-{{ids}}", "1000000000"],
        );
        let mut s = session(&url, w, 1).await;
        for op in 0..20 {
            let o = s.execute(op).await;
            assert_ok(&o);
            assert_eq!(o.bytes_in, 12 + 36, "one row: bigint id, 32-char v");
        }
        let w = custom(
            "UPDATE perfbase_items SET v = $2 WHERE id = $1",
            &["{{ids}}", "v{{ids}}"],
        );
        let mut s = session(&url, w, 4).await;
        assert_ok(&s.execute(0).await);
        let c = client(&url).await;
        assert_eq!(
            c.query_one("SELECT v FROM perfbase_items WHERE id = 3", &[])
                .await
                .unwrap()
                .get::<_, String>(0),
            "v3"
        );
        // A value the server cannot parse as the column's type is a driver error.
        let w = custom(
            "SELECT v FROM perfbase_items WHERE id = $1",
            &["not-a-number"],
        );
        let mut s = session(&url, w, 1).await;
        let o = s.execute(0).await;
        assert_eq!(o.class, Class::ServerError, "{o:?}");
        assert!(o.detail.as_deref().unwrap().contains("22P02"), "{o:?}");
    });
}

fn with_password(url: &str, password: &str) -> String {
    let mut u = url::Url::parse(url).unwrap();
    u.set_password(Some(password)).unwrap();
    u.to_string()
}

#[test]
fn login_failures_are_connect_outcomes_without_the_password() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        let workload = || SqlWorkload::Suite(SuiteOp::SelectPk);
        let bad = with_password(&url, "wrong-s3cret-pw");
        let d = PgDriver::new(&bad, workload(), PgOptions::default()).unwrap();
        let o = d.open(0).await.err().expect("a wrong password must fail");
        assert_eq!(o.class, Class::Connect);
        let detail = o.detail.as_deref().unwrap();
        assert!(detail.contains("28P01"), "{detail}");
        assert!(!detail.contains("wrong-s3cret-pw"), "{detail}");
        let err = init_tpcb(&bad, 1).await.unwrap_err().to_string();
        assert!(
            err.contains("28P01") && !err.contains("wrong-s3cret-pw"),
            "{err}"
        );

        let mut missing = url::Url::parse(&url).unwrap();
        missing.set_path("/perfbase_no_such_db");
        let d = PgDriver::new(missing.as_str(), workload(), PgOptions::default()).unwrap();
        let o = d.open(0).await.err().expect("a missing database must fail");
        assert_eq!(o.class, Class::Connect);
        assert!(o.detail.as_deref().unwrap().contains("3D000"), "{o:?}");

        let refused = "postgres://perfbase:perfbase@127.0.0.1:1/perfbase";
        let d = PgDriver::new(refused, workload(), PgOptions::default()).unwrap();
        let o = d.open(0).await.err().expect("a closed port must fail");
        assert_eq!(o.class, Class::Connect);
        assert!(
            !o.detail.as_deref().unwrap().contains(":perfbase@"),
            "{o:?}"
        );
    });
}

#[test]
fn a_missing_table_is_a_driver_error_and_the_session_recovers() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        let c = client(&url).await;
        c.batch_execute("DROP TABLE IF EXISTS perfbase_late")
            .await
            .unwrap();
        let w = custom("SELECT id FROM perfbase_late WHERE id = $1", &["{{ids}}"]);
        let mut s = session(&url, w, 1).await;
        for op in 0..3 {
            let o = s.execute(op).await;
            assert_eq!(o.class, Class::ServerError, "{o:?}");
            let detail = o.detail.as_deref().unwrap();
            assert!(detail.starts_with("SQLSTATE 42P01: relation"), "{detail}");
        }
        c.batch_execute(
            "CREATE TABLE perfbase_late (id int PRIMARY KEY); INSERT INTO perfbase_late VALUES (1)",
        )
        .await
        .unwrap();
        let o = s.execute(0).await;
        assert_ok(&o);
        assert_eq!(o.bytes_in, 8);
        c.batch_execute("DROP TABLE perfbase_late").await.unwrap();
    });
}

#[test]
fn a_killed_connection_is_a_read_outcome() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        init_suite(&url).await.unwrap();
        let mut u = url::Url::parse(&url).unwrap();
        u.query_pairs_mut()
            .append_pair("application_name", "perfbase-kill-test");
        let d = PgDriver::new(
            u.as_str(),
            SqlWorkload::Suite(SuiteOp::SelectPk),
            PgOptions::default(),
        )
        .unwrap();
        let c = client(&url).await;
        let count = "SELECT count(*) FROM pg_stat_activity \
                     WHERE application_name = 'perfbase-kill-test'";
        for idle in [true, false] {
            // Sessions of the previous round are gone once the server has seen them close.
            for _ in 0..100 {
                if scalar(&c, count).await == 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let mut s = d.open(0).await.unwrap_or_else(|o| panic!("{o:?}"));
            assert_ok(&s.execute(0).await);
            let killed = scalar(
                &c,
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE application_name = 'perfbase-kill-test'",
            )
            .await;
            assert_eq!(killed, 1);
            if idle {
                // Let the session's connection task see the server's FATAL first.
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            let o = s.execute(1).await;
            assert_eq!(o.class, Class::Read, "{o:?}");
            assert!(o.class.breaks_session());
            let detail = o.detail.as_deref().unwrap();
            assert!(
                !idle || detail.contains("57P01"),
                "the reason is kept: {detail}"
            );
            // The engine would drop it and open a new one.
            drop(s);
            let mut fresh = d.open(0).await.unwrap_or_else(|o| panic!("{o:?}"));
            assert_ok(&fresh.execute(2).await);
        }
    });
}

#[derive(Debug, PartialEq)]
struct Shape {
    columns: Vec<(String, String, String, Option<i32>, String)>,
    counts: Vec<(String, i64, i64)>,
    options: Vec<(String, Option<Vec<String>>)>,
    indexes: Vec<(String, String)>,
}

async fn shape(c: &Client) -> Shape {
    let columns = c
        .query(
            "SELECT table_name::text, column_name::text, data_type::text,
                    character_maximum_length::int, is_nullable::text
             FROM information_schema.columns
             WHERE table_name LIKE 'pgbench\\_%' ORDER BY table_name, ordinal_position",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect();
    let mut counts = Vec::new();
    for (table, filler) in [
        ("pgbench_accounts", "filler"),
        ("pgbench_branches", "filler"),
        ("pgbench_tellers", "filler"),
        ("pgbench_history", "filler"),
    ] {
        let row = c
            .query_one(
                &format!("SELECT count(*), count({filler}) FROM {table}"),
                &[],
            )
            .await
            .unwrap();
        counts.push((table.to_string(), row.get(0), row.get(1)));
    }
    let options = c
        .query(
            "SELECT relname::text, reloptions::text[] FROM pg_class
             WHERE relname LIKE 'pgbench\\_%' AND relkind = 'r' ORDER BY relname",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let indexes = c
        .query(
            "SELECT tablename::text, indexdef FROM pg_indexes
             WHERE tablename LIKE 'pgbench\\_%' ORDER BY tablename",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    Shape {
        columns,
        counts,
        options,
        indexes,
    }
}

#[test]
fn init_tpcb_matches_real_pgbench() {
    let Some((url, _lock)) = server() else { return };
    let pgbench = std::process::Command::new("pgbench")
        .args(["-i", "-s", "1", "-q", &url])
        .output();
    let output = match pgbench {
        Ok(o) => o,
        Err(e) => {
            if std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() == Ok("1") {
                panic!("pgbench: {e} (apt-get install postgresql-contrib)");
            }
            eprintln!("note: pgbench not found ({e}); skipping the cross-check");
            return;
        }
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    local(async {
        let c = client(&url).await;
        let theirs = shape(&c).await;
        init_tpcb(&url, 1).await.unwrap();
        let ours = shape(&c).await;
        assert_eq!(ours, theirs);
        assert_eq!(
            ours.counts[0],
            ("pgbench_accounts".to_string(), 100_000, 100_000)
        );
        assert_eq!(ours.counts[1], ("pgbench_branches".to_string(), 1, 0));
        assert_eq!(ours.options.len(), 4);
        assert_eq!(ours.indexes.len(), 3);
    });
}

#[test]
fn server_version_names_the_product_and_hides_a_wrong_password() {
    let Some((url, _lock)) = server() else { return };
    local(async {
        let v = perfbase_drivers::sql::postgres::server_version(&url)
            .await
            .unwrap();
        eprintln!("server version: {v}");
        assert!(v.starts_with("PostgreSQL "), "{v}");
        assert!(v.chars().any(|c| c.is_ascii_digit()), "{v}");
        let bad = with_password(&url, "wrong-s3cret-pw");
        let err = perfbase_drivers::sql::postgres::server_version(&bad)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("28P01"), "{err}");
        assert!(!err.contains("wrong-s3cret-pw"), "{err}");
    });
}
