//! `perfbase run` (plan files) and `perfbase demo` end to end, against reference services
//! whose behaviour is known: a capacity-capped pool, a rate limiter, fixed delays.

use crate::common::*;
use assert_cmd::Command;
use perfbase_reference::{Config, RateLimit};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Writes `plan` (with `{URL}` replaced) and runs it; returns the run and the result JSON.
fn run_plan(plan: &str, url: &str, dir: &Path, extra: &[&str]) -> Run {
    run_plan_with(dir, &plan.replace("{URL}", url), |c| {
        c.args(extra);
    })
}

fn study(r: &Run) -> &Value {
    &r.json()["study"]
}

#[test]
fn a_rate_ladder_over_a_capped_service_finds_the_knee_at_the_right_step() {
    let _g = serial();
    // 2 workers × 10 ms: at most ~190 requests/s get through, whatever is offered. The last
    // good step (120/s) keeps the workers 63 % busy, so its p99 stays well inside the knee
    // rule's 3 × the first step's even on a loaded machine.
    let server = perfbase_reference::spawn_with(
        0,
        Config {
            workers: Some(2),
            work_time: Duration::from_millis(10),
            ..Config::default()
        },
    )
    .unwrap();
    let dir = tmp();
    let plan = r#"
[slo]
thresholds = ["p99 < 50ms"]
[targets.svc]
url = "{URL}"
[workloads.work]
target = "svc"
path = "/work"
[[scenarios]]
name = "ladder"
workload = "work"
rate = [50, 100, 120, 300, 400]
duration = "1500ms"
cooldown = "300ms"
"#;
    let r = run_plan(plan, &format!("http://{}", server.addr), dir.path(), &[]);
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let s = &study(&r)["scenarios"][0];
    assert_eq!(s["kind"], "rate ladder");
    assert_eq!(s["knee"]["last_good"], 2, "{}", s["knee"]);
    assert_eq!(s["knee"]["first_bad"], 3, "{}", s["knee"]);
    assert!(
        s["knee"]["reason"].as_str().unwrap().contains("95 %"),
        "{}",
        s["knee"]
    );
    assert_eq!(s["operating_point"]["index"], 2, "{}", s["operating_point"]);
    let headroom = s["operating_point"]["headroom"].as_f64().unwrap();
    assert!(
        (headroom - 1.5).abs() < 1e-9,
        "300/120 − 1 = 150 %: {headroom}"
    );
    // Achieved throughput of the saturated steps sits at the capacity.
    let achieved = s["steps"][4]["achieved_rps"].as_f64().unwrap();
    assert!((150.0..=205.0).contains(&achieved), "{achieved}");
    assert_eq!(r.json()["phases"].as_array().unwrap().len(), 5);
    validate(r.json());
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.contains("| 300/s (knee) |"), "{report}");
    assert!(report.contains("## Test environment"));
}

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
fn repetitions_give_exactly_the_statistics_of_their_runs() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = r#"
[targets.svc]
url = "{URL}"
[workloads.d]
target = "svc"
path = "/delay/3"
[[scenarios]]
name = "stable"
workload = "d"
rate = 100
duration = "700ms"
repetitions = 4
"#;
    let r = run_plan(plan, &format!("http://{}", server.addr), dir.path(), &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let phases = r.json()["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4);
    let stats = &study(&r)["scenarios"][0]["repetition_stats"][0];
    assert_eq!(stats["runs"], 4);
    for (key, pick) in [
        ("p99_ms", "p99"),
        ("mean_ms", "mean"),
        ("max_ms", "max"),
        ("min_ms", "min"),
        ("p50_ms", "p50"),
    ] {
        let values: Vec<f64> = phases
            .iter()
            .map(|p| p["latency_ms"][pick].as_f64().unwrap())
            .collect();
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let s = &stats[key];
        assert!(
            (s["mean"].as_f64().unwrap() - mean).abs() < 1e-9,
            "{key}: {s} vs mean {mean}"
        );
        assert!(
            (s["variance"].as_f64().unwrap() - variance).abs() < 1e-9,
            "{key}: {s} vs variance {variance}"
        );
        // 95 % CI: mean ± t(0.975, 3) · s / √n, t = 3.182446.
        let half = 3.182446 * variance.sqrt() / n.sqrt();
        assert!(
            (s["ci95"][0].as_f64().unwrap() - (mean - half)).abs() < 1e-4,
            "{key}: {s}"
        );
    }
    let rps: Vec<f64> = phases.iter().map(|p| p["rps"].as_f64().unwrap()).collect();
    let mean = rps.iter().sum::<f64>() / 4.0;
    assert!((stats["rps"]["mean"].as_f64().unwrap() - mean).abs() < 1e-9);
    // The merged step row counts every run.
    let total: u64 = phases.iter().map(|p| p["requests"].as_u64().unwrap()).sum();
    assert_eq!(r.json()["requests"].as_u64().unwrap(), total);
    assert!((270..=290).contains(&total), "4 × 70 requests: {total}");
    validate(r.json());
}

#[test]
fn each_phase_is_saved_as_it_ends_and_ctrl_c_keeps_them() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = "[targets.svc]\nurl = \"{URL}\"\n[workloads.w]\ntarget = \"svc\"\n[[scenarios]]\nname = \"ladder\"\nworkload = \"w\"\nconcurrency = [1, 2, 3, 4]\nduration = \"1s\"\n"
        .replace("{URL}", &format!("http://{}/delay/2", server.addr));
    let file = dir.path().join("plan.toml");
    std::fs::write(&file, plan).unwrap();
    let out_dir = dir.path().join("out");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args([
            "run",
            file.to_str().unwrap(),
            "-q",
            "--no-store",
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2400));
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("result.json")).unwrap())
            .unwrap();
    assert_eq!(
        saved["phases"].as_array().unwrap().len(),
        2,
        "two steps were done and saved"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let done: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("result.json")).unwrap())
            .unwrap();
    assert_eq!(done["interrupted"], true);
    assert_eq!(
        done["phases"].as_array().unwrap().len(),
        3,
        "the interrupted step is kept too"
    );
    assert!(out_dir.join("report.md").exists());
    validate(&done);
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
                ("PERFBASE_PG_PID", "1"),
                ("PERFBASE_MARIADB_PID", "1"),
                ("PERFBASE_REDIS_PID", "1"),
                ("PERFBASE_MONGODB_PID", "1"),
                ("PERFBASE_RABBITMQ_PID", "1"),
            ])
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
fn a_plan_monitor_labels_samples_with_each_phase() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let mut busy = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let dir = tmp();
    // The pid comes from the environment, as scripts/services.sh exports its services'.
    let plan = "[monitor]\ntargets = [\"pid:${BUSY_PID}\"]\nidle = \"600ms\"\ninterval = \"200ms\"\n[targets.svc]\nurl = \"{URL}\"\n[workloads.w]\ntarget = \"svc\"\npath = \"/delay/2\"\n[[scenarios]]\nname = \"ladder\"\nworkload = \"w\"\nconcurrency = [1, 2]\nduration = \"800ms\"\n";
    // perfbase run --monitor adds a target to the plan's own.
    let mut sleeper = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let extra = format!("pid:{}", sleeper.id());
    // --monitor-idle wins over the plan's idle.
    let r = run_plan_with(
        dir.path(),
        &plan.replace("{URL}", &format!("http://{}", server.addr)),
        |c| {
            c.args(["--monitor", &extra, "--monitor-idle", "1600ms"])
                .env("BUSY_PID", busy.id().to_string());
        },
    );
    for child in [&mut busy, &mut sleeper] {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let targets = r.json()["monitor"]["targets"].as_array().unwrap();
    let labels: Vec<&str> = targets
        .iter()
        .map(|t| t["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels[0], format!("pid:{}", busy.id()), "{labels:?}");
    assert_eq!(labels[1], extra, "{labels:?}");
    let idle = targets[0]["phases"][0]["samples"].as_u64().unwrap();
    assert!(
        idle >= 6,
        "1.6 s idle at 200 ms, not the plan's 0.6 s: {idle} samples"
    );
    assert_eq!(
        labels.len(),
        3,
        "plan's, the flag's, perfbase itself: {labels:?}"
    );
    let sleeping = targets[1]["phases"][1]["cpu_pct"]["mean"].as_f64().unwrap();
    assert!(
        sleeping < 5.0,
        "a sleeping process under load: {sleeping} %"
    );
    let target = &r.json()["monitor"]["targets"][0];
    let names: Vec<&str> = target["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["idle", "ladder c=1", "ladder c=2"], "{target}");
    validate(r.json());
}

#[test]
fn a_mix_is_reported_per_endpoint_for_every_step() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let plan = r#"
[targets.svc]
url = "{URL}"
[workloads.shop]
target = "svc"
mix = [
  { weight = 3, path = "/" },
  { weight = 1, path = "/status/503", name = "broken | checkout" },
]
[[scenarios]]
name = "shop"
workload = "shop"
concurrency = [1, 2]
requests = 200
repetitions = 2
"#;
    let r = run_plan(plan, &format!("http://{}", server.addr), dir.path(), &[]);
    // 1 in 4 requests fails: no threshold, so the plan still passes.
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    validate(r.json());
    let phases = r.json()["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4);
    for p in phases {
        let e = p["endpoints"].as_array().expect("endpoints in every phase");
        assert_eq!(e[0]["name"], "GET /");
        assert_eq!(e[0]["requests"], 150);
        assert_eq!(e[1]["name"], "broken | checkout");
        assert_eq!(e[1]["requests"], 50);
        assert_eq!(e[1]["status"]["503"], 50);
    }
    // The terminal too: each step's endpoints under it, repetitions merged.
    let out = r.stdout();
    for step in ["c=1:", "c=2:"] {
        assert!(out.contains(step), "{out}");
    }
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("broken | checkout"))
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(
        rows.iter()
            .all(|l| l.contains("100") && l.contains("0.00%") && l.contains("503: 100")),
        "{rows:?}"
    );
    // The Markdown report has one row per step and endpoint, repetitions merged.
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.contains("### Per endpoint"), "{report}");
    let rows: Vec<&str> = report
        .lines()
        .filter(|l| l.contains("`GET /`") || l.contains("checkout`"))
        .collect();
    assert_eq!(rows.len(), 4, "{report}");
    assert!(
        rows.iter().any(
            |l| l.contains("`broken \\| checkout` | 100 | 25.0 % | 0.00 %")
                && l.contains("100 × 503")
        ),
        "{rows:?}"
    );
    assert!(rows
        .iter()
        .all(|l| !l.contains("GET /` | 300 |") || l.contains("100.00 %")));
    // The HTML report too.
    let html_file = dir.path().join("report.html");
    Command::cargo_bin("perfbase")
        .unwrap()
        .args(["report", "--format", "html", "-o"])
        .arg(&html_file)
        .arg(dir.path().join("out/result.json"))
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let html = std::fs::read_to_string(html_file).unwrap();
    assert!(html.contains("<table class=\"endpoints\">"));
    assert!(html.contains("<code>broken | checkout</code>"));
}

#[test]
fn a_plan_over_http2_shares_connections_and_its_check_counts_exactly() {
    let _g = serial();
    let dir = tmp();
    let server = perfbase_reference::spawn(0).unwrap();
    let plan = r#"
[targets.svc]
url = "{URL}"
http2 = true
streams = 4
[workloads.limited]
target = "svc"
path = "/limited/x"
[workloads.health]
target = "svc"
path = "/health"
[[scenarios]]
name = "h2"
workload = "health"
concurrency = 8
requests = 400
[[checks]]
name = "limit"
workload = "limited"
requests = 130
expect = { 200 = 120, 429 = 10 }
"#;
    let r = run_plan(
        plan,
        &format!("http://{}", server.addr),
        dir.path(),
        &["--threads", "1"],
    );
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let c = &study(&r)["checks"][0];
    assert_eq!(c["passed"], true, "{c}");
    let phase = r.json()["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["scenario"] == "h2")
        .unwrap();
    assert_eq!(phase["status"]["200"], 400, "{phase}");
    // 8 streams on 2 connections, and the check's one connection.
    assert_eq!(server.stats.connections(), 3);
}

#[test]
fn secrets_from_the_environment_reach_no_output_or_store() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    // A key in the URL's path, a bearer token and a value under a harmless header name: each
    // comes from the environment, so each is a secret, wherever it sits.
    let secrets = [
        ("PERFBASE_TEST_PATH_KEY", "pathkey-5d1c9"),
        ("PERFBASE_TEST_BEARER", "bearer-77aa0"),
        ("PERFBASE_TEST_TENANT", "tenant-e3f41"),
    ];
    // A variable holding a URL says where the target is: shown expanded, its password redacted.
    let base = format!("http://bench:basepw-91ab@{}", server.addr);
    let plan = r#"
[targets.svc]
url = "${PERFBASE_TEST_BASE}/${PERFBASE_TEST_PATH_KEY}"
headers = { Authorization = "Bearer ${PERFBASE_TEST_BEARER}", X-Tenant = "${PERFBASE_TEST_TENANT}" }
[workloads.w]
target = "svc"
path = "/x"
[[scenarios]]
name = "s"
workload = "w"
concurrency = 2
requests = 20
"#;
    let r = run_plan_with(dir.path(), plan, |c| {
        c.envs(secrets).env("PERFBASE_TEST_BASE", &base);
    });
    // The secret path does not exist on the reference service: every request is a 404, so
    // the run exits 3 and still writes everything it measured.
    assert_eq!(r.code(), 3, "{}\n{}", r.stdout(), r.stderr());
    assert_eq!(r.count("status", "404"), 20, "the requests went out");
    let target = r.json()["study"]["scenarios"][0]["target"]
        .as_str()
        .unwrap();
    assert_eq!(
        target,
        format!(
            "http://bench:[redacted]@{}/${{PERFBASE_TEST_PATH_KEY}}/x",
            server.addr
        )
    );
    let headers = &r.json()["config"]["protocol"]["headers"]["w"];
    assert_eq!(
        headers,
        &serde_json::json!([
            "Authorization: [redacted]",
            "X-Tenant: ${PERFBASE_TEST_TENANT}"
        ])
    );
    let mut outputs = vec![
        ("stdout", r.stdout()),
        ("stderr", r.stderr()),
        ("result.json", r.json().to_string()),
    ];
    for file in ["out/report.md", "results.db"] {
        let bytes = std::fs::read(dir.path().join(file)).unwrap();
        outputs.push((file, String::from_utf8_lossy(&bytes).into_owned()));
    }
    for (what, text) in &outputs {
        for (var, value) in secrets
            .into_iter()
            .chain([("PERFBASE_TEST_BASE", "basepw-91ab")])
        {
            assert!(!text.contains(value), "{what} holds ${var}'s value");
        }
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

#[test]
fn stages_ramp_the_rate_and_plan_thresholds_gate_every_phase() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    // A one-value-per-line corpus walked in order, and a CSV corpus picked by weight.
    std::fs::write(dir.path().join("codes.txt"), "200\n200\n200\n503\n").unwrap();
    std::fs::write(dir.path().join("codes.csv"), "code,weight\n200,3\n201,1\n").unwrap();
    let plan = r#"
[plan]
thresholds = ["error_rate < 1%", "rps > 100000"]
[targets.svc]
url = "{URL}"
[corpora.seq]
file = "codes.txt"
pick = "sequential"
[corpora.weighted]
file = "codes.csv"
column = "code"
weight_column = "weight"
pick = "weighted"
[workloads.weighted]
target = "svc"
path = "/status/{{weighted}}"
[workloads.seq]
target = "svc"
path = "/status/{{seq}}"
[[scenarios]]
name = "ramp"
workload = "weighted"
stages = [
  { rate = 100, duration = "1s" },
  { ramp_to = 300, duration = "2s" },
  { concurrency = 2, duration = "500ms" },
]
[[checks]]
name = "in order"
workload = "seq"
requests = 40
expect = { 200 = 30, 503 = 10 }
"#;
    let r = run_plan(plan, &format!("http://{}", server.addr), dir.path(), &[]);
    // "rps > 100000" fails in every phase: a plan threshold gates a stages scenario.
    assert_eq!(r.code(), 1, "{}\n{}", r.stdout(), r.stderr());
    let all = r.json()["phases"].as_array().unwrap();
    let phases: Vec<&Value> = all.iter().filter(|p| p["scenario"] == "ramp").collect();
    assert_eq!(phases.len(), 3, "{all:?}");
    let requests = |i: usize| phases[i]["requests"].as_u64().unwrap();
    assert!(
        (98..=102).contains(&requests(0)),
        "100/s for 1 s: {}",
        requests(0)
    );
    // 100 → 300 /s over 2 s is 400 requests: 150 in the first second, 250 in the second.
    assert!((392..=408).contains(&requests(1)), "ramp: {}", requests(1));
    let tl = phases[1]["timeline"].as_array().unwrap();
    let second = |i: usize| tl[i]["requests"].as_u64().unwrap();
    assert!(
        (140..=160).contains(&second(0)),
        "ramp second 1: {} in {tl:?}",
        second(0)
    );
    assert!(
        (240..=260).contains(&second(1)),
        "ramp second 2: {}",
        second(1)
    );
    assert_eq!(
        phases[1]["open_model"]["requested_rate"], 200.0,
        "the ramp's mean"
    );
    assert_eq!(phases[0]["model"], "open");
    assert_eq!(phases[2]["model"], "closed");
    assert_eq!(phases[2]["offered_connections"], 2);
    assert!(requests(2) > 0);
    // Weighted 3:1 between 200 and 201 over all three stages.
    let (mut ok200, mut ok201) = (0u64, 0u64);
    for p in &phases {
        ok200 += p["status"]["200"].as_u64().unwrap_or(0);
        ok201 += p["status"]["201"].as_u64().unwrap_or(0);
    }
    let share = ok201 as f64 / (ok200 + ok201) as f64;
    assert!(
        (0.20..=0.30).contains(&share),
        "201 share {share}: {ok200} / {ok201}"
    );
    // Both plan thresholds are judged on every phase; only the rps one fails.
    let s = &study(&r)["scenarios"][0];
    assert_eq!(s["kind"], "stages");
    let t = s["thresholds"].as_array().unwrap();
    assert_eq!(t.len(), 6, "{t:?}");
    for row in t {
        let failed = row["threshold"] == "rps > 100000";
        assert_eq!(row["passed"], !failed, "{row}");
    }
    // The sequential corpus is walked in order: exactly 3 × 200 per 503.
    let check = &study(&r)["checks"][0];
    assert_eq!(check["passed"], true, "{check}");
    validate(r.json());
}

#[test]
fn a_target_url_with_a_path_is_requested_as_written_like_ab() {
    let _g = serial();
    let dir = tmp();
    let server = perfbase_reference::spawn(0).unwrap();
    // The shape of plans/ab-60000-requests.toml: no `path`, the endpoint is the target URL.
    let plan = r#"
[targets.site]
url = "{URL}"
[workloads.get]
target = "site"
[[scenarios]]
name = "n=300 c=10"
workload = "get"
concurrency = 10
requests = 300
"#;
    for (url, status) in [
        (format!("http://{}/health", server.addr), "200"),
        (format!("http://{}/status/418?why=tea", server.addr), "418"),
    ] {
        let r = run_plan(plan, &url, dir.path(), &[]);
        let phase = &r.json()["phases"][0];
        assert_eq!(phase["status"][status], 300, "{url}: {phase}");
        let endpoint = r.json()["study"]["scenarios"][0]["target"].to_string();
        assert!(endpoint.contains(&url), "{url} labelled {endpoint}");
    }
}
