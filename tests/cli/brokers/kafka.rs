//! `perfbase kafka` and Kafka plans against the real broker (Apache Kafka in KRaft mode with
//! SASL, scripts/services/kafka.sh): records produced with acks = all arrive once in a
//! consumer group (checked with Kafka's own console consumer), a broker stall shows in the
//! end-to-end latency, a broker stopped mid-run, a refused login, and a plan.

use super::pb;
use crate::common::*;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

fn kafka() -> Option<String> {
    service("PERFBASE_KAFKA_URL")
}

/// Kafka's console consumer reads `topic` from its start: every key it printed.
fn keys_on_the_broker(url: &str, topic: &str, expect: usize) -> Vec<String> {
    let dir = tmp();
    let config = dir.path().join("client.properties");
    std::fs::write(
        &config,
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.\
         kafka.common.security.plain.PlainLoginModule required username=\"perfbase\" \
         password=\"perfbase\";\n",
    )
    .unwrap();
    let lib = service_var("kafka", "PERFBASE_KAFKA_LIB");
    let bootstrap = url.rsplit('@').next().unwrap();
    let out = Command::new("java")
        .args(["-cp", &format!("{lib}/*")])
        .arg("org.apache.kafka.tools.consumer.ConsoleConsumer")
        .args([
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--from-beginning",
        ])
        .args([
            "--max-messages",
            &expect.to_string(),
            "--timeout-ms",
            "20000",
        ])
        .args([
            "--formatter-property",
            "print.key=true",
            "--formatter-property",
            "print.value=false",
        ])
        .args(["--command-config", config.to_str().unwrap()])
        .output()
        .expect("java runs Kafka's console consumer");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn ok_count(v: &Value) -> u64 {
    v["requests"].as_u64().unwrap()
        - v["errors"]
            .as_object()
            .map_or(0, |e| e.values().filter_map(Value::as_u64).sum::<u64>())
}

#[test]
fn kafka_records_produced_with_acks_all_arrive_once_in_a_consumer_group() {
    let Some(url) = kafka() else { return };
    let _g = serial();
    let topic = "perfbase-test-once";
    let (code, text, v) = pb(&[
        "kafka",
        &url,
        "--topic",
        topic,
        "--init",
        "--partitions",
        "3",
        "--acks",
        "all",
        "--keys",
        "sequential",
        "--key-count",
        "10000",
        "--compression",
        "lz4",
        "-c",
        "64",
        "-n",
        "10000",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["requests"], 10_000);
    assert_eq!(v["success_ratio"], 1.0, "{}", v["error_samples"]);
    assert_eq!(v["config"]["protocol"]["acks"], "all");
    assert!(
        v["config"]["protocol"]["broker"]
            .as_str()
            .is_some_and(|b| b.starts_with("Apache Kafka, 1 broker")),
        "{}",
        v["config"]["protocol"]
    );
    validate(&v);
    // Our consumer group reads every record, committing each.
    let group = format!("perfbase-test-{}", std::process::id());
    let (code, text, v) = pb(&[
        "kafka", &url, "-w", "consume", "--topic", topic, "--group", &group, "--commit", "sync",
        "-n", "10000",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["success_ratio"], 1.0, "{}", v["error_samples"]);
    assert_eq!(v["bytes_read"], 10_000 * 1024 + key_bytes(10_000));
    // Read again by the same group: nothing is left for it, nothing came twice.
    let (_, text, v) = pb(&[
        "kafka",
        &url,
        "-w",
        "consume",
        "--topic",
        topic,
        "--group",
        &group,
        "-d",
        "3s",
        "--timeout",
        "1s",
    ]);
    assert_eq!(ok_count(&v), 0, "{text}");
    // On the broker, by Kafka's own consumer: 10,000 records, each key once.
    let keys = keys_on_the_broker(&url, topic, 10_000);
    let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
    assert_eq!(
        (keys.len(), distinct.len()),
        (10_000, 10_000),
        "{:?}",
        &keys[..keys.len().min(5)]
    );
    assert!(distinct.contains(&"key-0".to_string()) && distinct.contains(&"key-9999".to_string()));
}

/// The bytes of keys `key-0` … `key-(n-1)`.
fn key_bytes(n: u64) -> u64 {
    (0..n).map(|i| format!("key-{i}").len() as u64).sum()
}

#[test]
fn kafka_end_to_end_latency_shows_a_broker_stall_from_each_records_intended_start() {
    let Some(url) = kafka() else { return };
    let _g = serial();
    let dir = tmp();
    let pid: i32 = service_var("kafka", "PERFBASE_KAFKA_PID").parse().unwrap();
    let run = Background::start(
        &[
            "kafka",
            &url,
            "-w",
            "e2e",
            "--topic",
            "perfbase-test-stall",
            "--init",
            "-r",
            "500",
            "-d",
            "6s",
            "--acks",
            "1",
            "--consumers",
            "3",
        ],
        dir.path(),
    );
    // The run starts after the topic's creation (under a second, more on a busy machine):
    // stall the broker well inside it.
    std::thread::sleep(Duration::from_millis(3500));
    let stopped = Instant::now();
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(300));
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let stall = stopped.elapsed();
    let (code, stderr, v) = run.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(v["success_ratio"], 1.0, "{}", v["error_samples"]);
    // Three consumers asked of a one-partition topic: one reads, and the run says so.
    assert!(
        stderr.contains("has 1 partition, so 1 consumer read it"),
        "{stderr}"
    );
    assert_eq!(v["config"]["protocol"]["consumers_reading"], 1);
    // The sends kept their schedule: each record's latency runs from its intended start.
    // (A few start a millisecond late on a busy machine; the stall's 150 would be many more.)
    let late = v["open_model"]["late"].as_u64().unwrap();
    assert!(late < 90, "{}", v["open_model"]);
    let consume = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "consume")
        .expect("the consumers' phase");
    let e2e = &consume["latency_ms"];
    let produced = &v["latency_ms"];
    // Records sent during the 300 ms stall waited for it: the slowest near its length, and
    // the 1 % tail (5 % of the run's records were sent during it) well above a normal
    // record's few milliseconds.
    for (what, l) in [("end to end", e2e), ("produce", produced)] {
        let max = l["max"].as_f64().unwrap();
        let p99 = l["p99"].as_f64().unwrap();
        assert!(
            (200.0..2000.0).contains(&max),
            "{what}: max {max} ms (stall {stall:?})"
        );
        assert!(p99 >= 100.0, "{what}: p99 {p99} ms (stall {stall:?})");
    }
    assert_eq!(v["config"]["protocol"]["unconsumed"], 0);
    assert_eq!(consume["requests"], v["requests"]);
}

#[test]
fn kafka_stopped_mid_run_counts_errors_by_code_ends_on_time_and_the_next_run_passes() {
    let Some(url) = kafka() else { return };
    let _g = serial();
    let dir = tmp();
    let started = Instant::now();
    let run = Background::start(
        &[
            "kafka",
            &url,
            "--topic",
            "perfbase-test-stop",
            "--init",
            "-r",
            "200",
            "-d",
            "12s",
            "--timeout",
            "2s",
            "--acks",
            "1",
        ],
        dir.path(),
    );
    std::thread::sleep(Duration::from_millis(4000));
    services_sh(&["down", "kafka"]);
    let (code, stderr, v) = run.finish();
    let took = started.elapsed();
    services_sh(&["up", "kafka"]);
    assert_eq!(code, Some(0), "{stderr}");
    // 12 s of load, the topic's creation, the 5 s flush limit and the JVM's stop: on time.
    assert!(took < Duration::from_secs(30), "the run took {took:?}");
    assert!(ok_count(&v) > 0, "records before the stop: {}", v["errors"]);
    let samples = v["error_samples"].to_string();
    let e = &v["errors"];
    let failed: u64 = e
        .as_object()
        .unwrap()
        .values()
        .filter_map(Value::as_u64)
        .sum();
    assert!(failed > 0, "the stop was counted: {e}");
    assert!(
        samples.contains("LIBRDKAFKA") || samples.contains("KAFKA "),
        "errors by code: {samples}"
    );
    assert!(dir.path().join("r.json").exists() || v.is_object());
    validate(&v);
    // Back up: the next run passes.
    let (code, text, v) = pb(&["kafka", &url, "--topic", "perfbase-test-stop", "-n", "200"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["success_ratio"], 1.0, "{}", v["error_samples"]);
}

#[test]
fn kafka_refuses_a_wrong_password_naming_sasl_and_never_shows_it() {
    let Some(url) = kafka() else { return };
    let _g = serial();
    for (wrong, mechanism) in [
        (url.replace(":perfbase@", ":wr0ng-pass@"), "PLAIN"),
        (
            format!(
                "{}?sasl=scram-sha-512",
                url.replace(":perfbase@", ":wr0ng-pass@")
            ),
            "SCRAM-SHA-512",
        ),
    ] {
        let (code, text, v) = pb(&["kafka", &wrong, "-n", "3"]);
        assert_eq!(code, 3, "{text}");
        assert!(
            text.contains(&format!("refused the SASL {mechanism} login as `perfbase`")),
            "{text}"
        );
        assert!(!text.contains("wr0ng-pass") && !v.to_string().contains("wr0ng-pass"));
    }
    // The right password over SCRAM passes.
    let scram = format!("{url}?sasl=scram-sha-256");
    let (code, text, _) = pb(&[
        "kafka",
        &scram,
        "--topic",
        "perfbase-test-scram",
        "--init",
        "-n",
        "20",
    ]);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn a_kafka_plan_produces_and_consumes_with_its_own_fields_and_checks_them() {
    let Some(url) = kafka() else { return };
    let _g = serial();
    let dir = tmp();
    let plan = format!(
        "[targets.k]\nurl = \"{url}\"\n\
         [workloads.p]\ntarget = \"k\"\ntopic = \"perfbase-test-plan\"\ninit = true\n\
         partitions = 2\nacks = \"1\"\ncompression = \"zstd\"\nkeys = \"random\"\n\
         headers = [\"trace: abc\"]\npartitioner = \"round-robin\"\nsize = 256\n\
         [workloads.c]\ntarget = \"k\"\nworkload = \"consume\"\ntopic = \"perfbase-test-plan\"\n\
         [workloads.e]\ntarget = \"k\"\nworkload = \"e2e\"\ntopic = \"perfbase-test-plan\"\n\
         consumers = 2\nclean = true\n\
         [[scenarios]]\nname = \"produce\"\nworkload = \"p\"\nconcurrency = 8\nrequests = 400\n\
         [[scenarios]]\nname = \"consume\"\nworkload = \"c\"\nconcurrency = 1\nrequests = 400\n\
         [[scenarios]]\nname = \"e2e\"\nworkload = \"e\"\nrate = 200\nduration = \"2s\"\n"
    );
    let r = run_plan_with(dir.path(), &plan, |_| {});
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let out = r.stdout();
    assert!(
        out.contains("consumers of e2e:") && out.contains("by 2 consumers; 0 not consumed"),
        "{out}"
    );
    assert!(!out.contains(":perfbase@"), "{out}");
    for p in r.json()["phases"].as_array().unwrap() {
        assert_eq!(
            p["success_ratio"], 1.0,
            "{}: {}",
            p["name"], p["error_samples"]
        );
    }
    // A field of another workload, and a value out of its list: the file, line and field.
    for (bad, says) in [
        ("partitions = 2\n", "partitions = 2\ngroup = 7\n"),
        ("acks = \"1\"\n", "acks = \"2\"\n"),
    ] {
        let broken = plan.replacen(bad, says, 1);
        let r = run_plan_with(dir.path(), &broken, |_| {});
        assert_eq!(r.code(), 2, "{}", r.stderr());
        assert!(r.stderr().contains("workloads.p."), "{}", r.stderr());
    }
}

/// plans/kafka-baselines.toml as shipped, shrunk: short steps, small ladders, fewer records.
fn small_kafka_plan() -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/plans/kafka-baselines.toml"
    ))
    .unwrap();
    text.replace("duration = \"2s\"", "duration = \"300ms\"")
        .replace("concurrency = [64, 512]", "concurrency = [16, 64]")
        .replace("prefill = 200000", "prefill = 5000")
        .replace("requests = 200000", "requests = 5000")
        .replace("idle = \"2s\"", "idle = \"300ms\"")
}

