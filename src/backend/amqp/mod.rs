//! RabbitMQ (AMQP 0-9-1) workloads: a round trip through a queue, publishing alone, or a
//! stream whose consumers run apart from the publishers (`stream.rs`), as PerfTest runs them.

mod names;
mod stream;
pub use names::{AckName, AmqpModeName};

use super::options::name_of;
use super::protocol::{ask_version, Extras, Target, Ran, RunArgs, BACKEND_MAX_INFLIGHT};
use super::{apart, Side};
use crate::exit::AppError;
use perfbase_core::closing::Closing;
use perfbase_core::result::RunResult;
use perfbase_drivers::amqp::{self, AmqpDriver};
use serde_json::Value;
use std::collections::BTreeMap;

/// A workload against RabbitMQ.
#[derive(Debug, Clone)]
pub struct AmqpTarget {
    /// With the password from the environment; never shown.
    pub url: String,
    pub options: amqp::AmqpOptions,
    /// Stream mode: consumers apart from the publishers, on `options.queue`.
    pub stream: Option<StreamSide>,
}

/// The consumer side of a stream: PerfTest's consumers on the publishers' queue.
#[derive(Debug, Clone)]
pub struct StreamSide {
    pub consumers: u64,
    /// Once publishing stopped, how long the consumers wait for messages still queued.
    pub drain: std::time::Duration,
}

impl AmqpTarget {
    fn driver(&self) -> Result<AmqpDriver, String> {
        AmqpDriver::new(&self.url, self.options.clone()).map_err(|e| e.to_string())
    }
}

impl Extras for AmqpDriver {}

impl Target for AmqpTarget {
    fn name(&self) -> &'static str {
        "amqp"
    }

    fn service_kind(&self) -> &'static str {
        "RabbitMQ (AMQP)"
    }

    /// One publisher, as PerfTest starts.
    fn default_connections(&self) -> u64 {
        1
    }

    fn default_max_inflight(&self) -> u64 {
        BACKEND_MAX_INFLIGHT
    }

    /// Queues are the sessions' own (or the stream's, made by its consumers).
    fn skip_setup(&mut self) {}

    fn streams(&self) -> bool {
        self.stream.is_some()
    }

    fn validate(&self) -> Result<(), String> {
        self.driver().map(drop)
    }

    /// In stream mode, the consumers start before the first publish and drain after the
    /// last, whatever became of the run.
    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        let group = match &self.stream {
            Some(side) => Some(stream::start(self, side, &args.interrupt)?),
            None => None,
        };
        let ran = args.drive(self.driver());
        match (group, ran) {
            (Some(group), Ok(ran)) => Ok(stream::finish(group, ran)),
            (Some(group), failed) => {
                group.finish(0);
                failed
            }
            (None, ran) => ran,
        }
    }

    fn settings(&self) -> BTreeMap<String, Value> {
        let o = &self.options;
        let mut m = BTreeMap::new();
        m.insert("mode".into(), name_of(AmqpModeName::of(o.mode)).into());
        m.insert("message_size".into(), o.message_size.into());
        m.insert("persistent".into(), o.persistent.into());
        m.insert("confirms".into(), o.confirms.into());
        m.insert("ack".into(), name_of(AckName::of(o.ack)).into());
        m.insert("pipeline".into(), o.pipeline.into());
        if let Some(max) = o.max_lag {
            m.insert("max_lag".into(), max.into());
        }
        if let (Some(side), Some(queue)) = (&self.stream, &o.queue) {
            m.insert("consumers".into(), side.consumers.into());
            m.insert("queue".into(), queue.clone().into());
        }
        m
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    fn server_version(&self) -> Result<String, String> {
        ask_version(amqp::server_version(&self.url))
    }

    /// The consumers' side of a stream, and a warning when they did not keep up.
    fn closing(
        &self,
        _extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        _single: bool,
    ) -> Vec<Closing> {
        let Some(side) = &self.stream else {
            return Vec::new();
        };
        let lost = "published messages were not consumed";
        apart::closing(result, side.consumers, side.drain, lost)
    }

    /// A stream scenario's consumers, measured apart, over every run of the scenario.
    fn closing_blocks(&self, scenario: &str, side: &Side, _result: &RunResult) -> Vec<Closing> {
        match &self.stream {
            Some(stream) => apart::closing_blocks(scenario, side, stream.consumers),
            None => Vec::new(),
        }
    }
}
