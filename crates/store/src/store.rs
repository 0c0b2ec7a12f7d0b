//! [`Store`]: opening (and migrating) a results database, saving runs, reading them back,
//! listing history and keeping named baselines.

use crate::backend::{pg_err, sqlite_err, Kind, PgTx, Row, SqliteTx, Tx, Val};
use crate::error::{chain, scrub, Cause, StoreError};
use crate::schema::{self, MIGRATIONS, SCHEMA_VERSION};
use crate::{
    is_postgres_url, location_secrets, redact_location, valid_label_key, Labels, RunId, RunRef,
    RunSummary, StoredRun,
};
use perfbase_core::clock::now_rfc3339;
use perfbase_core::result::RunResult;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// How long SQLite waits for another writer, and how long a PostgreSQL connection attempt
/// may take (unless the URL sets `connect_timeout`).
const WAIT: Duration = Duration::from_secs(10);

/// The summary columns, in the order [`summary_from_row`] reads them.
const SUMMARY_COLUMNS: &str = "runs.id, runs.saved_at, runs.started_at, runs.kind, \
     runs.target, runs.model, runs.requests, runs.rps, runs.success_ratio, runs.p50_ms, \
     runs.p95_ms, runs.p99_ms, runs.interrupted, runs.labels_json";
const SUMMARY_LEN: usize = 14;

enum Backend {
    Sqlite(rusqlite::Connection),
    Postgres(postgres::Client),
}

/// An open results database (SQLite file or PostgreSQL), at the current schema version.
pub struct Store {
    backend: Backend,
    /// The location with its password redacted, for messages.
    location: String,
    /// The location's passwords, scrubbed from every error text.
    secrets: Vec<String>,
    /// The schema version after opening (always [`SCHEMA_VERSION`] outside tests).
    version: u32,
    /// Test hook: make the next saves fail right after the `runs` insert.
    #[cfg(test)]
    pub(crate) fail_after_runs_insert: bool,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend_name())
            .field("location", &self.location)
            .field("schema_version", &self.version)
            .finish()
    }
}

/// A run ready to be inserted.
struct NewRun<'a> {
    saved_at: String,
    kind: &'a str,
    result: &'a RunResult,
    requests: i64,
    labels_json: String,
    result_json: String,
}

impl Store {
    /// Opens the store at `location`: a `postgres://` or `postgresql://` URL, or else a file
    /// path (SQLite; the file and its parent folders are created when missing). Creates the
    /// tables and applies pending migrations. A store whose schema is newer than this
    /// perfbase's is refused with [`StoreError::NewerSchema`].
    pub fn open(location: &str) -> Result<Store, StoreError> {
        Store::open_upto(location, SCHEMA_VERSION)
    }

    /// Opens and migrates only up to `version` (tests of migrations from older layouts).
    #[cfg(test)]
    pub(crate) fn open_at_version(location: &str, version: u32) -> Result<Store, StoreError> {
        Store::open_upto(location, version)
    }

    fn open_upto(location: &str, target: u32) -> Result<Store, StoreError> {
        let mut store = Store::connect(location)?;
        match store.migrate(target) {
            Ok(()) => Ok(store),
            Err(StoreError::Db(msg)) => Err(StoreError::Open {
                location: store.location.clone(),
                source: Cause(format!("{msg}; {}", remedy(location))),
            }),
            Err(e) => Err(e),
        }
    }

