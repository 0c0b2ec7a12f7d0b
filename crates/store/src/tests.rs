//! Tests against real databases: SQLite files in temporary folders, and the PostgreSQL server
//! of `scripts/services.sh` when `PERFBASE_POSTGRES_URL` is set (each test in a schema of its
//! own, created and dropped here, since the test user may not create databases).
//!
//! The store-level checks are written once (`check_*`) and run on both databases.

use crate::database::{sqlite_placeholders, Val};
use crate::{
    parse_label, redact_location, Labels, RunId, RunRef, RunSummary, Store, StoreError,
    SCHEMA_VERSION,
};
use perfbase_core::result::{
    Env, LoadConfig, Measurement, Model, PhaseResult, RunResult, Tool, SCHEMA,
};
use perfbase_core::{Class, Outcome, Recorder};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

// ---- fixtures ----

/// A realistic result: histograms, timeline, error samples, a plan phase, study JSON with
/// awkward floats. `seed` varies it; `open` picks the load model.
fn sample_result(seed: u64, open: bool) -> RunResult {
    let mut rec = Recorder::new(open);
    for i in 0..(60 + seed * 7) {
        let outcome = if i % 17 == 3 {
            Outcome::http(503, 40, 80)
        } else {
            Outcome::http(200, 120 + i, 80)
        };
        rec.record(
            &outcome,
            Duration::from_micros(700 + i * 37 + seed * 113),
            Duration::from_micros(650 + i * 31),
            Duration::from_millis(i * 25),
        );
    }
    rec.record(
        &Outcome::error(Class::Timeout, "no response within 2s"),
        Duration::from_secs(2),
        Duration::from_secs(2),
        Duration::from_millis(1900),
    );
    rec.late = seed;
    rec.finish();
    let m = Measurement::from_recorder(
        &rec,
        Duration::from_millis(2_000 + seed * 3),
        open.then_some((33.3, Duration::from_secs(2), 64)),
    );
    let model = if open { Model::Open } else { Model::Closed };
    let mut protocol = BTreeMap::new();
    protocol.insert("method".to_string(), serde_json::json!("GET"));
    protocol.insert("keepalive".to_string(), serde_json::json!(true));
    RunResult {
        schema: SCHEMA.into(),
        run_id: None,
        segment: None,
        clock_offset_ms: None,
        tool: Tool {
            name: "perfbase".into(),
            version: "0.1.0".into(),
        },
        started_at: format!("2025-10-29T10:00:0{seed}.123Z"),
        target: "http://127.0.0.1:8080/api?token=[redacted]".into(),
        protocol: "http".into(),
        model,
        config: LoadConfig {
            threads: 2,
            connections: (!open).then_some(8),
            rate: open.then_some(33.3),
            max_inflight: open.then_some(64),
            duration_s: Some(2.0),
            count: None,
            warmup_s: 0.5,
            timeout_s: 2.0,
            pacing_granularity_s: open.then_some(0.001),
            protocol,
        },
        interrupted: seed == 2,
        measurement: m.clone(),
        phases: vec![PhaseResult {
            name: format!("ramp step {seed}"),
            model,
            scenario: Some("ramp".into()),
            step: Some(0),
            repetition: Some(1),
            offered_rate: Some(0.1 + 0.2),
            offered_connections: None,
            measurement: m,
        }],
        study: Some(perfbase_core::study::Study {
            plan: "checkout".into(),
            scale: 0.1 + 0.2,
            slo: vec!["p99 < 250ms".into()],
            knee_rule: perfbase_core::study::KneeRule {
                min_throughput_ratio: 1.0 / 3.0,
                p99_factor: 123_456.789,
                max_error_ratio: 1e-300,
                min_gain: -0.0,
                trend_factor: 1.25,
            },
            scenarios: Vec::new(),
            checks: Vec::new(),
            passed: true,
            rankings: Vec::new(),
            versus: Vec::new(),
        }),
        monitor: None,
        env: Env {
            cpu_model: "Test CPU @ 3.0GHz".into(),
            cores: 8,
            memory_bytes: 16 << 30,
            os: "linux".into(),
            kernel: "6.1.0".into(),
            hostname: "bench-1".into(),
            tool_version: "0.1.0".into(),
        },
    }
}

