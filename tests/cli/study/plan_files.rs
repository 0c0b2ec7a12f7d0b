//! `perfbase run`'s plan files and `perfbase demo`: a malformed plan is a line-numbered error,
//! the demo runs its plan against the embedded service, the example plans validate, and the
//! command line's thread count wins over the plan's.

use super::run_plan;
use crate::common::*;
use assert_cmd::Command;
use serde_json::Value;
use std::time::Duration;

#[test]
fn a_malformed_plan_is_a_line_numbered_error_and_exit_2() {
    let dir = tmp();
    let cases = [
        ("[targets.svc]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"svc\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = \"fast\"\n", "plan.toml:8: scenarios[0].rate: invalid rate 'fast'"),
        ("[targets.svc]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"svc\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 1\nduraton = \"1s\"\n", "plan.toml:9: scenarios.duraton: unknown field `duraton`"),
        ("[targets.svc\n", "plan.toml:1: toml:"),
        ("[targets.svc]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"svc\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = []\n", "plan.toml:8: scenarios[0].rate: a ladder needs at least one step"),
        ("[targets.svc]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"svc\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nconcurrency = 99999999999\n", "plan.toml:8: scenarios[0].concurrency: 99999999999 connections are more than this process may open"),
        ("[targets.svc]\nurl = \"http://127.0.0.1:1\"\n[workloads.w]\ntarget = \"svc\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 1e308\n", "plan.toml:8: scenarios[0].rate: rate '1000000000000000…' is above the 100M/s"),
    ];
    for (plan, want) in cases {
        let r = run_plan(plan, "", dir.path(), &[]);
        assert_eq!(r.code(), 2, "{plan}");
        assert!(r.stderr().contains(want), "want {want:?} in {}", r.stderr());
        assert!(!r.stderr().contains("panicked"));
    }
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["run", "/nonexistent/plan.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/plan.toml"));
}

#[test]
fn demo_runs_the_demo_plan_against_the_embedded_service() {
    let _g = serial();
    let dir = tmp();
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["demo", "-q", "--no-store", "--out"])
        .arg(dir.path())
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("result.json")).unwrap())
            .unwrap();
    validate(&v);
    let s = &v["study"];
    assert_eq!(s["passed"], true);
    assert_eq!(s["scenarios"].as_array().unwrap().len(), 5);
    let ladder = &s["scenarios"][1];
    assert_eq!(ladder["name"], "random-key rate ladder");
    // 4 workers × ~10.5 ms ≈ 380/s: the knee is the 400/s or the 500/s step.
    let first_bad = ladder["knee"]["first_bad"].as_u64().unwrap();
    assert!((3..=4).contains(&first_bad), "{}", ladder["knee"]);
    assert_eq!(s["checks"][0]["passed"], true);
    // Misses answer 404 and the plan expects them: all succeed, about half are 404s.
    let hit_miss = &s["scenarios"][2];
    assert_eq!(hit_miss["steps"][0]["success_ratio"], 1.0, "{hit_miss}");
    let phase = find(&v["phases"], "scenario", "hit/miss 50/50");
    let misses = phase["status"]["404"].as_f64().unwrap() / phase["requests"].as_f64().unwrap();
    assert!((0.4..=0.6).contains(&misses), "{}", phase["status"]);
    // The health floor sets the same 4 checks in sequence and fanned out side by side.
    let health = find(&v["phases"], "scenario", "health floor");
    let p50 = |name: &str| {
        find(&health["endpoints"], "name", name)["latency_ms"]["p50"]
            .as_f64()
            .unwrap()
    };
    let (sequential, fanned) = (p50("4 checks in sequence"), p50("4 checks fanned out"));
    assert!(sequential >= 20.0, "4 × 5 ms: {sequential}");
    assert!(fanned < sequential / 2.0, "{fanned} vs {sequential}");
    assert!(dir.path().join("report.md").exists());
    assert!(stdout.contains("operating point under the SLO"), "{stdout}");
}

