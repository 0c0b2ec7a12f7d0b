//! `-w e2e` around the engine's run: consumers on every partition start before the first
//! record and drain after the last, measured apart; their figures close the run.

use super::{EndToEndSide, KafkaTarget};
use crate::backend::{apart, Ran, RunArgs, Side};
use crate::exit::AppError;
use perfbase_core::closing::Closing;
use perfbase_core::result::RunResult;
use perfbase_drivers::kafka::{Broker, EndToEnd};

/// The run's figure of how many consumers read the topic (see [`EndToEnd::reading`]).
const READING: &str = "consumers_reading";

fn reading(extras: &std::collections::BTreeMap<String, serde_json::Value>) -> Option<u64> {
    extras.get(READING).and_then(serde_json::Value::as_u64)
}

/// The consumers started, the producers' run, and the consumers' side added to it.
pub(super) fn run(
    target: &KafkaTarget,
    side: &EndToEndSide,
    args: RunArgs<'_>,
) -> Result<Ran, AppError> {
    let broker = Broker::parse(&target.url).map_err(|e| args.bad("", e))?;
    let consumers = EndToEnd::start(
        &broker,
        &target.topic,
        side.consumers as usize,
        side.drain,
        args.interrupt.clone(),
    )
    .map_err(|e| AppError::Unusable(e.to_string()))?;
    let reading = consumers.reading() as u64;
    if reading < side.consumers {
        errln!(
            "perfbase: warning: --consumers {}: topic {} has {reading} partition{}, so {reading} \
             consumer{} read it (create it with --init --partitions N for more)",
            side.consumers,
            target.topic,
            if reading == 1 { "" } else { "s" },
            if reading == 1 { "" } else { "s" },
        );
    }
    let producer = target.producer_for(args.cfg);
    match args.drive(producer) {
        Ok(mut ran) => {
            ran.extras.insert(READING.into(), reading.into());
            Ok(finish(consumers, ran))
        }
        Err(e) => {
            consumers.finish(0);
            Err(e)
        }
    }
}

/// Waits for the records still on their way, then adds the consumers' measurement and how
/// many acknowledged records never arrived.
fn finish(consumers: EndToEnd, mut ran: Ran) -> Ran {
    let produced = apart::delivered(&ran);
    let consumed = consumers.finish(produced);
    let received = apart::Received {
        recorder: &consumed.recorder,
        elapsed: consumed.elapsed,
        count: consumed.received,
    };
    apart::add(&mut ran, "produced", produced, received);
    ran
}

/// A command's closing: the consumers' side, and a warning when records were lost or late.
pub(super) fn closing(target: &KafkaTarget, result: &RunResult) -> Vec<Closing> {
    let Some(side) = &target.e2e else {
        return Vec::new();
    };
    let lost = "acknowledged records did not reach the consumers";
    let reading = reading(&result.config.protocol).unwrap_or(side.consumers);
    apart::closing(result, reading, side.drain, lost)
}

/// A plan scenario's consumers, measured apart, over every run of the scenario.
pub(super) fn closing_blocks(target: &KafkaTarget, scenario: &str, side: &Side) -> Vec<Closing> {
    match &target.e2e {
        Some(e2e) => {
            let reading = reading(&side.extras).unwrap_or(e2e.consumers);
            apart::closing_blocks(scenario, side, reading)
        }
        None => Vec::new(),
    }
}
