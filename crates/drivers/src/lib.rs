//! perfbase-drivers: one folder and one cargo feature per protocol. Each driver implements
//! [`perfbase_core::Driver`]: it opens sessions and executes operations, returning
//! [`perfbase_core::Outcome`]s. Drivers never read clocks or touch histograms (the engine
//! does), and must not depend on the engine, reports or store.

// A build with some protocols left out leaves helpers they share unused (the URL's user info,
// a batch's tally); the default build, with every protocol, still reports dead code.
#![cfg_attr(
    not(all(
        feature = "http",
        feature = "grpc",
        feature = "ws",
        feature = "postgres",
        feature = "mysql",
        feature = "amqp",
        feature = "nats",
        feature = "mqtt",
        feature = "redis",
        feature = "mongo",
        feature = "vault"
    )),
    allow(dead_code)
)]

#[cfg(feature = "amqp")]
pub mod amqp;
#[cfg(any(feature = "amqp", feature = "kafka"))]
mod apart;
#[cfg(any(feature = "postgres", feature = "amqp"))]
mod batch;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(feature = "http")]
pub mod http;
pub mod input;
#[cfg(feature = "kafka")]
pub mod kafka;
#[cfg(feature = "mongo")]
pub mod mongo;
#[cfg(feature = "mqtt")]
pub mod mqtt;
#[cfg(feature = "nats")]
pub mod nats;
pub mod operation;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(feature = "script")]
pub mod script;
pub mod sql;
#[cfg(any(
    feature = "nats",
    feature = "mqtt",
    feature = "redis",
    feature = "mysql"
))]
mod userinfo;
#[cfg(feature = "vault")]
pub mod vault;
pub mod workload;
#[cfg(feature = "ws")]
pub mod ws;

pub use operation::Operation;