fn labels_a() -> Labels {
    Labels::new()
        .with("service", "api")
        .with("env", "ci")
        .with("version", "1.0")
}
fn labels_b() -> Labels {
    Labels::new().with("service", "web").with("env", "ci")
}
fn labels_c() -> Labels {
    Labels::new()
        .with("service", "api")
        .with("env", "dev")
        .with("version", "1.1")
        .with("tag", "nightly build")
}

fn filter(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn ids(runs: &[RunSummary]) -> Vec<RunId> {
    runs.iter().map(|r| r.id).collect()
}

/// Saves the three sample runs (api/ci, web/ci, api/dev) and returns their ids.
fn save_three(s: &mut Store) -> ([RunId; 3], [RunResult; 3]) {
    let results = [
        sample_result(1, false),
        sample_result(2, true),
        sample_result(3, false),
    ];
    let a = s.save("http", &results[0], &labels_a()).unwrap();
    let b = s.save("plan", &results[1], &labels_b()).unwrap();
    let c = s.save("demo", &results[2], &labels_c()).unwrap();
    ([a, b, c], results)
}

fn count(s: &mut Store, table: &str) -> i64 {
    s.raw(|db| db.query(&format!("SELECT count(*) FROM {table}"), &[]))
        .unwrap()
        .first()
        .and_then(|r| match r.first() {
            Some(Val::Int(n)) => Some(*n),
            _ => None,
        })
        .unwrap()
}

// ---- checks shared by both databases ----

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

fn check_history(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    assert!(s.history(&[], 10).unwrap().is_empty());
    let ([a, b, c], _) = save_three(&mut s);
    assert_eq!(ids(&s.history(&[], 0).unwrap()), vec![c, b, a]);
    assert_eq!(ids(&s.history(&[], 2).unwrap()), vec![c, b]);
    assert_eq!(
        ids(&s.history(&filter(&[("service", "api")]), 10).unwrap()),
        vec![c, a]
    );
    assert_eq!(
        ids(&s
            .history(&filter(&[("service", "api"), ("env", "ci")]), 10)
            .unwrap()),
        vec![a]
    );
    assert_eq!(
        ids(&s.history(&filter(&[("env", "ci")]), 1).unwrap()),
        vec![b]
    );
    assert_eq!(
        ids(&s.history(&filter(&[("tag", "nightly build")]), 0).unwrap()),
        vec![c]
    );
    assert!(s
        .history(&filter(&[("service", "nope")]), 0)
        .unwrap()
        .is_empty());
    assert!(s
        .history(&filter(&[("service", "api"), ("service", "web")]), 0)
        .unwrap()
        .is_empty());
    let all = s.history(&[], 0).unwrap();
    assert_eq!(all[0].labels, labels_c().0);
    assert_eq!(all[1].kind, "plan");
    assert_eq!(all[2].model, "closed");
}

fn check_baselines(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    let ([a, b, c], [ra, _, rc]) = save_three(&mut s);

    let err = s.baseline("release").unwrap_err();
    assert!(matches!(&err, StoreError::NoBaseline(n) if n == "release"));
    assert!(
        err.to_string()
            .contains("set one with `perfbase baseline set release RUN`"),
        "{err}"
    );

    s.set_baseline("release", a).unwrap();
    let got = s.baseline("release").unwrap();
    assert_eq!((got.summary.id, &got.result), (a, &ra));

    s.set_baseline("release", c).unwrap();
    let got = s.baseline("release").unwrap();
    assert_eq!((got.summary.id, &got.result), (c, &rc));
    s.set_baseline("nightly", b).unwrap();

    let list = s.baselines().unwrap();
    let names: Vec<(&str, RunId)> = list.iter().map(|(n, id, _)| (n.as_str(), *id)).collect();
    assert_eq!(names, vec![("nightly", b), ("release", c)]);
    assert!(list.iter().all(|(_, _, at)| at.ends_with('Z')));

    let hist: Vec<RunId> = s
        .baseline_history("release")
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(hist, vec![c, a]);
    assert!(s.baseline_history("never").unwrap().is_empty());

    let err = s.set_baseline("release", 99_999).unwrap_err();
    assert!(
        matches!(&err, StoreError::NotFound(r) if r == "99999"),
        "{err}"
    );
    assert_eq!(s.baseline("release").unwrap().summary.id, c);
    assert!(matches!(
        s.set_baseline("", a).unwrap_err(),
        StoreError::Invalid(_)
    ));
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
    let got = s.get(&RunRef::Id(a)).unwrap();
    assert_eq!(got.result, ra);
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

// ---- SQLite ----

/// A store location two folders deep in a fresh temporary folder (the folders do not exist).
fn sqlite_location() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join(".perfbase")
        .join("nested")
        .join("results.db");
    let loc = path.to_str().unwrap().to_string();
    (dir, loc)
}

#[test]
fn sqlite_round_trip() {
    let (_dir, loc) = sqlite_location();
    check_round_trip(&loc);
}

#[test]
fn sqlite_history() {
    let (_dir, loc) = sqlite_location();
    check_history(&loc);
}

#[test]
fn sqlite_baselines() {
    let (_dir, loc) = sqlite_location();
    check_baselines(&loc);
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
fn sqlite_creates_folders_and_uses_wal() {
    let (dir, loc) = sqlite_location();
    let mut s = Store::open(&loc).unwrap();
    assert!(std::path::Path::new(&loc).is_file());
    assert_eq!(s.database_name(), "sqlite");
    assert_eq!(s.location(), loc);
    let mode = s
        .raw(|db| db.query("PRAGMA journal_mode", &[]))
        .unwrap()
        .remove(0)
        .remove(0);
    assert_eq!(mode, Val::text("wal"));
    drop(s);
    // A folder where the file should be is an Open error naming the location.
    let folder = dir.path().join("a-folder");
    std::fs::create_dir_all(&folder).unwrap();
    let err = Store::open(folder.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err}");
    assert!(err.to_string().contains("a-folder"), "{err}");
}

#[test]
fn sqlite_not_a_database_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.json");
    std::fs::write(
        &path,
        "{\"schema\": \"perfbase.result/v1\"} and more text to fill a page",
    )
    .unwrap();
    let err = Store::open(path.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err}");
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

// ---- PostgreSQL ----

/// The test server's URL, or None (with a note) when it is not configured; with
/// `PERFBASE_REQUIRE_SERVICES=1` a missing server fails the test instead.
fn pg_url() -> Option<String> {
    match std::env::var("PERFBASE_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            if std::env::var("PERFBASE_REQUIRE_SERVICES").as_deref() == Ok("1") {
                panic!(
                    "PERFBASE_POSTGRES_URL is not set: run scripts/services.sh up, then \
                     eval \"$(scripts/services.sh env)\""
                );
            }
            eprintln!(
                "note: PERFBASE_POSTGRES_URL is not set; PostgreSQL store test skipped (run \
                 scripts/services.sh up)"
            );
            None
        }
    }
}

