//! Browsing the store (`perfbase ui`): a page of runs by plan, labels, source, dates and
//! outcome, newest first, with the total they come to; the plans; a plan's baselines; the
//! runs agents are doing now. Every list is bounded by its query, so a page costs the same
//! over ten runs or ten thousand.

use super::row::{int, text};
use super::runs::{label_condition, summary_from_row, SUMMARY_COLUMNS, SUMMARY_LEN};
use super::trend::json_map;
use super::Store;
use crate::database::{Tx, Val};
use crate::error::StoreError;
use crate::{RunId, RunSummary};
use perfbase_core::result::RunResult;
use perfbase_core::run_outcome::RunOutcome;
use std::collections::BTreeMap;

/// Which runs, and which page of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunQuery {
    pub plan: Option<String>,
    /// Every one of these labels.
    pub labels: Vec<(String, String)>,
    /// Text found in the run's source (commit, branch, CI build), as saved with it.
    pub source: Option<String>,
    /// Started on or after this day, and on or before `until` (`YYYY-MM-DD`, UTC).
    pub since: Option<String>,
    pub until: Option<String>,
    pub outcome: Option<RunOutcome>,
    /// Only runs older than this id: the next page after a page ending at it.
    pub before: Option<RunId>,
    /// At most this many (1 to 500).
    pub limit: usize,
}

/// A run as browsed: its summary, plan, outcome and source.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowsedRun {
    pub summary: RunSummary,
    /// Empty for a run without a plan (`perfbase http …`).
    pub plan: String,
    pub outcome: String,
    pub fingerprint: String,
    pub source: BTreeMap<String, String>,
}

/// One page of a query, and how many runs the whole query matches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunPage {
    pub runs: Vec<BrowsedRun>,
    pub total: u64,
}

/// A plan as listed: its name, how many runs it has, and its newest.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRow {
    pub plan: String,
    pub runs: u64,
    pub newest: RunId,
    pub newest_started_at: String,
}

/// A run agents are doing: its id, the segments beating, and the newest beat's age (ms).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRun {
    pub run: String,
    pub segments: u64,
    pub age_ms: i64,
}

impl Store {
    /// A page of the runs `q` selects, newest first, and their total.
    pub fn browse(&mut self, q: &RunQuery) -> Result<RunPage, StoreError> {
        self.tx(false, |db| {
            let (filter, params) = conditions(q);
            let total = db.query(&format!("SELECT count(*) FROM runs{filter}"), &params)?;
            let total = total
                .first()
                .map(|r| int(r, 0, "count"))
                .transpose()?
                .unwrap_or(0);
            Ok(RunPage {
                runs: select(db, q)?,
                total: u64::try_from(total).unwrap_or(0),
            })
        })
    }

    /// The page of runs `q` selects, newest first, without counting them all.
    pub fn runs(&mut self, q: &RunQuery) -> Result<Vec<BrowsedRun>, StoreError> {
        self.tx(false, |db| select(db, q))
    }

    /// One run as browsed, without its result.
    pub fn browsed(&mut self, id: RunId) -> Result<BrowsedRun, StoreError> {
        let q = RunQuery {
            before: Some(id.saturating_add(1)),
            limit: 1,
            ..RunQuery::default()
        };
        self.runs(&q)?
            .into_iter()
            .find(|r| r.summary.id == id)
            .ok_or_else(|| StoreError::NotFound(id.to_string()))
    }

    /// Every plan with stored runs, by name.
    pub fn plans(&mut self) -> Result<Vec<PlanRow>, StoreError> {
        let rows = self.tx(false, |db| {
            db.query(
                "SELECT p.plan, p.n, p.newest, r.started_at FROM (SELECT plan, count(*) AS n, \
                 max(id) AS newest FROM runs WHERE plan <> '' GROUP BY plan) p \
                 JOIN runs r ON r.id = p.newest ORDER BY p.plan",
                &[],
            )
        })?;
        rows.iter()
            .map(|r| {
                Ok(PlanRow {
                    plan: text(r, 0, "runs.plan")?,
                    runs: u64::try_from(int(r, 1, "count")?).unwrap_or(0),
                    newest: int(r, 2, "max(id)")?,
                    newest_started_at: text(r, 3, "runs.started_at")?,
                })
            })
            .collect()
    }

    /// Where each baseline pointing at a run of `plan` has pointed, newest first: (name, run
    /// id, set at).
    pub fn plan_baselines(
        &mut self,
        plan: &str,
    ) -> Result<Vec<(String, RunId, String)>, StoreError> {
        let rows = self.tx(false, |db| {
            db.query(
                "SELECT h.name, h.run_id, h.set_at FROM baseline_history h \
                 JOIN runs ON runs.id = h.run_id WHERE runs.plan = $1 ORDER BY h.id DESC",
                &[Val::text(plan)],
            )
        })?;
        rows.iter()
            .map(|r| {
                Ok((
                    text(r, 0, "baseline_history.name")?,
                    int(r, 1, "baseline_history.run_id")?,
                    text(r, 2, "baseline_history.set_at")?,
                ))
            })
            .collect()
    }

