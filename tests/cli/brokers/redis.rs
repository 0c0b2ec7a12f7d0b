//! `perfbase redis` and Redis plans against the real Redis, standalone and a 3-node cluster:
//! every operation of the suite, pipelines, a server stopped mid-run, a node down, and plans
//! that sweep, repeat and gate with thresholds.

use super::pb;
use crate::common::*;
use assert_cmd::Command;
use std::time::Duration;

#[test]
fn redis_suite_counts_every_operation_and_pipelines() {
    let Some(url) = service("PERFBASE_REDIS_URL") else {
        return;
    };
    let _g = serial();
    let (code, text, v) = pb(&[
        "redis",
        &url,
        "--prefill",
        "--keyspace",
        "1000",
        "-w",
        "suite",
        "-c",
        "4",
        "-n",
        "400",
    ]);
    assert_eq!(code, 0, "{text}");
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 13);
    for p in phases {
        assert_eq!(p["requests"], 400, "{}", p["name"]);
        assert_eq!(
            p["success_ratio"], 1.0,
            "{}: {}",
            p["name"], p["error_samples"]
        );
    }
    assert!(
        text.contains("get-miss") && text.contains("ops/s"),
        "{text}"
    );
    validate(&v);
    // Pipeline 16: every command of every batch is counted.
    let (code, _, v) = pb(&[
        "redis", &url, "-w", "set", "-P", "16", "-c", "2", "-n", "100",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["requests"], 1600, "100 batches of 16");
    // A wrong password: connect errors, the password never shown.
    let wrong = url.replace(":perfbase@", ":wr0ng-pass@");
    let (code, text, v) = pb(&["redis", &wrong, "-w", "ping", "-n", "5"]);
    assert_eq!(code, 3);
    assert_eq!(v["errors"]["connect"], 5);
    assert!(!text.contains("wr0ng-pass") && !v.to_string().contains("wr0ng-pass"));
}

#[test]
fn redis_stopped_mid_run_gives_errors_then_recovers() {
    let Some(url) = service("PERFBASE_REDIS_URL") else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    // 8 s: beside the rest of the suite a stop and a start can take seconds, and the run must
    // still be going once the server is back.
    let started = std::time::Instant::now();
    let run = Background::start(
        &[
            "redis",
            &url,
            "-w",
            "ping",
            "-c",
            "4",
            "-d",
            "8s",
            "--timeout",
            "1s",
        ],
        dir.path(),
    );
    std::thread::sleep(Duration::from_millis(1000));
    services_sh(&["down", "redis"]);
    std::thread::sleep(Duration::from_millis(500));
    services_sh(&["up", "redis"]);
    let up_at = started.elapsed();
    let (code, stderr, v) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let e = &v["errors"];
    let transport = e["read"].as_u64().unwrap_or(0)
        + e["connect"].as_u64().unwrap_or(0)
        + e["write"].as_u64().unwrap_or(0);
    assert!(transport > 0, "the stop was counted: {e}");
    // Successes again in the whole seconds after `up` returned (the run's seconds start
    // after this clock's, so they are no earlier than that).
    let back = up_at.as_secs_f64().ceil();
    assert!(
        back < 8.0,
        "redis was back only after {up_at:?}: the run was over"
    );
    let timeline = v["timeline"].as_array().unwrap();
    let recovered: u64 = timeline
        .iter()
        .filter(|p| p["second"].as_f64().unwrap() >= back)
        .map(|p| p["requests"].as_u64().unwrap() - p["errors"].as_u64().unwrap())
        .sum();
    assert!(recovered > 0, "it recovered after {up_at:?}: {timeline:?}");
    let last = &timeline[timeline.len() - 1];
    assert!(
        last["requests"].as_u64().unwrap() > last["errors"].as_u64().unwrap(),
        "it stayed recovered: {timeline:?}"
    );
    validate(&v);
}

