//! PostgreSQL and MySQL/MariaDB workloads: TPC-B as pgbench runs it, select-only, the
//! operation suite and custom statements; their tables (`--init`), the TPC-B scale the tables
//! decide, and pgbench's closing block (`pgbench.rs`).

mod dialect;
mod pgbench;
pub use dialect::{sql_workload, sql_workload_names, Dialect};

use super::protocol::{ask_version, Extras, Target, Ran, RunArgs, BACKEND_MAX_INFLIGHT};
use super::setup::block_on_local;
use super::Side;
use crate::exit::{bad_input, AppError};
use perfbase_core::closing::Closing;
use perfbase_core::result::RunResult;
use perfbase_drivers::sql::{self, mysql, postgres, SqlWorkload};
use serde_json::Value;
use std::collections::BTreeMap;

use pgbench::{pgbench_block, PgbenchLoad};

/// A workload against a database.
#[derive(Debug, Clone)]
pub struct SqlTarget {
    pub dialect: Dialect,
    /// With the password from the environment; never shown.
    pub url: String,
    pub workload: sql::SqlWorkload,
    /// The workload as results name it: `tpcb`, `custom`, `suite` or an operation.
    pub shown: String,
    pub pipeline: usize,
    /// A TPC-B workload's scale as given; a run takes the tables' own, as pgbench does.
    pub scale_given: Option<u32>,
    /// Create and fill the workload's tables before the run (a plan's `init = true`).
    pub init: bool,
}

impl Extras for postgres::PgDriver {}
impl Extras for mysql::MyDriver {}

impl SqlTarget {
    fn pg(&self, workload: SqlWorkload) -> Result<postgres::PgDriver, String> {
        let options = postgres::PgOptions {
            pipeline: self.pipeline,
        };
        postgres::PgDriver::new(&self.url, workload, options).map_err(|e| e.to_string())
    }

    fn my(&self, workload: SqlWorkload) -> Result<mysql::MyDriver, String> {
        mysql::MyDriver::new(&self.url, workload).map_err(|e| e.to_string())
    }
}

impl Target for SqlTarget {
    fn name(&self) -> &'static str {
        self.dialect.protocol()
    }

    fn service_kind(&self) -> &'static str {
        match self.dialect {
            Dialect::Postgres => "PostgreSQL",
            Dialect::Mysql => "MySQL / MariaDB",
        }
    }

    /// One, as pgbench starts.
    fn default_connections(&self) -> u64 {
        1
    }

    fn default_max_inflight(&self) -> u64 {
        BACKEND_MAX_INFLIGHT
    }

    fn skip_setup(&mut self) {
        self.init = false;
    }

    fn validate(&self) -> Result<(), String> {
        let w = self.workload.clone();
        match self.dialect {
            Dialect::Postgres => self.pg(w).map(drop),
            Dialect::Mysql => self.my(w).map(drop),
        }
    }

    /// `--init` first when asked; the run draws over the scale the tables decide.
    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        if self.init {
            let done = init_tables(self, self.scale_given.unwrap_or(1))
                .map_err(|e| args.bad("init: ", e))?;
            errln!("perfbase: {done}");
        }
        let workload = table_scale(self)?;
        let scale = workload.tpcb_scale();
        let mut ran = match self.dialect {
            Dialect::Postgres => args.drive(self.pg(workload)),
            Dialect::Mysql => args.drive(self.my(workload)),
        }?;
        if let Some(scale) = scale {
            ran.extras.insert("scale".into(), scale.into());
        }
        Ok(ran)
    }

    fn settings(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        m.insert("workload".into(), self.shown.clone().into());
        if let Some(scale) = self.workload.tpcb_scale() {
            m.insert("scale".into(), scale.into());
        }
        m.insert("pipeline".into(), self.pipeline.into());
        if let SqlWorkload::Custom { sql, .. } = &self.workload {
            m.insert("sql".into(), sql.clone().into());
        }
        m
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    fn server_version(&self) -> Result<String, String> {
        match self.dialect {
            Dialect::Postgres => ask_version(postgres::server_version(&self.url)),
            Dialect::Mysql => ask_version(mysql::server_version(&self.url)),
        }
    }

    /// pgbench's closing block, for one workload (a suite's operations have their table).
    fn closing(
        &self,
        _extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        single: bool,
    ) -> Vec<Closing> {
        if !single {
            return Vec::new();
        }
        let load = PgbenchLoad {
            clients: result.config.connections,
            rate: result.config.rate,
            threads: result.config.threads,
            scale: result.config.protocol.get("scale").and_then(Value::as_u64),
        };
        pgbench_block(&result.measurement, self, &load)
    }

    /// pgbench's block for each measured phase of a TPC-B scenario, so a plan's figures can
    /// be set beside pgbench's as a command's can.
    fn closing_blocks(&self, scenario: &str, side: &Side, result: &RunResult) -> Vec<Closing> {
        if self.workload.tpcb_scale().is_none() {
            return Vec::new();
        }
        let scale = side.extras.get("scale").and_then(Value::as_u64);
        result
            .phases
            .iter()
            .filter(|p| p.scenario.as_deref() == Some(scenario))
            .map(|p| {
                let load = PgbenchLoad {
                    clients: p.offered_connections,
                    rate: p.offered_rate,
                    threads: result.config.threads,
                    scale,
                };
                Closing::Block {
                    title: Some(format!("pgbench, {}:", p.name)),
                    body: pgbench_block(&p.measurement, self, &load),
                }
            })
            .collect()
    }
}

