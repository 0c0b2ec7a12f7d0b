//! `perfbase nats` and `mqtt` against the real NATS and Mosquitto, in every mode and QoS, and
//! a plan that sweeps RabbitMQ, NATS and MQTT together.

use super::pb;
use crate::common::*;

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
