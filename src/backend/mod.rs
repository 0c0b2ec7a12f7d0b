//! The one seam between what a workload loads and the protocol drivers. Each protocol is one
//! module here (`http.rs`, `grpc.rs`, `ws.rs`, `sql.rs`, `redis.rs`, `amqp.rs`, `nats.rs`, `mqtt.rs`, `mongo.rs`,
//! `vault.rs`) holding its target, its driver's construction, its set-up, its settings, its
//! server's version, its closing lines and its page section, behind the [`Protocol`] trait.
//! [`Backend`] is the list of them, made by the one `protocols!` line per protocol below;
//! its methods are one-line delegations, so a new protocol is a module, a line here, and
//! whatever the compiler then names (the plan's and the flags' readers).

#[cfg(feature = "amqp")]
mod amqp;
#[cfg(any(feature = "redis", feature = "mongo"))]
mod closing;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
#[cfg(feature = "mongo")]
mod mongo;
#[cfg(feature = "mqtt")]
mod mqtt;
#[cfg(feature = "nats")]
mod nats;
pub mod options;
mod protocol;
#[cfg(feature = "redis")]
mod redis;
pub mod setup;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "vault")]
mod vault;
#[cfg(feature = "ws")]
mod ws;

use crate::exit::AppError;
use perfbase_core::result::{Measurement, RunResult};
use perfbase_engine::{EngineConfig, Observer, PhaseSpec};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[cfg(feature = "amqp")]
pub use amqp::{AmqpTarget, StreamSide};
#[cfg(feature = "grpc")]
pub use grpc::GrpcTarget;
pub use http::{HttpRequests, HttpTarget};
#[cfg(feature = "mongo")]
pub use mongo::MongoTarget;
#[cfg(feature = "mqtt")]
pub use mqtt::MqttTarget;
#[cfg(feature = "nats")]
pub use nats::NatsTarget;
pub use options::Dialect;
pub use protocol::{
    BrokerTarget, Protocol, Ran, RunArgs, BACKEND_MAX_INFLIGHT, DEFAULT_MAX_INFLIGHT,
};
#[cfg(feature = "redis")]
pub use redis::RedisTarget;
#[cfg(feature = "sql")]
pub use sql::{init_tables, SqlTarget};
#[cfg(feature = "vault")]
pub use vault::{TokenSource, VaultTarget};
#[cfg(feature = "ws")]
pub use ws::WsTarget;

#[cfg(not(feature = "http"))]
compile_error!("perfbase needs its `http` feature: the demo and the reference service run on it");

