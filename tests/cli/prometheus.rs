//! Live exports against a real Prometheus (Debian's 2.42, started by scripts/services.sh with
//! the remote-write receiver and native histograms): what it stored, queried back through its
//! HTTP API, equals what the run measured.

use crate::common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// A PromQL query's result vector, read over plain HTTP/1.0.
fn query(prometheus: &str, promql: &str) -> Vec<Value> {
    let encoded: String = promql
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let host = prometheus.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET /api/v1/query?query={encoded} HTTP/1.0\r\nHost: {host}\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |b| b.1);
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["status"], "success", "{promql}: {v}");
    v["data"]["result"].as_array().unwrap().clone()
}

/// The one value of a query (a single series), as a number.
fn value(prometheus: &str, promql: &str) -> f64 {
    let r = query(prometheus, promql);
    assert_eq!(r.len(), 1, "{promql}: {r:?}");
    r[0]["value"][1].as_str().unwrap().parse().unwrap()
}

fn run_id(result: &Value) -> String {
    result["run_id"]
        .as_str()
        .expect("the result keeps its run id")
        .to_string()
}

#[test]
fn remote_write_pushes_during_the_run_and_the_stored_counts_equal_the_runs() {
    let Some(prometheus) = service("PERFBASE_PROMETHEUS_URL") else {
        return;
    };
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let a = server.addr;
    let targets = dir.path().join("targets.txt");
    // Nine fine, one failing: per endpoint, exact.
    let mut text = String::new();
    for _ in 0..9 {
        text.push_str(&format!("GET http://{a}/\n"));
    }
    text.push_str(&format!("GET http://{a}/status/500\n"));
    std::fs::write(&targets, text).unwrap();
    let write = format!("{prometheus}/api/v1/write");
    let r = perfbase(
        &[
            "--targets",
            targets.to_str().unwrap(),
            "-r",
            "400",
            "-d",
            "2500ms",
            "--prometheus-remote-write",
            &write,
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!r.stderr().contains("warning"), "{}", r.stderr());
    let v = r.json();
    validate(v);
    let run = run_id(v);
    assert_eq!(v["requests"], 1000);
    let sel = format!("run=\"{run}\",scenario=\"measure\",step=\"measure\"");
    assert_eq!(
        value(
            &prometheus,
            &format!("sum(perfbase_requests_total{{{sel}}})")
        ),
        1000.0
    );
    for e in v["endpoints"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let stored = value(
            &prometheus,
            &format!("perfbase_requests_total{{{sel},endpoint=\"{name}\"}}"),
        );
        assert_eq!(stored, e["requests"].as_f64().unwrap(), "{name}");
    }
    assert_eq!(
        value(
            &prometheus,
            &format!("sum(perfbase_errors_total{{{sel},class=\"http_5xx\"}})")
        ),
        100.0
    );
    assert_eq!(
        value(
            &prometheus,
            &format!("sum(perfbase_responses_total{{{sel},status=\"500\"}})")
        ),
        100.0
    );
    // The latency histogram both ways: classic series and a native histogram.
    assert_eq!(
        value(
            &prometheus,
            &format!("sum(perfbase_request_duration_seconds_count{{{sel}}})")
        ),
        1000.0
    );
    let native = format!("sum(histogram_count(perfbase_request_duration_seconds{{{sel}}}))");
    assert_eq!(value(&prometheus, &native), 1000.0);
    // Pushed during the run, not only at its end.
    let pushes = value(
        &prometheus,
        &format!("count_over_time(perfbase_requested_rate{{{sel}}}[10m])"),
    );
    // The first live copy comes after a second, so: one push or more during it, one at the end.
    assert!(pushes >= 2.0, "{pushes} pushes in 2.5 s");
    assert_eq!(
        value(&prometheus, &format!("perfbase_requested_rate{{{sel}}}")),
        400.0
    );
}

#[test]
fn a_scrape_reads_live_figures_then_the_final_ones_with_native_histograms() {
    let Some(prometheus) = service("PERFBASE_PROMETHEUS_URL") else {
        return;
    };
    let targets_dir = service_var("prometheus", "PERFBASE_PROMETHEUS_TARGETS");
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    // Prometheus picks the target up within a few seconds (file discovery, then its scrape
    // manager); written under another name and renamed so it never reads half a file.
    let file = std::path::Path::new(&targets_dir).join(format!("cli-test-{port}.json"));
    let partial = file.with_extension("tmp");
    std::fs::write(&partial, format!("[{{\"targets\":[\"{listen}\"]}}]")).unwrap();
    std::fs::rename(&partial, &file).unwrap();
    let started = Instant::now();
    let r = perfbase(
        &[
            &format!("http://{}/", server.addr),
            "-r",
            "200",
            "-d",
            "6s",
            "--metrics-listen",
            &listen,
            "--metrics-linger",
            "20s",
        ],
        dir.path(),
    );
    let took = started.elapsed();
    let _ = std::fs::remove_file(&file);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v = r.json();
    let run = run_id(v);
    let sel = format!("run=\"{run}\"");
    // The linger ended at the first scrape of the final figures, not after 20 s.
    assert!(took < Duration::from_secs(14), "{took:?}");
    assert_eq!(
        value(&prometheus, &format!("perfbase_requests_total{{{sel}}}")),
        1200.0
    );
    // Scraped during the run too: the counter was seen below its final value.
    let seen = value(
        &prometheus,
        &format!("min_over_time(perfbase_requests_total{{{sel}}}[10m])"),
    );
    assert!(seen < 1200.0, "only the final value was scraped: {seen}");
    // Prometheus asked for protobuf and got native buckets.
    let native = format!("histogram_count(perfbase_request_duration_seconds{{{sel}}})");
    assert_eq!(value(&prometheus, &native), 1200.0);
    let p99 = value(
        &prometheus,
        &format!("histogram_quantile(0.99, perfbase_request_duration_seconds{{{sel}}})"),
    );
    let measured = v["latency_ms"]["p99"].as_f64().unwrap() / 1000.0;
    // Native buckets of schema 3 are 9 % wide.
    assert!(
        (p99 / measured - 1.0).abs() < 0.1,
        "{p99} s vs {measured} s"
    );
}

#[test]
fn a_bad_export_address_stops_the_run_before_any_load() {
    let dir = tmp();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for (flags, says) in [
        (vec!["--metrics-listen", addr.as_str()], "--metrics-listen"),
        (
            vec!["--prometheus-remote-write", "127.0.0.1:9/api/v1/write"],
            "write http://",
        ),
        (
            vec![
                "--prometheus-remote-write",
                "https://127.0.0.1:9/api/v1/write",
            ],
            "only http://",
        ),
    ] {
        let mut args = vec!["http", "http://127.0.0.1:9/", "-n", "1", "--no-store"];
        args.extend(flags);
        let (code, _, stderr) = pb(dir.path(), &args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!stderr.contains("Requests"), "{stderr}");
    }
}
