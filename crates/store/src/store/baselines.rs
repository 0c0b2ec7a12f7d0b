//! Named baselines: pointing one at a run, reading it back, listing them and their history.

use super::row::{int, text};
use super::runs::{select_by_id, stored_run};
use super::Store;
use crate::database::Val;
use crate::error::StoreError;
use crate::{RunId, StoredRun};
use perfbase_core::clock::now_rfc3339;

impl Store {
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
}

#[cfg(test)]
impl Store {
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
}