#[test]
fn a_redis_cluster_spreads_keys_and_survives_a_node_down() {
    let Some(url) = service("PERFBASE_REDIS_CLUSTER_URL") else {
        return;
    };
    let _g = serial();
    let (code, text, v) = pb(&[
        "redis", &url, "-w", "set", "-c", "4", "-n", "2000", "-P", "4",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["requests"], 8000);
    assert_eq!(v["success_ratio"], 1.0, "{}", v["error_samples"]);
    assert!(
        text.contains("cluster redirects followed: MOVED 0, ASK 0"),
        "{text}"
    );
    // Per-node figures: every node answered, and the counts add up to every command sent.
    let nodes = v["config"]["protocol"]["cluster_nodes"]
        .as_object()
        .unwrap();
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    assert!(
        nodes.values().all(|n| n.as_u64().unwrap() > 1000),
        "{nodes:?}"
    );
    assert_eq!(
        nodes.values().map(|n| n.as_u64().unwrap()).sum::<u64>(),
        8000
    );
    assert!(text.contains("replies per node: 127.0.0.1:"), "{text}");
    // A pipelined batch spans nodes: no per-node latency then, only the reply counts.
    assert!(v["endpoints"].as_array().is_none_or(|e| e.is_empty()));
    // One node down: its slots fail, the others keep answering.
    let pids = service_var("redis_cluster", "PERFBASE_REDIS_CLUSTER_PIDS");
    let victim: i32 = pids.split_whitespace().nth(1).unwrap().parse().unwrap();
    // The URL lists the nodes in the pids' order.
    let victim_addr = service_var("redis_cluster", "PERFBASE_REDIS_CLUSTER_URL")
        .trim_start_matches("redis+cluster://")
        .split(',')
        .nth(1)
        .unwrap()
        .to_string();
    // SAFETY: stopping a server process this test suite started through services.sh.
    unsafe { libc::kill(victim, libc::SIGTERM) };
    // Gone, not just told: while it shuts down it may still accept connections.
    wait_gone(victim);
    let (code, text, v) = pb(&[
        "redis",
        &url,
        "-w",
        "set",
        "-c",
        "2",
        "-n",
        "600",
        "--timeout",
        "1s",
    ]);
    services_sh(&["up", "redis_cluster"]);
    assert_eq!(code, 0, "some requests still succeed: {text}");
    let ok = v["success_ratio"].as_f64().unwrap();
    assert!(
        (0.3..0.95).contains(&ok),
        "about two thirds of the slots answer: {ok} {}",
        v["errors"]
    );
    // Every failure is a refused connection to the stopped node, and says which node.
    let failed = 600 - (ok * 600.0).round() as u64;
    assert_eq!(
        v["errors"],
        serde_json::json!({ "connect": failed }),
        "{text}"
    );
    let sample = v["error_samples"][0]["message"].as_str().unwrap();
    assert!(
        sample.contains(&format!("connect {victim_addr}:")),
        "{sample}"
    );
    let nodes = v["config"]["protocol"]["cluster_nodes"]
        .as_object()
        .unwrap();
    assert!(!nodes.contains_key(&victim_addr), "{nodes:?}");
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    // Without a pipeline every op is charged to the node serving its key: the stopped node's
    // row holds every failure, the others succeed, and the rows add up to the run.
    let rows = v["endpoints"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    for row in rows {
        let down = row["name"] == format!("node {victim_addr}");
        if down {
            assert_eq!(row["success_ratio"], 0.0, "{row}");
            assert_eq!(row["errors"]["connect"], failed, "{row}");
        } else {
            assert_eq!(row["success_ratio"], 1.0, "{row}");
            assert!(row["latency_ms"]["p99"].as_f64().unwrap() > 0.0, "{row}");
        }
    }
    let sum: u64 = rows.iter().map(|r| r["requests"].as_u64().unwrap()).sum();
    assert_eq!(sum, 600);
    assert!(text.contains(&format!("node {victim_addr}")), "{text}");
    validate(&v);
}

#[test]
fn a_plan_sweeps_redis_and_the_cluster_with_the_password_from_the_environment() {
    let (Some(url), Some(cluster)) = (
        service("PERFBASE_REDIS_URL"),
        service("PERFBASE_REDIS_CLUSTER_URL"),
    ) else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    // The plan names the password only as ${…}; it comes from the environment.
    let password = "perfbase";
    assert!(url.contains(&format!(":{password}@")), "{url}");
    let templated = url.replace(&format!(":{password}@"), ":${PB_REDIS_PASSWORD}@");
    let plan = format!(
        r#"
[targets.cache]
url = "{templated}"
[targets.cluster]
url = "{cluster}"
[workloads.get]
target = "cache"
command = "get"
keyspace = 500
prefill = true
[workloads.set16]
target = "cluster"
command = "set"
value_size = 64
pipeline = 16
[[scenarios]]
name = "get ladder"
workload = "get"
rate = [200, 400]
duration = "1s"
[[scenarios]]
name = "cluster set"
workload = "set16"
concurrency = 3
requests = 90
"#
    );
    let r = run_plan_with(dir.path(), &plan, |c| {
        c.env("PB_REDIS_PASSWORD", password);
    });
    let text = format!("{}{}", r.stdout(), r.stderr());
    assert_eq!(r.code(), 0, "{text}");
    let v = r.json();
    let result = v.to_string();
    validate(v);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 3, "{text}");
    // The open-model steps send their rate; prefilled GETs all hit.
    for (p, rate) in phases[..2].iter().zip([200u64, 400]) {
        let n = p["requests"].as_u64().unwrap();
        assert!(n.abs_diff(rate) <= rate / 50, "{rate}/s for 1 s: {n}");
        assert_eq!(p["success_ratio"], 1.0, "{}", p["error_samples"]);
    }
    // 90 pipelined batches of 16 SETs over the cluster: every command counted.
    assert_eq!(phases[2]["requests"], 90 * 16);
    assert_eq!(
        phases[2]["success_ratio"], 1.0,
        "{}",
        phases[2]["error_samples"]
    );
    let s = &v["study"]["scenarios"][0];
    assert_eq!(s["kind"], "rate ladder");
    assert_eq!(s["steps"].as_array().unwrap().len(), 2);
    // The password is in no output.
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    for (what, t) in [("output", &text), ("result", &result), ("report", &report)] {
        assert!(!t.contains(":perfbase@"), "{what} leaks the password");
    }
}

#[test]
fn a_redis_plan_with_a_wrong_field_is_a_line_numbered_error() {
    let dir = tmp();
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        "[targets.cache]\nurl = \"redis://127.0.0.1:1\"\n[workloads.w]\ntarget = \"cache\"\ncommand = \"gett\"\n[[scenarios]]\nname = \"s\"\nworkload = \"w\"\nrate = 10\n",
    )
    .unwrap();
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["run", "--dry-run"])
        .arg(&file)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.toml:5: workloads.w.command: unknown Redis command 'gett'"),
        "{err}"
    );
}