/// The stacks of scripts/services.sh's `stacks`, as their variables name them.
const WEB_STACKS: [&str; 8] = [
    "GO_PGX",
    "GO_PQ",
    "ACTIX_SQLX",
    "WEBFLUX_R2DBC",
    "FASTAPI_PSYCOPG",
    "FASTAPI_ASYNCPG",
    "EXPRESS_PG",
    "EXPRESS_POSTGRES",
];

#[test]
fn example_plans_validate() {
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/plans")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let out = Command::cargo_bin("perfbase")
            .unwrap()
            .args(["run", "--dry-run"])
            .arg(&path)
            .env("PERFBASE_DEMO_URL", "http://127.0.0.1:8080")
            .env("TARGET_URL", "http://127.0.0.1:8080")
            .env("API_TOKEN", "example-token")
            // plans/dev-stack-baselines.toml: what scripts/services.sh exports (a dry run
            // connects to nothing).
            .envs([
                ("API_A_URL", "http://127.0.0.1:18081"),
                ("API_B_URL", "http://127.0.0.1:18082"),
                ("PERFBASE_POSTGRES_URL", "postgres://u:p@127.0.0.1:5432/d"),
                ("PERFBASE_MYSQL_URL", "mysql://u:p@127.0.0.1:3306/d"),
                ("PERFBASE_REDIS_URL", "redis://127.0.0.1:6379"),
                (
                    "PERFBASE_REDIS_CLUSTER_URL",
                    "redis+cluster://127.0.0.1:7001",
                ),
                ("PERFBASE_MONGODB_URL", "mongodb://127.0.0.1:27017/"),
                ("PERFBASE_AMQP_URL", "amqp://u:p@127.0.0.1:5672/%2f"),
                ("PERFBASE_KAFKA_URL", "kafka://u:p@127.0.0.1:9092"),
                ("PERFBASE_KAFKA_PID", "1"),
                ("PERFBASE_PG_PID", "1"),
                ("PERFBASE_MARIADB_PID", "1"),
                ("PERFBASE_REDIS_PID", "1"),
                ("PERFBASE_MONGODB_PID", "1"),
                ("PERFBASE_RABBITMQ_PID", "1"),
                ("PERFBASE_PGBOUNCER_PID", "1"),
                // plans/vault-ha-transit.toml: the clusters' nodes.
                ("PERFBASE_VAULT_HA_ACTIVE_URL", "http://127.0.0.1:18300"),
                ("PERFBASE_VAULT_HA_STANDBY_URL", "http://127.0.0.1:18302"),
                ("PERFBASE_OPENBAO_HA_ACTIVE_URL", "http://127.0.0.1:19300"),
                ("PERFBASE_OPENBAO_HA_STANDBY_URL", "http://127.0.0.1:19302"),
            ])
            // plans/web-stacks.toml: each stack's URL and pid.
            .envs(WEB_STACKS.iter().flat_map(|s| {
                [
                    (
                        format!("PERFBASE_STACK_{s}_URL"),
                        "http://127.0.0.1:26101".into(),
                    ),
                    (format!("PERFBASE_STACK_{s}_PID"), "1".to_string()),
                ]
            }))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("scenario")
                || String::from_utf8_lossy(&out.stdout).contains("check")
        );
    }
}

#[test]
fn the_cli_thread_count_wins_over_the_plan_and_the_result_records_what_ran() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let plan = r#"
[plan]
threads = 2
[targets.svc]
url = "{URL}"
[workloads.root]
target = "svc"
[[scenarios]]
name = "s"
workload = "root"
concurrency = 2
requests = 10
"#;
    let url = format!("http://{}", server.addr);
    for (extra, want) in [(&[][..], 2), (&["-t", "1"][..], 1)] {
        let dir = tmp();
        let r = run_plan(plan, &url, dir.path(), extra);
        assert_eq!(r.code(), 0, "{}", r.stderr());
        assert_eq!(r.json()["config"]["threads"], want, "with {extra:?}");
    }
}