/// A fresh schema on the test server, dropped when this goes out of scope; `location` is the
/// server URL with `search_path` set to it, so the store's tables land there.
struct PgSchema {
    admin: postgres::Client,
    name: String,
    location: String,
}

impl PgSchema {
    fn new(url: &str) -> PgSchema {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "perfbase_store_test_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        let mut admin = postgres::Client::connect(url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("connect to {}: {e}", redact_location(url)));
        admin
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
            ))
            .unwrap();
        let sep = if url.contains('?') { '&' } else { '?' };
        let location = format!("{url}{sep}options=-csearch_path%3D{name}");
        PgSchema {
            admin,
            name,
            location,
        }
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let _ = self
            .admin
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name));
    }
}

/// Runs `check` against a fresh schema on the test server (or skips, see [`pg_url`]).
fn on_postgres(check: fn(&str)) {
    let Some(url) = pg_url() else { return };
    let schema = PgSchema::new(&url);
    check(&schema.location);
    // The tables really are in the test schema, not in the server's public one.
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let n: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1 \
             AND tablename = 'runs'",
            &[&schema.name],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

#[test]
fn postgres_round_trip() {
    on_postgres(check_round_trip);
}

#[test]
fn postgres_history() {
    on_postgres(check_history);
}

#[test]
fn postgres_baselines() {
    on_postgres(check_baselines);
}

#[test]
fn postgres_not_found() {
    on_postgres(check_not_found);
}

#[test]
fn postgres_atomic_save() {
    on_postgres(check_atomic_save);
}

#[test]
fn postgres_migration_from_v1() {
    on_postgres(check_migration_from_v1);
}

#[test]
fn postgres_newer_schema_is_refused() {
    on_postgres(check_newer_schema);
}

#[test]
fn postgres_wrong_password_is_not_shown() {
    let Some(url) = pg_url() else { return };
    // Same server and user, another password.
    let (scheme, rest) = url.split_once("://").unwrap();
    let (userinfo, host) = rest.rsplit_once('@').unwrap();
    let user = userinfo.split(':').next().unwrap();
    let secret = "Wr0ngS3cretPassw0rd";
    let bad = format!("{scheme}://{user}:{secret}@{host}");
    let err = Store::open(&bad).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err}");
    let text = format!("{err} {err:?}");
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    assert!(text.contains("password authentication failed"), "{text}");
    // The right password opens (in a schema of its own, leaving the server's public one be).
    let schema = PgSchema::new(&url);
    let good = Store::open(&schema.location).unwrap();
    assert_eq!(good.database_name(), "postgres");
    assert!(!format!("{good:?}").contains(secret));
}

