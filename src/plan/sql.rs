//! The workload fields of a postgres:// or mysql:// target: a statement with its parameters,
//! or a built-in workload (TPC-B, an operation, the suite), its scale, pipeline and `init`.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use crate::backend::sql::{sql_workload, sql_workload_names, Dialect, SqlTarget};
use crate::backend::Backend;
use perfbase_drivers::sql::{SqlWorkload, SuiteOp};
use perfbase_drivers::workload::Template;
use serde::Deserialize;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// A statement with $1… (PostgreSQL) or ? (MySQL) parameters…
    sql: Option<S<String>>,
    /// …filled per op from these templates ({{corpus}}), sent as text…
    #[serde(default)]
    params: Vec<S<String>>,
    /// …or a built-in workload: tpcb, tpcb-function, select-only, an operation or `suite`…
    builtin: Option<S<String>>,
    /// …the suite's operations, in order (default: all).
    operations: Option<S<Vec<String>>>,
    /// TPC-B scale of the tables (as pgbench -s), default 1.
    scale: Option<S<i64>>,
    /// PostgreSQL's pipelining depth, default 1.
    pipeline: Option<S<i64>>,
    /// Create (or rebuild) the tables before the scenario.
    init: Option<S<bool>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &[];

    fn url(url_text: &str, shown: &str) -> Result<Option<Url>, String> {
        fields::parsed(url_text, shown)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let all = fields::op_names::<SuiteOp>();
        let ops = (&self.builtin, &self.operations, all.as_slice());
        let set = |f: &mut Fields, op| f.builtin = Some(op);
        fields::one_or_suite(at, &self, ops, set, |f| f.target(at))
    }
}

impl Fields {
    fn target(&self, at: &At<'_>) -> Result<(Backend, String), PlanError> {
        let cx = at.cx;
        let workload = self.workload(at)?;
        let what = match (&self.sql, &self.builtin) {
            (Some(s), _) | (None, Some(s)) => s.get_ref().clone(),
            (None, None) => String::new(),
        };
        let dialect = Dialect::of_url(at.url()).unwrap_or(Dialect::Mysql);
        let pipeline = match &self.pipeline {
            Some(p) if dialect == Dialect::Mysql => {
                return Err(cx.err(
                    p,
                    at.f("pipeline"),
                    "PostgreSQL only (the MySQL protocol answers one statement at a \
                     time); raise the concurrency for more statements in flight",
                ))
            }
            Some(p) => cx.positive(p, &at.f("pipeline"))? as usize,
            None => 1,
        };
        let target = SqlTarget {
            dialect,
            url: at.url().to_string(),
            workload,
            shown: what.clone(),
            pipeline,
            scale_given: self
                .scale
                .as_ref()
                .map(|s| (*s.get_ref()).clamp(1, u32::MAX as i64) as u32),
            init: fields::flag(&self.init),
        };
        Ok((Backend::Sql(target), what))
    }

    fn workload(&self, at: &At<'_>) -> Result<SqlWorkload, PlanError> {
        let cx = at.cx;
        let scale = fields::positive_or(cx, &at.f("scale"), &self.scale, 1)? as u32;
        match (&self.sql, &self.builtin) {
            (Some(sql), None) => {
                let params = self
                    .params
                    .iter()
                    .map(|p| {
                        Template::parse(p.get_ref(), at.corpora)
                            .map_err(|e| cx.err(p, at.f("params"), e))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(SqlWorkload::Custom {
                    sql: sql.get_ref().clone(),
                    params,
                    corpora: at.corpora.to_vec(),
                })
            }
            (None, Some(b)) => sql_workload(b.get_ref(), scale).ok_or_else(|| {
                let names = sql_workload_names();
                cx.err(b, at.f("builtin"), format!("'{}': use {names}", b.get_ref()))
            }),
            (Some(sql), Some(_)) => {
                Err(cx.err(sql, at.field, "give either sql or builtin, not both"))
            }
            (None, None) => Err(at.err(
                at.field,
                "a database workload needs sql = \"…\" (with params) or builtin = \"tpcb\"",
            )),
        }
    }
}
