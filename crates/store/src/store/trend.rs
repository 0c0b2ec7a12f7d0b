//! Trends: writing a run's figures and environment (schema v4), reading a selection of them
//! back for `perfbase trend`, and pruning old runs.

use super::row::{int, real, str, text};
use super::Store;
use crate::database::{Tx, Val};
use crate::error::StoreError;
use crate::points::points;
use crate::RunId;
use perfbase_core::result::RunResult;
use std::collections::BTreeMap;

/// Rows per multi-row insert: few round trips to PostgreSQL, far below either database's
/// limit on parameters.
const CHUNK: usize = 200;

/// Which stored figures a trend reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrendQuery {
    /// Only this plan (all plans when `None`).
    pub plan: Option<String>,
    /// Only runs carrying every one of these labels.
    pub labels: Vec<(String, String)>,
    pub scenario: Option<String>,
    pub step: Option<String>,
    /// Only these metrics (all when empty).
    pub metrics: Vec<String>,
    /// Only runs from this id on (a page that shows the newest runs of a long history).
    pub from_run: Option<RunId>,
}

/// A run of the selection, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendRun {
    pub id: RunId,
    pub started_at: String,
    pub labels: BTreeMap<String, String>,
    /// Its environment's fingerprint, and its source (commit, CI build).
    pub env: String,
    pub source: BTreeMap<String, String>,
}

/// What a stored figure is of: the plan, scenario, step and metric of a series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrendKey {
    pub plan: String,
    pub scenario: String,
    pub step: String,
    pub metric: String,
}

/// One stored figure of one repetition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrendPoint {
    pub run: RunId,
    /// Its position in [`Trend::keys`].
    pub key: usize,
    pub repetition: i64,
    pub value: f64,
}

/// A selection's runs (oldest first), the series found among them, and their figures (by run,
/// then repetition).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trend {
    pub runs: Vec<TrendRun>,
    /// In the order their first figure was read.
    pub keys: Vec<TrendKey>,
    pub points: Vec<TrendPoint>,
}

/// What `prune` removed and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    pub deleted: usize,
    pub kept: usize,
    /// Runs kept only because a baseline (now or in its history) points at them.
    pub kept_for_baselines: usize,
}

