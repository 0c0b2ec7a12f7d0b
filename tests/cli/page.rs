//! `plans/dev-stack-baselines.toml` end to end: the whole "Performance Baselines" page from one
//! run against the real services of scripts/services.sh (the API section on the seed's web
//! stacks: FastAPI, Go, Express, actix-web), and a second run whose changelog compares with
//! the first.

use crate::common::*;
use std::path::Path;
use std::time::Duration;

/// The plan as shipped, at a small scale: counts and durations cut so that both runs take
/// about a minute, five runs a step (the fewest a precision target takes, so every interval
/// is the runs' range), and `--scale 0.5` on concurrency.
fn small_plan() -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/plans/dev-stack-baselines.toml"
    ))
    .unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let shrunk = match line.split('#').next().unwrap_or("").trim() {
            "requests = 20000" => "requests = 1000",
            "requests = 2000" => "requests = 100",
            "requests = 100" => "requests = 10",
            "requests = 500" => "requests = 20",
            "requests = 3000" => "requests = 200",
            "max_repetitions = 10" => {
                "max_repetitions = 5\nmin_run_time = \"100ms\"\nmin_run_ops = 1"
            }
            "duration = \"2s\"" | "duration = \"1s\"" | "duration = \"500ms\"" => {
                "duration = \"100ms\""
            }
            "idle = \"2s\"" => "idle = \"500ms\"",
            _ => line,
        };
        out.push_str(shrunk);
        out.push('\n');
    }
    out
}

/// The rows of every table under a `### PREFIX…` heading: (first cell, whole line).
fn rows_under<'m>(md: &'m str, prefix: &str) -> Vec<Vec<&'m str>> {
    let mut tables = Vec::new();
    for part in md.split("\n### ").skip(1) {
        if !part.starts_with(prefix) {
            continue;
        }
        let rows: Vec<&str> = part
            .lines()
            .take_while(|l| !l.starts_with("## "))
            .filter(|l| l.starts_with("| ") && !l.starts_with("|---"))
            .skip(1)
            .collect();
        tables.push(rows);
    }
    tables
}

fn page_of(dir: &Path, ext: &str) -> String {
    let page = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("performance-baselines-") && name.ends_with(ext)
        })
        .unwrap_or_else(|| panic!("no performance-baselines-*{ext} in {}", dir.display()));
    std::fs::read_to_string(page).unwrap()
}

