//! perfbase-drivers: one folder and one cargo feature per protocol. Each driver implements
//! [`perfbase_core::Driver`]: it opens sessions and executes operations, returning
//! [`perfbase_core::Outcome`]s. Drivers never read clocks or touch histograms (the engine
//! does), and must not depend on the engine, reports or store.

#[cfg(feature = "amqp")]
pub mod amqp;
#[cfg(any(feature = "postgres", feature = "amqp"))]
mod batch;
#[cfg(feature = "grpc")]
pub mod grpc;
#[cfg(feature = "http")]
pub mod http;
pub mod input;
#[cfg(feature = "mongo")]
pub mod mongo;
#[cfg(feature = "mqtt")]
pub mod mqtt;
#[cfg(feature = "nats")]
pub mod nats;
pub mod operation;
#[cfg(feature = "redis")]
pub mod redis;
pub mod sql;
#[cfg(any(feature = "nats", feature = "mqtt"))]
mod userinfo;
#[cfg(feature = "vault")]
pub mod vault;
pub mod workload;
#[cfg(feature = "ws")]
pub mod ws;

pub use operation::Operation;
