//! `perfbase ws` against a real WebSocket echo server (scripts/services.sh up ws, built from
//! coder/websocket): exact message counts checked against the server's own, replies matched by
//! a field, a server's delay in the latencies and past --timeout, TLS, held connections and
//! what they cost, and bad input refused before any connection.

use crate::common::*;
use serde_json::Value;

fn pb(args: &[&str]) -> (i32, String, Value) {
    pb_env(args, &[])
}

fn protocol(v: &Value, key: &str) -> u64 {
    v["config"]["protocol"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("no config.protocol.{key} in {}", v["config"]))
}

/// The echo server's own counters (`/stats`).
fn stats(url: &str) -> Value {
    let out = std::process::Command::new("curl")
        .args(["-sf", "--max-time", "5", url])
        .output()
        .expect("curl ran");
    serde_json::from_slice(&out.stdout).expect("the echo server's /stats is JSON")
}

fn refused(args: &[&str], wanted: &str) {
    let (code, text, _) = pb(args);
    assert_eq!(code, 2, "{args:?}: {text}");
    assert!(text.contains(wanted), "{args:?}: {text}");
}

#[test]
fn every_message_is_answered_and_counted_by_both_sides() {
    let (Some(url), Some(stats_url)) =
        (service("PERFBASE_WS_URL"), service("PERFBASE_WS_STATS_URL"))
    else {
        return;
    };
    let _g = serial();
    let before = stats(&stats_url)["messages"].as_u64().unwrap();
    let message = r#"{"id": {{n}}, "text": "hello"}"#;
    let (code, text, v) = pb(&["ws", &url, "--message", message, "-c", "4", "-n", "400"]);
    assert_eq!(code, 0, "{text}");
    validate(&v);
    assert_eq!(v["protocol"], "ws");
    assert_eq!(
        (v["requests"].as_u64(), v["success_ratio"].as_f64()),
        (Some(400), Some(1.0))
    );
    assert_eq!(
        (
            protocol(&v, "messages_sent"),
            protocol(&v, "messages_received")
        ),
        (400, 400)
    );
    assert_eq!(
        stats(&stats_url)["messages"].as_u64().unwrap() - before,
        400
    );
    // The connect apart: four connections, each timed once.
    let t = &v["http_timing"];
    assert_eq!(t["new_connections"], 4, "{t}");
    assert!(t["connect_ms"]["p50"].as_f64().unwrap() > 0.0, "{t}");
    assert!(text.contains("Messages: 400 sent, 400 received"), "{text}");

    // Matched by id: the echo gives each message back, so every reply matches its own.
    let (code, text, v) = pb(&[
        "ws",
        &url,
        "--message",
        message,
        "--match",
        "id",
        "-c",
        "2",
        "-n",
        "100",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["success_ratio"].as_f64(), Some(1.0));
    assert_eq!(protocol(&v, "messages_unmatched"), 0);
    assert_eq!(v["config"]["protocol"]["match"], "field id");
}

#[test]
fn a_servers_delay_is_in_the_latency_and_past_the_timeout_a_timeout() {
    let Some(url) = service("PERFBASE_WS_URL") else {
        return;
    };
    let _g = serial();
    let slow = r#"{"id": {{n}}, "delay_ms": 80}"#;
    let (code, text, v) = pb(&["ws", &url, "--message", slow, "-c", "2", "-n", "20"]);
    assert_eq!(code, 0, "{text}");
    let p50 = v["latency_ms"]["p50"].as_f64().unwrap();
    assert!((80.0..200.0).contains(&p50), "p50 {p50}: {text}");

    let stuck = r#"{"id": {{n}}, "delay_ms": 3000}"#;
    let (_, text, v) = pb(&[
        "ws",
        &url,
        "--message",
        stuck,
        "-c",
        "2",
        "-n",
        "4",
        "--timeout",
        "300ms",
    ]);
    assert_eq!(v["errors"]["timeout"].as_u64(), Some(4), "{text}");
}

#[test]
fn wss_with_the_servers_ca_and_without_it() {
    let (Some(url), Some(ca)) = (service("PERFBASE_WS_TLS_URL"), service("PERFBASE_WS_CA")) else {
        return;
    };
    let _g = serial();
    let (code, text, v) = pb(&["ws", &url, "--cacert", &ca, "-c", "2", "-n", "50"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["success_ratio"].as_f64(), Some(1.0), "{text}");
    assert!(v["http_timing"]["tls_ms"]["p50"].as_f64().unwrap() > 0.0);
    let (_, text, v) = pb(&["ws", &url, "-c", "1", "-n", "3"]);
    assert!(v["errors"]["connect"].as_u64().unwrap_or(0) > 0, "{text}");
    assert!(text.contains("--cacert"), "{text}");
    // A path that answers without upgrading: refused, its status kept.
    let stats = url.replace("/echo", "/stats");
    let (_, text, v) = pb(&["ws", &stats, "--cacert", &ca, "-c", "1", "-n", "2"]);
    assert_eq!(v["status"]["200"].as_u64(), Some(2), "{text}");
    assert!(text.contains("refused: HTTP 200 OK"), "{text}");
}

#[test]
fn held_connections_each_speak_once_per_interval_and_their_memory_is_told() {
    let (Some(url), Some(stats_url)) =
        (service("PERFBASE_WS_URL"), service("PERFBASE_WS_STATS_URL"))
    else {
        return;
    };
    let _g = serial();
    let before = stats(&stats_url)["accepted"].as_u64().unwrap();
    let (code, text, v) = pb(&[
        "ws",
        &url,
        "-c",
        "500",
        "-t",
        "2",
        "--interval",
        "1s",
        "-d",
        "3s",
    ]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(v["success_ratio"].as_f64(), Some(1.0), "{text}");
    assert_eq!(
        stats(&stats_url)["accepted"].as_u64().unwrap() - before,
        500
    );
    // Each connection speaks at 0, 1 and 2 s: three messages, not a busy loop.
    let requests = v["requests"].as_u64().unwrap();
    assert!((1000..=2000).contains(&requests), "{requests}: {text}");
    assert_eq!(protocol(&v, "held_connections"), 500, "{}", v["config"]);
    let per = protocol(&v, "rss_per_connection_bytes");
    assert!(per > 0 && per < 64 * 1024, "{per} bytes per connection");
    assert!(text.contains("Connections: 500 open at once"), "{text}");
}

#[test]
fn bad_input_is_refused_before_any_connection() {
    let url = "ws://127.0.0.1:1/echo";
    refused(&["ws", "http://127.0.0.1:1/"], "ws://");
    refused(&["ws", url, "--message", "{{nope}}"], "nope");
    refused(
        &["ws", url, "-H", "Sec-WebSocket-Key: x"],
        "set by the WebSocket handshake",
    );
    refused(&["ws", url, "--interval", "1s", "-r", "10"], "--interval");
    refused(
        &["ws", url, "--match", "id", "--message", "plain text"],
        "no field id",
    );
}

#[test]
fn a_plan_speaks_websocket_with_corpora_and_a_match_field() {
    let (Some(url), Some(stats_url)) =
        (service("PERFBASE_WS_URL"), service("PERFBASE_WS_STATS_URL"))
    else {
        return;
    };
    let _g = serial();
    let dir = tmp();
    // The same server as http:// with protocol = "ws", as the issue spells it.
    let http_url = url.replacen("ws://", "http://", 1);
    let plan = format!(
        r#"[plan]
name = "ws"
[corpora.users]
values = ["ada", "bob"]
[targets.echo]
url = "{http_url}"
protocol = "ws"
[workloads.say]
target = "echo"
data = '{{"id": {{{{n}}}}, "user": "{{{{users}}}}"}}'
match = "id"
[[scenarios]]
name = "say"
workload = "say"
concurrency = 2
requests = 50
"#
    );
    let before = stats(&stats_url)["messages"].as_u64().unwrap();
    let r = run_plan_with(dir.path(), &plan, |_| {});
    assert_eq!(r.code(), 0, "{}", r.stderr());
    validate(r.json());
    let phase = &r.json()["phases"][0];
    assert_eq!(
        (phase["requests"].as_u64(), phase["success_ratio"].as_f64()),
        (Some(50), Some(1.0)),
        "{phase}"
    );
    assert_eq!(stats(&stats_url)["messages"].as_u64().unwrap() - before, 50);

    // A match field the message lacks is an error at its line, before any connection.
    let bad = plan.replace("match = \"id\"", "match = \"nope\"");
    let r = run_plan_with(dir.path(), &bad, |_| {});
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr().contains("plan.toml:11: workloads.say.match"),
        "{}",
        r.stderr()
    );
}
