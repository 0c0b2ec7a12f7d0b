//! runs.rs's unit tests.
use super::*;
use crate::versus::welch::{p_text, pct_text};
use perfbase_core::{Outcome, Recorder};
use std::time::Duration;

fn run(latency_ms: f64, n: u64, errors: u64) -> Measurement {
    let mut r = Recorder::new(false);
    for i in 0..n {
        let o = if i < errors {
            Outcome::http(500, 1, 1)
        } else {
            Outcome::http(200, 1, 1)
        };
        r.record(
            &o,
            perfbase_core::units::saturating_secs(latency_ms / 1000.0),
            Duration::ZERO,
            Duration::from_millis(i),
        );
    }
    r.finish();
    Measurement::from_recorder(&r, Duration::from_secs(1), None)
}

/// A side that fails is not faster for it (issue 47, item 13): a run whose every request
/// failed cannot be compared and is a regression; one with more errors and quicker
/// latencies gets no "faster" verdict.
#[test]
fn failures_never_make_a_side_faster() {
    let (a, dead) = (run(10.0, 100, 0), run(0.1, 100, 100));
    let e = compare_entry("s", &[&a], &[&dead], 0.05, 0.05);
    assert_eq!(e.verdict, "cannot be compared: every operation of B failed");
    assert!(e.regression && e.metrics.is_empty());
    let half = run(2.0, 100, 50);
    let e = compare_entry("s", &[&a], &[&half], 0.05, 0.05);
    let p99 = e.metrics.iter().find(|m| m.metric == "p99_ms").unwrap();
    assert!(!p99.better, "{p99:?}");
    assert!(
        p99.verdict.starts_with("not counted: B has more errors"),
        "{}",
        p99.verdict
    );
    assert_ne!(e.verdict, "B is faster");
    assert!(e.regression, "more errors is a regression: {e:?}");
    // The other way round: A failing more does not make B slower.
    let e = compare_entry("s", &[&half], &[&a], 0.05, 0.05);
    let p99 = e.metrics.iter().find(|m| m.metric == "p99_ms").unwrap();
    assert!(
        !p99.worse && p99.verdict.starts_with("not counted: A has more"),
        "{p99:?}"
    );
}

/// 900 fast requests to "GET /" and 100 to "POST /buy" taking `buy_ms` each.
fn mix(buy_ms: f64) -> Measurement {
    let names = ["GET /".to_string(), "POST /buy".to_string()];
    let mut r = Recorder::new(false).with_labels(&names);
    for i in 0..1000u64 {
        let (label, ms) = if i % 10 == 0 { (2, buy_ms) } else { (1, 1.0) };
        r.record(
            &Outcome::http(200, 1, 1).with_label(label),
            perfbase_core::units::saturating_secs(ms / 1000.0),
            Duration::ZERO,
            Duration::from_millis(i),
        );
    }
    r.finish();
    Measurement::from_recorder(&r, Duration::from_secs(1), None)
}

#[test]
fn one_slower_endpoint_of_a_mix_is_its_own_regression() {
    let (a, b) = (mix(5.0), mix(8.0));
    let mut entries = Vec::new();
    compare_with_endpoints(&mut entries, "run", &[&a], &[&b], 0.05, 0.05);
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["run", "run · GET /", "run · POST /buy"]);
    // The run's p50 hides it; the endpoint does not.
    let p50 = |e: &EntryComparison| {
        e.metrics
            .iter()
            .find(|m| m.metric == "p50_ms")
            .unwrap()
            .clone()
    };
    assert!(!p50(&entries[0]).worse);
    assert!(!entries[1].regression, "{:?}", entries[1]);
    assert!(entries[2].regression);
    assert!(p50(&entries[2]).worse);
    assert_eq!(entries[2].verdict, "B is slower");
    // Throughput per endpoint is its share of the run's duration.
    let rps = &entries[2].metrics[0];
    assert_eq!((rps.metric.as_str(), rps.a), ("rps", 100.0));
}

