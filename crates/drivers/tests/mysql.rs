//! The MySQL/MariaDB driver against a real server: the MariaDB of `scripts/services.sh`
//! (`eval "$(scripts/services.sh up mariadb)"` exports `PERFBASE_MYSQL_URL`). Without that
//! variable the tests print a note and pass, unless `PERFBASE_REQUIRE_SERVICES=1`.
//!
//! Each test uses its own tables (pgbench_*, perfbase_items/orders, perfbase_fault_*), so the
//! tests can run in parallel against one database.
#![cfg(feature = "mysql")]

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};
use perfbase_core::{Class, Driver, Outcome, Session};
use perfbase_drivers::sql::mysql::{init_suite, init_tpcb, MyDriver, MySession};
use perfbase_drivers::sql::{tpcb_params, SqlWorkload, SuiteOp};
use perfbase_drivers::workload::Template;
use perfbase_drivers::Operation;
use std::future::Future;
use std::time::Duration;

fn service_url() -> Option<String> {
    match std::env::var("PERFBASE_MYSQL_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "PERFBASE_MYSQL_URL is not set but PERFBASE_REQUIRE_SERVICES=1: \
                 run eval \"$(scripts/services.sh up mariadb)\" first"
            );
            eprintln!(
                "note: PERFBASE_MYSQL_URL is not set; MySQL tests skipped \
                 (eval \"$(scripts/services.sh up mariadb)\" to run them)"
            );
            None
        }
    }
}

/// Runs `f` as the engine runs sessions: a current-thread runtime and a LocalSet.
fn block_on<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    tokio::task::LocalSet::new().block_on(&rt, f)
}

/// A plain client connection for checks, over TCP like the driver.
async fn client(url: &str) -> Conn {
    let opts = Opts::from_url(url).expect("PERFBASE_MYSQL_URL parses");
    Conn::new(OptsBuilder::from_opts(opts).prefer_socket(false))
        .await
        .expect("the test client connects")
}

async fn scalar(c: &mut Conn, sql: &str) -> i64 {
    c.query_first::<i64, _>(sql)
        .await
        .expect(sql)
        .expect("one row")
}

async fn open(driver: &MyDriver) -> MySession {
    match driver.open(0).await {
        Ok(s) => s,
        Err(o) => panic!("open failed: {o:?}"),
    }
}

async fn open_err(url: &str, workload: SqlWorkload) -> Outcome {
    let d = MyDriver::new(url, workload).expect("driver");
    match d.open(0).await {
        Ok(_) => panic!("open succeeded"),
        Err(o) => o,
    }
}

fn with_url(url: &str, edit: impl FnOnce(&mut url::Url)) -> String {
    let mut u = url::Url::parse(url).expect("URL");
    edit(&mut u);
    u.to_string()
}

fn custom(sql: &str, params: &[&str]) -> SqlWorkload {
    SqlWorkload::Custom {
        sql: sql.to_string(),
        params: params
            .iter()
            .map(|p| Template::parse(p, &[]).expect("template"))
            .collect(),
        corpora: Vec::new(),
    }
}

