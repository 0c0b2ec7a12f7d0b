//! `perfbase http` and `perfbase serve` end to end.

use crate::common::*;
use assert_cmd::Command;
use perfbase_reference::faulty::{spawn_faulty, Fault};
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

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
fn open_model_sends_the_requested_rate() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let r = perfbase(&[&url, "-r", "200", "-d", "2s"], dir.path());
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let n = r.json()["requests"].as_u64().unwrap();
    assert!((392..=408).contains(&n), "400 ± 2 % expected, got {n}");
    let open = &r.json()["open_model"];
    assert_eq!(open["requested_rate"], 200.0);
    let achieved = open["achieved_rate"].as_f64().unwrap();
    assert!((196.0..=204.0).contains(&achieved), "achieved {achieved}");
    assert_eq!(open["unsent"], 0);
    assert!(r.json()["service_time_ms"]["p50"].as_f64().unwrap() > 0.0);
    assert_eq!(r.json()["model"], "open");
    validate(r.json());
}

#[test]
fn delay_endpoint_p50_matches_the_delay() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/delay/20", server.addr);
    let r = perfbase(&[&url, "-c", "4", "-d", "2s", "-t", "1"], dir.path());
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let p50 = r.json()["latency_ms"]["p50"].as_f64().unwrap();
    assert!((20.0..=23.0).contains(&p50), "p50 {p50} ms");
    // 4 connections × 2 s / ~20 ms.
    let n = r.json()["requests"].as_u64().unwrap();
    assert!((300..=400).contains(&n), "{n} requests");
    // One point per second of the run.
    let timeline = r.json()["timeline"].as_array().unwrap();
    assert!((2..=3).contains(&timeline.len()), "{timeline:?}");
    let in_timeline: u64 = timeline
        .iter()
        .map(|p| p["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(in_timeline, n);
}

#[test]
fn open_model_charges_queueing_to_the_server_not_to_nobody() {
    // 100/s offered to a service that can do 2 in flight × 10/s = 20/s: requests queue for a
    // free connection, are counted late, and their response time (from the intended start)
    // grows far beyond the service time — coordinated omission cannot hide the backlog.
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/delay/100", server.addr);
    let r = perfbase(
        &[
            &url,
            "-r",
            "100",
            "--max-inflight",
            "2",
            "-d",
            "2s",
            "--timeout",
            "2s",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let open = &r.json()["open_model"];
    assert!(open["late"].as_u64().unwrap() > 0);
    // Requests wait up to the 2 s timeout for a connection, after the window too; about 80
    // get one, the rest are unsent: timeout errors, all 200 accounted for.
    let unsent = open["unsent"].as_u64().unwrap();
    assert!(unsent > 100, "{open}");
    assert_eq!(r.json()["requests"], 200);
    assert_eq!(r.json()["errors"]["timeout"].as_u64(), Some(unsent));
    let achieved = open["achieved_rate"].as_f64().unwrap();
    assert!(achieved < 30.0, "achieved {achieved}");
    let response = r.json()["latency_ms"]["p99"].as_f64().unwrap();
    let service = r.json()["service_time_ms"]["p99"].as_f64().unwrap();
    assert!(service < 150.0, "service p99 {service}");
    assert!(
        response > 1000.0,
        "response p99 {response} should include the queueing"
    );
    validate(r.json());
}

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
fn count_and_duration_stop_at_whichever_comes_first() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let started = Instant::now();
    let r = perfbase(&[&url, "-n", "50", "-d", "30s", "-c", "3"], dir.path());
    assert_eq!(r.json()["requests"], 50);
    assert!(started.elapsed() < Duration::from_secs(10));
    let slow = format!("http://{}/delay/50", server.addr);
    let r = perfbase(&[&slow, "-n", "100000", "-d", "1s", "-c", "2"], dir.path());
    let n = r.json()["requests"].as_u64().unwrap();
    assert!((30..=42).contains(&n), "1 s at 2 × 20/s: {n}");
}

#[test]
fn warmup_is_run_and_discarded() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let r = perfbase(
        &[&url, "-r", "100", "-d", "1s", "--warmup", "1s"],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["requests"], 100);
    assert_eq!(
        server.stats.requests(),
        200,
        "warm-up requests were sent too"
    );
    assert_eq!(r.json()["config"]["warmup_s"], 1.0);
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

fn bad(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let dir = tmp();
    let targets = dir.path().join("t.txt");
    std::fs::write(&targets, "GET http://127.0.0.1:1/\nthis is not a header\n").unwrap();
    let t = targets.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["http", "http://127.0.0.1:1/", "-r", "0"],
            "--rate".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-d", "ten"],
            "--duration".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-c", "5", "-r", "10"],
            "with -r (the open model) use --max-inflight".into(),
        ),
        (
            vec!["http", "127.0.0.1:8080/"],
            "give the scheme: http://127.0.0.1:8080/".into(),
        ),
        (
            vec!["run", "/nonexistent/nope.toml"],
            "/nonexistent/nope.toml: cannot read the plan: No such file".into(),
        ),
        (
            vec![
                "http",
                "https://127.0.0.1:1/",
                "--cacert",
                "/nonexistent/ca.pem",
            ],
            "--cacert /nonexistent/ca.pem".into(),
        ),
        (
            vec!["http", "ftp://127.0.0.1:1/"],
            "unsupported scheme".into(),
        ),
        (vec!["http", "not a url"], "URL 'not a url'".into()),
        (vec!["http"], "no target".into()),
        (vec!["http", "--targets", t], format!("{t}:2:")),
        (
            vec!["http", "--targets", "/nonexistent/t.txt"],
            "/nonexistent/t.txt: cannot read".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-H", "NoColon"],
            "--header".into(),
        ),
        (
            vec![
                "http",
                "http://127.0.0.1:1/",
                "--json",
                "/nonexistent/dir/r.json",
            ],
            "--json".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "--max-inflight", "5"],
            "--rate".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "--timeout", "500us"],
            "below 1ms".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-m", "GE T"],
            "invalid method 'GE T'".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-c", "99999999999"],
            "ulimit -n".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-r", "200M"],
            "above the 100M/s".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "--frobnicate"],
            "unexpected argument '--frobnicate' found".into(),
        ),
        (
            vec!["http", "http://127.0.0.1:1/", "-c"],
            "'--connections <N>'".into(),
        ),
    ];
    for (args, want) in cases {
        let (code, err) = bad(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err:?}");
        assert!(
            err.contains(&want),
            "{args:?}: expected {want:?} in {err:?}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn ctrl_c_stops_within_a_second_and_writes_the_partial_result() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let json = dir.path().join("result.json");
    let url = format!("http://{}/delay/3000", server.addr);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args(["http", &url, "-c", "3", "-d", "60s", "--quiet", "--json"])
        .arg(&json)
        .env("PERFBASE_STORE", dir.path().join("results.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3500));
    let sent = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "stopped in {:?}",
        sent.elapsed()
    );
    assert_eq!(out.status.code(), Some(130));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(
        v["status"]["200"], 3,
        "the first round of 3 requests completed"
    );
    assert_eq!(v["aborted_in_flight"], 3, "the second round was in flight");
    assert!(String::from_utf8_lossy(&out.stdout).contains("INTERRUPTED"));
    validate(&v);
    // The partial result is in the store too, whole.
    let stored = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["report", "latest", "--format", "json"])
        .env("PERFBASE_STORE", dir.path().join("results.db"))
        .output()
        .unwrap();
    assert!(stored.status.success(), "{stored:?}");
    let stored: Value = serde_json::from_slice(&stored.stdout).unwrap();
    assert_eq!(stored["interrupted"], true);
    assert_eq!(stored["status"], v["status"]);
    assert_eq!(stored["aborted_in_flight"], 3);
}

#[test]
fn a_closed_stdout_loses_nothing_and_is_no_panic() {
    // `perfbase http … | head -1`: the reader hangs up before the summary is printed.
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let json = dir.path().join("result.json");
    let store = dir.path().join("results.db");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("perfbase"))
        .args(["http", &format!("http://{}/health", server.addr)])
        .args(["-n", "200", "-c", "2", "--quiet", "--json"])
        .arg(&json)
        .env("PERFBASE_STORE", &store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["status"]["200"], 200);
    let history = Command::cargo_bin("perfbase")
        .unwrap()
        .arg("history")
        .env("PERFBASE_STORE", &store)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&history.stdout);
    assert!(history.status.success());
    assert_eq!(
        listed.lines().filter(|l| l.contains("/health")).count(),
        1,
        "the run was stored: {listed}"
    );
}