#[test]
fn a_run_against_itself_is_not_resolved() {
    let m = run(10.0, 100, 0);
    let e = compare_entry("run", &[&m], &[&m], 0.05, 0.05);
    assert_eq!(e.verdict, "not resolved with one run a side (rps +0.0 %)");
    assert!(!e.regression && !e.moved() && e.comparable());
    let p50 = e.metrics.iter().find(|m| m.metric == "p50_ms").unwrap();
    assert_eq!(p50.verdict, "not resolved with one run a side (+0.0 %)");
    // An error rate of 0 on both sides moves in points, not percent.
    let err = e.metrics.iter().find(|m| m.metric == "error_rate").unwrap();
    assert_eq!(err.verdict, "not resolved with one run a side (+0.0 pp)");
    assert!(e
        .metrics
        .iter()
        .all(|m| !m.verdict.contains("within noise")));
}

#[test]
fn an_entry_that_cannot_be_compared_neither_moved_nor_is_comparable() {
    let a = run(10.0, 100, 0);
    let empty = run(10.0, 0, 0);
    let e = compare_entry("run", &[&a], &[&empty], 0.05, 0.05);
    assert!(!e.moved() && !e.comparable() && e.regression, "{e:?}");
}

#[test]
fn slower_single_runs_are_named_and_regress() {
    let a = run(10.0, 100, 0);
    let b = run(30.0, 100, 0);
    let e = compare_entry("run", &[&a], &[&b], 0.05, 0.05);
    assert_eq!(e.verdict, "B is slower");
    assert!(e.regression);
    let p50 = e.metrics.iter().find(|m| m.metric == "p50_ms").unwrap();
    assert!((p50.delta - 20.0).abs() < 0.1, "{p50:?}");
    assert_eq!(p50.verdict, "B is slower");
    let back = compare_entry("run", &[&b], &[&a], 0.05, 0.05);
    assert_eq!(back.verdict, "B is faster");
    assert!(!back.regression);
}

#[test]
fn repetitions_use_welch_and_ignore_noise() {
    // Overlapping noisy runs: Welch finds no difference though the means differ by 2 %.
    let a: Vec<Measurement> = [10.0, 10.4, 9.7, 10.2]
        .iter()
        .map(|v| run(*v, 50, 0))
        .collect();
    let b: Vec<Measurement> = [10.3, 9.8, 10.5, 10.1]
        .iter()
        .map(|v| run(*v, 50, 0))
        .collect();
    let (ra, rb): (Vec<&Measurement>, Vec<&Measurement>) = (a.iter().collect(), b.iter().collect());
    let e = compare_entry("s", &ra, &rb, 0.05, 0.05);
    let p50 = e.metrics.iter().find(|m| m.metric == "p50_ms").unwrap();
    let p = p50.p_value.unwrap();
    assert!(p > 0.05, "{p50:?}");
    assert!(!e.moved());
    assert_eq!(
        p50.verdict,
        format!(
            "not resolved with 4 runs ({}, {})",
            pct_text(p50.delta_pct.unwrap() * 100.0),
            p_text(p)
        )
    );
    assert!(
        e.verdict.starts_with("not resolved with 4 runs (") && e.verdict.contains(", p = "),
        "{}",
        e.verdict
    );
    // Clearly separated runs: significant.
    let c: Vec<Measurement> = [13.0, 13.2, 12.9, 13.1]
        .iter()
        .map(|v| run(*v, 50, 0))
        .collect();
    let rc: Vec<&Measurement> = c.iter().collect();
    let e = compare_entry("s", &ra, &rc, 0.05, 0.05);
    assert_eq!(e.verdict, "B is slower");
    assert!(e.moved());
    let p50 = e.metrics.iter().find(|m| m.metric == "p50_ms").unwrap();
    assert_eq!(p50.verdict, "B is slower (p < 0.001)");
    assert!(
        e.metrics
            .iter()
            .find(|m| m.metric == "p50_ms")
            .unwrap()
            .p_value
            .unwrap()
            < 0.001
    );
}

#[test]
fn errors_from_zero_count_as_worse() {
    let a = run(10.0, 100, 0);
    let b = run(10.0, 100, 10);
    let e = compare_entry("run", &[&a], &[&b], 0.05, 0.05);
    let err = e.metrics.iter().find(|m| m.metric == "error_rate").unwrap();
    assert_eq!(err.verdict, "B has more errors");
    assert!(e.regression);
}
