//! `perfbase redis`, `amqp`, `nats`, `mqtt` and `mongo` end to end against the real Redis
//! (standalone and a 3-node cluster), RabbitMQ, NATS, Mosquitto and FerretDB started by
//! scripts/services.sh, one file per service:
//!
//! - `redis`: the suite, pipelines, the cluster, a server stopped mid-run, Redis plans;
//! - `rabbitmq`: round trips, confirms, stream mode, a server stopped mid-run, plans;
//! - `nats_mqtt`: NATS and MQTT round trips in every mode, and a plan sweeping all three
//!   brokers;
//! - `mongo`: the suite, the open model, a server stopped mid-run, missing collections.

use crate::common::*;
use serde_json::Value;

mod kafka;
mod mongo;
mod nats_mqtt;
mod rabbitmq;
mod redis;

/// Runs perfbase with a JSON result; returns (exit code, stdout + stderr, result).
fn pb(args: &[&str]) -> (i32, String, Value) {
    pb_env(args, &[])
}
