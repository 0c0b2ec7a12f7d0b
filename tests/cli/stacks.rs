//! The systems under test of scripts/services.sh's `stacks` (one web app per framework and
//! PostgreSQL driver, behind PgBouncer): every running stack (PERFBASE_STACKS) answers its
//! four routes as the study expects, names itself in its Server header, and its /db really
//! queries PostgreSQL: pg_stat_statements counts at least as many calls of its SELECT as
//! requests were sent.

use crate::common::*;
use serde_json::Value;
use std::process::Command;

/// One GET with curl: (status, Content-Type, Server header, body).
fn get(url: &str) -> (u16, String, String, String) {
    let out = Command::new("curl")
        .args(["--noproxy", "*", "-sS", "-m", "20", "-D", "-", url])
        .output()
        .expect("curl runs");
    assert!(
        out.status.success(),
        "curl {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let status = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line from {url}: {head}"));
    let header = |name: &str| {
        head.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
            })
            .unwrap_or_default()
    };
    (
        status,
        header("content-type"),
        header("server"),
        body.to_string(),
    )
}

/// GET url, asserting 200 and a JSON body, which is returned.
fn get_json(url: &str) -> Value {
    let (status, ctype, _, body) = get(url);
    assert_eq!(status, 200, "GET {url}: {body}");
    assert!(
        ctype.starts_with("application/json"),
        "GET {url}: Content-Type {ctype}"
    );
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {url}: {e}: {body}"))
}

/// The calls pg_stat_statements has counted of the stacks' /db SELECT, read with psql from the
/// database stacks of the postgres service.
fn db_calls(pg_url: &str) -> i64 {
    let (base, _) = pg_url.rsplit_once('/').expect("a database in the URL");
    let out = Command::new("psql")
        .args([
            "-X",
            "-At",
            &format!("{base}/stacks"),
            "-c",
            "SELECT coalesce(sum(calls),0) FROM pg_stat_statements \
             WHERE query LIKE '%pgbench_accounts%WHERE aid%'",
        ])
        .env("PGCONNECT_TIMEOUT", "10")
        .output()
        .expect("psql runs");
    assert!(
        out.status.success(),
        "psql: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("pg_stat_statements gave {text:?}"))
}

#[test]
fn every_stack_serves_its_routes_and_queries_postgres() {
    let Some(stacks) = service("PERFBASE_STACKS") else {
        return;
    };
    let Some(pg_url) = service("PERFBASE_POSTGRES_URL") else {
        return;
    };
    assert!(!stacks.trim().is_empty(), "PERFBASE_STACKS is empty");
    // `up` leaves out a stack that failed to build or start, and says so; where the services
    // are required (CI), every one of them must be there.
    if std::env::var("PERFBASE_REQUIRE_SERVICES").is_ok() {
        let all = [
            "go_pgx",
            "go_pq",
            "actix_sqlx",
            "fastapi_asyncpg",
            "fastapi_psycopg",
            "express_pg",
            "express_postgres",
            "webflux_r2dbc",
        ];
        let missing: Vec<&str> = all
            .into_iter()
            .filter(|a| !stacks.split_whitespace().any(|s| s == *a))
            .collect();
        assert!(
            missing.is_empty(),
            "stacks not running: {missing:?}; see .services/stacks/*.log and `scripts/services.sh up stacks`"
        );
    }
    for s in stacks.split_whitespace() {
        let var = format!("PERFBASE_STACK_{}_URL", s.to_uppercase());
        let base = std::env::var(&var)
            .unwrap_or_else(|_| panic!("{s} is in PERFBASE_STACKS but {var} is not set"));

        let (status, ctype, server, body) = get(&format!("{base}/"));
        assert_eq!(
            (status, body.as_str()),
            (200, "Hello, World!"),
            "{s}: GET /"
        );
        assert!(
            ctype.starts_with("text/plain"),
            "{s}: GET / Content-Type {ctype}"
        );
        // `<framework>/<version> <driver>/<version>`, which perfbase shows as the version.
        let products: Vec<&str> = server.split_whitespace().collect();
        assert!(
            products.len() == 2
                && products.iter().all(|p| p
                    .split_once('/')
                    .is_some_and(|(n, v)| !n.is_empty() && !v.is_empty())),
            "{s}: Server header {server:?}"
        );

        let row = get_json(&format!("{base}/db"));
        let aid = row["aid"]
            .as_i64()
            .unwrap_or_else(|| panic!("{s}: /db gave {row}"));
        assert!((1..=100_000).contains(&aid), "{s}: /db gave {row}");
        assert_eq!(row["bid"].as_i64(), Some(1), "{s}: /db gave {row}");
        assert!(row["abalance"].is_i64(), "{s}: /db gave {row}");

        let tx = get_json(&format!("{base}/tx"));
        assert!(tx["abalance"].is_i64(), "{s}: /tx gave {tx}");

        for mode in ["sequential", "concurrent"] {
            let h = get_json(&format!("{base}/health/all?mode={mode}"));
            assert_eq!(
                (
                    h["postgres"].as_str(),
                    h["redis"].as_str(),
                    h["mode"].as_str()
                ),
                (Some("ok"), Some("ok"), Some(mode)),
                "{s}: /health/all?mode={mode} gave {h}"
            );
        }

        let n = 50;
        let before = db_calls(&pg_url);
        for _ in 0..n {
            let (status, _, _, body) = get(&format!("{base}/db"));
            assert_eq!(status, 200, "{s}: GET /db: {body}");
        }
        let after = db_calls(&pg_url);
        assert!(
            after - before >= n,
            "{s}: {n} requests to /db, but pg_stat_statements counted {} calls of its SELECT",
            after - before
        );
    }
}