    fn connect(location: &str) -> Result<Store, StoreError> {
        let redacted = redact_location(location);
        let secrets = location_secrets(location);
        let open_err = |msg: String| StoreError::Open {
            location: redacted.clone(),
            source: Cause(format!("{}; {}", scrub(&msg, &secrets), remedy(location))),
        };
        let backend = if is_postgres_url(location) {
            let mut config: postgres::Config = location
                .trim()
                .parse()
                .map_err(|e: postgres::Error| open_err(chain(&e)))?;
            if config.get_connect_timeout().is_none() {
                config.connect_timeout(WAIT);
            }
            if config.get_application_name().is_none() {
                config.application_name("perfbase");
            }
            let client = config
                .connect(postgres::NoTls)
                .map_err(|e| open_err(chain(&e)))?;
            Backend::Postgres(client)
        } else if location.contains("://") {
            return Err(open_err(
                "not a file path nor a postgres:// or postgresql:// URL".into(),
            ));
        } else if location.trim().is_empty() {
            return Err(open_err("the location is empty".into()));
        } else {
            let path = Path::new(location);
            if let Some(parent) = path.parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        open_err(format!("cannot create folder {}: {e}", parent.display()))
                    })?;
                }
            }
            let conn = rusqlite::Connection::open(path).map_err(|e| open_err(chain(&e)))?;
            conn.busy_timeout(WAIT).map_err(|e| open_err(chain(&e)))?;
            // WAL lets readers (history, reports) run while a save writes. A filesystem
            // without shared memory keeps its old journal mode; that is slower, not wrong.
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                .map_err(|e| open_err(chain(&e)))?;
            conn.execute_batch("PRAGMA foreign_keys = ON;")
                .map_err(|e| open_err(chain(&e)))?;
            Backend::Sqlite(conn)
        };
        Ok(Store {
            backend,
            location: redacted,
            secrets,
            version: 0,
            #[cfg(test)]
            fail_after_runs_insert: false,
        })
    }

    /// The store's schema version (after opening: [`SCHEMA_VERSION`]).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Ok(self.version)
    }

    /// The location, password redacted.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// `sqlite` or `postgres`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// Saves a run with its labels in one transaction and returns its id. `kind` says what
    /// produced it (`http`, `plan`, `demo`). A result that would not read back exactly (a
    /// non-finite number, which JSON cannot hold) is refused before anything is written.
    pub fn save(
        &mut self,
        kind: &str,
        result: &RunResult,
        labels: &Labels,
    ) -> Result<RunId, StoreError> {
        if kind.trim().is_empty() {
            return Err(StoreError::Invalid(
                "a run needs a kind (http, plan, demo)".into(),
            ));
        }
        if let Some(bad) = labels.0.keys().find(|k| !valid_label_key(k)) {
            return Err(StoreError::Invalid(format!(
                "label key '{bad}' must be non-empty and contain no '=', ',' or spaces"
            )));
        }
        let result_json = serde_json::to_string(result)
            .map_err(|e| StoreError::Invalid(format!("the result does not encode: {e}")))?;
        // serde_json writes NaN and infinities as null, which would not read back: check now
        // rather than keep a run that can never be reread.
        serde_json::from_str::<RunResult>(&result_json).map_err(|e| {
            StoreError::Invalid(format!(
                "the result does not read back from JSON ({e}); does it hold a NaN or an \
                 infinite number?"
            ))
        })?;
        let labels_json = serde_json::to_string(&labels.0)
            .map_err(|e| StoreError::Invalid(format!("the labels do not encode: {e}")))?;
        let requests = i64::try_from(result.measurement.requests).map_err(|_| {
            StoreError::Invalid(format!(
                "{} requests is more than the store can count",
                result.measurement.requests
            ))
        })?;
        let run = NewRun {
            saved_at: now_rfc3339(),
            kind: kind.trim(),
            result,
            requests,
            labels_json,
            result_json,
        };
        #[cfg(test)]
        let inject_failure = self.fail_after_runs_insert;
        #[cfg(not(test))]
        let inject_failure = false;
        self.tx(true, |db| {
            let id = insert_run(db, &run)?;
            if inject_failure {
                return Err(StoreError::Db(
                    "injected failure after the runs insert (test hook)".into(),
                ));
            }
            insert_labels(db, id, labels)?;
            Ok(id)
        })
    }

    /// Reads one run back in full.
    pub fn get(&mut self, r: &RunRef) -> Result<StoredRun, StoreError> {
        let found = self.tx(false, |db| match r {
            RunRef::Id(id) => select_by_id(db, *id),
            RunRef::Latest => Ok(select_runs(db, &[], Some(1), true)?.into_iter().next()),
            RunRef::LatestWith(filter) => {
                Ok(select_runs(db, filter, Some(1), true)?.into_iter().next())
            }
        })?;
        let (summary, json) = found.ok_or_else(|| StoreError::NotFound(r.to_string()))?;
        stored_run(summary, json)
    }

    /// Runs newest first, those carrying every `filter` label (key = value); at most `limit`
    /// of them, all when `limit` is 0.
    pub fn history(
        &mut self,
        filter: &[(String, String)],
        limit: usize,
    ) -> Result<Vec<RunSummary>, StoreError> {
        let limit = match limit {
            0 => None,
            n => Some(i64::try_from(n).unwrap_or(i64::MAX)),
        };
        let rows = self.tx(false, |db| select_runs(db, filter, limit, false))?;
        Ok(rows.into_iter().map(|(s, _)| s).collect())
    }

    /// Points baseline `name` at run `run`, replacing where it pointed before; every setting
    /// is also kept in the baseline's history.
    pub fn set_baseline(&mut self, name: &str, run: RunId) -> Result<(), StoreError> {
        if name.trim().is_empty() || name.trim() != name || name.chars().any(char::is_control) {
            return Err(StoreError::Invalid(format!(
                "baseline name '{name}' must be non-empty, without surrounding spaces"
            )));
        }
        self.tx(true, |db| {
            if db
                .query("SELECT id FROM runs WHERE id = $1", &[Val::Int(run)])?
                .is_empty()
            {
                return Err(StoreError::NotFound(run.to_string()));
            }
            let set_at = now_rfc3339();
            db.execute(
                "INSERT INTO baselines (name, run_id, set_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, \
                 set_at = excluded.set_at",
                &[Val::text(name), Val::Int(run), Val::text(set_at.as_str())],
            )?;
            db.execute(
                "INSERT INTO baseline_history (name, run_id, set_at) VALUES ($1, $2, $3)",
                &[Val::text(name), Val::Int(run), Val::text(set_at)],
            )?;
            Ok(())
        })
    }

    /// The run baseline `name` points at.
    pub fn baseline(&mut self, name: &str) -> Result<StoredRun, StoreError> {
        let found = self.tx(false, |db| {
            let rows = db.query(
                "SELECT run_id FROM baselines WHERE name = $1",
                &[Val::text(name)],
            )?;
            let Some(row) = rows.first() else {
                return Err(StoreError::NoBaseline(name.to_string()));
            };
            let id = int(row, 0, "baselines.run_id")?;
            select_by_id(db, id)?.ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "baseline '{name}' points at run {id}, which is gone"
                ))
            })
        })?;
        stored_run(found.0, found.1)
    }

    /// Every baseline: name, run id and when it was set, by name.
    pub fn baselines(&mut self) -> Result<Vec<(String, RunId, String)>, StoreError> {
        let rows = self.tx(false, |db| {
            db.query(
                "SELECT name, run_id, set_at FROM baselines ORDER BY name",
                &[],
            )
        })?;
        rows.iter()
            .map(|r| {
                Ok((
                    text(r, 0, "baselines.name")?,
                    int(r, 1, "baselines.run_id")?,
                    text(r, 2, "baselines.set_at")?,
                ))
            })
            .collect()
    }

    /// Where baseline `name` has pointed: run id and when it was set, newest first (empty
    /// when it was never set).
    pub fn baseline_history(&mut self, name: &str) -> Result<Vec<(RunId, String)>, StoreError> {
        let rows = self.tx(false, |db| {
            db.query(
                "SELECT run_id, set_at FROM baseline_history WHERE name = $1 ORDER BY id DESC",
                &[Val::text(name)],
            )
        })?;
        rows.iter()
            .map(|r| {
                Ok((
                    int(r, 0, "baseline_history.run_id")?,
                    text(r, 1, "baseline_history.set_at")?,
                ))
            })
            .collect()
    }

    /// Runs `f` in one transaction, committed when it returns `Ok` and rolled back otherwise
    /// (also when the process dies before the commit). Writes take SQLite's write lock up
    /// front, so two writers queue (up to the busy timeout) instead of failing on upgrade;
    /// PostgreSQL reads run in read-only transactions.
    pub(crate) fn tx<T>(
        &mut self,
        write: bool,
        f: impl FnOnce(&mut dyn Tx) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match &mut self.backend {
            Backend::Sqlite(conn) => {
                let behavior = if write {
                    rusqlite::TransactionBehavior::Immediate
                } else {
                    rusqlite::TransactionBehavior::Deferred
                };
                let tx = conn
                    .transaction_with_behavior(behavior)
                    .map_err(|e| sqlite_err(&e))?;
                let mut tx = SqliteTx(tx);
                let out = f(&mut tx)?;
                tx.0.commit().map_err(|e| sqlite_err(&e))?;
                Ok(out)
            }
            Backend::Postgres(client) => {
                let secrets = self.secrets.as_slice();
                let tx = client
                    .build_transaction()
                    .read_only(!write)
                    .start()
                    .map_err(|e| pg_err(&e, secrets))?;
                let mut tx = PgTx { tx, secrets };
                let out = f(&mut tx)?;
                tx.tx.commit().map_err(|e| pg_err(&e, secrets))?;
                Ok(out)
            }
        }
    }

    /// Brings the schema up to `target`: first a read-only look (so an up-to-date store on
    /// read-only media opens, and a newer one is refused before anything is written), then one
    /// transaction per pending migration.
    fn migrate(&mut self, target: u32) -> Result<(), StoreError> {
        let found = self.tx(false, read_version)?;
        if found > SCHEMA_VERSION {
            return Err(newer(found));
        }
        self.version = found;
        while self.version < target {
            self.version = self.tx(true, |db| {
                let (meta, lock) = match db.kind() {
                    Kind::Sqlite => (schema::META_SQLITE, None),
                    Kind::Postgres => (schema::META_POSTGRES, Some(schema::PG_MIGRATION_LOCK)),
                };
                if let Some(lock) = lock {
                    db.batch(lock)?;
                }
                db.batch(meta)?;
                // Read again under the lock: another process may have migrated meanwhile.
                let v = read_version(db)?;
                if v > SCHEMA_VERSION {
                    return Err(newer(v));
                }
                if v >= target {
                    return Ok(v);
                }
                let m = MIGRATIONS
                    .iter()
                    .find(|m| m.version == v + 1)
                    .ok_or_else(|| {
                        StoreError::Corrupt(format!("no migration from schema version {v}"))
                    })?;
                db.batch(match db.kind() {
                    Kind::Sqlite => m.sqlite,
                    Kind::Postgres => m.postgres,
                })?;
                db.execute(
                    "UPDATE perfbase_meta SET schema_version = $1 WHERE id = 1",
                    &[Val::Int(i64::from(m.version))],
                )?;
                Ok(m.version)
            })?;
        }
        Ok(())
    }
}

