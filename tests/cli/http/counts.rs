//! `perfbase http`'s counts: exact status and error counts from a targets file, the
//! per-endpoint breakdown of a mix, keep-alive or not, bodies, methods and chunked responses,
//! and statuses declared expected.

use super::bad;
use crate::common::*;

#[test]
fn targets_file_mix_gives_exact_status_counts() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let mut text = String::from("# nine fine, one failing\n");
    for _ in 0..9 {
        text.push_str(&format!("GET http://{}/\n", server.addr));
    }
    text.push_str(&format!("GET http://{}/status/500\n", server.addr));
    let targets = dir.path().join("targets.txt");
    std::fs::write(&targets, text).unwrap();
    let r = perfbase(
        &[
            "--targets",
            targets.to_str().unwrap(),
            "-n",
            "1000",
            "-c",
            "8",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["requests"], 1000);
    assert_eq!(r.count("status", "200"), 900);
    assert_eq!(r.count("status", "500"), 100);
    assert_eq!(r.count("errors", "http_5xx"), 100);
    assert_eq!(r.json()["success_ratio"], 0.9);
    // Keep-alive: 8 connections carried all 1000 requests.
    assert_eq!(server.stats.connections(), 8);
    assert_eq!(server.stats.requests(), 1000);
    validate(r.json());
    assert!(r.stdout().contains("200: 900, 500: 100"), "{}", r.stdout());
}

#[test]
fn a_mix_is_broken_down_per_endpoint_and_timeouts_are_charged_to_theirs() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let a = server.addr;
    // Five targets, four endpoints: "/" twice, so it gets 2/5 of the requests.
    let text = format!(
        "GET http://{a}/\nGET http://{a}/delay/30\nGET http://{a}/status/429\n\
         GET http://{a}/\nGET http://{a}/delay/2000\n"
    );
    let targets = dir.path().join("targets.txt");
    std::fs::write(&targets, text).unwrap();
    let r = perfbase(
        &[
            "--targets",
            targets.to_str().unwrap(),
            "-n",
            "200",
            "-c",
            "8",
            "--timeout",
            "100ms",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v = r.json();
    validate(v);
    assert_eq!(v["requests"], 200);
    let endpoints = v["endpoints"].as_array().expect("endpoints");
    let names: Vec<&str> = endpoints
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "GET /",
            "GET /delay/30",
            "GET /status/429",
            "GET /delay/2000"
        ]
    );
    let by = |name: &str| endpoints.iter().find(|e| e["name"] == name).unwrap();
    assert_eq!(by("GET /")["requests"], 80);
    assert_eq!(by("GET /")["status"]["200"], 80);
    assert_eq!(by("GET /")["success_ratio"], 1.0);
    let slow = by("GET /delay/30");
    assert_eq!(slow["requests"], 40);
    let p50 = slow["latency_ms"]["p50"].as_f64().unwrap();
    assert!((30.0..80.0).contains(&p50), "{p50}");
    assert!(by("GET /")["latency_ms"]["p99"].as_f64().unwrap() < 30.0);
    assert_eq!(by("GET /status/429")["status"]["429"], 40);
    assert_eq!(by("GET /status/429")["errors"]["http_4xx"], 40);
    // The engine's timeouts land on the endpoint that timed out, not on nobody.
    let stuck = by("GET /delay/2000");
    assert_eq!(stuck["requests"], 40);
    assert_eq!(stuck["errors"]["timeout"], 40);
    assert_eq!(stuck["success_ratio"], 0.0);
    let sum: u64 = endpoints
        .iter()
        .map(|e| e["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, 200);
    let out = r.stdout();
    assert!(out.contains("Endpoints"), "{out}");
    let line = out.lines().find(|l| l.contains("GET /status/429")).unwrap();
    assert!(line.contains("429: 40") && line.contains("0.00%"), "{line}");
}

#[test]
fn one_endpoint_has_no_breakdown() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let r = perfbase(&[&url, "-n", "50", "-c", "2"], dir.path());
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(r.json().get("endpoints").is_none(), "{}", r.json());
    assert!(!r.stdout().contains("Endpoints"));
}

#[test]
fn no_keepalive_opens_one_connection_per_request() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let r = perfbase(
        &[&url, "-n", "200", "-c", "4", "--no-keepalive"],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 200);
    assert_eq!(server.stats.connections(), 200);
    assert_eq!(r.json()["config"]["protocol"]["keepalive"], false);
}

#[test]
fn bodies_methods_and_chunked_responses() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/chunked/2500", server.addr);
    let r = perfbase(&[&url, "-n", "20", "-c", "2"], dir.path());
    assert_eq!(r.count("status", "200"), 20);
    assert!(r.json()["bytes_read"].as_u64().unwrap() >= 20 * 2500);
    let url = format!("http://{}/bytes/100000", server.addr);
    let r = perfbase(&[&url, "-n", "10", "-c", "1"], dir.path());
    assert_eq!(r.count("status", "200"), 10);
    assert!(r.json()["bytes_read"].as_u64().unwrap() >= 10 * 100_000);
    let url = format!("http://{}/", server.addr);
    let r = perfbase(
        &[&url, "-n", "10", "-c", "1", "-m", "POST", "-b", "hello"],
        dir.path(),
    );
    assert_eq!(r.count("status", "200"), 10);
    let written = r.json()["bytes_written"].as_u64().unwrap();
    assert_eq!(written % 10, 0);
    assert!(written / 10 > 5, "each request carries the 5-byte body");
    let r = perfbase(&[&url, "-n", "10", "-c", "1", "-m", "HEAD"], dir.path());
    assert_eq!(
        r.count("status", "200"),
        10,
        "HEAD responses have no body to wait for"
    );
}

#[test]
fn expected_statuses_count_as_success_and_keep_their_code() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/status/404", server.addr);
    let r = perfbase(&[&url, "-n", "20", "-c", "2"], dir.path());
    assert_eq!(
        r.code(),
        3,
        "every 404 is an error by default: {}",
        r.stderr()
    );
    let r = perfbase(
        &[&url, "-n", "20", "-c", "2", "--ok-status", "404,409"],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["success_ratio"], 1.0);
    assert_eq!(r.count("status", "404"), 20);
    assert!(r.json()["errors"].as_object().unwrap().is_empty());
    // A run too short to sample, without --monitor: no monitor warning to puzzle over.
    let said = format!("{}{}", r.stdout(), r.stderr());
    assert!(!said.contains("sampling interval"), "{said}");
    let (code, err) = bad(&["http", &url, "--ok-status", "700"]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
    assert!(err.contains("--ok-status"), "{err}");
}
