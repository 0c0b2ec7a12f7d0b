//! Consumers measured apart from the load (RabbitMQ's stream mode, Kafka's e2e): what the
//! producers delivered, the consumers' side added to the run, and the closing figures that
//! show it, the same for every broker.

use super::{Ran, Side};
use perfbase_core::closing::Closing;
use perfbase_core::result::{Measurement, RunResult};
use perfbase_core::Recorder;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// What the consumers of a run measured.
pub struct Received<'a> {
    pub recorder: &'a Recorder,
    /// From the moment they were ready until the last message.
    pub elapsed: Duration,
    pub count: u64,
}

/// The operations of the run's recorded phase that succeeded: what the consumers should get.
pub fn delivered(ran: &Ran) -> u64 {
    ran.outcomes
        .iter()
        .rev()
        .find(|o| o.spec.record)
        .map_or(0, |o| {
            let m = o.measurement();
            m.requests.saturating_sub(m.errors.values().sum::<u64>())
        })
}

/// Adds the consumers' side to `ran`: `sent` under `key` (`published`, `produced`), how many
/// never arrived, and their measurement.
pub fn add(ran: &mut Ran, key: &str, sent: u64, received: Received<'_>) {
    ran.extras.insert(key.into(), sent.into());
    ran.extras.insert(
        "unconsumed".into(),
        sent.saturating_sub(received.count).into(),
    );
    ran.consumed = Some(Measurement::from_recorder(
        received.recorder,
        received.elapsed,
        None,
    ));
}

/// Messages sent and never consumed, from a run's side figures.
fn unconsumed(extras: &BTreeMap<String, Value>) -> u64 {
    extras
        .get("unconsumed")
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// A command's closing: the consumers' side, and a warning naming `lost` (the messages that
/// never arrived, in the broker's words) when there were any.
pub fn closing(result: &RunResult, consumers: u64, drain: Duration, lost: &str) -> Vec<Closing> {
    let Some(consume) = result.phases.iter().find(|p| p.name == "consume") else {
        return Vec::new();
    };
    let left = unconsumed(&result.config.protocol);
    if left > 0 {
        errln!(
            "perfbase: {} {lost} within --drain {drain:?} of the last one: the consumers did \
             not keep up",
            perfbase_core::units::thousands(left),
        );
    }
    vec![Closing::Consumed {
        measurement: Box::new(consume.measurement.clone()),
        consumers,
        left,
    }]
}

/// A plan scenario's consumers, measured apart, over every run of the scenario.
pub fn closing_blocks(scenario: &str, side: &Side, consumers: u64) -> Vec<Closing> {
    let Some(consumed) = &side.consumed else {
        return Vec::new();
    };
    vec![Closing::Block {
        title: Some(format!("consumers of {scenario}:")),
        body: vec![Closing::Consumed {
            measurement: Box::new(consumed.clone()),
            consumers,
            left: unconsumed(&side.extras),
        }],
    }]
}