/// What to check when a store does not open, for the kind of location given.
fn remedy(location: &str) -> &'static str {
    if is_postgres_url(location) {
        "check that the PostgreSQL server runs and accepts connections, and that the URL's \
         host, port, user, password and database are right"
    } else if location.contains("://") {
        "give a file path (e.g. .perfbase/results.db) or a postgres:// or postgresql:// URL"
    } else {
        "check that the path names a file (not a folder) in a writable folder, and that the \
         file is a perfbase results database"
    }
}

fn newer(found: u32) -> StoreError {
    StoreError::NewerSchema {
        found,
        supported: SCHEMA_VERSION,
    }
}

/// The recorded schema version; 0 for a database perfbase has not set up yet.
pub(crate) fn read_version(db: &mut dyn Tx) -> Result<u32, StoreError> {
    let has_meta = match db.kind() {
        Kind::Sqlite => schema::HAS_META_SQLITE,
        Kind::Postgres => schema::HAS_META_POSTGRES,
    };
    let rows = db.query(has_meta, &[])?;
    let tables = rows
        .first()
        .map(|r| int(r, 0, "table count"))
        .transpose()?
        .unwrap_or(0);
    if tables == 0 {
        return Ok(0);
    }
    let rows = db.query("SELECT schema_version FROM perfbase_meta WHERE id = 1", &[])?;
    match rows.first() {
        None => Ok(0),
        Some(r) => {
            let v = int(r, 0, "perfbase_meta.schema_version")?;
            u32::try_from(v)
                .map_err(|_| StoreError::Corrupt(format!("schema version {v} is not a version")))
        }
    }
}