#[test]
fn secrets_never_reach_any_output() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/?token=tok3n-value&x=1", server.addr);
    let r = perfbase(
        &[
            &url,
            "-n",
            "5",
            "-c",
            "1",
            "-H",
            "Authorization: Bearer s3cr3t-value",
            "-H",
            "X-Api-Key: k3y-value",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let json = serde_json::to_string(r.json()).unwrap();
    for text in [r.stdout(), r.stderr(), json] {
        for secret in ["s3cr3t-value", "k3y-value", "tok3n-value"] {
            assert!(!text.contains(secret), "{secret} leaked into: {text}");
        }
    }
    let headers = &r.json()["config"]["protocol"]["headers"];
    assert_eq!(headers[0], "Authorization: [redacted]");
    assert!(r.json()["target"]
        .as_str()
        .unwrap()
        .contains("token=[redacted]&x=1"));
}

#[test]
fn urls_in_error_messages_are_redacted() {
    let dir = tmp();
    let targets = dir.path().join("t.txt");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["ftp://alice:PW0@127.0.0.1/?token=T0".into()],
            "unsupported scheme",
        ),
        (
            vec!["--targets".into(), targets.display().to_string()],
            "expected 'METHOD URL'",
        ),
    ];
    std::fs::write(&targets, "GET http://a:PW1@127.0.0.1/?token=T1 extra\n").unwrap();
    for (args, what) in cases {
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend(["-n", "1"]);
        let r = perfbase(&all, dir.path());
        assert_eq!(r.code(), 2, "{}", r.stderr());
        let text = r.stderr();
        assert!(text.contains(what), "{text}");
        // Redacted, or (a line that is no target) not shown at all.
        assert!(
            text.contains("[redacted]") || text.contains("not shown"),
            "{text}"
        );
        for secret in ["PW0", "T0", "PW1", "T1"] {
            assert!(!text.contains(secret), "{secret} leaked into: {text}");
        }
    }
}