#[test]
fn tpcb_transactions_keep_the_balances_consistent() {
    let Some(url) = service_url() else { return };
    block_on(async {
        let report = init_tpcb(&url, 1).await.expect("init_tpcb");
        assert_eq!(report.rows, 100_000 + 10 + 1);
        eprintln!(
            "init_tpcb scale 1: {} rows in {:?}",
            report.rows, report.elapsed
        );
        let mut c = client(&url).await;
        assert_eq!(
            scalar(&mut c, "SELECT count(*) FROM pgbench_accounts").await,
            100_000
        );
        assert_eq!(
            scalar(&mut c, "SELECT count(*) FROM pgbench_tellers").await,
            10
        );
        assert_eq!(
            scalar(&mut c, "SELECT count(*) FROM pgbench_branches").await,
            1
        );

        let driver = MyDriver::new(&url, SqlWorkload::TpcB { scale: 1 }).expect("driver");
        let mut s = open(&driver).await;
        const N: u64 = 300;
        for op in 0..N {
            let o = s.execute(op).await;
            assert_eq!(o.class, Class::Ok, "op {op}: {o:?}");
            // 11 integer parameters out (2 + 1 + 2 + 2 + 4), one integer (abalance) back.
            assert_eq!((o.bytes_out, o.bytes_in), (11 * 8, 8), "op {op}");
        }
        let deltas: i64 = (0..N).map(|op| tpcb_params(op, 1).delta as i64).sum();
        let history = scalar(&mut c, "SELECT count(*) FROM pgbench_history").await;
        assert_eq!(history, N as i64);
        for sql in [
            "SELECT CAST(COALESCE(sum(abalance), 0) AS SIGNED) FROM pgbench_accounts",
            "SELECT CAST(COALESCE(sum(tbalance), 0) AS SIGNED) FROM pgbench_tellers",
            "SELECT CAST(COALESCE(sum(bbalance), 0) AS SIGNED) FROM pgbench_branches",
            "SELECT CAST(COALESCE(sum(delta), 0) AS SIGNED) FROM pgbench_history",
        ] {
            assert_eq!(scalar(&mut c, sql).await, deltas, "{sql}");
        }

        // A statement failing mid-transaction (the history table is gone, so the INSERT
        // fails after the three UPDATEs) is a driver error, the transaction is rolled back,
        // and the session goes on.
        c.query_drop("ALTER TABLE pgbench_history RENAME TO pgbench_history_away")
            .await
            .expect("rename");
        let o = s.execute(N).await;
        c.query_drop("ALTER TABLE pgbench_history_away RENAME TO pgbench_history")
            .await
            .expect("rename back");
        assert_eq!(o.class, Class::ServerError, "{o:?}");
        let detail = o.detail.as_deref().unwrap_or_default();
        assert!(detail.starts_with("MySQL 1146 (42S02): Table"), "{detail}");
        let o = s.execute(N + 1).await;
        assert_eq!(o.class, Class::Ok, "{o:?}");
        let deltas = deltas + tpcb_params(N + 1, 1).delta as i64;
        assert_eq!(
            scalar(&mut c, "SELECT count(*) FROM pgbench_history").await,
            N as i64 + 1
        );
        for sql in [
            "SELECT CAST(sum(abalance) AS SIGNED) FROM pgbench_accounts",
            "SELECT CAST(sum(tbalance) AS SIGNED) FROM pgbench_tellers",
            "SELECT CAST(sum(bbalance) AS SIGNED) FROM pgbench_branches",
            "SELECT CAST(sum(delta) AS SIGNED) FROM pgbench_history",
        ] {
            assert_eq!(
                scalar(&mut c, sql).await,
                deltas,
                "after the rollback: {sql}"
            );
        }
        eprintln!("tpcb: {N} transactions, history {N}, balances = deltas = {deltas}; rollback ok");
    });
}

#[test]
fn every_suite_op_and_a_custom_statement_succeed() {
    let Some(url) = service_url() else { return };
    block_on(async {
        init_suite(&url).await.expect("init_suite");
        let mut c = client(&url).await;
        assert_eq!(
            scalar(&mut c, "SELECT count(*) FROM perfbase_items").await,
            10_000
        );
        assert_eq!(
            scalar(&mut c, "SELECT count(*) FROM perfbase_orders").await,
            30_000
        );

        let op = 0;
        let key = perfbase_drivers::sql::suite_key(op);
        for &kind in SuiteOp::ALL {
            let driver = MyDriver::new(&url, SqlWorkload::Suite(kind)).expect("driver");
            let mut s = open(&driver).await;
            let o = s.execute(op).await;
            assert_eq!(o.class, Class::Ok, "{}: {o:?}", kind.name());
            eprintln!(
                "suite {:<11} ok, {} bytes in, {} out",
                kind.name(),
                o.bytes_in,
                o.bytes_out
            );
            match kind {
                SuiteOp::Insert => assert_eq!(
                    scalar(&mut c, "SELECT count(*) FROM perfbase_items").await,
                    10_001
                ),
                SuiteOp::SelectPk => assert!(o.bytes_in > 16, "{o:?}"),
                // count and sum: two integers.
                SuiteOp::Scan => assert_eq!(o.bytes_in, 16),
                SuiteOp::Delete => assert_eq!(
                    scalar(&mut c, "SELECT count(*) FROM perfbase_items").await,
                    10_000
                ),
                SuiteOp::Transaction => assert_eq!(
                    scalar(&mut c, "SELECT count(*) FROM perfbase_orders").await,
                    30_001
                ),
                SuiteOp::Join => {
                    // The item's 3 orders and the transaction's one: 4 rows of
                    // (id, v, order id, qty).
                    let rows = scalar(
                        &mut c,
                        &format!("SELECT count(*) FROM perfbase_orders WHERE item_id = {key}"),
                    )
                    .await;
                    assert_eq!(rows, 4);
                    let v_len = format!("tx-{op}-done").len() as u64;
                    assert_eq!(o.bytes_in, 4 * (8 + v_len + 8 + 8), "{o:?}");
                }
                SuiteOp::Update => {}
            }
        }
        let updated: Option<String> = c
            .query_first(format!("SELECT v FROM perfbase_items WHERE k = {key}"))
            .await
            .expect("select");
        assert_eq!(updated.as_deref(), Some("tx-0-done"));

        let driver = MyDriver::new(
            &url,
            custom(
                "SELECT v FROM perfbase_items WHERE id = ? AND k >= ?",
                &["42", "0"],
            ),
        )
        .expect("driver");
        let mut s = open(&driver).await;
        let o = s.execute(7).await;
        assert_eq!(o.class, Class::Ok, "{o:?}");
        assert_eq!((o.bytes_in, o.bytes_out), ("item-42".len() as u64, 3));
    });
}