/// Inserts the `runs` row and returns its id.
fn insert_run(db: &mut dyn Tx, run: &NewRun<'_>) -> Result<RunId, StoreError> {
    let m = &run.result.measurement;
    let rows = db.query(
        "INSERT INTO runs (saved_at, started_at, kind, target, model, requests, rps, \
         success_ratio, p50_ms, p95_ms, p99_ms, interrupted, labels_json, result_json) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id",
        &[
            Val::text(run.saved_at.as_str()),
            Val::text(run.result.started_at.as_str()),
            Val::text(run.kind),
            Val::text(run.result.target.as_str()),
            Val::text(run.result.model.name()),
            Val::Int(run.requests),
            Val::Real(m.rps),
            Val::Real(m.success_ratio),
            Val::Real(m.latency_ms.p50),
            Val::Real(m.latency_ms.p95),
            Val::Real(m.latency_ms.p99),
            Val::Bool(run.result.interrupted),
            Val::text(run.labels_json.as_str()),
            Val::text(run.result_json.as_str()),
        ],
    )?;
    rows.first()
        .map(|r| int(r, 0, "runs.id"))
        .transpose()?
        .ok_or_else(|| StoreError::Db("the insert returned no run id".into()))
}

/// Inserts a run's labels into `run_labels` (schema v2), which history filters on.
fn insert_labels(db: &mut dyn Tx, id: RunId, labels: &Labels) -> Result<(), StoreError> {
    for (k, v) in &labels.0 {
        db.execute(
            "INSERT INTO run_labels (run_id, key, value) VALUES ($1, $2, $3)",
            &[Val::Int(id), Val::text(k.as_str()), Val::text(v.as_str())],
        )?;
    }
    Ok(())
}