#[test]
fn a_header_with_a_line_break_is_bad_input_without_its_value() {
    let dir = tmp();
    let r = perfbase(
        &[
            "http://127.0.0.1:1/",
            "-n",
            "1",
            "-H",
            "Authorization: Bearer s3cr3t\r\nX-Injected: 1",
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    let text = r.stderr();
    assert!(
        text.contains("--header 'Authorization': the header has a line break"),
        "{text}"
    );
    assert!(!text.contains("s3cr3t") && !text.contains('\r'), "{text:?}");
}

#[test]
fn serve_prints_its_address_first_and_answers() {
    let (child, line) = serve(&[]);
    use std::io::{Read, Write};
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    interrupt(child);
}

#[test]
fn serve_tls_writes_its_certificate_and_answers_https() {
    let dir = tmp();
    let cert = dir.path().join("cert.pem");
    let (child, line) = serve(&["--tls-cert".as_ref(), cert.as_os_str()]);
    let url = line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(url.starts_with("https://127.0.0.1:"), "{line}");
    let r = perfbase(
        &[
            &format!("{url}/health"),
            "-n",
            "20",
            "-c",
            "2",
            "--cacert",
            cert.to_str().unwrap(),
        ],
        dir.path(),
    );
    interrupt(child);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 20);
}

#[test]
fn monitor_reports_services_idle_and_under_load_and_marks_exits() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let mut busy = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let mut idle = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let idle_pid = idle.id();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(2500));
        let _ = idle.kill();
        let _ = idle.wait();
    });
    let dir = tmp();
    let url = format!("http://{}/delay/5", server.addr);
    let busy_sel = format!("pid:{}", busy.id());
    let idle_sel = format!("pid:{idle_pid}");
    let r = perfbase(
        &[
            &url,
            "-c",
            "2",
            "-d",
            "2500ms",
            "--monitor",
            &busy_sel,
            "--monitor",
            &idle_sel,
            "--monitor-idle",
            "1s",
            "--monitor-interval",
            "250ms",
        ],
        dir.path(),
    );
    killer.join().unwrap();
    let _ = busy.kill();
    let _ = busy.wait();
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let m = &r.json()["monitor"];
    let target = |label: &str| {
        m["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["label"] == label)
            .cloned()
            .unwrap()
    };
    let phase = |t: &Value, name: &str| {
        t["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
            .unwrap()
    };
    let b = target(&busy_sel);
    for name in ["idle", "measure"] {
        let cpu = phase(&b, name)["cpu_pct"]["mean"].as_f64().unwrap();
        assert!((50.0..=105.0).contains(&cpu), "busy loop {name}: {cpu} %");
    }
    let rss = phase(&b, "measure")["rss_bytes"]["mean"].as_f64().unwrap();
    assert!(rss > 100_000.0 && rss < 200e6, "{rss}");
    let i = target(&idle_sel);
    assert!(phase(&i, "idle")["cpu_pct"]["mean"].as_f64().unwrap() < 5.0);
    let exited = i["exited_at_s"]
        .as_f64()
        .expect("the killed process is marked as exited");
    assert!((2.0..=5.0).contains(&exited), "{exited}");
    let me = target("perfbase (self)");
    assert!(phase(&me, "measure")["cpu_pct"]["mean"].as_f64().unwrap() > 0.0);
    assert!(r.stdout().contains("Resources"), "{}", r.stdout());
    validate(r.json());
}

#[test]
fn a_monitor_selector_matching_nothing_is_bad_input_before_any_load() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/", server.addr);
    let r = perfbase(
        &[&url, "-n", "10", "--monitor", "name:no-such-process-here"],
        dir.path(),
    );
    assert_eq!(r.code(), 2);
    assert!(
        r.stderr()
            .contains("`name:no-such-process-here` matches nothing"),
        "{}",
        r.stderr()
    );
    assert_eq!(server.stats.requests(), 0, "no load was sent");
}

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