// ---- locations, references, labels ----

#[test]
fn redact_location_hides_passwords() {
    let r = redact_location("postgres://u:secret@127.0.0.1/db");
    assert!(!r.contains("secret"), "{r}");
    assert_eq!(r, "postgres://u:[redacted]@127.0.0.1/db");
    let r = redact_location(
        "postgresql://bench:s3cr%40t@db.internal:5432/perf?password=other1&sslmode=disable",
    );
    assert!(!r.contains("s3cr") && !r.contains("other1"), "{r}");
    assert!(r.contains("sslmode=disable"), "{r}");
    assert_eq!(
        redact_location(".perfbase/results.db"),
        ".perfbase/results.db"
    );
}

#[test]
fn bad_postgres_urls_keep_passwords_out_of_errors() {
    for loc in [
        // Nothing listens on port 1: connection refused.
        "postgres://u:secret@127.0.0.1:1/db",
        "postgresql://u:secret@127.0.0.1:1/db?connect_timeout=2",
        // Does not parse.
        "postgres://u:secret@127.0.0.1:notaport/db",
        "postgres://u@127.0.0.1:1/db?password=secret&connect_timeout=2",
        "postgres://u:secret@127.0.0.1:1/db?sslmode=bogus",
    ] {
        let err = Store::open(loc).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{loc}: {err}");
        let text = format!("{err} | {err:?}");
        assert!(!text.contains("secret"), "{loc}: {text}");
        assert!(text.contains("127.0.0.1"), "{loc}: {text}");
    }
    let err = Store::open("mysql://u:secret@127.0.0.1/db").unwrap_err();
    assert!(!err.to_string().contains("secret"), "{err}");
    assert!(err.to_string().contains("postgres://"), "{err}");
}