/// One run by id, with its result JSON.
fn select_by_id(
    db: &mut dyn Tx,
    id: RunId,
) -> Result<Option<(RunSummary, Option<String>)>, StoreError> {
    let sql = format!("SELECT {SUMMARY_COLUMNS}, runs.result_json FROM runs WHERE runs.id = $1");
    let rows = db.query(&sql, &[Val::Int(id)])?;
    rows.first().map(|r| summary_and_json(r, true)).transpose()
}

/// Runs newest first having every `filter` label, at most `limit`; with the result JSON when
/// `with_result`.
fn select_runs(
    db: &mut dyn Tx,
    filter: &[(String, String)],
    limit: Option<i64>,
    with_result: bool,
) -> Result<Vec<(RunSummary, Option<String>)>, StoreError> {
    let mut sql = format!("SELECT {SUMMARY_COLUMNS}");
    if with_result {
        sql.push_str(", runs.result_json");
    }
    sql.push_str(" FROM runs");
    let mut params = Vec::new();
    for (i, (k, v)) in filter.iter().enumerate() {
        sql.push_str(if i == 0 { " WHERE " } else { " AND " });
        let n = params.len() + 1;
        sql.push_str(&format!(
            "EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = runs.id \
             AND l.key = ${n} AND l.value = ${})",
            n + 1
        ));
        params.push(Val::text(k.as_str()));
        params.push(Val::text(v.as_str()));
    }
    sql.push_str(" ORDER BY runs.id DESC");
    if let Some(limit) = limit {
        sql.push_str(&format!(" LIMIT ${}", params.len() + 1));
        params.push(Val::Int(limit));
    }
    let rows = db.query(&sql, &params)?;
    rows.iter()
        .map(|r| summary_and_json(r, with_result))
        .collect()
}

fn summary_and_json(
    row: &Row,
    with_result: bool,
) -> Result<(RunSummary, Option<String>), StoreError> {
    let summary = summary_from_row(row)?;
    let json = if with_result {
        Some(text(row, SUMMARY_LEN, "runs.result_json")?)
    } else {
        None
    };
    Ok((summary, json))
}

fn summary_from_row(row: &Row) -> Result<RunSummary, StoreError> {
    let id = int(row, 0, "runs.id")?;
    let labels_json = text(row, 13, "runs.labels_json")?;
    let labels: BTreeMap<String, String> = serde_json::from_str(&labels_json)
        .map_err(|e| StoreError::Corrupt(format!("run {id}: labels do not parse: {e}")))?;
    let requests = int(row, 6, "runs.requests")?;
    Ok(RunSummary {
        id,
        saved_at: text(row, 1, "runs.saved_at")?,
        started_at: text(row, 2, "runs.started_at")?,
        kind: text(row, 3, "runs.kind")?,
        target: text(row, 4, "runs.target")?,
        model: text(row, 5, "runs.model")?,
        requests: u64::try_from(requests)
            .map_err(|_| StoreError::Corrupt(format!("run {id}: {requests} requests")))?,
        rps: real(row, 7, "runs.rps")?,
        success_ratio: real(row, 8, "runs.success_ratio")?,
        p50_ms: real(row, 9, "runs.p50_ms")?,
        p95_ms: real(row, 10, "runs.p95_ms")?,
        p99_ms: real(row, 11, "runs.p99_ms")?,
        interrupted: boolean(row, 12, "runs.interrupted")?,
        labels,
    })
}

