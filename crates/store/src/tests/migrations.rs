//! Schema migrations, on SQLite and PostgreSQL: a store of schema v1 is migrated in place
//! (built here, and a checked-in file), and a store of a newer schema is refused.

use super::*;
use crate::{RunRef, StoreError, SCHEMA_VERSION};

fn check_migration_from_v1(loc: &str) {
    let mut s = Store::open_at_version(loc, 1).unwrap();
    assert_eq!(s.schema_version().unwrap(), 1);
    assert_eq!(s.stored_version().unwrap(), 1);
    let ra = sample_result(1, false);
    let rb = sample_result(2, true);
    let a = s.save_v1("http", &ra, &labels_a()).unwrap();
    let b = s.save_v1("plan", &rb, &labels_b()).unwrap();
    s.set_baseline_v1("release", a).unwrap();
    // v1 has no run_labels table.
    assert!(s
        .raw(|db| db.query("SELECT count(*) FROM run_labels", &[]))
        .is_err());
    drop(s);

    let mut s = Store::open(loc).unwrap();
    assert_eq!(s.schema_version().unwrap(), crate::schema::SCHEMA_VERSION);
    assert_eq!(s.stored_version().unwrap(), crate::schema::SCHEMA_VERSION);
    // v4 took the trend figures out of the runs saved before it.
    assert_eq!(count(&mut s, "run_points"), 8);
    assert_eq!(count(&mut s, "run_env"), 2);
    let got = s.get(&RunRef::Id(a)).unwrap();
    assert_eq!(got.result, ra);
    // v6 read each run's plan and outcome from its result.
    let browsed = s.browsed(b).unwrap();
    assert_eq!(
        (browsed.plan.as_str(), browsed.outcome.as_str()),
        ("checkout", "interrupted")
    );
    assert_eq!(got.summary.labels, labels_a().0);
    assert_eq!(s.get(&RunRef::Id(b)).unwrap().result, rb);
    // Found through the backfilled run_labels.
    assert_eq!(
        ids(&s.history(&filter(&[("service", "api")]), 0).unwrap()),
        vec![a]
    );
    assert_eq!(
        ids(&s.history(&filter(&[("env", "ci")]), 0).unwrap()),
        vec![b, a]
    );
    assert_eq!(count(&mut s, "run_labels"), 5);
    // The v1 baseline survives and seeds its history.
    assert_eq!(s.baseline("release").unwrap().summary.id, a);
    let hist: Vec<RunId> = s
        .baseline_history("release")
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(hist, vec![a]);

    // Business as usual after the migration; reopening migrates nothing more.
    let c = s
        .save("http", &sample_result(3, false), &labels_c())
        .unwrap();
    assert_eq!(
        ids(&s.history(&filter(&[("service", "api")]), 0).unwrap()),
        vec![c, a]
    );
    drop(s);
    let mut s = Store::open(loc).unwrap();
    assert_eq!(s.stored_version().unwrap(), crate::schema::SCHEMA_VERSION);
    assert_eq!(s.history(&[], 0).unwrap().len(), 3);
}

fn check_newer_schema(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    s.save("http", &sample_result(1, false), &labels_a())
        .unwrap();
    s.raw(|db| db.execute("UPDATE perfbase_meta SET schema_version = 99", &[]))
        .unwrap();
    drop(s);
    let err = Store::open(loc).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NewerSchema {
                found: 99,
                supported: SCHEMA_VERSION
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("upgrade perfbase"), "{err}");
}

#[test]
fn sqlite_migration_from_v1() {
    let (_dir, loc) = sqlite_location();
    check_migration_from_v1(&loc);
}

#[test]
fn sqlite_newer_schema_is_refused() {
    let (_dir, loc) = sqlite_location();
    check_newer_schema(&loc);
}

#[test]
fn postgres_migration_from_v1() {
    on_postgres(check_migration_from_v1);
}

#[test]
fn postgres_newer_schema_is_refused() {
    on_postgres(check_newer_schema);
}

/// A store written by the v1 code path and checked in: its bytes stay as they were, whatever
/// later edits do to the migrations, so this test sees what an old store on disk looks like.
#[test]
fn a_checked_in_v1_store_migrates() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("results.db");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v1.db"),
        &loc,
    )
    .unwrap();
    let loc = loc.to_str().unwrap();
    let mut s = Store::open(loc).unwrap();
    assert_eq!(s.stored_version().unwrap(), SCHEMA_VERSION);
    let a = s.get(&RunRef::Id(1)).unwrap();
    assert_eq!(a.summary.kind, "http");
    assert_eq!(a.result.measurement.requests, 68);
    assert_eq!(a.summary.labels, labels_a().0);
    let b = s.get(&RunRef::Id(2)).unwrap();
    assert_eq!(
        (b.summary.kind.as_str(), b.result.measurement.requests),
        ("plan", 75)
    );
    assert_eq!(
        ids(&s.history(&filter(&[("env", "ci")]), 0).unwrap()),
        vec![2, 1]
    );
    assert_eq!(s.baseline("release").unwrap().summary.id, 1);
    // v6 read each old run's plan and outcome from its result.
    let (one, two) = (s.browsed(1).unwrap(), s.browsed(2).unwrap());
    eprintln!(
        "v6 fill: {:?} {:?}",
        (&one.plan, &one.outcome),
        (&two.plan, &two.outcome)
    );
    assert_eq!(one.outcome, "passed");
    let c = s
        .save("http", &sample_result(3, false), &labels_c())
        .unwrap();
    assert_eq!(
        ids(&s.history(&filter(&[("service", "api")]), 0).unwrap()),
        vec![c, 1]
    );
}
