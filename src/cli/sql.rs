//! `perfbase pg` and `perfbase mysql`: databases with the same engine, statistics and reports.

use super::command::Job;
use super::LoadArgs;
use crate::backend::sql::SqlTarget;
use crate::backend::sql::{self as options, Dialect};
use crate::backend::Backend;
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_core::redact;
use perfbase_drivers::sql::{SqlWorkload, SuiteOp};
use perfbase_drivers::workload::Template;
use perfbase_drivers::Operation;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  perfbase pg postgres://bench:secret@127.0.0.1:5432/bench --init --scale 10
  perfbase pg postgres://bench:secret@127.0.0.1:5432/bench -c 10 -d 10s            # TPC-B like pgbench
  perfbase pg postgres://… -w suite -c 4 -d 5s                                      # one row per operation
  perfbase mysql mysql://bench:secret@127.0.0.1:3306/bench -w select-pk -r 2k -d 30s
  perfbase pg postgres://… --sql 'SELECT v FROM items WHERE id = $1::bigint' --param 42")]
pub struct SqlArgs {
    /// The database: postgres://user:password@host:port/db or mysql://…; the password is
    /// redacted in every output
    pub url: String,

    /// Create and fill the tables the workload needs (pgbench's TPC-B tables at --scale, or the
    /// suite's tables), then exit
    #[arg(long)]
    pub init: bool,

    /// TPC-B scale: 100 000 accounts, 10 tellers and 1 branch per unit, as pgbench -s
    /// [default: 1 for --init; for a run, the scale of the tables found, as pgbench does]
    #[arg(short = 's', long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub scale: Option<u32>,

    /// tpcb (pgbench's built-in transaction), tpcb-function (one pgbench_tx() call), select-only
    /// (pgbench -S's one SELECT), suite (every
    /// operation in turn), or one operation: insert, select-pk, scan, update, delete,
    /// transaction, join
    #[arg(short = 'w', long, default_value = "tpcb")]
    pub workload: String,

    /// A custom statement instead of a built-in workload ($1… for PostgreSQL, ? for MySQL)
    #[arg(long, value_name = "SQL")]
    pub sql: Option<String>,

    /// A parameter of --sql, in order (repeatable); sent as text
    #[arg(long = "param", value_name = "VALUE", requires = "sql")]
    pub params: Vec<String>,

    /// PostgreSQL: operations sent per round trip on each connection (pipelining): N statements
    /// of a single-statement workload, or N whole TPC-B transactions (7 statements each)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub pipeline: u64,

    #[command(flatten)]
    pub load: LoadArgs,
}

impl SqlArgs {
    /// The database target of workload `workload` named `shown`.
    fn target(&self, dialect: Dialect, workload: SqlWorkload, shown: &str) -> SqlTarget {
        SqlTarget {
            dialect,
            url: self.url.clone(),
            workload,
            shown: shown.to_string(),
            pipeline: self.pipeline as usize,
            scale_given: self.scale,
            // --init creates the tables and exits; a run never re-creates them.
            init: false,
        }
    }

    /// The workloads asked for: one (built-in or --sql), or the suite's operations.
    fn workloads(&self, dialect: Dialect) -> Result<Vec<SqlTarget>, AppError> {
        if let Some(sql) = &self.sql {
            let params = self
                .params
                .iter()
                .map(|p| {
                    Template::parse(p, &[]).map_err(|e| bad_input(format!("--param '{p}': {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let custom = SqlWorkload::Custom {
                sql: sql.clone(),
                params,
                corpora: Vec::new(),
            };
            return Ok(vec![self.target(dialect, custom, "custom")]);
        }
        if self.workload == "suite" {
            return Ok(SuiteOp::ALL
                .iter()
                .map(|op| self.target(dialect, SqlWorkload::Suite(*op), "suite"))
                .collect());
        }
        let scale = self.scale.unwrap_or(1);
        match options::sql_workload(&self.workload, scale) {
            Some(w) => Ok(vec![self.target(dialect, w, &self.workload)]),
            None => Err(bad_input(format!(
                "--workload '{}': use suite or {}",
                self.workload,
                options::sql_workload_names()
            ))),
        }
    }

    /// Checks the URL and options; the workloads to run (or to create tables for).
    pub fn checked(&self, dialect: Dialect) -> Result<Vec<SqlTarget>, AppError> {
        if Dialect::of_url(&self.url) != Some(dialect) {
            return Err(bad_input(format!(
                "URL '{}': perfbase {} takes a {}:// URL",
                redact::url(&self.url),
                dialect.protocol().replace("postgres", "pg"),
                dialect.protocol()
            )));
        }
        if dialect == Dialect::Mysql && self.pipeline > 1 {
            return Err(bad_input(
                "--pipeline: PostgreSQL only (the MySQL protocol answers one statement at a \
                 time); raise -c for more statements in flight",
            ));
        }
        self.workloads(dialect)
    }

    /// The plan these flags describe: one scenario, or one per operation of the suite.
    pub fn plan(
        &self,
        dialect: Dialect,
        store: &StoreOptions,
    ) -> Result<(Plan, RunOptions), AppError> {
        let targets = self.checked(dialect)?;
        self.load.check_json()?;
        let label = redact::url(&self.url);
        let suite = targets.len() > 1;
        let jobs = targets
            .into_iter()
            .map(|t| Job {
                step: match (&t.workload, suite) {
                    (SqlWorkload::Suite(op), true) => op.name().to_string(),
                    _ => "measure".to_string(),
                },
                label: label.clone(),
                backend: Backend::Sql(t),
            })
            .collect();
        let plan = self.load.plan(dialect.protocol(), jobs, 1);
        let title = suite.then(|| {
            self.load
                .suite_title(dialect.protocol(), &label, plan.scenarios.len())
        });
        let options = self.load.options(dialect.protocol(), title, store);
        Ok((plan, options))
    }
}

/// `perfbase pg / mysql`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load PostgreSQL: TPC-B like pgbench, an operation suite, or a custom statement.
    Pg(Box<SqlArgs>),
    /// Load MySQL or MariaDB: TPC-B, an operation suite, or a custom statement.
    Mysql(Box<SqlArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Pg(a) => run(&a, Dialect::Postgres),
            Command::Mysql(a) => run(&a, Dialect::Mysql),
        }
    }
}

/// `perfbase pg` / `perfbase mysql`: `--init` creates the tables, otherwise a run.
fn run(a: &SqlArgs, dialect: Dialect) -> Result<crate::exit::Exit, AppError> {
    let store = a.load.save.options()?;
    if !a.init {
        return crate::runner::launch(a.plan(dialect, &store)?);
    }
    let targets = a.checked(dialect)?;
    let done = crate::backend::sql::init_tables(&targets[0], a.scale.unwrap_or(1))?;
    outln!("{done}");
    Ok(crate::exit::Exit::Success)
}
