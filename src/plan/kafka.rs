//! The workload fields of a kafka:// target: what it does (produce, consume, e2e), its topic
//! and set-up, the producer's records and the consumers'.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use crate::backend::kafka::{
    self as target, AcksName, CommitName, CompressionName, EndToEndSide, FromName, KafkaTarget,
    KafkaWorkload, KeysName, PartitionerName,
};
use crate::backend::options::name_of;
use crate::backend::Backend;
use perfbase_drivers::kafka::{Broker, ConsumeOptions, ProduceOptions};
use serde::Deserialize;
use std::time::Duration;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// `produce` (default), `consume` or `e2e`.
    workload: Option<S<String>>,
    /// The topic (default `perfbase`); `init = true` creates it afresh with `partitions`
    /// (default 1), `prefill` writes records first, `clean = true` deletes it afterwards.
    topic: Option<S<String>>,
    init: Option<S<bool>>,
    partitions: Option<S<i64>>,
    prefill: Option<S<i64>>,
    clean: Option<S<bool>>,
    /// The producer: `acks` (0, 1, all), record `size`, `batch_size` bytes, `linger`,
    /// `compression`, `keys` (none, random, sequential) over `key_count` keys or the lines of
    /// `keys_file`, `headers` ("Name: value"), `idempotent`, `partitioner`.
    acks: Option<S<String>>,
    size: Option<S<i64>>,
    batch_size: Option<S<i64>>,
    linger: Option<S<String>>,
    compression: Option<S<String>>,
    keys: Option<S<String>>,
    key_count: Option<S<i64>>,
    keys_file: Option<S<String>>,
    headers: Option<S<Vec<String>>>,
    idempotent: Option<S<bool>>,
    partitioner: Option<S<String>>,
    /// The consumers: the group, where it starts, how it commits (`consume`); how many read
    /// and how long they wait for the last records (`e2e`).
    group: Option<S<String>>,
    from: Option<S<String>>,
    commit: Option<S<String>>,
    consumers: Option<S<i64>>,
    drain: Option<S<String>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &[];

    fn url(url_text: &str, _: &str) -> Result<Option<Url>, String> {
        Broker::parse(url_text).map_err(|e| e.to_string())?;
        Ok(None)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let cx = at.cx;
        let workload = fields::pick(cx, &at.f("workload"), &self.workload, KafkaWorkload::Produce)?;
        let init = fields::flag(&self.init);
        let partitions = fields::positive_or(cx, &at.f("partitions"), &self.partitions, 1)?;
        if self.partitions.is_some() && !init {
            return Err(at.err(at.f("partitions"), "only with init = true"));
        }
        let produce = self.produce(at)?;
        let consume = ConsumeOptions {
            group: fields::text_or(&self.group, &target::default_group()),
            from: fields::pick(cx, &at.f("from"), &self.from, FromName::Earliest)?.get(),
            commit: fields::pick(cx, &at.f("commit"), &self.commit, CommitName::Auto)?.get(),
        };
        let e2e = match workload {
            KafkaWorkload::E2e => Some(EndToEndSide {
                consumers: fields::positive_or(cx, &at.f("consumers"), &self.consumers, 1)?,
                drain: match &self.drain {
                    Some(d) => cx.duration(d, &at.f("drain"))?,
                    None => Duration::from_secs(5),
                },
            }),
            _ => None,
        };
        let t = KafkaTarget {
            url: at.url().to_string(),
            topic: fields::text_or(&self.topic, "perfbase"),
            workload,
            produce,
            consume,
            init: init.then_some(partitions.min(i32::MAX as u64) as i32),
            prefill: match &self.prefill {
                Some(v) => cx.count(v, &at.f("prefill"), 1_000_000_000, "records")?,
                None => 0,
            },
            clean: fields::flag(&self.clean),
            e2e,
        };
        use crate::backend::Target as _;
        t.validate().map_err(|e| at.err(at.field, e))?;
        let what = name_of(workload);
        Ok(Made::One(Backend::Kafka(t), what))
    }
}

impl Fields {
    fn produce(&self, at: &At<'_>) -> Result<ProduceOptions, PlanError> {
        let cx = at.cx;
        let d = ProduceOptions::default();
        let keys_kind = fields::pick(cx, &at.f("keys"), &self.keys, KeysName::None)?;
        let key_count = fields::positive_or(cx, &at.f("key_count"), &self.key_count, 1000)?;
        let file = self.keys_file.as_ref().map(|f| cx.base.join(f.get_ref()));
        let keys = target::keys(keys_kind, key_count, file.as_deref()).map_err(|e| {
            let field = if file.is_some() { "keys_file" } else { "keys" };
            at.err(at.f(field), e)
        })?;
        let headers = match &self.headers {
            Some(list) => list
                .get_ref()
                .iter()
                .map(|h| target::header(h))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| cx.err(list, at.f("headers"), e))?,
            None => Vec::new(),
        };
        Ok(ProduceOptions {
            acks: fields::pick(cx, &at.f("acks"), &self.acks, AcksName::All)?.get(),
            record_size: fields::positive_or(cx, &at.f("size"), &self.size, 1024)? as usize,
            batch_bytes: fields::positive_or(cx, &at.f("batch_size"), &self.batch_size, d.batch_bytes)?,
            linger: match &self.linger {
                Some(l) => cx.duration(l, &at.f("linger"))?,
                None => d.linger,
            },
            compression: fields::pick(cx, &at.f("compression"), &self.compression, CompressionName::None)?
                .get(),
            keys,
            headers,
            idempotent: fields::flag(&self.idempotent),
            partitioner: fields::pick(cx, &at.f("partitioner"), &self.partitioner, PartitionerName::Default)?
                .get(),
            ..d
        })
    }
}
