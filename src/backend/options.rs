//! Protocol options that flags and plan files both name, each defined once. The enums derive
//! clap's `ValueEnum`, so `--mode publish` and `mode = "publish"` are read by the same
//! definition ([`choose`]) and list the same choices in their errors.

use clap::ValueEnum;
#[cfg(feature = "amqp")]
use perfbase_drivers::amqp::{AckMode, AmqpMode};
#[cfg(feature = "nats")]
use perfbase_drivers::nats::NatsMode;
#[cfg(feature = "sql")]
use perfbase_drivers::sql::{SqlWorkload, SuiteOp};
#[cfg(feature = "sql")]
use perfbase_drivers::Operation;

/// Which database family a SQL target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Mysql,
}

impl Dialect {
    /// The protocol name results carry: `postgres` or `mysql`.
    pub fn protocol(self) -> &'static str {
        match self {
            Dialect::Postgres => "postgres",
            Dialect::Mysql => "mysql",
        }
    }

    /// The dialect a URL's scheme names.
    pub fn of_url(url: &str) -> Option<Dialect> {
        let scheme = url.split("://").next()?;
        match scheme {
            "postgres" | "postgresql" => Some(Dialect::Postgres),
            "mysql" | "mariadb" => Some(Dialect::Mysql),
            _ => None,
        }
    }
}

#[cfg(feature = "amqp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AmqpModeName {
    /// Publish, then receive the same message: latency is end to end through the broker
    Roundtrip,
    /// Publish only (with --confirms: until the broker acknowledges)
    Publish,
    /// Publishers and --consumers apart on one queue, as RabbitMQ PerfTest: publish rate and
    /// latency, consume rate, end-to-end latency from the send stamp in each message
    Stream,
}

#[cfg(feature = "amqp")]
impl AmqpModeName {
    pub fn mode(self) -> AmqpMode {
        match self {
            AmqpModeName::Roundtrip => AmqpMode::RoundTrip,
            AmqpModeName::Publish => AmqpMode::Publish,
            AmqpModeName::Stream => AmqpMode::Stream,
        }
    }

    pub fn of(mode: AmqpMode) -> AmqpModeName {
        match mode {
            AmqpMode::RoundTrip => AmqpModeName::Roundtrip,
            AmqpMode::Publish => AmqpModeName::Publish,
            AmqpMode::Stream => AmqpModeName::Stream,
        }
    }
}

#[cfg(feature = "amqp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AckName {
    None,
    Auto,
    Manual,
}

#[cfg(feature = "amqp")]
impl AckName {
    pub fn mode(self) -> AckMode {
        match self {
            AckName::None => AckMode::None,
            AckName::Auto => AckMode::Auto,
            AckName::Manual => AckMode::Manual,
        }
    }

    pub fn of(mode: AckMode) -> AckName {
        match mode {
            AckMode::None => AckName::None,
            AckMode::Auto => AckName::Auto,
            AckMode::Manual => AckName::Manual,
        }
    }
}

#[cfg(feature = "nats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NatsModeName {
    /// Core publish to a subject the session subscribes to: end-to-end latency
    Pubsub,
    /// Request/reply through a responder
    Request,
    /// JetStream publish, until the PubAck
    Jetstream,
}

#[cfg(feature = "nats")]
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

/// The name a flag or a plan gives `v`.
pub fn name_of<T: ValueEnum>(v: T) -> String {
    v.to_possible_value()
        .map_or_else(String::new, |p| p.get_name().to_string())
}

/// Reads `text` (any case) as one of `T`'s names, among those `allowed` keeps; the error lists
/// the allowed names.
pub fn choose<T: ValueEnum + Copy>(text: &str, allowed: impl Fn(T) -> bool) -> Result<T, String> {
    let found = T::from_str(text, true).ok().filter(|v| allowed(*v));
    found.ok_or_else(|| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .copied()
            .filter(|v| allowed(*v))
            .map(name_of)
            .collect();
        format!("'{text}': use one of {}", names.join(", "))
    })
}

/// pgbench's scripts by name; the suite's operations follow them in [`sql_workload_names`].
#[cfg(feature = "sql")]
/// A pgbench script's workload at a scale.
type Script = fn(u32) -> SqlWorkload;

#[cfg(feature = "sql")]
const SQL_SCRIPTS: [(&str, Script); 3] = [
    ("tpcb", |scale| SqlWorkload::TpcB { scale }),
    ("tpcb-function", |scale| SqlWorkload::TpcBFunction { scale }),
    ("select-only", |scale| SqlWorkload::TpcBSelect { scale }),
];

#[cfg(feature = "sql")]
/// The built-in SQL workloads by name, as `--workload` and a plan's `builtin` give them.
pub fn sql_workload_names() -> String {
    let scripts: Vec<&str> = SQL_SCRIPTS.iter().map(|(name, _)| *name).collect();
    format!("{}, {}", scripts.join(", "), SuiteOp::names())
}

#[cfg(feature = "sql")]
/// A built-in SQL workload by name (`tpcb`, `tpcb-function`, `select-only` or an operation of
/// the suite).
pub fn sql_workload(name: &str, scale: u32) -> Option<SqlWorkload> {
    match SQL_SCRIPTS.iter().find(|(n, _)| *n == name) {
        Some((_, make)) => Some(make(scale)),
        None => SuiteOp::from_name(name).map(SqlWorkload::Suite),
    }
}