#[test]
fn a_redis_plan_repeats_a_concurrency_ladder_and_gates_it_with_thresholds() {
    let Some(url) = service("PERFBASE_REDIS_URL") else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    let plan = format!(
        r#"
[targets.cache]
url = "{url}"
[workloads.get]
target = "cache"
command = "get"
keyspace = 100
prefill = true
[[scenarios]]
name = "get reps"
workload = "get"
concurrency = [1, 2]
requests = 200
repetitions = 3
thresholds = ["error_rate < 1%", "rps > 1000000000"]
"#
    );
    let r = run_plan_with(dir.path(), &plan, |_| {});
    let text = format!("{}{}", r.stdout(), r.stderr());
    assert_eq!(r.code(), 1, "the impossible rps threshold fails: {text}");
    let v = r.json();
    validate(v);
    // 2 steps × 3 repetitions, each exactly 200 GETs, all hits.
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 6, "{text}");
    for p in phases {
        assert_eq!(p["requests"], 200);
        assert_eq!(p["success_ratio"], 1.0, "{}", p["error_samples"]);
    }
    let s = &v["study"]["scenarios"][0];
    assert_eq!(s["kind"], "concurrency ladder");
    assert_eq!(
        s["steps"].as_array().unwrap().len(),
        2,
        "a step merges its 3 runs"
    );
    let stats = s["repetition_stats"].as_array().unwrap();
    assert_eq!(stats.len(), 2);
    for (i, st) in stats.iter().enumerate() {
        assert_eq!(st["runs"], 3);
        let rps: Vec<f64> = phases
            .iter()
            .filter(|p| p["step"] == i)
            .map(|p| p["rps"].as_f64().unwrap())
            .collect();
        assert_eq!(rps.len(), 3);
        let mean = rps.iter().sum::<f64>() / 3.0;
        assert!(
            (st["rps"]["mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean,
            "{st}"
        );
    }
    // Every phase is judged on both thresholds: error rate passes, throughput fails.
    let verdicts = s["thresholds"].as_array().unwrap();
    assert_eq!(verdicts.len(), 12, "{verdicts:?}");
    for t in verdicts {
        let rps = t["threshold"].as_str().unwrap().starts_with("rps");
        assert_eq!(t["passed"], !rps, "{t}");
    }
    assert!(r.stdout().contains("FAILED"), "{}", r.stdout());
}
