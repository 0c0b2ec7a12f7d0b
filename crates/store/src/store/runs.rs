//! Runs: saving one (with its labels, in one transaction), reading one back, listing history.

use super::row::{boolean, int, real, text};
use super::Store;
use crate::database::{Row, Tx, Val};
use crate::error::StoreError;
use crate::{valid_label_key, Labels, RunId, RunRef, RunSummary, StoredRun};
use perfbase_core::clock::now_rfc3339;
use perfbase_core::result::RunResult;
use perfbase_core::run_outcome::RunOutcome;
use std::collections::BTreeMap;

/// The summary columns, in the order [`summary_from_row`] reads them.
pub(super) const SUMMARY_COLUMNS: &str = "runs.id, runs.saved_at, runs.started_at, runs.kind, \
     runs.target, runs.model, runs.requests, runs.rps, runs.success_ratio, runs.p50_ms, \
     runs.p95_ms, runs.p99_ms, runs.interrupted, runs.labels_json";
pub(super) const SUMMARY_LEN: usize = 14;

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
            let id = insert_run(db, &run, true)?;
            if inject_failure {
                return Err(StoreError::Db(
                    "injected failure after the runs insert (test hook)".into(),
                ));
            }
            insert_labels(db, id, labels)?;
            super::trend::insert_points(db, id, run.result)?;
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
}

/// Inserts the `runs` row and returns its id; with `plan_and_outcome` (schema v6 on), those
/// two columns too.
fn insert_run(
    db: &mut dyn Tx,
    run: &NewRun<'_>,
    plan_and_outcome: bool,
) -> Result<RunId, StoreError> {
    let m = &run.result.measurement;
    let mut params = vec![
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
    ];
    let (columns, values) = if plan_and_outcome {
        params.push(Val::text(crate::points::plan_of(run.result)));
        params.push(Val::text(RunOutcome::of(run.result).name()));
        (", plan, outcome", ", $15, $16")
    } else {
        ("", "")
    };
    let rows = db.query(
        &format!(
            "INSERT INTO runs (saved_at, started_at, kind, target, model, requests, rps, \
             success_ratio, p50_ms, p95_ms, p99_ms, interrupted, labels_json, result_json\
             {columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14\
             {values}) RETURNING id"
        ),
        &params,
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
pub(super) fn select_by_id(
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
        label_condition(&mut sql, &mut params, k, v);
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

/// `EXISTS (…)`: the run carries label `k` = `v`; its two parameters pushed.
pub(super) fn label_condition(sql: &mut String, params: &mut Vec<Val>, k: &str, v: &str) {
    let n = params.len() + 1;
    sql.push_str(&format!(
        "EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = runs.id \
         AND l.key = ${n} AND l.value = ${})",
        n + 1
    ));
    params.push(Val::text(k));
    params.push(Val::text(v));
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

pub(super) fn summary_from_row(row: &Row) -> Result<RunSummary, StoreError> {
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

pub(super) fn stored_run(
    summary: RunSummary,
    json: Option<String>,
) -> Result<StoredRun, StoreError> {
    let id = summary.id;
    let json =
        json.ok_or_else(|| StoreError::Corrupt(format!("run {id}: the result was not read")))?;
    let result = serde_json::from_str(&json).map_err(|e| {
        StoreError::Corrupt(format!("run {id}: the stored result does not parse: {e}"))
    })?;
    Ok(StoredRun { summary, result })
}

#[cfg(test)]
impl Store {
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
        self.tx(true, |db| insert_run(db, &run, false))
    }
}
