//! `perfbase run` against HTTP targets: a mix reported per endpoint for every step, HTTP/2
//! sharing connections, secrets from the environment kept out of every output and the store,
//! and a target URL with a path requested as written.

use super::{run_plan, study};
use crate::common::*;
use assert_cmd::Command;
use std::time::Duration;

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
