//! `perfbase pg` and `perfbase mysql`: databases measured with the same engine, statistics and
//! reports as HTTP. This is where the SQL dialect picks its driver.

use crate::cli::SqlArgs;
use crate::exit::{bad_input, AppError, Exit};
use crate::load::{LoadShape, Presentation};
use crate::records::StoreOptions;
use perfbase_core::redact;
use perfbase_core::result::RunResult;
use perfbase_drivers::sql::{SqlWorkload, SuiteOp};
use perfbase_drivers::workload::Template;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Which database family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Mysql,
}

impl Dialect {
    fn protocol(self) -> &'static str {
        match self {
            Dialect::Postgres => "postgres",
            Dialect::Mysql => "mysql",
        }
    }

    fn accepts(self, url: &str) -> bool {
        match self {
            Dialect::Postgres => url.starts_with("postgres://") || url.starts_with("postgresql://"),
            Dialect::Mysql => url.starts_with("mysql://") || url.starts_with("mariadb://"),
        }
    }
}

/// What the command line asked for.
enum Plan {
    One(SqlWorkload),
    Suite,
}

fn parse_workload(a: &SqlArgs) -> Result<Plan, AppError> {
    if let Some(sql) = &a.sql {
        let params = a
            .params
            .iter()
            .map(|p| Template::parse(p, &[]).map_err(|e| bad_input(format!("--param '{p}': {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Plan::One(SqlWorkload::Custom {
            sql: sql.clone(),
            params,
            corpora: Vec::new(),
        }));
    }
    Ok(match a.workload.as_str() {
        "tpcb" => Plan::One(SqlWorkload::TpcB { scale: a.scale }),
        "tpcb-function" => Plan::One(SqlWorkload::TpcBFunction { scale: a.scale }),
        "suite" => Plan::Suite,
        other => match SuiteOp::from_name(other) {
            Some(op) => Plan::One(SqlWorkload::Suite(op)),
            None => {
                return Err(bad_input(format!(
                    "--workload '{other}': use tpcb, tpcb-function, suite, insert, select-pk, scan, update, delete, transaction or join"
                )))
            }
        },
    })
}

/// Runs one workload with the dialect's driver.
pub fn execute(
    dialect: Dialect,
    url: &str,
    workload: SqlWorkload,
    pipeline: usize,
    shape: &LoadShape,
    p: &Presentation,
    interrupt: Arc<AtomicBool>,
) -> Result<RunResult, AppError> {
    match dialect {
        Dialect::Postgres => {
            use perfbase_drivers::sql::postgres::{PgDriver, PgOptions};
            let d = PgDriver::new(url, workload, PgOptions { pipeline })
                .map_err(|e| bad_input(e.to_string()))?;
            crate::load::execute(Arc::new(d), shape, p, interrupt)
        }
        Dialect::Mysql => {
            let d = perfbase_drivers::sql::mysql::MyDriver::new(url, workload)
                .map_err(|e| bad_input(e.to_string()))?;
            crate::load::execute(Arc::new(d), shape, p, interrupt)
        }
    }
}

/// Creates and fills the tables a workload needs.
fn init(dialect: Dialect, url: &str, plan: &Plan, scale: u32) -> Result<(), AppError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| bad_input(format!("cannot start a runtime: {e}")))?;
    let tpcb = matches!(
        plan,
        Plan::One(SqlWorkload::TpcB { .. } | SqlWorkload::TpcBFunction { .. })
    );
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        if tpcb {
            let report = match dialect {
                Dialect::Postgres => {
                    let r = perfbase_drivers::sql::postgres::init_tpcb(url, scale)
                        .await
                        .map_err(|e| bad_input(e.to_string()))?;
                    perfbase_drivers::sql::postgres::create_tpcb_function(url)
                        .await
                        .map_err(|e| bad_input(e.to_string()))?;
                    (r.rows, r.elapsed)
                }
                Dialect::Mysql => {
                    let r = perfbase_drivers::sql::mysql::init_tpcb(url, scale)
                        .await
                        .map_err(|e| bad_input(e.to_string()))?;
                    (r.rows, r.elapsed)
                }
            };
            outln!(
                "initialised pgbench tables at scale {scale}: {} rows in {:.2} s{}",
                perfbase_report::thousands(report.0),
                report.1.as_secs_f64(),
                if dialect == Dialect::Postgres {
                    ", and pgbench_tx()"
                } else {
                    ""
                }
            );
        } else {
            match dialect {
                Dialect::Postgres => perfbase_drivers::sql::postgres::init_suite(url)
                    .await
                    .map_err(|e| bad_input(e.to_string()))?,
                Dialect::Mysql => perfbase_drivers::sql::mysql::init_suite(url)
                    .await
                    .map_err(|e| bad_input(e.to_string()))?,
            }
            outln!("initialised the suite's tables (perfbase_items: 10,000 rows, perfbase_orders)");
        }
        Ok::<(), AppError>(())
    })
}

