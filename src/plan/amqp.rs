//! The workload fields of an amqp:// target: the mode (round trip, publish or stream), the
//! messages, and a stream's consumers.

use super::fields::{self, At, Made};
use super::file::S;
use super::model::PlanError;
use crate::backend::amqp::{AckName, AmqpModeName, AmqpTarget, StreamSide};
use crate::backend::options::name_of;
use crate::backend::Backend;
use perfbase_drivers::amqp::{AmqpDriver, AmqpOptions};
use serde::Deserialize;
use url::Url;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct Fields {
    /// `roundtrip` (default), `publish` or `stream`.
    mode: Option<S<String>>,
    /// Message bytes (default 1024).
    size: Option<S<i64>>,
    /// Persistent messages on a durable queue, publisher confirms, consumer acks (`none`,
    /// `auto`, `manual`).
    persistent: Option<S<bool>>,
    confirms: Option<S<bool>>,
    ack: Option<S<String>>,
    /// Messages published at once.
    pipeline: Option<S<i64>>,
    /// Stream mode: consumer connections on the publishers' queue, how long they wait for what
    /// is still queued once publishing stopped, and at most this many messages published and
    /// not yet consumed.
    consumers: Option<S<i64>>,
    drain: Option<S<String>>,
    max_lag: Option<S<i64>>,
}

impl fields::Fields for Fields {
    const TARGET_FIELDS: &'static [&'static str] = &[];

    fn url(url_text: &str, _: &str) -> Result<Option<Url>, String> {
        AmqpDriver::new(url_text, Default::default()).map_err(|e| e.to_string())?;
        Ok(None)
    }

    fn read(self, at: &At<'_>) -> Result<Made, PlanError> {
        let cx = at.cx;
        let mode = fields::pick(cx, &at.f("mode"), &self.mode, AmqpModeName::Roundtrip)?;
        let ack = fields::pick(cx, &at.f("ack"), &self.ack, AckName::Manual)?;
        let stream = self.stream_side(at, mode == AmqpModeName::Stream)?;
        let options = AmqpOptions {
            mode: mode.mode(),
            message_size: fields::positive_or(cx, &at.f("size"), &self.size, 1024)? as usize,
            persistent: fields::flag(&self.persistent),
            confirms: fields::flag(&self.confirms),
            ack: ack.mode(),
            pipeline: fields::positive_or(cx, &at.f("pipeline"), &self.pipeline, 1)? as usize,
            max_lag: match &self.max_lag {
                Some(v) => Some(cx.positive(v, &at.f("max_lag"))?),
                None => None,
            },
            // The stream's publishers and consumers meet on one queue of this run.
            queue: stream
                .as_ref()
                .map(|_| format!("perfbase-{}-{}", std::process::id(), at.name)),
        };
        let url = at.url().to_string();
        AmqpDriver::new(&url, options.clone()).map_err(|e| at.err(at.field, e.to_string()))?;
        let what = match &stream {
            Some(s) => format!(
                "stream, {} consumer{}",
                s.consumers,
                if s.consumers == 1 { "" } else { "s" }
            ),
            None => name_of(mode),
        };
        let target = AmqpTarget {
            url,
            options,
            stream,
        };
        Ok(Made::One(Backend::Amqp(target), what))
    }
}

impl Fields {
    /// The stream mode's consumers; outside it, their fields are errors.
    fn stream_side(&self, at: &At<'_>, streaming: bool) -> Result<Option<StreamSide>, PlanError> {
        let cx = at.cx;
        if streaming {
            return Ok(Some(StreamSide {
                consumers: fields::positive_or(cx, &at.f("consumers"), &self.consumers, 1)?,
                drain: match &self.drain {
                    Some(d) => cx.duration(d, &at.f("drain"))?,
                    None => std::time::Duration::from_secs(2),
                },
            }));
        }
        let only = |name: &str, at_offset: Option<std::ops::Range<usize>>| match at_offset {
            Some(span) => Err(cx.err_at(
                cx.line(span.start),
                at.f(name),
                "only with mode = \"stream\"",
            )),
            None => Ok(()),
        };
        only("consumers", self.consumers.as_ref().map(|v| v.span()))?;
        only("drain", self.drain.as_ref().map(|v| v.span()))?;
        only("max_lag", self.max_lag.as_ref().map(|v| v.span()))?;
        Ok(None)
    }
}