#[test]
fn failures_are_classed_and_never_show_the_password() {
    let Some(url) = service_url() else { return };
    block_on(async {
        let secret = "wrong-secret-pw";
        let wrong = with_url(&url, |u| {
            u.set_password(Some(secret)).expect("password");
        });
        let o = open_err(&wrong, SqlWorkload::Suite(SuiteOp::Scan)).await;
        let detail = o.detail.as_deref().unwrap_or_default();
        assert_eq!(o.class, Class::Connect, "{o:?}");
        assert!(detail.contains("MySQL 1045"), "{detail}");
        assert!(!detail.contains(secret), "{detail}");
        eprintln!("wrong password: {detail}");
        let e = init_suite(&wrong)
            .await
            .expect_err("init fails")
            .to_string();
        assert!(e.contains("MySQL 1045") && !e.contains(secret), "{e}");

        let nodb = with_url(&url, |u| u.set_path("/perfbase_no_such_db"));
        let o = open_err(&nodb, SqlWorkload::Suite(SuiteOp::Scan)).await;
        let detail = o.detail.as_deref().unwrap_or_default();
        assert_eq!(o.class, Class::Connect, "{o:?}");
        assert!(detail.contains("MySQL 1049"), "{detail}");
        eprintln!("unknown database: {detail}");

        let refused = with_url(&url, |u| {
            u.set_port(Some(1)).expect("port");
        });
        let o = open_err(&refused, SqlWorkload::Suite(SuiteOp::Scan)).await;
        assert_eq!(o.class, Class::Connect, "{o:?}");
        eprintln!("refused: {}", o.detail.as_deref().unwrap_or_default());

        // A statement on a missing table does not prepare: the open fails with its code.
        let o = open_err(
            &url,
            custom("SELECT v FROM perfbase_fault_none WHERE id = ?", &["1"]),
        )
        .await;
        assert_eq!(o.class, Class::ServerError, "{o:?}");
        assert!(
            o.detail
                .as_deref()
                .unwrap_or_default()
                .contains("MySQL 1146"),
            "{o:?}"
        );

        // A table that goes away under an open session: driver error 1146, then the same
        // session runs the statement again once the table is back.
        let mut c = client(&url).await;
        let setup = "CREATE TABLE perfbase_fault_t (id INT PRIMARY KEY, v VARCHAR(16)); \
                     INSERT INTO perfbase_fault_t VALUES (1, 'one')";
        c.query_drop("DROP TABLE IF EXISTS perfbase_fault_t")
            .await
            .expect("drop");
        c.query_drop(setup).await.expect("create");
        // Parameters must match the placeholders.
        let o = open_err(
            &url,
            custom(
                "SELECT 1 FROM perfbase_fault_t WHERE id = ? AND v = ?",
                &["1"],
            ),
        )
        .await;
        assert_eq!(o.class, Class::ServerError, "{o:?}");
        assert!(
            o.detail
                .as_deref()
                .unwrap_or_default()
                .contains("2 placeholder"),
            "{o:?}"
        );

        let driver = MyDriver::new(
            &url,
            custom("SELECT v FROM perfbase_fault_t WHERE id = ?", &["1"]),
        )
        .expect("driver");
        let mut s = open(&driver).await;
        assert_eq!(s.execute(0).await.class, Class::Ok);
        c.query_drop("DROP TABLE perfbase_fault_t")
            .await
            .expect("drop");
        let o = s.execute(1).await;
        assert_eq!(o.class, Class::ServerError, "{o:?}");
        let detail = o.detail.as_deref().unwrap_or_default();
        assert!(
            detail.starts_with("MySQL 1146 (42S02): Table ") && detail.contains("doesn't exist"),
            "{detail}"
        );
        eprintln!("missing table: {detail}");
        c.query_drop(setup).await.expect("create again");
        let o = s.execute(2).await;
        assert_eq!(o.class, Class::Ok, "{o:?}");
        assert_eq!(o.bytes_in, 3);

        // The server kills the connection: the next op is a read failure, and so is every
        // op after it (the engine reopens the session), without a panic.
        let id = s.connection_id().expect("connected");
        c.query_drop(format!("KILL {id}")).await.expect("kill");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let o = s.execute(3).await;
        assert_eq!(o.class, Class::Read, "{o:?}");
        assert!(o.class.breaks_session());
        eprintln!("killed: {}", o.detail.as_deref().unwrap_or_default());
        assert_eq!(s.connection_id(), None);
        assert_eq!(s.execute(4).await.class, Class::Read);
        // A fresh session works again.
        let mut s = open(&driver).await;
        assert_eq!(s.execute(5).await.class, Class::Ok);
        c.query_drop("DROP TABLE perfbase_fault_t")
            .await
            .expect("drop");
    });
}

