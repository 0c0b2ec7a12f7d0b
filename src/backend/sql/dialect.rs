//! Which database a SQL target is, and the built-in SQL workloads by name.

use perfbase_drivers::sql::{SqlWorkload, SuiteOp};
use perfbase_drivers::Operation;

/// Which database family a SQL target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Mysql,
}

impl Dialect {
    /// The protocol name results carry: `postgres` or `mysql`.
    pub fn protocol(self) -> &'static str {
        match self {
            Dialect::Postgres => "postgres",
            Dialect::Mysql => "mysql",
        }
    }

    /// The dialect a URL's scheme names.
    pub fn of_url(url: &str) -> Option<Dialect> {
        let scheme = url.split("://").next()?;
        match scheme {
            "postgres" | "postgresql" => Some(Dialect::Postgres),
            "mysql" | "mariadb" => Some(Dialect::Mysql),
            _ => None,
        }
    }
}

/// pgbench's scripts by name; the suite's operations follow them in [`sql_workload_names`].
/// A pgbench script's workload at a scale.
type Script = fn(u32) -> SqlWorkload;

const SQL_SCRIPTS: [(&str, Script); 3] = [
    ("tpcb", |scale| SqlWorkload::TpcB { scale }),
    ("tpcb-function", |scale| SqlWorkload::TpcBFunction { scale }),
    ("select-only", |scale| SqlWorkload::TpcBSelect { scale }),
];

/// The built-in SQL workloads by name, as `--workload` and a plan's `builtin` give them.
pub fn sql_workload_names() -> String {
    let scripts: Vec<&str> = SQL_SCRIPTS.iter().map(|(name, _)| *name).collect();
    format!("{}, {}", scripts.join(", "), SuiteOp::names())
}

/// A built-in SQL workload by name (`tpcb`, `tpcb-function`, `select-only` or an operation of
/// the suite).
pub fn sql_workload(name: &str, scale: u32) -> Option<SqlWorkload> {
    match SQL_SCRIPTS.iter().find(|(n, _)| *n == name) {
        Some((_, make)) => Some(make(scale)),
        None => SuiteOp::from_name(name).map(SqlWorkload::Suite),
    }
}
