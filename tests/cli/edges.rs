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
