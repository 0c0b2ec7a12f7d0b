//! The workload fields of a mongodb:// target: an operation or the suite, its keyspace, the
//! document insert-one inserts, and `init`.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use crate::backend::mongo::MongoTarget;
use crate::backend::Backend;
use perfbase_drivers::mongo::{DocumentTemplate, MongoDriver, MongoOp, MongoOptions};
use perfbase_drivers::Operation;
use serde::Deserialize;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// The operation (insert-one, find-one, …) or `suite`…
    command: Option<S<String>>,
    /// …the suite's operations, in order (default: all)…
    operations: Option<S<Vec<String>>>,
    /// …over this many documents (default 1000)…
    keyspace: Option<S<i64>>,
    /// …insert-one's document, as JSON ("{{n}}", "{{key}}" filled per op)…
    document: Option<S<String>>,
    /// …after the collection is rebuilt.
    init: Option<S<bool>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &[];

    fn url(url_text: &str, _: &str) -> Result<Option<Url>, String> {
        MongoDriver::new(url_text, MongoOp::FindOne, Default::default())
            .map_err(|e| e.to_string())?;
        Ok(None)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let all = fields::op_names::<MongoOp>();
        let ops = (&self.command, &self.operations, all.as_slice());
        let set = |f: &mut Fields, op| f.command = Some(op);
        fields::one_or_suite(at, &self, ops, set, |f| {
            let target = f.target(at)?;
            let what = target.op.name().to_string();
            Ok((Backend::Mongo(target), what))
        })
    }
}

impl Fields {
    fn target(&self, at: &At<'_>) -> Result<MongoTarget, PlanError> {
        let op: MongoOp = fields::command(at, &self.command, "MongoDB", true)?;
        let defaults = MongoOptions::default();
        let keyspace =
            fields::positive_or(at.cx, &at.f("keyspace"), &self.keyspace, defaults.keyspace)?;
        let document = match &self.document {
            Some(d) if op != MongoOp::InsertOne => {
                return Err(at.cx.err(
                    d,
                    at.f("document"),
                    format!("is what insert-one inserts; {} inserts none", op.name()),
                ))
            }
            Some(d) => Some(
                DocumentTemplate::parse(d.get_ref())
                    .map_err(|e| at.cx.err(d, at.f("document"), e))?,
            ),
            None => None,
        };
        Ok(MongoTarget {
            url: at.url().to_string(),
            op,
            options: MongoOptions {
                keyspace,
                document,
                ..defaults
            },
            init: fields::flag(&self.init),
            set_up: false,
        })
    }
}
