//! The consumer: each session is one member of a consumer group reading the topic, and an op
//! is one record taken from it (from librdkafka's prefetched queue when it has one, which is
//! how `kafka-consumer-perf-test` counts too). The group's first op waits for its join.

use super::errors::{describe, outcome_of};
use super::{Broker, Commit, ConsumeOptions, From, KafkaError};
use perfbase_core::{Driver, Outcome, Session};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, StreamConsumer};
use rdkafka::message::Message;

/// What a consumer may hold prefetched, per consumer: librdkafka's queue stops fetching there.
const QUEUED_KBYTES: &str = "65536";

/// Consumes `topic` in a group: the driver of `-w consume`.
pub struct ConsumeDriver {
    broker: Broker,
    topic: String,
    options: ConsumeOptions,
}

impl ConsumeDriver {
    pub fn new(
        broker: &Broker,
        topic: &str,
        options: ConsumeOptions,
    ) -> Result<ConsumeDriver, KafkaError> {
        let driver = ConsumeDriver {
            broker: broker.clone(),
            topic: topic.to_string(),
            options,
        };
        // A configuration librdkafka refuses is an error now, not at the first session.
        drop(
            driver
                .config()
                .create::<BaseConsumer>()
                .map_err(|e| KafkaError::Options(describe(&e)))?,
        );
        Ok(driver)
    }

    /// A stream consumer: made inside a tokio runtime (a session's), whose reactor it needs.
    fn consumer(&self) -> Result<StreamConsumer, KafkaError> {
        self.config()
            .create()
            .map_err(|e| KafkaError::Options(describe(&e)))
    }

    fn config(&self) -> rdkafka::ClientConfig {
        let mut config = self.broker.config();
        config
            .set("group.id", &self.options.group)
            .set(
                "auto.offset.reset",
                match self.options.from {
                    From::Earliest => "earliest",
                    From::Latest => "latest",
                },
            )
            .set(
                "enable.auto.commit",
                (self.options.commit == Commit::Auto).to_string(),
            )
            .set("enable.partition.eof", "false")
            .set("queued.max.messages.kbytes", QUEUED_KBYTES)
            .set("fetch.max.bytes", "52428800");
        config
    }

    /// Reads the topic's partitions before the run (a missing topic or a refused login is an
    /// error before any load).
    pub fn prepare(&self) -> Result<i32, KafkaError> {
        super::admin::partitions(&self.broker, &self.topic)
    }
}

impl Driver for ConsumeDriver {
    type Session = ConsumeSession;

    async fn open(&self, _worker: usize) -> Result<ConsumeSession, Outcome> {
        let consumer = self
            .consumer()
            .map_err(|e| Outcome::error(perfbase_core::Class::Connect, e.to_string()))?;
        consumer
            .subscribe(&[&self.topic])
            .map_err(|e| outcome_of(&e))?;
        Ok(ConsumeSession {
            consumer,
            commit: self.options.commit,
        })
    }
}

pub struct ConsumeSession {
    consumer: StreamConsumer,
    commit: Commit,
}

impl Session for ConsumeSession {
    async fn execute(&mut self, _op: u64) -> Outcome {
        let m = match self.consumer.recv().await {
            Ok(m) => m,
            Err(e) => return outcome_of(&e),
        };
        let bytes = (m.payload_len() + m.key().map_or(0, <[u8]>::len)) as u64;
        let committed = match self.commit {
            Commit::Sync => self.consumer.commit_message(&m, CommitMode::Sync),
            Commit::Async => self.consumer.commit_message(&m, CommitMode::Async),
            Commit::Auto | Commit::None => Ok(()),
        };
        match committed {
            Ok(()) => Outcome::ok(bytes, 0),
            Err(e) => outcome_of(&e).with_bytes(bytes, 0),
        }
    }

    /// Leaves the group at once rather than when the broker's session timeout expires.
    async fn close(self) {
        self.consumer.unsubscribe();
    }
}
