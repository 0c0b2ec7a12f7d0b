//! The workload fields of a redis:// (or redis+cluster://) target: a command or the suite,
//! its keyspace, value size, pipeline and prefill.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use crate::backend::redis::RedisTarget;
use crate::backend::Backend;
use perfbase_drivers::redis::{RedisDriver, RedisOp, RedisOptions};
use perfbase_drivers::Operation;
use serde::Deserialize;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// The command (ping, set, get, get-miss, del, incr, lpush, rpush, lpop, rpop, sadd, zadd,
    /// hset) or `suite`…
    command: Option<S<String>>,
    /// …the suite's operations, in order (default: all)…
    operations: Option<S<Vec<String>>>,
    /// …over this many keys (default 100000)…
    keyspace: Option<S<i64>>,
    /// …with values of this many bytes (default 3)…
    value_size: Option<S<i64>>,
    /// …commands sent together…
    pipeline: Option<S<i64>>,
    /// …after setting every key once (so GETs hit).
    prefill: Option<S<bool>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &[];

    fn url(url_text: &str, _: &str) -> Result<Option<Url>, String> {
        let probe = RedisOptions {
            keyspace: 1,
            value_size: 1,
            pipeline: 1,
        };
        RedisDriver::new(url_text, RedisOp::Ping, probe).map_err(|e| e.to_string())?;
        Ok(None)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let all = fields::op_names::<RedisOp>();
        let ops = (&self.command, &self.operations, all.as_slice());
        let set = |f: &mut Fields, op| f.command = Some(op);
        fields::one_or_suite(at, &self, ops, set, |f| {
            let target = f.target(at)?;
            let what = target.op.name().to_string();
            Ok((Backend::Redis(target), what))
        })
    }
}

impl Fields {
    fn target(&self, at: &At<'_>) -> Result<RedisTarget, PlanError> {
        let op = fields::command::<RedisOp>(at, &self.command, "Redis", false)?;
        let int = |v: &Option<S<i64>>, f: &str, default| {
            fields::positive_or(at.cx, &at.f(f), v, default)
        };
        Ok(RedisTarget {
            url: at.url().to_string(),
            op,
            options: RedisOptions {
                keyspace: int(&self.keyspace, "keyspace", 100_000)?,
                value_size: int(&self.value_size, "value_size", 3)? as usize,
                pipeline: int(&self.pipeline, "pipeline", 1)? as usize,
            },
            prefill: fields::flag(&self.prefill),
        })
    }
}