/// Declares [`Backend`] with one variant per protocol (built with its cargo feature) and the
/// two accessors that hand a variant's target over as a [`Protocol`]: the one list of
/// protocols, so adding one is a line here, and every `match` over `Backend` elsewhere is a
/// compile error until it says what the new protocol does.
macro_rules! protocols {
    ($($(#[$doc:meta])* $feature:literal => $variant:ident($target:ty),)*) => {
        /// What a workload loads: the protocol and its settings.
        #[derive(Debug, Clone)]
        pub enum Backend {
            $($(#[$doc])* #[cfg(feature = $feature)] $variant($target),)*
        }

        impl Backend {
            /// The protocol's own module, behind its trait.
            pub fn inner(&self) -> &dyn Protocol {
                match self {
                    $(#[cfg(feature = $feature)] Backend::$variant(t) => t,)*
                }
            }

            fn inner_mut(&mut self) -> &mut dyn Protocol {
                match self {
                    $(#[cfg(feature = $feature)] Backend::$variant(t) => t,)*
                }
            }
        }
    };
}

protocols! {
    "http" => Http(HttpTarget),
    /// gRPC over HTTP/2 (h2c or TLS).
    "grpc" => Grpc(GrpcTarget),
    /// PostgreSQL, MySQL or MariaDB.
    "sql" => Sql(SqlTarget),
    "redis" => Redis(RedisTarget),
    /// RabbitMQ; the URL carries the password from the environment, never shown.
    "amqp" => Amqp(AmqpTarget),
    "nats" => Nats(NatsTarget),
    "mqtt" => Mqtt(MqttTarget),
    "mongo" => Mongo(MongoTarget),
    /// HashiCorp Vault or OpenBao, over HTTP; the token is read when the driver is built.
    "vault" => Vault(VaultTarget),
    /// WebSocket (ws:// or wss://): a message and its reply per op.
    "ws" => Ws(WsTarget),
}

impl Backend {
    /// The same load without its set-up (tables made, collections rebuilt, keys prefilled):
    /// a suite's later operations, which run on what the first one set up.
    pub fn without_setup(mut self) -> Backend {
        self.inner_mut().skip_setup();
        self
    }

    /// The protocol results carry.
    pub fn protocol(&self) -> &'static str {
        self.inner().name()
    }

    /// The section of a baselines page a scenario on this backend is shown in.
    pub fn section(&self) -> &'static str {
        self.inner().section()
    }

    /// Closed-model connections without -c.
    pub fn default_connections(&self) -> u64 {
        self.inner().default_connections()
    }

    /// The open model's cap on requests in flight without --max-inflight.
    pub fn default_max_inflight(&self) -> u64 {
        self.inner().default_max_inflight()
    }

    /// Whether its consumers run apart from the engine (AMQP's stream mode): a warm-up's
    /// messages would be counted, and the scenario's runs must each end after a step.
    pub fn streams(&self) -> bool {
        self.inner().streams()
    }

    /// Builds the driver and drops it: a bad URL or option is an error before any load.
    pub fn validate(&self) -> Result<(), String> {
        self.remember_secrets();
        self.inner().validate()
    }

    /// Remembers the secrets its URL carries (a password, a token parameter), so that a
    /// server echoing one never gets it into a sample or a message. Headers and tokens are
    /// remembered where the drivers read them.
    fn remember_secrets(&self) {
        perfbase_core::redact::remember_url(&self.server_url());
    }

    /// Runs `specs` with this backend's driver, after its set-up; input errors start with
    /// `context`.
    pub fn run(
        &self,
        context: &str,
        cfg: &EngineConfig,
        specs: &[PhaseSpec],
        interrupt: Arc<AtomicBool>,
        observer: &mut dyn Observer,
    ) -> Result<Ran, AppError> {
        self.remember_secrets();
        self.inner().run(RunArgs {
            context,
            cfg,
            specs,
            interrupt,
            observer,
        })
    }

    /// The backend's settings for a result's `config.protocol` (secrets redacted).
    pub fn settings(&self) -> BTreeMap<String, Value> {
        self.inner().settings()
    }

    /// The URL the backend loads (with its password: show it through `redact::url`).
    pub fn server_url(&self) -> String {
        self.inner().server_url()
    }

    /// Product and version as the server reports them, or why they are not known.
    pub fn server_version(&self) -> String {
        self.remember_secrets();
        match self.inner().server_version() {
            Ok(v) => v,
            Err(e) => format!("not reported: {}", perfbase_core::redact::text(&e)),
        }
    }

    /// What a command prints after its result table, in its protocol's words (pgbench's
    /// block, GET misses, a cluster's replies per node); `single` when the run was one
    /// workload rather than a suite.
    pub fn closing_lines(
        &self,
        extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        single: bool,
    ) -> String {
        self.inner().closing_lines(extras, result, single)
    }

    /// What scenario `scenario` of a plan closes with beyond its tables (pgbench's block per
    /// phase, a stream's consumers, a cluster's replies per node), from its side figures.
    pub fn closing_blocks(&self, scenario: &str, side: &Side, result: &RunResult) -> Vec<String> {
        self.inner().closing_blocks(scenario, side, result)
    }
}

/// A scenario's side figures, over all its engine runs: what its driver reported (a
/// cluster's replies per node, misses, the TPC-B scale) and a stream's consumer side.
#[derive(Default)]
pub struct Side {
    pub extras: BTreeMap<String, Value>,
    pub consumed: Option<Measurement>,
}
