//! NATS workloads: core publish/subscribe to the session's own subject, request/reply, or
//! JetStream publishing until the PubAck (its stream removed by the driver's clean-up).

use super::options::name_of;
use clap::ValueEnum;
use perfbase_drivers::nats::NatsMode;
use super::protocol::{
    ask_version, BrokerTarget, Extras, Target, Ran, RunArgs, BACKEND_MAX_INFLIGHT,
};
use crate::exit::AppError;
use perfbase_drivers::nats::{self, NatsDriver, NatsOptions};
use serde_json::Value;
use std::collections::BTreeMap;

/// A workload against a NATS server.
pub type NatsTarget = BrokerTarget<NatsOptions>;

impl Extras for NatsDriver {}

impl Target for NatsTarget {
    fn name(&self) -> &'static str {
        "nats"
    }

    fn service_kind(&self) -> &'static str {
        "NATS"
    }

    /// One publisher, as the brokers' own benchmarks start.
    fn default_connections(&self) -> u64 {
        1
    }

    fn default_max_inflight(&self) -> u64 {
        BACKEND_MAX_INFLIGHT
    }

    /// Subjects are the sessions' own; nothing is set up.
    fn skip_setup(&mut self) {}

    fn validate(&self) -> Result<(), String> {
        NatsDriver::new(&self.url, self.options)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        args.drive(NatsDriver::new(&self.url, self.options))
    }

    fn settings(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        m.insert(
            "mode".into(),
            name_of(NatsModeName::of(self.options.mode)).into(),
        );
        m.insert("message_size".into(), self.options.message_size.into());
        m
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    fn server_version(&self) -> Result<String, String> {
        ask_version(nats::server_version(&self.url))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NatsModeName {
    /// Core publish to a subject the session subscribes to: end-to-end latency
    Pubsub,
    /// Request/reply through a responder
    Request,
    /// JetStream publish, until the PubAck
    Jetstream,
}

impl NatsModeName {
    pub fn mode(self) -> NatsMode {
        match self {
            NatsModeName::Pubsub => NatsMode::PubSub,
            NatsModeName::Request => NatsMode::Request,
            NatsModeName::Jetstream => NatsMode::JetStream,
        }
    }

    pub fn of(mode: NatsMode) -> NatsModeName {
        match mode {
            NatsMode::PubSub => NatsModeName::Pubsub,
            NatsMode::Request => NatsModeName::Request,
            NatsMode::JetStream => NatsModeName::Jetstream,
        }
    }
}