#[test]
fn the_dev_stack_plan_writes_the_whole_page_and_a_second_run_has_a_changelog() {
    let vars = [
        "PERFBASE_POSTGRES_URL",
        "PERFBASE_MYSQL_URL",
        "PERFBASE_REDIS_URL",
        "PERFBASE_REDIS_CLUSTER_URL",
        "PERFBASE_MONGODB_URL",
        "PERFBASE_AMQP_URL",
        "PERFBASE_VAULT_URL",
        "PERFBASE_VAULT_TOKEN",
        "PERFBASE_STACKS",
    ];
    if vars.iter().any(|v| service(v).is_none()) {
        return;
    }
    let _g = serial();
    let dir = tmp();
    let plan = small_plan();
    // The services' pids as they are now: other tests stop and restart some of them.
    let pids: Vec<(String, String)> = [
        ("postgres", "PERFBASE_PG_PID"),
        ("mariadb", "PERFBASE_MARIADB_PID"),
        ("redis", "PERFBASE_REDIS_PID"),
        ("mongodb", "PERFBASE_MONGODB_PID"),
        ("rabbitmq", "PERFBASE_RABBITMQ_PID"),
        ("vault", "PERFBASE_VAULT_PID"),
        ("pgbouncer", "PERFBASE_PGBOUNCER_PID"),
    ]
    .into_iter()
    .map(|(service, var)| (var.to_string(), service_var(service, var)))
    .chain(
        ["FASTAPI_ASYNCPG", "GO_PGX", "EXPRESS_PG", "ACTIX_SQLX"]
            .into_iter()
            .flat_map(|s| ["URL", "PID"].map(|w| format!("PERFBASE_STACK_{s}_{w}")))
            .map(|var| (var.clone(), service_var("stacks", &var))),
    )
    .collect();
    // Each run in its own folder, both with the one store.
    let store = dir.path().join("results.db");
    let run = |n: u32| {
        let run_dir = dir.path().join(format!("run{n}"));
        std::fs::create_dir_all(&run_dir).unwrap();
        let out = run_dir.join("out");
        let r = run_plan_with(&run_dir, &plan, |c| {
            c.args(["--scale", "0.5"])
                .envs(pids.iter().map(|(k, v)| (k, v)))
                .env("PERFBASE_STORE", &store)
                .timeout(Duration::from_secs(300));
        });
        assert_eq!(r.code(), 0, "run {n}:\n{}\n{}", r.stdout(), r.stderr());
        assert!(r.stdout().contains("page: "), "{}", r.stdout());
        (page_of(&out, ".md"), page_of(&out, ".html"), r)
    };
    let (first, _, _) = run(1);
    assert!(first.contains("First baseline of this plan"), "{first}");
    assert!(
        !first.contains("History of this plan"),
        "one run has no history"
    );
    let (md, html, r) = run(2);

    // Every section, in the seed's order, with figures in it.
    let sections = [
        "## Test environment",
        "## Test conditions",
        "## API (HTTP)",
        "## PostgreSQL",
        "## MySQL / MariaDB",
        "## MongoDB",
        "## Redis",
        "## RabbitMQ (AMQP)",
        "## Resources",
        "## Observations",
        "## Changelog",
    ];
    let mut at = 0;
    for s in sections {
        let found = md[at..]
            .find(s)
            .unwrap_or_else(|| panic!("{s} missing or out of order:\n{md}"));
        at += found + s.len();
        let title = s.trim_start_matches("## ");
        assert!(
            html.contains(&format!("<h2>{title}</h2>")),
            "{s} not in the HTML"
        );
    }
    // The environment as the servers reported it, never a password.
    for version in [
        "fastapi/0.",
        "go-net-http/go1",
        "express/5.",
        "actix-web/4.",
        "PostgreSQL 15",
        "MariaDB 10",
        "FerretDB 1.24",
        "Redis 7",
        "(cluster)",
        "RabbitMQ 3",
    ] {
        assert!(md.contains(version), "{version} missing:\n{md}");
    }
    assert!(!md.contains(":perfbase@") && md.contains("[redacted]"));
    // The tables: one per API implementation with the seed's columns, a suite per database,
    // pgbench's block, a cluster's nodes, Vault's operations, consume rows by ack mode.
    for text in [
        "| Endpoint | p50 | p95 | p99 | Max | ± | Notes |",
        "### A vs B per endpoint",
        // Seed 000's finding, per stack: health checks in turn against at once.
        "### Within each implementation",
        "| GET /health/all sequential | GET /health/all concurrent |",
        "| GET /health/all sequential |",
        "| select-pk | c=2 |",
        "| find-one | c=2 |",
        "| hset | c=25 |",
        "transaction type: TPC-B (sort of)",
        "replies per node: 127.0.0.1:",
        "## Vault",
        "| kv-read |",
        "| pki-issue |",
        "| seal-status |",
        "AMQP consume 1 KB, no ack",
        "AMQP consume 1 KB, manual ack",
        "### Ranking: single-request latency — by p99 latency, lowest first",
        "| postgres (pid:",
        "| redis-server (pid:",
        "## Bottlenecks",
        "noise floor",
        "ran interleaved",
    ] {
        assert!(md.contains(text), "{text:?} missing:\n{md}");
    }
    // Each ranking names each scenario once, its runs merged.
    for rows in rows_under(&md, "Ranking:") {
        let labels: Vec<&str> = rows.iter().map(|r| r.split('|').nth(2).unwrap()).collect();
        let unique: std::collections::HashSet<&&str> = labels.iter().collect();
        assert_eq!(unique.len(), labels.len(), "a repeated row: {rows:?}");
    }
    // No interval reaches below zero: every ± is a share of a positive figure.
    assert!(!md.contains("±-") && !md.contains("±−"), "{md}");
    // At most 12 observations, each with its significance or its runs.
    let observations = md
        .split("## Observations\n")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    let bullets = observations.lines().filter(|l| l.starts_with("- ")).count();
    assert!(
        (1..=12).contains(&bullets),
        "{bullets} observations:\n{observations}"
    );
    assert!(!observations.contains("varied by"), "{observations}");
    // Charts in the HTML only: bars with whiskers, percentile curves, resources.
    assert!(html.matches("<svg").count() >= 3, "charts missing");
    assert!(!md.contains("<svg"));
    // The changelog names the first run as the baseline it compares with, by Welch's test.
    // (The store is new: the runs are 1 and 2.)
    assert!(
        md.contains("Against the previous baseline, run 1 of "),
        "{md}"
    );
    assert!(r.stderr().contains("saved as run 2"), "{}", r.stderr());
    assert!(md.contains("Welch's t-test"), "{md}");
    assert!(
        md.contains("| 2 | ") && md.contains("| 1 | "),
        "baseline history:\n{md}"
    );
    // Each step's p99 and throughput over the plan's stored runs, as sparklines.
    assert!(md.contains("### History of this plan"), "{md}");
    assert!(md.contains("over the plan's last 2 stored runs"), "{md}");
    assert!(!html.contains("<script"));
    // The result names the services' versions, which a trend's environment compares.
    let services = r.json()["env"]["services"]
        .as_object()
        .expect("env.services");
    assert!(
        services
            .values()
            .any(|v| v.as_str().is_some_and(|v| v.contains("PostgreSQL"))),
        "{services:?}"
    );
}