fn settings(a: &SqlArgs, workload: &str) -> BTreeMap<String, serde_json::Value> {
    let mut m = BTreeMap::new();
    m.insert("workload".into(), workload.into());
    m.insert("scale".into(), a.scale.into());
    m.insert("pipeline".into(), a.pipeline.into());
    if let Some(sql) = &a.sql {
        m.insert("sql".into(), sql.clone().into());
    }
    m
}

/// A pgbench-style closing line: transactions per second and average latency.
fn pgbench_line(r: &RunResult) -> String {
    let m = &r.measurement;
    let ok = m.requests - m.errors.values().sum::<u64>();
    format!(
        "  tps = {:.6} (successful transactions per second, connections opened before the clock starts)\n  latency average = {:.3} ms, p95 = {:.3} ms, p99 = {:.3} ms\n",
        if m.duration_s > 0.0 { ok as f64 / m.duration_s } else { 0.0 },
        m.latency_ms.mean,
        m.latency_ms.p95,
        m.latency_ms.p99
    )
}

/// The `perfbase pg` / `perfbase mysql` command.
pub fn run(a: SqlArgs, dialect: Dialect, store: &StoreOptions) -> Result<Exit, AppError> {
    if !dialect.accepts(&a.url) {
        return Err(bad_input(format!(
            "URL '{}': perfbase {} takes a {}:// URL",
            redact::url(&a.url),
            dialect.protocol().replace("postgres", "pg"),
            dialect.protocol()
        )));
    }
    if dialect == Dialect::Mysql && a.pipeline > 1 {
        return Err(bad_input(
            "--pipeline: PostgreSQL only (the MySQL protocol answers one statement at a time); \
             raise -c for more statements in flight",
        ));
    }
    let plan = parse_workload(&a)?;
    if a.init {
        init(dialect, &a.url, &plan, a.scale)?;
        return Ok(Exit::Success);
    }
    if let Some(j) = &a.load.json {
        crate::app::check_output_path(j, "--json")?;
    }
    let label = redact::url(&a.url);
    let shape = LoadShape::from_args(&a.load, 1, crate::load::BACKEND_MAX_INFLIGHT);
    let interrupt = crate::interrupt::install();
    match plan {
        Plan::One(workload) => {
            let name = a
                .sql
                .as_ref()
                .map_or(a.workload.clone(), |_| "custom".into());
            let p =
                Presentation::from_args(&a.load, label, dialect.protocol(), settings(&a, &name));
            let result = execute(
                dialect,
                &a.url,
                workload,
                a.pipeline as usize,
                &shape,
                &p,
                interrupt,
            )?;
            crate::records::save(store, dialect.protocol(), &result, &Default::default());
            let exit = crate::load::finish(&result, a.load.json.as_deref())?;
            out!("{}", pgbench_line(&result));
            Ok(exit)
        }
        Plan::Suite => suite(a, dialect, store, shape, label, interrupt),
    }
}

/// Every operation of the suite in turn, one table row each.
fn suite(
    a: SqlArgs,
    dialect: Dialect,
    store: &StoreOptions,
    shape: LoadShape,
    label: String,
    interrupt: Arc<AtomicBool>,
) -> Result<Exit, AppError> {
    let names: Vec<&'static str> = SuiteOp::ALL.iter().map(|o| o.name()).collect();
    let result = crate::load::suite(&names, |name| {
        let op = SuiteOp::from_name(name).expect("names come from SuiteOp::ALL");
        let p = Presentation::from_args(
            &a.load,
            label.clone(),
            dialect.protocol(),
            settings(&a, "suite"),
        );
        execute(
            dialect,
            &a.url,
            SqlWorkload::Suite(op),
            a.pipeline as usize,
            &shape,
            &p,
            interrupt.clone(),
        )
    })?;
    let Some(result) = result else {
        return Ok(Exit::Success);
    };
    if let Some(j) = &a.load.json {
        perfbase_report::json::write_atomic(j, &result)
            .map_err(|e| bad_input(format!("--json {}: {e}", j.display())))?;
    }
    crate::records::save(store, dialect.protocol(), &result, &Default::default());
    crate::load::print_suite(
        &result,
        &format!(
            "perfbase {} suite on {} — {} per operation",
            dialect.protocol(),
            result.target,
            perfbase_core::units::format_duration(shape.duration.unwrap_or_default())
        ),
    );
    Ok(crate::load::suite_exit(&result))
}
