//! perfbase's local servers answer only requests addressed to them (issue 47, item 10): a web
//! page whose name was pointed at 127.0.0.1 (DNS rebinding) sends its own name as `Host`, and
//! the dashboard and `--metrics-listen` refuse it, while `127.0.0.1`, `localhost` and a
//! scraper's address are answered.

use crate::common::*;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The status line of `GET path` to `port` with `host` as its Host header.
fn status(port: u16, path: &str, host: &str) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    text.lines().next().unwrap_or("").to_string()
}

#[test]
fn a_rebound_name_reads_neither_the_dashboard_nor_the_metrics() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let metrics = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let metrics_port = metrics.local_addr().unwrap().port();
    drop(metrics);
    let dir = tmp();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args([
            "http",
            &format!("http://{}/", server.addr),
            "-r",
            "20",
            "-d",
            "5s",
        ])
        .args(["--dashboard", "127.0.0.1:0", "-q", "--no-store"])
        .args(["--metrics-listen", &format!("127.0.0.1:{metrics_port}")])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let port = crate::live::dashboard_port(&mut child);
    std::thread::sleep(Duration::from_millis(1500));
    for path in ["/", "/frame", "/report"] {
        let refused = status(port, path, &format!("evil.example:{port}"));
        assert!(refused.contains("403"), "{path}: {refused}");
        let answered = status(port, path, &format!("127.0.0.1:{port}"));
        assert!(!answered.contains("403"), "{path}: {answered}");
    }
    assert!(status(port, "/frame", &format!("localhost:{port}")).contains("200"));
    let refused = status(
        metrics_port,
        "/metrics",
        &format!("evil.example:{metrics_port}"),
    );
    assert!(refused.contains("403"), "{refused}");
    let answered = status(
        metrics_port,
        "/metrics",
        &format!("127.0.0.1:{metrics_port}"),
    );
    assert!(answered.contains("200"), "{answered}");
    let _ = child.kill();
    let _ = child.wait();
}
