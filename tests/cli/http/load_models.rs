//! `perfbase http`'s load models: the open model's requested rate and the queueing it charges
//! to the server, the closed model's latency, `-n` and `-d` together, and the warm-up.

use crate::common::*;
use std::time::{Duration, Instant};

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