#[test]
fn https_with_a_trusted_untrusted_or_ignored_certificate() {
    let _g = serial();
    let tls = perfbase_reference::tls::self_signed().unwrap();
    let server =
        perfbase_reference::spawn_tls(0, perfbase_reference::Config::default(), tls.config)
            .unwrap();
    let dir = tmp();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &tls.cert_pem).unwrap();
    let ca = ca.to_str().unwrap();
    let url = format!("https://127.0.0.1:{}/", server.addr.port());
    // Trusted through --cacert: keep-alive TLS connections carry every request.
    let r = perfbase(&[&url, "-n", "400", "-c", "4", "--cacert", ca], dir.path());
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 400);
    assert_eq!(server.stats.connections(), 4);
    validate(r.json());
    // Not trusted: every connect fails with the reason, nothing succeeds, exit 3.
    let r = perfbase(&[&url, "-n", "5", "-c", "1"], dir.path());
    assert_eq!(r.code(), 3, "{}", r.stdout());
    assert_eq!(r.count("errors", "connect"), 5);
    let sample = r.json()["error_samples"][0]["message"].to_string();
    assert!(
        sample.contains("TLS handshake") && sample.contains("certificate"),
        "{sample}"
    );
    assert!(
        sample.contains("--cacert") && sample.contains("--insecure"),
        "the fix is named: {sample}"
    );
    // --insecure accepts it; a new connection per request, each a TLS handshake.
    let before = server.stats.connections();
    let r = perfbase(
        &[&url, "-n", "60", "-c", "2", "-k", "--no-keepalive"],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.count("status", "200"), 60);
    assert_eq!(server.stats.connections() - before, 60);
    // A targets file over https, per endpoint; and /delay/20 keeps its p50 over TLS.
    let targets = dir.path().join("t.txt");
    std::fs::write(&targets, format!("GET {url}\nGET {url}delay/20\n")).unwrap();
    let r = perfbase(
        &[
            "--targets",
            targets.to_str().unwrap(),
            "-n",
            "100",
            "-c",
            "4",
            "--cacert",
            ca,
        ],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let e = r.json()["endpoints"].as_array().unwrap();
    assert_eq!(e[1]["name"], "GET /delay/20");
    assert_eq!(e[1]["requests"], 50);
    let p50 = e[1]["latency_ms"]["p50"].as_f64().unwrap();
    assert!((20.0..40.0).contains(&p50), "{p50}");
}

