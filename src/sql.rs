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
        "tpcb" => Plan::One(SqlWorkload::TpcB {
            scale: a.scale.unwrap_or(1),
        }),
        "tpcb-function" => Plan::One(SqlWorkload::TpcBFunction {
            scale: a.scale.unwrap_or(1),
        }),
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

/// pgbench's rule for a run: the scale is that of the tables on the server (the row count of
/// pgbench_branches), whatever -s says, so the keys drawn cover every account. A -s that
/// disagrees is named; tables that cannot be read leave the scale as given, and the run
/// reports why.
pub(crate) fn with_table_scale(
    dialect: Dialect,
    url: &str,
    workload: SqlWorkload,
    given: Option<u32>,
) -> Result<SqlWorkload, AppError> {
    if workload.tpcb_scale().is_none() {
        return Ok(workload);
    }
    let found = crate::load::block_on_local(async {
        match dialect {
            Dialect::Postgres => perfbase_drivers::sql::postgres::tpcb_scale(url)
                .await
                .ok()
                .flatten(),
            Dialect::Mysql => perfbase_drivers::sql::mysql::tpcb_scale(url)
                .await
                .ok()
                .flatten(),
        }
    })?;
    let Some(scale) = found else {
        return Ok(workload);
    };
    if let Some(g) = given.filter(|&g| g != scale) {
        errln!(
            "perfbase: scale {g} ignored: pgbench_branches holds {scale} rows, so the tables are at scale {scale} (as pgbench does)"
        );
    }
    Ok(workload.with_tpcb_scale(scale))
}

/// Creates and fills the tables a workload needs.
fn init(dialect: Dialect, url: &str, plan: &Plan, scale: u32) -> Result<(), AppError> {
    let tpcb = matches!(plan, Plan::One(w) if w.tpcb_scale().is_some());
    crate::load::block_on_local(async {
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
    })?
}

fn settings(
    a: &SqlArgs,
    name: &str,
    workload: Option<&SqlWorkload>,
) -> BTreeMap<String, serde_json::Value> {
    let mut m = BTreeMap::new();
    m.insert("workload".into(), name.into());
    if let Some(scale) = workload.and_then(SqlWorkload::tpcb_scale) {
        m.insert("scale".into(), scale.into());
    }
    m.insert("pipeline".into(), a.pipeline.into());
    if let Some(sql) = &a.sql {
        m.insert("sql".into(), sql.clone().into());
    }
    m
}

/// pgbench's closing block, in its words, so figures can be set side by side with a pgbench
/// run: what ran, how many transactions were processed and failed, latency and TPS (sessions
/// connect before the clock starts, so it is pgbench's "without initial connection time").
fn pgbench_block(r: &RunResult, a: &SqlArgs, workload: &str, w: &SqlWorkload) -> String {
    let m = &r.measurement;
    let failed = m.errors.values().sum::<u64>();
    let ok = m.requests - failed;
    let kind = match workload {
        "tpcb" => "TPC-B (sort of), pgbench's built-in script".to_string(),
        "tpcb-function" => "TPC-B through pgbench_tx()".to_string(),
        "custom" => "custom statement".to_string(),
        other => format!("operation {other}"),
    };
    let mode = if a.pipeline > 1 {
        format!("prepared, pipeline {}", a.pipeline)
    } else {
        "prepared".into()
    };
    let load = match (r.config.connections, r.config.rate) {
        (Some(c), _) => format!("number of clients: {c}"),
        (None, Some(rate)) => format!("rate: {rate} transactions/s (open model)"),
        _ => String::new(),
    };
    let pct = if m.requests > 0 {
        100.0 * failed as f64 / m.requests as f64
    } else {
        0.0
    };
    let mut b = String::new();
    let mut line = |text: String| b.push_str(&format!("  {text}\n"));
    line(format!("transaction type: {kind}"));
    if let Some(scale) = w.tpcb_scale() {
        line(format!("scaling factor: {scale}"));
    }
    line(format!("query mode: {mode}"));
    line(load);
    line(format!("number of threads: {}", r.config.threads));
    line(format!("duration: {:.3} s", m.duration_s));
    line(format!("number of transactions actually processed: {ok}"));
    line(format!(
        "number of failed transactions: {failed} ({pct:.3}%)"
    ));
    line(format!(
        "latency average = {:.3} ms (p95 {:.3} ms, p99 {:.3} ms)",
        m.latency_ms.mean, m.latency_ms.p95, m.latency_ms.p99
    ));
    line(format!(
        "tps = {:.6} (without initial connection time)",
        if m.duration_s > 0.0 {
            ok as f64 / m.duration_s
        } else {
            0.0
        }
    ));
    b
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
        init(dialect, &a.url, &plan, a.scale.unwrap_or(1))?;
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
            let workload = with_table_scale(dialect, &a.url, workload, a.scale)?;
            let name = a
                .sql
                .as_ref()
                .map_or(a.workload.clone(), |_| "custom".into());
            let p = Presentation::from_args(
                &a.load,
                label,
                dialect.protocol(),
                settings(&a, &name, Some(&workload)),
            );
            let result = execute(
                dialect,
                &a.url,
                workload.clone(),
                a.pipeline as usize,
                &shape,
                &p,
                interrupt,
            )?;
            crate::records::save(store, dialect.protocol(), &result, &Default::default());
            let exit = crate::load::finish(&result, a.load.json.as_deref())?;
            out!("{}", pgbench_block(&result, &a, &name, &workload));
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
            settings(&a, "suite", None),
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
