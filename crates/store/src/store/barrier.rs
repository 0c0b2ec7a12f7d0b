//! A start barrier for the agents of one run: each says it has arrived (on the store's
//! clock), and all start together once all have. The store is the one clock every agent can
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
            let (now, params) = match db.kind() {
                Kind::Postgres => (PG_NOW_MS.to_string(), vec![Val::text(run), Val::text(segment)]),
                Kind::Sqlite => (
                    "$3".to_string(),
                    vec![Val::text(run), Val::text(segment), Val::Int(local_ms())],
                ),
            };
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
}