#[test]
fn the_progress_line_shows_on_a_terminal_only_and_not_with_quiet() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let bin = assert_cmd::cargo::cargo_bin("perfbase");
    let url = format!("http://{}/delay/5", server.addr);
    // `script` (util-linux) gives the run a pseudo-terminal, as a user's shell would.
    let on_a_terminal = |extra: &str| {
        let cmd = format!(
            "{} http {url} -c 2 -d 2500ms --no-store {extra}",
            bin.display()
        );
        let out = std::process::Command::new("script")
            .args(["-qfec", &cmd, "/dev/null"])
            .current_dir(dir.path())
            .output()
            .expect("script (util-linux) runs");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = on_a_terminal("");
    // Rewritten in place (\r) about once a second, with what has completed so far.
    let ticks: Vec<&str> = shown
        .split('\r')
        .filter(|l| l.contains("[measure]"))
        .collect();
    assert!(ticks.len() >= 2, "{shown:?}");
    let completed = |tick: &str| -> u64 {
        let words: Vec<&str> = tick.split_whitespace().collect();
        let i = words.iter().position(|w| *w == "requests").unwrap();
        words[i - 1].replace(',', "").parse().unwrap()
    };
    // 2 connections × 5 ms: ~400/s, so well over 50 by the first tick at 1 s.
    assert!(completed(ticks[0]) > 50, "{:?}", ticks[0]);
    assert!(completed(ticks[1]) > completed(ticks[0]), "{ticks:?}");
    for t in &ticks {
        assert!(
            t.contains("/2500ms") && t.contains("errors 0") && t.contains("p99 "),
            "{t:?}"
        );
    }
    assert!(shown.contains("Requests"), "the summary follows: {shown:?}");
    let quiet = on_a_terminal("--quiet");
    assert!(!quiet.contains("[measure]"), "{quiet:?}");
    assert!(quiet.contains("Requests"), "{quiet:?}");
    // Not a terminal: no progress line either.
    let out = Command::cargo_bin("perfbase")
        .unwrap()
        .args(["http", &url, "-c", "2", "-d", "1500ms", "--no-store"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("[measure]"));
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

#[test]
fn thresholds_on_the_command_line_in_k6_or_perfbase_words_gate_the_exit_code() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let url = format!("http://{}/delay/2", server.addr);
    let base = [url.as_str(), "-n", "100", "-c", "2"];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        perfbase(&args, dir.path())
    };
    // Every request takes 2 ms or more and none fails.
    let r = with(&[
        "--threshold",
        "p(95)<2000",
        "--threshold",
        "http_req_failed<0.01",
        "--threshold",
        "rps > 1",
    ]);
    assert_eq!(r.code(), 0, "{}\n{}", r.stdout(), r.stderr());
    assert!(
        r.stdout().contains("Threshold     p(95)<2000: "),
        "{}",
        r.stdout()
    );
    let verdicts = &r.json()["study"]["scenarios"][0]["thresholds"];
    assert_eq!(verdicts.as_array().unwrap().len(), 3, "{verdicts}");
    validate(r.json());
    // One that cannot hold: exit 1, said, and kept in the result.
    let r = with(&["--threshold", "avg<1", "--threshold", "p(99)<5000"]);
    assert_eq!(r.code(), 1, "{}", r.stdout());
    let failed = r
        .stdout()
        .lines()
        .find(|l| l.contains("avg<1"))
        .unwrap()
        .to_string();
    assert!(
        failed.ends_with("FAIL") && failed.contains(" ms"),
        "{failed}"
    );
    assert_eq!(
        r.json()["study"]["scenarios"][0]["thresholds"][0]["passed"],
        false
    );
    assert_eq!(r.json()["study"]["passed"], false);
    // A threshold that does not parse: exit 2 before any load, naming it.
    let (code, err) = bad(&["http", &url, "--threshold", "p(97)<200"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'p(97)<200'") && err.contains("--threshold"),
        "{err}"
    );
}

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
    let (child, line) = serve(&["--tls-cert".as_ref(), cert.as_os_str()]);
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
