//! What the agents of one run share through the store, on its clock: a start barrier (each
//! says it has arrived, and all start together once all have), heartbeats (so that a merge
//! can tell an agent that died from one still running), and a stop request (so that one
//! stop, by a user or a threshold, reaches every agent). The store is the one clock every agent can
//! read: PostgreSQL's for a team's store; for a SQLite file, which lives on this machine, this
//! machine's.

use super::row::{int, text};
use super::Store;
use crate::database::{Kind, Val};
use crate::error::StoreError;

/// PostgreSQL's wall clock now, in ms since the epoch (the statement's own time, not the
/// transaction's).
const PG_NOW_MS: &str = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

fn local_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The store's "now" in an SQL statement whose parameters are `params`: PostgreSQL's clock, or
/// for SQLite this machine's, as parameter `$n` (appended).
pub(super) fn now_param(kind: Kind, params: &mut Vec<Val>) -> String {
    match kind {
        Kind::Postgres => PG_NOW_MS.to_string(),
        Kind::Sqlite => {
            params.push(Val::Int(local_ms()));
            format!("${}", params.len())
        }
    }
}

impl Store {
    /// The store's clock now, in ms since the epoch.
    pub fn clock_ms(&mut self) -> Result<i64, StoreError> {
        self.tx(false, |db| match db.kind() {
            Kind::Postgres => {
                let rows = db.query(&format!("SELECT {PG_NOW_MS}"), &[])?;
                let row = rows
                    .first()
                    .ok_or_else(|| StoreError::Invalid("no clock reading".into()))?;
                int(row, 0, "clock")
            }
            Kind::Sqlite => Ok(local_ms()),
        })
    }

    /// Segment `segment` of run `run` has arrived at the barrier, now on the store's clock (a
    /// second arrival renews the time).
    pub fn arrive(&mut self, run: &str, segment: &str) -> Result<(), StoreError> {
        self.tx(true, |db| {
            let mut params = vec![Val::text(run), Val::text(segment)];
            let now = now_param(db.kind(), &mut params);
            db.execute(
                &format!(
                    "INSERT INTO agent_barrier (run_id, segment, arrived_ms) VALUES ($1, $2, {now}) \
                     ON CONFLICT (run_id, segment) DO UPDATE SET arrived_ms = excluded.arrived_ms"
                ),
                &params,
            )?;
            Ok(())
        })
    }

    /// The segments of run `run` that have arrived, with their times (ms, store clock).
    pub fn arrivals(&mut self, run: &str) -> Result<Vec<(String, i64)>, StoreError> {
        self.tx(false, |db| {
            let rows = db.query(
                "SELECT segment, arrived_ms FROM agent_barrier WHERE run_id = $1 ORDER BY segment",
                &[Val::text(run)],
            )?;
            rows.iter()
                .map(|r| Ok((text(r, 0, "segment")?, int(r, 1, "arrived_ms")?)))
                .collect()
        })
    }

    /// Segment `segment` of run `run` is alive now (store clock); agents beat about every
    /// 250 ms from start to exit.
    pub fn heartbeat(&mut self, run: &str, segment: &str) -> Result<(), StoreError> {
        self.tx(true, |db| {
            let mut params = vec![Val::text(run), Val::text(segment)];
            let now = now_param(db.kind(), &mut params);
            db.execute(
                &format!(
                    "INSERT INTO agent_heartbeat (run_id, segment, seen_ms) VALUES ($1, $2, {now}) \
                     ON CONFLICT (run_id, segment) DO UPDATE SET seen_ms = excluded.seen_ms"
                ),
                &params,
            )?;
            Ok(())
        })
    }

    /// Each segment of run `run` that has beaten, with how long ago its last beat was (ms,
    /// store clock), by segment.
    pub fn heartbeats(&mut self, run: &str) -> Result<Vec<(String, i64)>, StoreError> {
        self.tx(false, |db| {
            let mut params = vec![Val::text(run)];
            let now = now_param(db.kind(), &mut params);
            let rows = db.query(
                &format!(
                    "SELECT segment, {now} - seen_ms FROM agent_heartbeat WHERE run_id = $1 \
                     ORDER BY segment"
                ),
                &params,
            )?;
            rows.iter()
                .map(|r| Ok((text(r, 0, "segment")?, int(r, 1, "age")?)))
                .collect()
        })
    }

    /// Asks every agent of run `run` to stop, saying why; the first request's reason stands.
    pub fn request_stop(&mut self, run: &str, reason: &str) -> Result<(), StoreError> {
        self.tx(true, |db| {
            let mut params = vec![Val::text(run), Val::text(reason)];
            let now = now_param(db.kind(), &mut params);
            db.execute(
                &format!(
                    "INSERT INTO run_stop (run_id, reason, at_ms) VALUES ($1, $2, {now}) \
                     ON CONFLICT (run_id) DO NOTHING"
                ),
                &params,
            )?;
            Ok(())
        })
    }

    /// Whether run `run` was asked to stop: the reason, and when (ms since the epoch, store
    /// clock).
    pub fn stop_request(&mut self, run: &str) -> Result<Option<(String, i64)>, StoreError> {
        self.tx(false, |db| {
            let rows = db.query(
                "SELECT reason, at_ms FROM run_stop WHERE run_id = $1",
                &[Val::text(run)],
            )?;
            rows.first()
                .map(|r| Ok((text(r, 0, "reason")?, int(r, 1, "at_ms")?)))
                .transpose()
        })
    }

    /// Segment `segment`'s figures so far of the phase `phase` it runs (its measurement as
    /// JSON, histograms included, so that the agents' figures merge exactly); replaces its
    /// last.
    pub fn publish_live(
        &mut self,
        run: &str,
        segment: &str,
        phase: &str,
        figures: &str,
    ) -> Result<(), StoreError> {
        self.tx(true, |db| {
            db.execute(
                "INSERT INTO agent_live (run_id, segment, phase, figures) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (run_id, segment) DO UPDATE SET phase = excluded.phase, \
                 figures = excluded.figures",
                &[
                    Val::text(run),
                    Val::text(segment),
                    Val::text(phase),
                    Val::text(figures),
                ],
            )?;
            Ok(())
        })
    }

    /// The last figures each segment of run `run` published, whatever its phase: (segment,
    /// phase, figures), by segment.
    pub fn live_all(&mut self, run: &str) -> Result<Vec<(String, String, String)>, StoreError> {
        self.tx(false, |db| {
            let rows = db.query(
                "SELECT segment, phase, figures FROM agent_live WHERE run_id = $1 ORDER BY segment",
                &[Val::text(run)],
            )?;
            rows.iter()
                .map(|r| {
                    Ok((
                        text(r, 0, "segment")?,
                        text(r, 1, "phase")?,
                        text(r, 2, "figures")?,
                    ))
                })
                .collect()
        })
    }

    /// The last figures each segment of run `run` published for phase `phase`, by segment.
    pub fn live(&mut self, run: &str, phase: &str) -> Result<Vec<(String, String)>, StoreError> {
        self.tx(false, |db| {
            let rows = db.query(
                "SELECT segment, figures FROM agent_live WHERE run_id = $1 AND phase = $2 \
                 ORDER BY segment",
                &[Val::text(run), Val::text(phase)],
            )?;
            rows.iter()
                .map(|r| Ok((text(r, 0, "segment")?, text(r, 1, "figures")?)))
                .collect()
        })
    }
}
