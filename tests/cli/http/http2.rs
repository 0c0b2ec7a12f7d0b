//! `perfbase http --http2`: streams multiplexed on few connections, over TLS, against a server
//! without HTTP/2, and the flags that do not go with it.

use super::bad;
use crate::common::*;
use perfbase_reference::faulty::{spawn_faulty, Fault};

#[test]
fn http2_multiplexes_streams_and_gives_exact_status_counts() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let mut text = String::new();
    for _ in 0..9 {
        text.push_str(&format!(
            "POST http://{}/health\nX-Trace: 1\n@body.txt\n",
            server.addr
        ));
    }
    text.push_str(&format!("GET http://{}/status/503\n", server.addr));
    std::fs::write(dir.path().join("body.txt"), "{\"k\":1}").unwrap();
    let targets = dir.path().join("targets.txt");
    std::fs::write(&targets, text).unwrap();
    let t = targets.to_str().unwrap();
    let args = ["--targets", t, "-n", "1000", "-c", "2", "-t", "1"];
    let r = perfbase(
        &[&args[..], &["--http2", "--streams", "8"]].concat(),
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 900);
    assert_eq!(r.count("status", "503"), 100);
    assert_eq!(r.json()["requests"], 1000);
    // 16 streams in flight on exactly 2 connections.
    assert_eq!(server.stats.connections(), 2);
    assert_eq!(server.stats.requests(), 1000);
    let config = &r.json()["config"];
    assert_eq!(config["connections"], 16);
    assert_eq!(config["protocol"]["version"], "HTTP/2");
    assert_eq!(config["protocol"]["streams_per_connection"], 8);
    // What crossed the socket: frames, HPACK headers and the 900 bodies (it read 0 before:
    // only bodies were counted, and a GET has none).
    let written = r.json()["bytes_written"].as_u64().unwrap();
    assert!(written > 900 * 7 + 1000 * 9, "{written}");
    assert!(r.json()["bytes_read"].as_u64().unwrap() > 1000 * 9);
    assert!(
        r.stdout().contains("16 streams on 2 HTTP/2 connections"),
        "{}",
        r.stdout()
    );
    validate(r.json());
    // The open model multiplexes too: 200/s for 1 s over one connection per worker.
    let url = format!("http://{}/delay/20", server.addr);
    let before = server.stats.connections();
    let r = perfbase(
        &[
            &url,
            "-r",
            "200",
            "-d",
            "1s",
            "-t",
            "1",
            "--http2",
            "--streams",
            "100",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 200);
    assert_eq!(server.stats.connections() - before, 1);
}

#[test]
fn http2_over_tls_and_against_a_server_without_it() {
    let _g = serial();
    let tls = perfbase_reference::tls::self_signed().unwrap();
    let server =
        perfbase_reference::spawn_tls(0, perfbase_reference::Config::default(), tls.config)
            .unwrap();
    let dir = tmp();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &tls.cert_pem).unwrap();
    let url = format!("https://127.0.0.1:{}/", server.addr.port());
    let r = perfbase(
        &[
            &url,
            "-n",
            "300",
            "-c",
            "1",
            "-t",
            "1",
            "--http2",
            "--streams",
            "3",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 3, "no --cacert: the certificate is not trusted");
    let r = perfbase(
        &[
            &url,
            "-n",
            "300",
            "-c",
            "1",
            "-t",
            "1",
            "--http2",
            "--streams",
            "3",
            "--cacert",
            ca.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 300);
    validate(r.json());
    // An HTTP/1.1-only server: every request fails in class protocol, with a hint; exit 3.
    let faulty = spawn_faulty(Fault::GarbageStatus).unwrap();
    let r = perfbase(
        &[
            &format!("http://{}/", faulty.addr),
            "-n",
            "5",
            "-c",
            "1",
            "--http2",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 3, "{}", r.stdout());
    let errors = r.json()["errors"].as_object().unwrap().clone();
    let total: u64 = errors.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total, 5, "{errors:?}");
    let sample = r.json()["error_samples"][0]["message"].to_string();
    assert!(sample.contains("--http2"), "{sample}");
}

#[test]
fn http2_flags_that_do_not_fit_are_refused() {
    let (code, msg) = bad(&["http", "http://127.0.0.1:1/", "--streams", "4"]);
    assert_eq!(code, 2);
    assert!(msg.contains("--http2"), "{msg}");
    let (code, msg) = bad(&["http", "http://127.0.0.1:1/", "--http2", "--no-keepalive"]);
    assert_eq!(code, 2);
    assert!(msg.contains("--no-keepalive"), "{msg}");
}
