//! The one seam between what a workload loads and the protocol drivers, and the one list of
//! protocols (`each_protocol!`). Each protocol is one module here (`http.rs`, `grpc.rs`,
//! `sql/`…) holding its target, its driver's construction, its set-up, its settings, its
//! server's version and its closing figures, behind the [`Target`] trait; its flags are
//! `cli/NAME.rs` and its plan fields `plan/NAME.rs`, both found through the same list.
//! [`Backend`]'s methods are one-line delegations, so a new protocol is a line in the list, its
//! module, and whatever the compiler then names.

// The one list of protocols: each line is a protocol's module (the same name under
// src/backend/, src/cli/ and src/plan/), its `Backend` variant and target type, its cargo
// feature, its URL schemes, how errors name its targets, and whether it is also reached as
// `protocol = "NAME"` on an http(s):// target. `each_protocol!(m)` hands the list to macro `m`:
// here it makes `Backend` and `Kind`, in cli/ the subcommands, in plan/ the workload readers,
// so a new protocol is a line here and the files the compiler then asks for.
macro_rules! each_protocol {
    ($then:ident) => {
        $then! {
            /// HTTP/1.1 and HTTP/2, with or without TLS.
            http => Http(HttpTarget), "http", ["http", "https"], "http(s)://", false;
            /// PostgreSQL, MySQL or MariaDB.
            sql => Sql(SqlTarget), "sql", ["postgres", "postgresql", "mysql", "mariadb"],
                "postgres:// and mysql://", false;
            redis => Redis(RedisTarget), "redis", ["redis", "redis+cluster"], "redis://", false;
            /// gRPC over HTTP/2 (h2c or TLS).
            grpc => Grpc(GrpcTarget), "grpc", ["grpc", "grpcs"], "grpc(s)://", true;
            /// RabbitMQ; the URL carries the password from the environment, never shown.
            amqp => Amqp(AmqpTarget), "amqp", ["amqp"], "amqp://", false;
            /// Apache Kafka: produce, consume in a group, or both end to end.
            kafka => Kafka(KafkaTarget), "kafka", ["kafka"], "kafka://", false;
            nats => Nats(NatsTarget), "nats", ["nats"], "nats://", false;
            mqtt => Mqtt(MqttTarget), "mqtt", ["mqtt"], "mqtt://", false;
            mongo => Mongo(MongoTarget), "mongo", ["mongodb"], "mongodb://", false;
            /// HashiCorp Vault or OpenBao, over HTTP; the token is read when the driver is built.
            vault => Vault(VaultTarget), "vault", [], "Vault (protocol = \"vault\")", true;
            /// WebSocket (ws:// or wss://): a message and its reply per op.
            ws => Ws(WsTarget), "ws", ["ws", "wss"], "ws(s)://", true;
        }
    };
}
pub(crate) use each_protocol;

mod apart;
mod closing;
pub mod options;
mod protocol;
pub mod setup;

use crate::exit::AppError;
use perfbase_core::closing::Closing;
use perfbase_core::result::{Measurement, RunResult};
use perfbase_engine::{EngineConfig, Observer, PhaseSpec};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use protocol::{
    BrokerTarget, Ran, RunArgs, Target, BACKEND_MAX_INFLIGHT, DEFAULT_MAX_INFLIGHT,
};

#[cfg(not(feature = "http"))]
compile_error!("perfbase needs its `http` feature: the demo and the reference service run on it");

/// From the list: each protocol's module (built with its feature), [`Backend`] with a variant
/// per protocol and the accessors that hand a variant's target over as a [`Target`], and
/// [`Kind`], which protocol a target speaks, with what the list says of it. Every `match`
/// over either elsewhere is a compile error until it says what a new protocol does.
macro_rules! declare {
    ($($(#[$doc:meta])* $m:ident => $variant:ident($target:ident), $feature:literal,
       [$($scheme:literal),*], $shown:literal, $above_http:literal;)*) => {
        $(#[cfg(feature = $feature)] pub mod $m;)*

        /// What a workload loads: the protocol and its settings.
        #[derive(Debug, Clone)]
        pub enum Backend {
            $($(#[$doc])* #[cfg(feature = $feature)] $variant($m::$target),)*
        }

        impl Backend {
            /// The protocol's own module, behind its trait.
            pub fn inner(&self) -> &dyn Target {
                match self {
                    $(#[cfg(feature = $feature)] Backend::$variant(t) => t,)*
                }
            }

            fn inner_mut(&mut self) -> &mut dyn Target {
                match self {
                    $(#[cfg(feature = $feature)] Backend::$variant(t) => t,)*
                }
            }
        }

        /// Which protocol a target speaks, whether this binary was built with it or not (a
        /// plan naming one left out is told which feature to build).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Kind {
            $($(#[$doc])* $variant,)*
        }

        impl Kind {
            /// Every protocol, in the list's order.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant),*];

            /// The protocol a URL scheme names.
            pub fn of(scheme: &str) -> Option<Kind> {
                match scheme {
                    $($($scheme => Some(Kind::$variant),)*)*
                    _ => None,
                }
            }

            /// The name of its module and its cargo feature.
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$variant => $feature,)*
                }
            }

            /// The URL schemes that name it.
            pub fn schemes(self) -> &'static [&'static str] {
                match self {
                    $(Kind::$variant => &[$($scheme),*],)*
                }
            }

            /// Whether this binary has it.
            pub fn built(self) -> bool {
                match self {
                    $(Kind::$variant => cfg!(feature = $feature),)*
                }
            }

            /// Its targets, in an error's words (`redis://`).
            pub fn shown(self) -> &'static str {
                match self {
                    $(Kind::$variant => $shown,)*
                }
            }

            /// Whether an http(s):// target reaches it with `protocol = "NAME"`.
            pub fn above_http(self) -> bool {
                match self {
                    $(Kind::$variant => $above_http,)*
                }
            }
        }
    };
}
each_protocol!(declare);

impl Kind {
    /// The protocols a field is for, in an error's words.
    pub fn describe(kinds: &[Kind]) -> String {
        kinds
            .iter()
            .map(|k| k.shown())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The protocols reached with `protocol = "NAME"` on an http(s):// target.
    pub fn above_http_names() -> Vec<&'static str> {
        Kind::ALL
            .iter()
            .filter(|k| k.above_http())
            .map(|k| k.name())
            .collect()
    }
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

    /// The kind of service it loads, as people name it (a page groups scenarios by it).
    pub fn service_kind(&self) -> &'static str {
        self.inner().service_kind()
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

    /// What a command shows after its result table, in its protocol's figures (GET misses,
    /// a cluster's replies per node, a stream's consumers); `single` when the run was one
    /// workload rather than a suite.
    pub fn closing(
        &self,
        extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        single: bool,
    ) -> Vec<Closing> {
        self.inner().closing(extras, result, single)
    }

    /// What scenario `scenario` of a plan closes with beyond its tables (pgbench's block per
    /// phase, a stream's consumers, a cluster's replies per node), from its side figures.
    pub fn closing_blocks(&self, scenario: &str, side: &Side, result: &RunResult) -> Vec<Closing> {
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
