//! `perfbase http` against servers that fail: stopped mid-run (HTTP/1.1 and HTTP/2),
//! misbehaving on purpose (each fault counted in its error class), closing idle keep-alive
//! connections, not listening at all, or sending endless headers.

use crate::common::*;
use perfbase_reference::faulty::{spawn_faulty, Fault};
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

#[test]
fn server_stopped_mid_run_gives_errors_and_a_complete_result() {
    stop_server_mid_run(&[]);
}

#[test]
fn http2_server_stopped_mid_run_gives_errors_and_a_complete_result() {
    stop_server_mid_run(&["--http2", "--streams", "2"]);
}

fn stop_server_mid_run(extra: &[&str]) {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let json = dir.path().join("result.json");
    let url = format!("http://{}/delay/5", server.addr);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args([
            "http",
            &url,
            "-c",
            "4",
            "-d",
            "3s",
            "--timeout",
            "1s",
            "--quiet",
            "--no-store",
            "--json",
        ])
        .arg(&json)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    server.stop();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ok = v["status"]["200"].as_u64().unwrap();
    assert!(ok > 100, "requests before the stop succeeded: {ok}");
    let errors = &v["errors"];
    let transport = errors["connect"].as_u64().unwrap_or(0) + errors["read"].as_u64().unwrap_or(0);
    assert!(
        transport > 0,
        "connect/read errors after the stop: {errors}"
    );
    assert_eq!(
        v["requests"].as_u64().unwrap(),
        ok + errors
            .as_object()
            .unwrap()
            .values()
            .map(|x| x.as_u64().unwrap())
            .sum::<u64>()
    );
    // Stopped 1.2 s into a 3 s run and never back: an outage to the end, not recovered.
    let a = &v["availability"];
    let out = a["outage_s"].as_f64().unwrap();
    assert!((1.2..2.3).contains(&out), "outage {out} s: {a}");
    assert_eq!(a["recovered"], false, "{a}");
    let o = &a["outages"][0];
    assert!(o.get("to_s").is_none(), "{o}");
    assert!(
        o["errors"]["connect"].as_u64().unwrap_or(0) + o["errors"]["read"].as_u64().unwrap_or(0)
            > 0,
        "{o}"
    );
    validate(&v);
}

fn fault_run(fault: Fault, extra: &[&str]) -> (Run, u64) {
    let server = spawn_faulty(fault).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let mut args = vec![url.as_str(), "-n", "20", "-c", "2", "-t", "1"];
    args.extend_from_slice(extra);
    let r = perfbase(&args, dir.path());
    let conns = server.connections.load(std::sync::atomic::Ordering::SeqCst);
    (r, conns)
}

#[test]
fn target_faults_are_counted_in_their_class() {
    let _g = serial();
    // A body far larger than the socket buffers: the server resets while it is being sent.
    let dir = tmp();
    let big = dir.path().join("big.bin");
    std::fs::write(&big, vec![b'x'; 64 << 20]).unwrap();
    let big = big.to_str().unwrap();
    let cases: [(Fault, &str, &[&str]); 6] = [
        (Fault::GarbageStatus, "protocol", &[]),
        (Fault::OversizedHeader, "protocol", &[]),
        (Fault::TruncatedBody, "read", &[]),
        (Fault::Reset, "read", &[]),
        (Fault::SlowBody, "timeout", &["--timeout", "300ms"]),
        (
            Fault::ResetUnread,
            "write",
            &["-m", "POST", "--body-file", big],
        ),
    ];
    for (fault, class, extra) in cases {
        let (r, _) = fault_run(fault, extra);
        assert_eq!(
            r.code(),
            3,
            "{fault:?}: nothing succeeded → exit 3; {}",
            r.stderr()
        );
        assert_eq!(r.json()["requests"], 20, "{fault:?}");
        assert_eq!(
            r.count("errors", class),
            20,
            "{fault:?}: {}",
            r.json()["errors"]
        );
        assert!(!r.json()["error_samples"].as_array().unwrap().is_empty());
        // wrk's line, where its users look: only for the socket classes.
        let stdout = r.stdout();
        let socket = stdout.lines().find(|l| l.contains("Socket errors"));
        match class {
            "protocol" => assert!(socket.is_none(), "{fault:?}: {socket:?}"),
            _ => {
                let line = socket.unwrap_or_else(|| panic!("{fault:?}: {stdout}"));
                assert!(line.contains(&format!("{class} 20")), "{fault:?}: {line}");
                assert!(line.contains("connect 0"), "{fault:?}: {line}");
            }
        }
        if matches!(fault, Fault::TruncatedBody) {
            // 10 of the 100 body bytes came, after a 38-byte head: the message counts the body.
            let m = r.json()["error_samples"][0]["message"].as_str().unwrap();
            assert!(m.contains("body after 10 of its 100 bytes"), "{m}");
        }
        validate(r.json());
    }
}

#[test]
fn a_server_closing_idle_keepalive_connections_costs_no_errors() {
    // The server answers 2 requests per connection, then closes without answering: an
    // idempotent request on such a stale connection is sent again on a fresh one.
    let _g = serial();
    let (r, conns) = fault_run(Fault::CloseAfter(2), &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 20, "{}", r.json());
    assert!(r.json()["errors"].as_object().unwrap().is_empty());
    assert!((10..=12).contains(&conns), "{conns} connections");
}

#[test]
fn nothing_succeeding_exits_3_with_a_result() {
    let _g = serial();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dir = tmp();
    let url = format!("http://127.0.0.1:{port}/");
    let r = perfbase(&[&url, "-n", "20", "-c", "2"], dir.path());
    assert_eq!(r.code(), 3, "{}", r.stderr());
    assert_eq!(r.count("errors", "connect"), 20);
    assert!(
        r.stderr().contains("no request succeeded"),
        "{}",
        r.stderr()
    );
    validate(r.json());
}

#[test]
fn memory_stays_bounded_against_a_server_sending_endless_headers() {
    let _g = serial();
    // Every response is 2 MiB of header lines that never end; perfbase reads at most 64 KiB
    // of a head, so its memory must not grow with the server's output.
    let server = spawn_faulty(Fault::OversizedHeader).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let r = perfbase(
        &[
            &url,
            "-d",
            "2s",
            "-c",
            "8",
            "-t",
            "1",
            "--monitor-interval",
            "200ms",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 3, "{}", r.stderr());
    let errors = r.count("errors", "protocol");
    assert!(errors > 50, "{errors} oversized responses refused");
    let own = r.json()["monitor"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"] == "self")
        .unwrap();
    let phase = own["phases"].as_array().unwrap().last().unwrap();
    let rss = phase["rss_bytes"]["max"].as_f64().unwrap();
    assert!(phase["samples"].as_u64().unwrap() >= 5, "{phase}");
    assert!(
        rss < 64.0 * 1024.0 * 1024.0,
        "RSS {rss} after {errors} responses"
    );
}
