//! Truthful numbers at the edges of the measurement window.

use crate::common::*;

/// Issue 13's edges: a timed open-model run lasts its window, and its achieved rate is what
/// started inside that window.
#[test]
fn a_timed_open_run_lasts_its_window_and_reports_what_it_sent() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    // -r 2 -d 3s read "2.50 s, 2.4 req/s" (the time to the last send).
    let r = perfbase(
        &[&format!("http://{}/", server.addr), "-r", "2", "-d", "3s"],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.json()["requests"], 6);
    let secs = r.json()["duration_s"].as_f64().unwrap();
    assert!((3.0..3.3).contains(&secs), "{secs}");
    assert!((r.json()["open_model"]["achieved_rate"].as_f64().unwrap() - 2.0).abs() < 0.02);
    // 10 connections to a server that answers after 1.5 s: 10 start in the 1 s window, not
    // 1000; the achieved rate read ~1000/s (10 over the 10 ms they took to start).
    let r = perfbase(
        &[
            &format!("http://{}/delay/1500", server.addr),
            "-r",
            "1000",
            "-d",
            "1s",
            "--max-inflight",
            "10",
            "--timeout",
            "5s",
        ],
        dir.path(),
    );
    let achieved = r.json()["open_model"]["achieved_rate"].as_f64().unwrap();
    assert!((achieved - 10.0).abs() <= 0.1, "achieved {achieved}/s");
    assert_eq!(r.json()["open_model"]["unsent"], 990);
}

/// Four equal targets, two fast and two slow, over two threads: every worker draws from the
/// whole mix (op n was fixed to worker n mod 2, which sent 10,455 / 37 / 10,454 / 37).
#[test]
fn a_closed_mix_over_several_threads_keeps_its_weights() {
    let _g = serial();
    let server = perfbase_reference::spawn(0).unwrap();
    let dir = tmp();
    let a = server.addr;
    let targets = dir.path().join("mix.txt");
    std::fs::write(
        &targets,
        format!("GET http://{a}/\nGET http://{a}/delay/20\nGET http://{a}/health\nGET http://{a}/delay/19\n"),
    )
    .unwrap();
    let t = targets.to_str().unwrap();
    let r = perfbase(
        &["--targets", t, "-c", "4", "-t", "2", "-d", "1s"],
        dir.path(),
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let counts: Vec<u64> = r.json()["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["requests"].as_u64().unwrap())
        .collect();
    assert_eq!(counts.len(), 4, "{counts:?}");
    // Ops 0..N were sent, so only the last, partial cycle may differ.
    let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
    assert!(max - min <= 1 && *min > 20, "{counts:?}");
}