    /// The runs whose agents beat within the last `within_ms` (store clock), newest first.
    pub fn live_runs(&mut self, within_ms: i64) -> Result<Vec<LiveRun>, StoreError> {
        let rows = self.tx(false, |db| {
            let mut params = Vec::new();
            let now = super::barrier::now_param(db.kind(), &mut params);
            params.push(Val::Int(within_ms));
            db.query(
                &format!(
                    "SELECT run_id, count(*), min({now} - seen_ms) FROM agent_heartbeat \
                     GROUP BY run_id HAVING min({now} - seen_ms) <= ${} \
                     ORDER BY max(seen_ms) DESC LIMIT 100",
                    params.len()
                ),
                &params,
            )
        })?;
        rows.iter()
            .map(|r| {
                Ok(LiveRun {
                    run: text(r, 0, "agent_heartbeat.run_id")?,
                    segments: u64::try_from(int(r, 1, "count")?).unwrap_or(0),
                    age_ms: int(r, 2, "age")?,
                })
            })
            .collect()
    }
}

/// The runs `q` selects, newest first, at most its limit.
fn select(db: &mut dyn Tx, q: &RunQuery) -> Result<Vec<BrowsedRun>, StoreError> {
    let (filter, mut params) = conditions(q);
    let mut sql = format!(
        "SELECT {SUMMARY_COLUMNS}, runs.plan, runs.outcome, e.fingerprint, \
         e.source_json FROM runs LEFT JOIN run_env e ON e.run_id = runs.id{filter}"
    );
    if let Some(before) = q.before {
        params.push(Val::Int(before));
        sql.push_str(&format!(
            "{} runs.id < ${}",
            if filter.is_empty() { " WHERE" } else { " AND" },
            params.len()
        ));
    }
    params.push(Val::Int(q.limit.clamp(1, 500) as i64));
    sql.push_str(&format!(" ORDER BY runs.id DESC LIMIT ${}", params.len()));
    let rows = db.query(&sql, &params)?;
    rows.iter()
        .map(|r| {
            let summary = summary_from_row(r)?;
            let at = SUMMARY_LEN;
            let source = text(r, at + 3, "run_env.source_json").unwrap_or_default();
            Ok(BrowsedRun {
                plan: text(r, at, "runs.plan")?,
                outcome: text(r, at + 1, "runs.outcome")?,
                fingerprint: text(r, at + 2, "run_env.fingerprint").unwrap_or_default(),
                source: json_map(summary.id, &source)?,
                summary,
            })
        })
        .collect()
}

/// The `WHERE …` of a query (empty when it selects every run) and its parameters.
fn conditions(q: &RunQuery) -> (String, Vec<Val>) {
    let mut parts: Vec<String> = Vec::new();
    let mut params = Vec::new();
    let param = |params: &mut Vec<Val>, v: Val| {
        params.push(v);
        format!("${}", params.len())
    };
    if let Some(plan) = &q.plan {
        let n = param(&mut params, Val::text(plan.as_str()));
        parts.push(format!("runs.plan = {n}"));
    }
    for (k, v) in &q.labels {
        let mut sql = String::new();
        label_condition(&mut sql, &mut params, k, v);
        parts.push(sql);
    }
    if let Some(source) = &q.source {
        let n = param(
            &mut params,
            Val::text(format!("%{}%", like_escaped(source))),
        );
        parts.push(format!(
            "EXISTS (SELECT 1 FROM run_env s WHERE s.run_id = runs.id \
             AND s.source_json LIKE {n} ESCAPE '!')"
        ));
    }
    if let Some(since) = &q.since {
        let n = param(&mut params, Val::text(since.as_str()));
        parts.push(format!("substr(runs.started_at, 1, 10) >= {n}"));
    }
    if let Some(until) = &q.until {
        let n = param(&mut params, Val::text(until.as_str()));
        parts.push(format!("substr(runs.started_at, 1, 10) <= {n}"));
    }
    if let Some(outcome) = q.outcome {
        let n = param(&mut params, Val::text(outcome.name()));
        parts.push(format!("runs.outcome = {n}"));
    }
    if parts.is_empty() {
        return (String::new(), params);
    }
    (format!(" WHERE {}", parts.join(" AND ")), params)
}

/// `text` matched literally by LIKE … ESCAPE '!'.
fn like_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '!') {
            out.push('!');
        }
        out.push(c);
    }
    out
}

/// v6: the plan and outcome of every run saved before (SQL cannot read them from the JSON).
pub(crate) fn backfill(db: &mut dyn Tx) -> Result<(), StoreError> {
    let rows = db.query("SELECT id, result_json FROM runs ORDER BY id", &[])?;
    for r in &rows {
        let id = int(r, 0, "runs.id")?;
        let Ok(result) = serde_json::from_str::<RunResult>(&text(r, 1, "runs.result_json")?) else {
            continue;
        };
        db.execute(
            "UPDATE runs SET plan = $1, outcome = $2 WHERE id = $3",
            &[
                Val::text(crate::points::plan_of(&result)),
                Val::text(RunOutcome::of(&result).name()),
                Val::Int(id),
            ],
        )?;
    }
    Ok(())
}