fn stored_run(summary: RunSummary, json: Option<String>) -> Result<StoredRun, StoreError> {
    let id = summary.id;
    let json =
        json.ok_or_else(|| StoreError::Corrupt(format!("run {id}: the result was not read")))?;
    let result = serde_json::from_str(&json).map_err(|e| {
        StoreError::Corrupt(format!("run {id}: the stored result does not parse: {e}"))
    })?;
    Ok(StoredRun { summary, result })
}

fn column<'r>(row: &'r Row, i: usize, what: &str) -> Result<&'r Val, StoreError> {
    row.get(i)
        .ok_or_else(|| StoreError::Corrupt(format!("{what} is missing from the row")))
}

fn int(row: &Row, i: usize, what: &str) -> Result<i64, StoreError> {
    match column(row, i, what)? {
        Val::Int(n) => Ok(*n),
        other => Err(StoreError::Corrupt(format!(
            "{what} is {other:?}, not an integer"
        ))),
    }
}

fn real(row: &Row, i: usize, what: &str) -> Result<f64, StoreError> {
    match column(row, i, what)? {
        Val::Real(f) => Ok(*f),
        // SQLite may hand back a whole REAL as an integer; it is exact below 2^53.
        Val::Int(n) => Ok(*n as f64),
        other => Err(StoreError::Corrupt(format!(
            "{what} is {other:?}, not a number"
        ))),
    }
}

fn text(row: &Row, i: usize, what: &str) -> Result<String, StoreError> {
    match column(row, i, what)? {
        Val::Text(s) => Ok(s.clone()),
        other => Err(StoreError::Corrupt(format!(
            "{what} is {other:?}, not text"
        ))),
    }
}

fn boolean(row: &Row, i: usize, what: &str) -> Result<bool, StoreError> {
    match column(row, i, what)? {
        Val::Bool(b) => Ok(*b),
        Val::Int(0) => Ok(false),
        Val::Int(1) => Ok(true),
        other => Err(StoreError::Corrupt(format!(
            "{what} is {other:?}, not a boolean"
        ))),
    }
}

#[cfg(test)]
impl Store {
    /// Test access to the raw database (one transaction).
    pub(crate) fn raw<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Tx) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.tx(true, f)
    }

    /// Saves in the v1 layout (no `run_labels`), as perfbase at schema v1 did.
    pub(crate) fn save_v1(
        &mut self,
        kind: &str,
        result: &RunResult,
        labels: &Labels,
    ) -> Result<RunId, StoreError> {
        let run = NewRun {
            saved_at: now_rfc3339(),
            kind,
            result,
            requests: i64::try_from(result.measurement.requests).unwrap_or(i64::MAX),
            labels_json: serde_json::to_string(&labels.0)
                .map_err(|e| StoreError::Invalid(e.to_string()))?,
            result_json: serde_json::to_string(result)
                .map_err(|e| StoreError::Invalid(e.to_string()))?,
        };
        self.tx(true, |db| insert_run(db, &run))
    }

    /// Sets a baseline in the v1 layout (no `baseline_history`).
    pub(crate) fn set_baseline_v1(&mut self, name: &str, run: RunId) -> Result<(), StoreError> {
        self.tx(true, |db| {
            db.execute(
                "INSERT INTO baselines (name, run_id, set_at) VALUES ($1, $2, $3)",
                &[Val::text(name), Val::Int(run), Val::text(now_rfc3339())],
            )?;
            Ok(())
        })
    }

    /// The version recorded in the database itself (not the one cached at open).
    pub(crate) fn stored_version(&mut self) -> Result<u32, StoreError> {
        self.tx(false, read_version)
    }
}
