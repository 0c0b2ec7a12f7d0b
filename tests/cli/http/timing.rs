//! `perfbase http`'s timing breakdown: where a request's time went (connect, TLS, waiting,
//! receiving) and how many connections were new or reused.

use crate::common::*;

/// The decoded length of one of `http_timing`'s histograms (0 connect, 1 tls, 2 waiting, 3
/// receiving).
fn timing_count(v: &serde_json::Value, i: usize) -> u64 {
    let text = v["http_timing"]["histograms"][i].as_str().unwrap();
    perfbase_core::result::decode_histogram(text).unwrap().len()
}

#[test]
fn where_a_requests_time_went_connect_tls_waiting_receiving_and_reuse() {
    let _g = serial();
    let dir = tmp();
    // Over TLS with keep-alive: each session opens one connection (its TLS handshake
    // counted once), then reuses it.
    let cert = dir.path().join("cert.pem");
    let (child, line) = serve(&["--tls-cert-out".as_ref(), cert.as_os_str()]);
    let url = line.trim().rsplit(' ').next().unwrap().to_string();
    let r = perfbase(
        &[
            &format!("{url}/health"),
            "-n",
            "200",
            "-c",
            "2",
            "--cacert",
            cert.to_str().unwrap(),
        ],
        dir.path(),
    );
    interrupt(child);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v = r.json();
    validate(v);
    let t = &v["http_timing"];
    assert_eq!(
        (
            t["new_connections"].as_u64(),
            t["reused_connections"].as_u64()
        ),
        (Some(2), Some(198))
    );
    assert_eq!([0, 1, 2, 3].map(|i| timing_count(v, i)), [2, 2, 200, 200]);
    assert!(t["tls_ms"]["p50"].as_f64().unwrap() > 0.0, "{t}");
    assert!(
        r.stdout().contains("Timing ms") && r.stdout().contains("connections: 2 new, 198 reused"),
        "{}",
        r.stdout()
    );

    // A slow server's time is waiting (to the first byte), not receiving.
    let server = perfbase_reference::spawn(0).unwrap();
    let r = perfbase(
        &[
            &format!("http://{}/delay/30", server.addr),
            "-n",
            "20",
            "-c",
            "1",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v = r.json();
    let t = &v["http_timing"];
    let latency = v["latency_ms"]["p50"].as_f64().unwrap();
    assert!(latency >= 30.0, "{latency}");
    assert!(
        t["waiting_ms"]["p50"].as_f64().unwrap() >= 0.9 * latency,
        "{t}"
    );
    assert!(t["receiving_ms"]["p50"].as_f64().unwrap() < 1.0, "{t}");
    assert!(t["tls_ms"]["p50"].is_null(), "no TLS: {t}");

    // Without keep-alive every request opens its own connection.
    let before = server.stats.connections();
    let r = perfbase(
        &[
            &format!("http://{}/", server.addr),
            "-n",
            "50",
            "-c",
            "2",
            "--no-keepalive",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v = r.json();
    let t = &v["http_timing"];
    assert_eq!(
        (
            t["new_connections"].as_u64(),
            t["reused_connections"].as_u64()
        ),
        (Some(50), Some(0))
    );
    assert_eq!(timing_count(v, 0), 50);
    assert_eq!(server.stats.connections() - before, 50);

    // HTTP/2: streams share connections; each connection is new once.
    let before = server.stats.connections();
    let r = perfbase(
        &[
            &format!("http://{}/", server.addr),
            "-n",
            "400",
            "-c",
            "2",
            "--http2",
            "--streams",
            "4",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let v = r.json();
    let t = &v["http_timing"];
    let opened = server.stats.connections() - before;
    assert_eq!(t["new_connections"].as_u64(), Some(opened as u64), "{t}");
    assert_eq!(
        t["new_connections"].as_u64().unwrap() + t["reused_connections"].as_u64().unwrap(),
        400
    );
    assert_eq!(timing_count(v, 2), 400);
}