#[test]
fn run_refs_parse_and_print() {
    assert_eq!("42".parse::<RunRef>().unwrap(), RunRef::Id(42));
    assert_eq!(" latest ".parse::<RunRef>().unwrap(), RunRef::Latest);
    let r: RunRef = "latest:service=api,env=ci".parse().unwrap();
    assert_eq!(
        r,
        RunRef::LatestWith(filter(&[("service", "api"), ("env", "ci")]))
    );
    assert_eq!(r.to_string(), "latest:service=api,env=ci");
    assert_eq!(RunRef::Id(7).to_string(), "7");
    for bad in [
        "",
        "0",
        "-3",
        "newest",
        "latest:",
        "latest:service",
        "latest:=x",
        "4x",
    ] {
        let err = bad.parse::<RunRef>().unwrap_err();
        assert!(err.to_string().contains("latest:KEY=VALUE"), "{bad}: {err}");
    }
}

#[test]
fn labels_parse() {
    assert_eq!(
        parse_label(" version = 1.4.2 ").unwrap(),
        ("version".to_string(), "1.4.2".to_string())
    );
    assert_eq!(
        parse_label("note=").unwrap(),
        ("note".to_string(), String::new())
    );
    assert!(parse_label("service").is_err());
    assert!(parse_label("=api").is_err());
    assert!(parse_label("my key=x").is_err());
    let l = Labels::from_pairs(&["service=api", "env=ci", "service=web"]).unwrap();
    assert_eq!(l, Labels::new().with("env", "ci").with("service", "web"));
    assert_eq!(
        serde_json::to_string(&l).unwrap(),
        r#"{"env":"ci","service":"web"}"#
    );
}

#[test]
fn placeholders_become_sqlite_numbered() {
    assert_eq!(
        sqlite_placeholders("SELECT a FROM t WHERE b = $1 AND c = $12 LIMIT $3"),
        "SELECT a FROM t WHERE b = ?1 AND c = ?12 LIMIT ?3"
    );
    assert_eq!(sqlite_placeholders("SELECT '$x'"), "SELECT '$x'");
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
    let c = s
        .save("http", &sample_result(3, false), &labels_c())
        .unwrap();
    assert_eq!(
        ids(&s.history(&filter(&[("service", "api")]), 0).unwrap()),
        vec![c, 1]
    );
}

/// The agents' barrier: arrivals per run, renewed on a second arrival, on the store's clock
/// (which, on PostgreSQL, is the server's and agrees with this machine's here).
fn check_barrier(loc: &str) {
    let mut s = Store::open(loc).unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let clock = s.clock_ms().unwrap();
    assert!(
        (clock - before).abs() < 5_000,
        "store clock {clock} vs {before}"
    );
    assert!(s.arrivals("r1").unwrap().is_empty());
    s.arrive("r1", "0/2").unwrap();
    s.arrive("r2", "0/2").unwrap();
    let first = s.arrivals("r1").unwrap();
    assert_eq!(first.len(), 1);
    assert!(first[0].1 >= clock);
    std::thread::sleep(std::time::Duration::from_millis(20));
    s.arrive("r1", "1/2").unwrap();
    s.arrive("r1", "0/2").unwrap();
    let both = s.arrivals("r1").unwrap();
    assert_eq!(
        both.iter().map(|(seg, _)| seg.as_str()).collect::<Vec<_>>(),
        ["0/2", "1/2"]
    );
    assert!(both[0].1 > first[0].1, "a second arrival renews the time");
}

#[test]
fn sqlite_barrier() {
    let (_dir, loc) = sqlite_location();
    check_barrier(&loc);
}

#[test]
fn postgres_barrier() {
    on_postgres(check_barrier);
}
