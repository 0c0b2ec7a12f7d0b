//! `perfbase run`'s verdicts: a rate-limit check against the limiter (passing, then failing
//! when the limit changes), and a threshold breach exiting 1 with the threshold named.

use super::{run_plan, study};
use crate::common::*;
use perfbase_reference::{Config, RateLimit};
use std::time::Duration;

const LIMIT_PLAN: &str = r#"
[targets.svc]
url = "{URL}"
[workloads.limited]
target = "svc"
path = "/limited/x"
[[checks]]
name = "limit"
workload = "limited"
requests = 130
expect = { 200 = 120, 429 = 10 }
"#;

#[test]
fn the_rate_limit_check_passes_against_the_limiter_and_fails_when_the_limit_changes() {
    let _g = serial();
    let dir = tmp();
    let server = perfbase_reference::spawn(0).unwrap();
    let r = run_plan(
        LIMIT_PLAN,
        &format!("http://{}", server.addr),
        dir.path(),
        &[],
    );
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let c = &study(&r)["checks"][0];
    assert_eq!(c["passed"], true);
    assert_eq!(c["actual"]["200"], 120);
    assert_eq!(c["actual"]["429"], 10);
    assert!(
        r.stdout()
            .contains("check limit: expected 120 × 200, 10 × 429; got 120 × 200, 10 × 429 — pass"),
        "{}",
        r.stdout()
    );

    let changed = perfbase_reference::spawn_with(
        0,
        Config {
            rate_limit: Some(RateLimit {
                limit: 100,
                window: Duration::from_secs(60),
            }),
            ..Config::default()
        },
    )
    .unwrap();
    let dir = tmp();
    let r = run_plan(
        LIMIT_PLAN,
        &format!("http://{}", changed.addr),
        dir.path(),
        &[],
    );
    assert_eq!(r.code(), 1, "a failed check exits 1: {}", r.stderr());
    let c = &study(&r)["checks"][0];
    assert_eq!(c["passed"], false);
    assert_eq!(c["actual"]["429"], 30);
    assert!(r.stdout().contains("FAIL"));
}

#[test]
fn a_threshold_breach_exits_1_and_names_the_threshold() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = r#"
[targets.svc]
url = "{URL}"
[workloads.slow]
target = "svc"
path = "/delay/20"
[[scenarios]]
name = "slow"
workload = "slow"
concurrency = 2
requests = 20
thresholds = ["p99 < 5ms", "error_rate < 1%"]
"#;
    let r = run_plan(plan, &format!("http://{}", server.addr), dir.path(), &[]);
    assert_eq!(r.code(), 1, "{}", r.stderr());
    let t = &study(&r)["scenarios"][0]["thresholds"];
    assert_eq!(t[0]["threshold"], "p99 < 5ms");
    assert_eq!(t[0]["passed"], false);
    assert!(t[0]["actual"].as_f64().unwrap() >= 20.0);
    assert_eq!(t[1]["passed"], true);
    assert!(
        r.stdout().contains("thresholds: 1 of 2 FAILED (p99 < 5ms)"),
        "{}",
        r.stdout()
    );
    assert_eq!(study(&r)["passed"], false);
}