/// The peer benchmark, sysbench, can use the same service (Debian's `sysbench` package).
#[test]
fn sysbench_prepares_its_tables_on_the_service() {
    let Some(url) = service_url() else { return };
    let Ok(version) = std::process::Command::new("sysbench")
        .arg("--version")
        .output()
    else {
        eprintln!("note: sysbench is not installed (apt-get install sysbench); check skipped");
        return;
    };
    eprintln!("{}", String::from_utf8_lossy(&version.stdout).trim());
    let u = url::Url::parse(&url).expect("URL");
    let args = [
        "oltp_point_select".to_string(),
        "--db-driver=mysql".into(),
        format!("--mysql-host={}", u.host_str().unwrap_or("127.0.0.1")),
        format!("--mysql-port={}", u.port().unwrap_or(3306)),
        format!("--mysql-user={}", u.username()),
        format!("--mysql-password={}", u.password().unwrap_or_default()),
        format!("--mysql-db={}", u.path().trim_start_matches('/')),
        "--tables=1".into(),
        "--table-size=1000".into(),
        // Its own table name prefix is not configurable: sbtest1, used by no other test.
    ];
    for phase in [
        &["cleanup"][..],
        &["prepare"],
        &["--events=200", "--time=0", "run"],
        &["cleanup"],
    ] {
        let out = std::process::Command::new("sysbench")
            .args(&args)
            .args(phase)
            .output()
            .expect("sysbench runs");
        assert!(
            out.status.success(),
            "sysbench {phase:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if phase.contains(&"run") {
            let text = String::from_utf8_lossy(&out.stdout);
            let line = text
                .lines()
                .find(|l| l.contains("queries:"))
                .unwrap_or("(no queries line)");
            eprintln!("sysbench run: {}", line.trim());
        }
    }
}

#[test]
fn server_version_names_the_product_and_hides_a_wrong_password() {
    let Some(url) = service_url() else { return };
    block_on(async {
        let v = perfbase_drivers::sql::mysql::server_version(&url)
            .await
            .expect("the version");
        eprintln!("server version: {v}");
        assert!(v.starts_with("MariaDB ") || v.starts_with("MySQL "), "{v}");
        assert!(v.chars().any(|c| c.is_ascii_digit()), "{v}");
        let secret = "wrong-secret-pw";
        let wrong = with_url(&url, |u| {
            u.set_password(Some(secret)).expect("password");
        });
        let e = perfbase_drivers::sql::mysql::server_version(&wrong)
            .await
            .expect_err("a wrong password fails")
            .to_string();
        assert!(e.contains("MySQL 1045"), "{e}");
        assert!(!e.contains(secret), "{e}");
    });
}
