//! Tests against real databases: SQLite files in temporary folders, and the PostgreSQL server
//! of `scripts/services.sh` when `PERFBASE_POSTGRES_URL` is set (each test in a schema of its
//! own, created and dropped here, since the test user may not create databases).
//!
//! The store-level checks are written once (`check_*`) and run on both databases. This file
//! holds the fixtures and the two databases' harnesses; the tests are one file per topic:
//!
//! - `saving`: round trips, runs not found, atomic saves, concurrent writers;
//! - `history`: history filtered by labels, and baselines;
//! - `migrations`: stores of schema v1 migrated, newer schemas refused;
//! - `barrier`: the agents' barrier;
//! - `locations`: opening SQLite files and PostgreSQL URLs, passwords kept out of errors;
//! - `parsing`: run references, labels and SQL placeholders.

use crate::database::Val;
use crate::{redact_location, Labels, RunId, RunSummary, Store};
use perfbase_core::result::{Env, LoadConfig, Measurement, Model, PhaseResult, RunResult};
use perfbase_core::{Class, Outcome, Recorder};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

mod barrier;
mod browse;
mod history;
mod locations;
mod migrations;
mod parsing;
mod saving;
mod trend;

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
    let config = LoadConfig {
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
    };
    let target = "http://127.0.0.1:8080/api?token=[redacted]";
    RunResult {
        started_at: format!("2025-10-29T10:00:0{seed}.123Z"),
        interrupted: seed == 2,
        phases: vec![PhaseResult {
            name: format!("ramp step {seed}"),
            model,
            scenario: Some("ramp".into()),
            step: Some(0),
            repetition: Some(1),
            offered_rate: Some(0.1 + 0.2),
            offered_connections: None,
            missing_segments: Vec::new(),
            faults: Vec::new(),
            measurement: m.clone(),
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
            interleaved: Vec::new(),
            noise: None,
        }),
        monitor: None,
        env: Env {
            cpu_model: "Test CPU @ 3.0GHz".into(),
            cores: 8,
            memory_bytes: 16 << 30,
            os: "linux".into(),
            kernel: "6.1.0".into(),
            hostname: "bench-1".into(),
            node: None,
            agents: Vec::new(),
            tool_version: "0.1.0".into(),
            source: Default::default(),
            services: Default::default(),
        },
        ..RunResult::of(target, "http", (model, config), m)
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