impl Store {
    /// The runs and figures of a selection (interrupted runs left out), oldest run first.
    pub fn trend(&mut self, q: &TrendQuery) -> Result<Trend, StoreError> {
        self.tx(false, |db| {
            let (filter, params) = selection(q, "runs.id");
            let runs = db.query(
                &format!(
                    "SELECT runs.id, runs.started_at, runs.labels_json, e.fingerprint, \
                     e.source_json FROM runs LEFT JOIN run_env e ON e.run_id = runs.id \
                     WHERE NOT runs.interrupted AND EXISTS (SELECT 1 FROM run_points p \
                     WHERE p.run_id = runs.id{filter}) ORDER BY runs.id"
                ),
                &params,
            )?;
            let runs = runs
                .iter()
                .map(|r| {
                    let id = int(r, 0, "runs.id")?;
                    Ok(TrendRun {
                        id,
                        started_at: text(r, 1, "runs.started_at")?,
                        labels: json_map(id, &text(r, 2, "runs.labels_json")?)?,
                        env: text(r, 3, "run_env.fingerprint").unwrap_or_default(),
                        source: json_map(
                            id,
                            &text(r, 4, "run_env.source_json").unwrap_or_default(),
                        )?,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            // 10,000 runs of 20 figures are 200,000 rows of four texts, from a handful of
            // series: each row's texts are compared in place and the row keeps their number.
            let mut keys = Keys::default();
            let mut points = Vec::new();
            // No join with `runs`: the runs above are the selection, and a point of another
            // run (an interrupted one) is dropped below, so the rows come in the index's order
            // with no lookup in `runs` and no sort by the database.
            let (filter, params) = selection(q, "p.run_id");
            db.each(
                &format!(
                    "SELECT p.run_id, p.plan, p.scenario, p.step, p.metric, p.repetition, p.value \
                     FROM run_points p WHERE TRUE{filter} ORDER BY p.run_id"
                ),
                &params,
                &mut |r| {
                    points.push(TrendPoint {
                        run: int(r, 0, "run_points.run_id")?,
                        key: keys.of([
                            str(r, 1, "run_points.plan")?,
                            str(r, 2, "run_points.scenario")?,
                            str(r, 3, "run_points.step")?,
                            str(r, 4, "run_points.metric")?,
                        ]),
                        repetition: int(r, 5, "run_points.repetition")?,
                        value: real(r, 6, "run_points.value")?,
                    });
                    Ok(())
                },
            )?;
            points.retain(|p| runs.binary_search_by_key(&p.run, |r| r.id).is_ok());
            // A run's repetitions in their order; stable, and linear on rows already in order.
            points.sort_by_key(|p| (p.run, p.repetition));
            Ok(Trend {
                runs,
                keys: keys.0,
                points,
            })
        })
    }

    /// Deletes runs older than `keep_days` days (before `now`, RFC 3339) that are not among
    /// the newest `keep_last`, except runs a baseline points at now or did before. Either
    /// rule keeps a run; `None` for both keeps everything.
    pub fn prune(
        &mut self,
        keep_days: Option<u32>,
        keep_last: Option<usize>,
        now: std::time::SystemTime,
    ) -> Result<Pruned, StoreError> {
        let cutoff = keep_days.map(|d| {
            let age = std::time::Duration::from_secs(u64::from(d) * 86_400);
            perfbase_core::clock::rfc3339(now.checked_sub(age).unwrap_or(std::time::UNIX_EPOCH))
        });
        self.tx(true, |db| {
            let rows = db.query(
                "SELECT runs.id, runs.saved_at, EXISTS (SELECT 1 FROM baseline_history h \
                 WHERE h.run_id = runs.id) OR EXISTS (SELECT 1 FROM baselines b \
                 WHERE b.run_id = runs.id) FROM runs ORDER BY runs.id DESC",
                &[],
            )?;
            let mut out = Pruned {
                deleted: 0,
                kept: 0,
                kept_for_baselines: 0,
            };
            for (i, r) in rows.iter().enumerate() {
                let id = int(r, 0, "runs.id")?;
                let recent = cutoff
                    .as_ref()
                    .is_some_and(|c| text(r, 1, "runs.saved_at").is_ok_and(|s| s >= *c));
                let newest = keep_last.is_some_and(|n| i < n);
                let ruled = keep_days.is_some() || keep_last.is_some();
                if ruled && !recent && !newest {
                    if super::row::boolean(r, 2, "baseline reference")? {
                        out.kept_for_baselines += 1;
                        out.kept += 1;
                        continue;
                    }
                    for table in ["run_points", "run_env", "run_labels"] {
                        db.execute(
                            &format!("DELETE FROM {table} WHERE run_id = $1"),
                            &[Val::Int(id)],
                        )?;
                    }
                    db.execute("DELETE FROM runs WHERE id = $1", &[Val::Int(id)])?;
                    out.deleted += 1;
                } else {
                    out.kept += 1;
                }
            }
            Ok(out)
        })
    }
}

/// The series met so far, numbered in the order met.
#[derive(Default)]
struct Keys(Vec<TrendKey>, usize);

impl Keys {
    /// The number of a series. Rows come run by run, each run's series in the same order, so
    /// the one after the last is tried first.
    fn of(&mut self, [plan, scenario, step, metric]: [&str; 4]) -> usize {
        let is = |k: &TrendKey| {
            k.metric == metric && k.step == step && k.scenario == scenario && k.plan == plan
        };
        let next = self.1 + 1;
        let found = match self.0.get(next) {
            Some(k) if is(k) => Some(next),
            _ => self.0.iter().position(is),
        };
        self.1 = found.unwrap_or_else(|| {
            self.0.push(TrendKey {
                plan: plan.into(),
                scenario: scenario.into(),
                step: step.into(),
                metric: metric.into(),
            });
            self.0.len() - 1
        });
        self.1
    }
}

/// The SQL conditions on `p` (run_points) for a query, and their parameters; `run` is the
/// column holding the run's id.
fn selection(q: &TrendQuery, run: &str) -> (String, Vec<Val>) {
    let mut sql = String::new();
    let mut params = Vec::new();
    for (column, value) in [
        ("p.plan", &q.plan),
        ("p.scenario", &q.scenario),
        ("p.step", &q.step),
    ] {
        if let Some(value) = value {
            params.push(Val::text(value.as_str()));
            sql.push_str(&format!(" AND {column} = ${}", params.len()));
        }
    }
    for (k, v) in &q.labels {
        params.push(Val::text(k.as_str()));
        params.push(Val::text(v.as_str()));
        let n = params.len();
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = {run} AND l.key = ${} \
             AND l.value = ${n})",
            n - 1
        ));
    }
    if let Some(from) = q.from_run {
        params.push(Val::Int(from));
        sql.push_str(&format!(" AND {run} >= ${}", params.len()));
    }
    if !q.metrics.is_empty() {
        let first = params.len() + 1;
        params.extend(q.metrics.iter().map(|m| Val::text(m.as_str())));
        let list: Vec<String> = (first..=params.len()).map(|i| format!("${i}")).collect();
        sql.push_str(&format!(" AND p.metric IN ({})", list.join(", ")));
    }
    (sql, params)
}

pub(super) fn json_map(id: RunId, text: &str) -> Result<BTreeMap<String, String>, StoreError> {
    if text.is_empty() {
        return Ok(BTreeMap::new());
    }
    serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("run {id}: a stored map does not parse: {e}")))
}