#[test]
fn the_kafka_plan_writes_a_baselines_page_with_every_scenario_and_the_consumers() {
    let Some(url) = kafka() else { return };
    let _g = serial();
    let dir = tmp();
    let pid = service_var("kafka", "PERFBASE_KAFKA_PID");
    let r = run_plan_with(dir.path(), &small_kafka_plan(), |c| {
        c.env("PERFBASE_KAFKA_URL", &url)
            .env("PERFBASE_KAFKA_PID", &pid)
            .timeout(Duration::from_secs(300));
    });
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    let page = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.to_string_lossy().ends_with(".md")
                && p.to_string_lossy().contains("performance-baselines-")
        })
        .expect("a page");
    let md = std::fs::read_to_string(page).unwrap();
    for wanted in [
        "Kafka performance baselines",
        "Apache Kafka",
        "produce 1 KB, acks 0",
        "produce 1 KB, acks all, idempotent",
        "produce 1 KB zstd, random keys, acks 1",
        "consume 1 KB, 1 consumer",
        "consumers of end to end 1 KB at 5,000/s:",
        "produce 1 KB, acks 1 vs produce 1 KB, acks all, idempotent",
    ] {
        assert!(md.contains(wanted), "{wanted}:\n{md}");
    }
    assert!(!md.contains(":perfbase@"), "{md}");
}