/// pgbench's rule for a run: the scale is that of the tables on the server (the row count of
/// pgbench_branches), whatever was asked, so the keys drawn cover every account. A scale that
/// disagrees is named; tables that cannot be read leave the scale as given, and the run
/// reports why.
fn table_scale(s: &SqlTarget) -> Result<SqlWorkload, AppError> {
    if s.workload.tpcb_scale().is_none() {
        return Ok(s.workload.clone());
    }
    let found = block_on_local(async {
        match s.dialect {
            Dialect::Postgres => postgres::tpcb_scale(&s.url).await.ok().flatten(),
            Dialect::Mysql => mysql::tpcb_scale(&s.url).await.ok().flatten(),
        }
    })?;
    let Some(scale) = found else {
        return Ok(s.workload.clone());
    };
    if let Some(g) = s.scale_given.filter(|&g| g != scale) {
        errln!(
            "perfbase: scale {g} ignored: pgbench_branches holds {scale} rows, so the tables are at scale {scale} (as pgbench does)"
        );
    }
    Ok(s.workload.clone().with_tpcb_scale(scale))
}

/// Creates and fills the tables `s` needs: pgbench's at `scale` for TPC-B (and pgbench_tx()
/// on PostgreSQL), the suite's otherwise. Returns what was done, in words.
pub fn init_tables(s: &SqlTarget, scale: u32) -> Result<String, AppError> {
    let bad = |e: &dyn std::fmt::Display| bad_input(e.to_string());
    block_on_local(async {
        if s.workload.tpcb_scale().is_none() {
            match s.dialect {
                Dialect::Postgres => postgres::init_suite(&s.url).await.map_err(|e| bad(&e))?,
                Dialect::Mysql => mysql::init_suite(&s.url).await.map_err(|e| bad(&e))?,
            }
            return Ok(
                "initialised the suite's tables (perfbase_items: 10,000 rows, perfbase_orders)"
                    .to_string(),
            );
        }
        let (rows, elapsed, function) = match s.dialect {
            Dialect::Postgres => {
                let r = postgres::init_tpcb(&s.url, scale)
                    .await
                    .map_err(|e| bad(&e))?;
                postgres::create_tpcb_function(&s.url)
                    .await
                    .map_err(|e| bad(&e))?;
                (r.rows, r.elapsed, ", and pgbench_tx()")
            }
            Dialect::Mysql => {
                let r = mysql::init_tpcb(&s.url, scale).await.map_err(|e| bad(&e))?;
                (r.rows, r.elapsed, "")
            }
        };
        Ok(format!(
            "initialised pgbench tables at scale {scale}: {} rows in {:.2} s{function}",
            perfbase_core::units::thousands(rows),
            elapsed.as_secs_f64(),
        ))
    })?
}
