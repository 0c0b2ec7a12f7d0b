//! MQTT workloads: publishing to the session's own topic at QoS 0 or 1 and awaiting the
//! message back, end to end through the broker.

use super::protocol::{BrokerTarget, Extras, Target, Ran, RunArgs, BACKEND_MAX_INFLIGHT};
use crate::exit::AppError;
use perfbase_drivers::mqtt::{MqttDriver, MqttOptions};
use serde_json::Value;
use std::collections::BTreeMap;

/// A workload against an MQTT broker.
pub type MqttTarget = BrokerTarget<MqttOptions>;

impl Extras for MqttDriver {}

impl Target for MqttTarget {
    fn name(&self) -> &'static str {
        "mqtt"
    }

    fn service_kind(&self) -> &'static str {
        "MQTT"
    }

    /// One publisher, as the brokers' own benchmarks start.
    fn default_connections(&self) -> u64 {
        1
    }

    fn default_max_inflight(&self) -> u64 {
        BACKEND_MAX_INFLIGHT
    }

    /// Topics are the sessions' own; nothing is set up.
    fn skip_setup(&mut self) {}

    fn validate(&self) -> Result<(), String> {
        MqttDriver::new(&self.url, self.options)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        args.drive(MqttDriver::new(&self.url, self.options))
    }

    fn settings(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        m.insert("qos".into(), self.options.qos.into());
        m.insert("message_size".into(), self.options.message_size.into());
        m
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    /// MQTT's CONNACK names no server.
    fn server_version(&self) -> Result<String, String> {
        Ok("MQTT (the protocol carries no server version)".into())
    }
}
