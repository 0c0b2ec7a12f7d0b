//! Saving and reading runs, on SQLite and PostgreSQL: a round trip keeps every field, a run
//! that is not there is NotFound, a failed save leaves nothing behind, and concurrent SQLite
//! writers queue.

use super::*;
use crate::{RunRef, StoreError, SCHEMA_VERSION};

fn check_round_trip(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
    let ([a, b, c], [ra, rb, rc]) = save_three(&mut s);
    assert!(a < b && b < c, "ids grow: {a} {b} {c}");

    let got = s.get(&RunRef::Id(b)).unwrap();
    assert_eq!(got.result, rb);
    // Byte for byte, every float and histogram included.
    assert_eq!(
        serde_json::to_string(&got.result).unwrap(),
        serde_json::to_string(&rb).unwrap()
    );
    let sum = &got.summary;
    assert_eq!(sum.id, b);
    assert_eq!(sum.kind, "plan");
    assert_eq!(sum.model, "open");
    assert_eq!(sum.target, rb.target);
    assert_eq!(sum.started_at, rb.started_at);
    assert_eq!(sum.requests, rb.measurement.requests);
    assert_eq!(sum.rps, rb.measurement.rps);
    assert_eq!(sum.success_ratio, rb.measurement.success_ratio);
    assert_eq!(sum.p50_ms, rb.measurement.latency_ms.p50);
    assert_eq!(sum.p95_ms, rb.measurement.latency_ms.p95);
    assert_eq!(sum.p99_ms, rb.measurement.latency_ms.p99);
    assert!(sum.interrupted);
    assert_eq!(sum.labels, labels_b().0);
    assert!(
        sum.saved_at.len() == 24 && sum.saved_at.ends_with('Z'),
        "{}",
        sum.saved_at
    );

    let latest = s.get(&RunRef::Latest).unwrap();
    assert_eq!(latest.summary.id, c);
    assert_eq!(latest.result, rc);
    assert!(!latest.summary.interrupted);
    assert_eq!(latest.summary.kind, "demo");

    let api: RunRef = "latest:service=api".parse().unwrap();
    let got = s.get(&api).unwrap();
    assert_eq!((got.summary.id, &got.result), (c, &rc));
    let api_ci: RunRef = "latest:service=api,env=ci".parse().unwrap();
    let got = s.get(&api_ci).unwrap();
    assert_eq!((got.summary.id, &got.result), (a, &ra));
    assert_eq!(got.summary.labels, labels_a().0);
    let web: RunRef = "latest:service=web".parse().unwrap();
    assert_eq!(s.get(&web).unwrap().summary.id, b);

    // Still there, unchanged, after closing and reopening.
    drop(s);
    let mut s = Store::open(loc).unwrap();
    assert_eq!(s.get(&RunRef::Id(a)).unwrap().result, ra);
    assert_eq!(s.history(&[], 0).unwrap().len(), 3);
}

fn check_not_found(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    let err = s.get(&RunRef::Latest).unwrap_err();
    assert!(matches!(&err, StoreError::NotFound(r) if r == "latest"));
    assert_eq!(err.to_string(), "no run latest; see `perfbase history`");
    let err = s.get(&RunRef::Id(42)).unwrap_err();
    assert_eq!(err.to_string(), "no run 42; see `perfbase history`");

    s.save("http", &sample_result(1, false), &labels_a())
        .unwrap();
    let r: RunRef = "latest:service=nope".parse().unwrap();
    let err = s.get(&r).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no run latest:service=nope; see `perfbase history`"
    );
}

fn check_atomic_save(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    s.fail_after_runs_insert = true;
    let err = s
        .save("http", &sample_result(1, false), &labels_a())
        .unwrap_err();
    assert!(matches!(err, StoreError::Db(_)), "{err}");
    s.fail_after_runs_insert = false;
    assert_eq!(count(&mut s, "runs"), 0, "the runs insert was rolled back");
    assert_eq!(count(&mut s, "run_labels"), 0);
    assert!(s.history(&[], 0).unwrap().is_empty());
    assert!(matches!(
        s.get(&RunRef::Latest).unwrap_err(),
        StoreError::NotFound(_)
    ));

    // The store still works, and a reopened one saw nothing either.
    drop(s);
    let mut s = Store::open(loc).unwrap();
    assert_eq!(count(&mut s, "runs"), 0);
    let id = s
        .save("http", &sample_result(2, false), &labels_b())
        .unwrap();
    assert_eq!(ids(&s.history(&[], 0).unwrap()), vec![id]);
    assert_eq!(count(&mut s, "run_labels"), 2);

    // A result JSON cannot hold is refused before anything is written.
    let mut bad = sample_result(3, false);
    bad.measurement.rps = f64::NAN;
    let err = s.save("http", &bad, &labels_a()).unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");
    assert!(matches!(
        s.save(
            "http",
            &sample_result(3, false),
            &Labels::new().with("bad key", "x")
        )
        .unwrap_err(),
        StoreError::Invalid(_)
    ));
    assert_eq!(count(&mut s, "runs"), 1);
}

#[test]
fn sqlite_round_trip() {
    let (_dir, loc) = sqlite_location();
    check_round_trip(&loc);
}

#[test]
fn sqlite_not_found() {
    let (_dir, loc) = sqlite_location();
    check_not_found(&loc);
}

#[test]
fn sqlite_atomic_save() {
    let (_dir, loc) = sqlite_location();
    check_atomic_save(&loc);
}

#[test]
fn sqlite_concurrent_writers_queue() {
    let (_dir, loc) = sqlite_location();
    drop(Store::open(&loc).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let loc = loc.clone();
            std::thread::spawn(move || {
                let mut s = Store::open(&loc).unwrap();
                let labels = Labels::new().with("writer", t.to_string());
                (0..5)
                    .map(|i| s.save("http", &sample_result(i, false), &labels).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all: Vec<RunId> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 20);
    let mut s = Store::open(&loc).unwrap();
    assert_eq!(s.history(&[], 0).unwrap().len(), 20);
    assert_eq!(s.history(&filter(&[("writer", "2")]), 0).unwrap().len(), 5);
}

#[test]
fn postgres_round_trip() {
    on_postgres(check_round_trip);
}

#[test]
fn postgres_not_found() {
    on_postgres(check_not_found);
}

#[test]
fn postgres_atomic_save() {
    on_postgres(check_atomic_save);
}
