//! `perfbase redis`, `amqp`, `nats` and `mqtt` end to end against the real Redis (standalone
//! and a 3-node cluster), RabbitMQ, NATS and Mosquitto started by scripts/services.sh.

use crate::common::*;
use assert_cmd::Command;
use serde_json::Value;
use std::time::Duration;

/// Runs perfbase with a JSON result; returns (exit code, stdout + stderr, result).
fn pb(args: &[&str]) -> (i32, String, Value) {
    pb_env(args, &[])
}

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
    let run = Background::start(
        &[
            "redis",
            &url,
            "-w",
            "ping",
            "-c",
            "4",
            "-d",
            "4s",
            "--timeout",
            "1s",
        ],
        dir.path(),
    );
    std::thread::sleep(Duration::from_millis(1000));
    services_sh(&["down", "redis"]);
    std::thread::sleep(Duration::from_millis(500));
    services_sh(&["up", "redis"]);
    let (code, stderr, v) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let e = &v["errors"];
    let transport = e["read"].as_u64().unwrap_or(0)
        + e["connect"].as_u64().unwrap_or(0)
        + e["write"].as_u64().unwrap_or(0);
    assert!(transport > 0, "the stop was counted: {e}");
    let timeline = v["timeline"].as_array().unwrap();
    let last = &timeline[timeline.len() - 1];
    assert!(
        last["requests"].as_u64().unwrap() > last["errors"].as_u64().unwrap(),
        "it recovered: {timeline:?}"
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
    std::thread::sleep(Duration::from_millis(500));
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
fn rabbitmq_round_trips_and_confirmed_publishes() {
    let Some(url) = service("PERFBASE_AMQP_URL") else {
        return;
    };
    let _g = serial();
    for size in ["1024", "10240"] {
        let (code, text, v) = pb(&[
            "amqp", &url, "--size", size, "--ack", "manual", "-c", "2", "-n", "300",
        ]);
        assert_eq!(code, 0, "{text}");
        assert_eq!(v["requests"], 300);
        assert_eq!(v["success_ratio"], 1.0, "{}", v["error_samples"]);
        assert!(v["bytes_read"].as_u64().unwrap() >= 300 * size.parse::<u64>().unwrap());
    }
    let (code, text, v) = pb(&[
        "amqp",
        &url,
        "--mode",
        "publish",
        "--confirms",
        "--persistent",
        "-c",
        "2",
        "-n",
        "300",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["success_ratio"], 1.0);
    let wrong = url.replace(":perfbase@", ":wr0ng-pass@");
    let (code, text, v) = pb(&["amqp", &wrong, "-n", "3"]);
    assert_eq!(code, 3);
    assert!(
        v["error_samples"].to_string().contains("403"),
        "{}",
        v["error_samples"]
    );
    assert!(!text.contains("wr0ng-pass") && !v.to_string().contains("wr0ng-pass"));
    validate(&v);
}

#[test]
fn nats_and_mqtt_round_trips_in_every_mode() {
    let (Some(nats), Some(mqtt)) = (service("PERFBASE_NATS_URL"), service("PERFBASE_MQTT_URL"))
    else {
        return;
    };
    let _g = serial();
    // The streams on the disk of the project's nats-server (scripts/services.sh).
    let streams_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".services/nats/js/jetstream/$G/streams");
    let streams = || -> std::collections::BTreeSet<String> {
        std::fs::read_dir(&streams_dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let before = streams();
    for mode in ["pubsub", "request", "jetstream"] {
        let (code, text, v) = pb(&["nats", &nats, "--mode", mode, "-c", "4", "-n", "300"]);
        assert_eq!(code, 0, "{mode}: {text}");
        assert_eq!(v["requests"], 300, "{mode}");
        assert_eq!(v["success_ratio"], 1.0, "{mode}: {}", v["error_samples"]);
        assert!(!text.contains("could not delete"), "{mode}: {text}");
    }
    // The JetStream run removed the stream it created.
    let left: Vec<_> = streams().difference(&before).cloned().collect();
    assert!(left.is_empty(), "streams left behind: {left:?}");
    for qos in ["0", "1"] {
        let (code, text, v) = pb(&["mqtt", &mqtt, "--qos", qos, "-c", "2", "-n", "300"]);
        assert_eq!(code, 0, "qos {qos}: {text}");
        assert_eq!(v["success_ratio"], 1.0, "qos {qos}: {}", v["error_samples"]);
        validate(&v);
    }
    // Wrong passwords: connect errors, exit 3, and the password shown nowhere.
    for (cmd, url) in [("mqtt", &mqtt), ("nats", &nats)] {
        let wrong = url.replace(":perfbase@", ":wr0ng-s3cret@");
        let (code, text, v) = pb(&[cmd, &wrong, "-n", "3"]);
        assert_eq!(code, 3, "{cmd}: {text}");
        assert_eq!(v["errors"]["connect"], 3, "{cmd}: {}", v["errors"]);
        let all = format!("{text}{v}");
        assert!(
            !all.contains("wr0ng-s3cret"),
            "{cmd} leaked the password: {all}"
        );
    }
    // Open model too: the same engine paces brokers.
    let (code, _, v) = pb(&["nats", &nats, "-r", "500", "-d", "1s"]);
    assert_eq!(code, 0);
    let n = v["requests"].as_u64().unwrap();
    assert!((490..=510).contains(&n), "{n}");
}

#[test]
fn rabbitmq_stopped_mid_run_is_counted_and_the_run_recovers_when_it_is_back() {
    let Some(url) = service("PERFBASE_AMQP_URL") else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    // 30 s: a RabbitMQ node can take a few seconds to stop and, beside the rest of the suite
    // on two cores, up to ~21 s to start again; the run must still be going when it is back.
    let started = std::time::Instant::now();
    let run = Background::start(
        &["amqp", &url, "-c", "2", "-d", "30s", "--timeout", "1s"],
        dir.path(),
    );
    std::thread::sleep(Duration::from_millis(1000));
    services_sh(&["down", "rabbitmq"]);
    let down_at = started.elapsed();
    services_sh(&["up", "rabbitmq"]);
    let up_at = started.elapsed();
    let (code, stderr, v) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let e = &v["errors"];
    let transport = e["read"].as_u64().unwrap_or(0) + e["connect"].as_u64().unwrap_or(0);
    assert!(
        transport > 0,
        "the stop (done {down_at:?} into the run) was counted: {e}"
    );
    // Round trips succeed before the stop and again once the broker is back: the sessions
    // reconnect by themselves.
    let ok_in = |from: f64, to: f64| -> u64 {
        v["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| (from..to).contains(&s["second"].as_f64().unwrap()))
            .map(|s| s["requests"].as_u64().unwrap() - s["errors"].as_u64().unwrap())
            .sum()
    };
    assert!(ok_in(0.0, 1.0) > 0, "{}", v["timeline"]);
    let back = up_at.as_secs_f64().ceil() + 1.0;
    assert!(back < 29.0, "RabbitMQ took until {up_at:?} to start again");
    assert!(
        ok_in(back, 30.0) > 0,
        "back at {up_at:?}: {}",
        v["timeline"]
    );
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
fn rabbitmq_stream_mode_reports_publish_and_consume_apart() {
    let Some(url) = service("PERFBASE_AMQP_URL") else {
        return;
    };
    let _g = serial();
    let (code, text, v) = pb(&[
        "amqp",
        &url,
        "--mode",
        "stream",
        "--consumers",
        "2",
        "--ack",
        "auto",
        "--confirms",
        "-c",
        "2",
        "-n",
        "600",
    ]);
    assert_eq!(code, 0, "{text}");
    validate(&v);
    assert_eq!(v["requests"], 600);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases[0]["name"], "publish");
    assert_eq!(phases[0]["requests"], 600);
    assert_eq!(phases[1]["name"], "consume");
    assert_eq!(phases[1]["requests"], 600, "{}", phases[1]["error_samples"]);
    assert_eq!(phases[1]["success_ratio"], 1.0);
    assert!(phases[1]["latency_ms"]["p50"].as_f64().unwrap() > 0.0);
    assert!(phases[1]["rps"].as_f64().unwrap() > 0.0);
    let protocol = &v["config"]["protocol"];
    assert_eq!(protocol["published"], 600);
    assert_eq!(protocol["unconsumed"], 0);
    assert_eq!(protocol["consumers"], 2);
    assert!(
        text.contains("Consumed") && text.contains("End to end ms"),
        "{text}"
    );
    // A warm-up would be consumed and counted: refused before any load.
    let (code, text, _) = pb(&[
        "amqp", &url, "--mode", "stream", "--warmup", "1s", "-n", "1",
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--warmup"), "{text}");
    // Consumers that cannot log in: exit 3, the password never shown.
    let wrong = url.replace(":perfbase@", ":wr0ng@");
    let (code, text, _) = pb(&["amqp", &wrong, "--mode", "stream", "-n", "1"]);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("403") && !text.contains("wr0ng"), "{text}");
}

#[test]
fn rabbitmq_stream_pipelines_publishes_within_a_lag_and_loses_none() {
    let Some(url) = service("PERFBASE_AMQP_URL") else {
        return;
    };
    let _g = serial();
    // 250 batches of 16 messages, never more than 64 ahead of the one consumer.
    let (code, text, v) = pb(&[
        "amqp",
        &url,
        "--mode",
        "stream",
        "--pipeline",
        "16",
        "--max-lag",
        "64",
        "-n",
        "250",
    ]);
    assert_eq!(code, 0, "{text}");
    validate(&v);
    assert_eq!(v["requests"], 4000, "each message of a batch is counted");
    let protocol = &v["config"]["protocol"];
    assert_eq!(protocol["pipeline"], 16);
    assert_eq!(protocol["max_lag"], 64);
    // The sessions close with the protocol's handshake: every message reached the queue.
    assert_eq!(protocol["published"], 4000);
    assert_eq!(protocol["unconsumed"], 0);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases[1]["requests"], 4000);
    // A round trip waits for its own message; a lag needs consumers apart.
    let (code, text, _) = pb(&["amqp", &url, "--pipeline", "2", "-n", "1"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--pipeline"), "{text}");
    let (code, text, _) = pb(&[
        "amqp",
        &url,
        "--mode",
        "publish",
        "--max-lag",
        "9",
        "-n",
        "1",
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--max-lag"), "{text}");
}

#[test]
fn a_plan_streams_rabbitmq_with_its_own_consumers_per_step_and_repetition() {
    let Some(url) = service("PERFBASE_AMQP_URL") else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    // Producers × consumers: a ladder of publishers, two consumers on the shared queue.
    let plan = format!(
        "[targets.mq]\nurl = \"{url}\"\n[workloads.s]\ntarget = \"mq\"\nmode = \"stream\"\n\
         consumers = 2\nsize = 512\npersistent = true\n[[scenarios]]\nname = \"stream\"\n\
         workload = \"s\"\nconcurrency = [1, 2]\nrequests = 300\nrepetitions = 2\n"
    );
    let r = run_plan_with(dir.path(), &plan, |_| {});
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let phases = r.json()["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4);
    for p in phases {
        assert_eq!(p["requests"], 300, "{}", p["name"]);
        assert_eq!(p["success_ratio"], 1.0, "{}", p["error_samples"]);
    }
    // Every message the four runs published was consumed, by their own consumers.
    let out = r.stdout();
    assert!(
        out.contains("consumers of stream:")
            && out.contains("1,200 in")
            && out.contains("by 2 consumers; 0 not consumed"),
        "{out}"
    );
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.contains("End to end ms"), "{report}");
    assert!(!out.contains(":perfbase@") && !report.contains(":perfbase@"));
    // A warm-up would be consumed and counted: refused with its line.
    let warm = plan.replace("repetitions = 2\n", "repetitions = 2\nwarmup = \"1s\"\n");
    let r = run_plan_with(dir.path(), &warm, |_| {});
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr().contains("scenarios[0].workload: 's' streams"),
        "{}",
        r.stderr()
    );
}

#[test]
fn a_plan_sweeps_rabbitmq_nats_and_mqtt() {
    let (Some(amqp), Some(nats), Some(mqtt)) = (
        service("PERFBASE_AMQP_URL"),
        service("PERFBASE_NATS_URL"),
        service("PERFBASE_MQTT_URL"),
    ) else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    let plan = format!(
        r#"
[targets.mq]
url = "{amqp}"
[targets.bus]
url = "{nats}"
[targets.iot]
url = "{mqtt}"
[workloads.confirmed]
target = "mq"
mode = "publish"
confirms = true
persistent = true
[workloads.js]
target = "bus"
mode = "jetstream"
[workloads.qos1]
target = "iot"
qos = 1
size = 256
[[scenarios]]
name = "publish ladder"
workload = "confirmed"
rate = [100, 200]
duration = "1s"
[[scenarios]]
name = "jetstream"
workload = "js"
concurrency = 2
requests = 300
[[scenarios]]
name = "mqtt"
workload = "qos1"
concurrency = 2
requests = 300
"#
    );
    let r = run_plan_with(dir.path(), &plan, |_| {});
    let text = format!("{}{}", r.stdout(), r.stderr());
    assert_eq!(r.code(), 0, "{text}");
    assert!(!text.contains("could not delete"), "{text}");
    let v = r.json();
    validate(v);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4, "{text}");
    for (p, rate) in phases[..2].iter().zip([100u64, 200]) {
        let n = p["requests"].as_u64().unwrap();
        assert!(n.abs_diff(rate) <= rate / 50, "{rate}/s for 1 s: {n}");
        assert_eq!(p["success_ratio"], 1.0, "{}", p["error_samples"]);
    }
    for p in &phases[2..] {
        assert_eq!(p["requests"], 300, "{}", p["scenario"]);
        assert_eq!(p["success_ratio"], 1.0, "{}", p["error_samples"]);
    }
    assert!(
        !v.to_string().contains(":perfbase@"),
        "no password in the result"
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

/// `perfbase mongo` against FerretDB: --init builds the collections, the suite runs every
/// operation with every request a success, and one operation runs in the open model.
#[test]
fn mongo_suite_runs_every_operation_and_the_open_model() {
    let Some(url) = service("PERFBASE_MONGODB_URL") else {
        return;
    };
    let _g = serial();
    let url = format!("{}/perfbase_cli", url.trim_end_matches('/'));
    let (code, text, v) = pb(&[
        "mongo",
        &url,
        "--init",
        "--keyspace",
        "100",
        "--scan-docs",
        "500",
        "-c",
        "2",
        "-n",
        "60",
    ]);
    assert_eq!(code, 0, "{text}");
    let phases = v["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "insert-one",
            "find-one",
            "find-scan",
            "update-one",
            "aggregate",
            "aggregate-complex",
            "delete-one"
        ]
    );
    for p in phases {
        assert_eq!(p["requests"], 60, "{}", p["name"]);
        assert_eq!(
            p["success_ratio"], 1.0,
            "{}: {}",
            p["name"], p["error_samples"]
        );
    }
    assert_eq!(v["protocol"], "mongodb");
    // 60 random deletes of 100 keys repeat some: the repeats matched nothing, and say so.
    assert!(text.contains("matched no document"), "{text}");
    validate(&v);
    let (code, text, v) = pb(&[
        "mongo",
        &url,
        "-w",
        "find-one",
        "-r",
        "50",
        "-d",
        "1s",
        "--keyspace",
        "100",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["model"], "open");
    assert_eq!(v["status"]["0"], 50, "{v}");
    // In a plan: a concurrency ladder of find-one after rebuilding the collections.
    let dir = tmp();
    let plan = format!(
        "[targets.db]\nurl = \"{url}\"\n[workloads.find]\ntarget = \"db\"\ncommand = \"find-one\"\nkeyspace = 100\ninit = true\n[[scenarios]]\nname = \"ladder\"\nworkload = \"find\"\nconcurrency = [1, 2]\nrequests = 40\n"
    );
    let r = run_plan_with(dir.path(), &plan, |_| {});
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let phases = r.json()["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for p in phases {
        assert_eq!(p["requests"], 40);
        assert_eq!(p["success_ratio"], 1.0, "{}", p["error_samples"]);
    }
    // A field of another protocol is an error at its line.
    let bad = plan.replace("init = true", "prefill = true");
    let r = run_plan_with(dir.path(), &bad, |_| {});
    assert_eq!(r.code(), 2);
    assert!(
        r.stderr()
            .contains("workloads.find.prefill: applies to redis:// targets"),
        "{}",
        r.stderr()
    );
    // A document template that is no JSON object, or on an operation that inserts nothing.
    let (code, text, _) = pb(&["mongo", &url, "-w", "insert-one", "--document", "{\"a\": "]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--document: not JSON"), "{text}");
    let (code, text, _) = pb(&["mongo", &url, "-w", "find-one", "--document", "{}"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("-w find-one inserts none"), "{text}");
    // A bad URL and a bad workload are one clear line each.
    let (code, text, _) = pb(&["mongo", "mongodb://u:s3cret@127.0.0.1:1/x", "-w", "findOne"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("--workload 'findOne'") && !text.contains("s3cret"),
        "{text}"
    );
}

/// FerretDB stopped mid-run: counted connect or read errors, a complete result, and the run
/// recovers once it is back; a run without --init on an empty database is refused by name.
#[test]
fn mongo_server_stopped_mid_run_and_missing_collections() {
    let Some(url) = service("PERFBASE_MONGODB_URL") else {
        return;
    };
    let _g = serial();
    let url = format!("{}/perfbase_stop", url.trim_end_matches('/'));
    let (code, text, _) = pb(&["mongo", &url, "--init", "-w", "insert-one", "-n", "1"]);
    assert_eq!(code, 0, "{text}");
    let args = [
        "mongo",
        url.as_str(),
        "-w",
        "find-one",
        "-c",
        "2",
        // FerretDB drains its connections for about 3 s after SIGTERM before it stops.
        "-d",
        "10s",
        "--timeout",
        "1s",
    ];
    stopped_mid_run(&args, "mongodb");
    let empty = format!("{}_never_made", url);
    let (code, text, _) = pb(&["mongo", &empty, "-w", "find-one", "-n", "1"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("collection perfbase_docs in database perfbase_stop_never_made is empty or missing: run with --init"),
        "{text}"
    );
}