/// Writes a run's figures and environment (part of saving it).
pub(crate) fn insert_points(
    db: &mut dyn Tx,
    id: RunId,
    result: &RunResult,
) -> Result<(), StoreError> {
    let source = serde_json::to_string(&result.env.source)
        .map_err(|e| StoreError::Invalid(format!("the environment does not encode: {e}")))?;
    db.execute(
        "INSERT INTO run_env (run_id, fingerprint, source_json) VALUES ($1, $2, $3)",
        &[
            Val::Int(id),
            Val::text(result.env.fingerprint()),
            Val::text(source),
        ],
    )?;
    for chunk in points(result).chunks(CHUNK) {
        let mut sql = String::from(
            "INSERT INTO run_points (run_id, plan, scenario, step, metric, repetition, value) VALUES ",
        );
        let mut params = Vec::with_capacity(chunk.len() * 7);
        for (i, p) in chunk.iter().enumerate() {
            let n = i * 7;
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!(
                "(${}, ${}, ${}, ${}, ${}, ${}, ${})",
                n + 1,
                n + 2,
                n + 3,
                n + 4,
                n + 5,
                n + 6,
                n + 7
            ));
            params.extend([
                Val::Int(id),
                Val::text(p.plan.as_str()),
                Val::text(p.scenario.as_str()),
                Val::text(p.step.as_str()),
                Val::text(p.metric),
                Val::Int(p.repetition),
                Val::Real(p.value),
            ]);
        }
        db.execute(&sql, &params)?;
    }
    Ok(())
}

/// Migration 4's second half: the figures of every run saved before it. A result that no
/// longer parses is skipped (it keeps its summary row; it just has no trend figures).
pub(crate) fn backfill(db: &mut dyn Tx) -> Result<(), StoreError> {
    let rows = db.query("SELECT id, result_json FROM runs ORDER BY id", &[])?;
    for r in &rows {
        let id = int(r, 0, "runs.id")?;
        let Ok(result) = serde_json::from_str::<RunResult>(&text(r, 1, "runs.result_json")?) else {
            continue;
        };
        insert_points(db, id, &result)?;
    }
    Ok(())
}
