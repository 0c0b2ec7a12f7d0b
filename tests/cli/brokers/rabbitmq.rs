//! `perfbase amqp` and RabbitMQ plans against the real RabbitMQ: round trips and confirmed
//! publishes, a server stopped mid-run, and stream mode (publish and consume apart, pipelined
//! publishes, consumers per step and repetition in a plan).

use super::pb;
use crate::common::*;
use std::time::Duration;

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
fn rabbitmq_stopped_mid_run_is_counted_and_the_run_recovers_when_it_is_back() {
    let Some(url) = service("PERFBASE_AMQP_URL") else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    // 45 s: a RabbitMQ node can take a few seconds to stop and, beside the rest of the suite
    // on two cores, its stop and start took up to 31.6 s (rabbitmqctl's own VM waits for a
    // core under the load); the run must still be going when it is back.
    let started = std::time::Instant::now();
    let run = Background::start(
        &["amqp", &url, "-c", "2", "-d", "45s", "--timeout", "1s"],
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
    assert!(back < 44.0, "RabbitMQ took until {up_at:?} to start again");
    assert!(
        ok_in(back, 45.0) > 0,
        "back at {up_at:?}: {}",
        v["timeline"]
    );
    validate(&v);
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
