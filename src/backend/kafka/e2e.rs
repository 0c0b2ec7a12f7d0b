//! `-w e2e` around the engine's run: consumers on every partition start before the first
//! record and drain after the last, measured apart; their figures close the run.

use super::{EndToEndSide, KafkaTarget};
use crate::backend::{Ran, RunArgs, Side};
use crate::exit::AppError;
use perfbase_core::closing::Closing;
use perfbase_core::result::{Measurement, RunResult};
use perfbase_drivers::kafka::{Broker, EndToEnd};

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
    let producer = target.producer_for(args.cfg);
    match args.drive(producer) {
        Ok(ran) => Ok(finish(consumers, ran)),
        Err(e) => {
            consumers.finish(0);
            Err(e)
        }
    }
}

/// Waits for the records still on their way, then adds the consumers' measurement and how
/// many acknowledged records never arrived.
fn finish(consumers: EndToEnd, mut ran: Ran) -> Ran {
    let produced = ran
        .outcomes
        .iter()
        .rev()
        .find(|o| o.spec.record)
        .map_or(0, |o| {
            let m = o.measurement();
            m.requests.saturating_sub(m.errors.values().sum::<u64>())
        });
    let consumed = consumers.finish(produced);
    ran.extras.insert("produced".into(), produced.into());
    ran.extras.insert(
        "unconsumed".into(),
        produced.saturating_sub(consumed.received).into(),
    );
    ran.consumed = Some(Measurement::from_recorder(
        &consumed.recorder,
        consumed.elapsed,
        None,
    ));
    ran
}

fn unconsumed(extras: &std::collections::BTreeMap<String, serde_json::Value>) -> u64 {
    extras
        .get("unconsumed")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

/// A command's closing: the consumers' side, and a warning when records were lost or late.
pub(super) fn closing(target: &KafkaTarget, result: &RunResult) -> Vec<Closing> {
    let Some(side) = &target.e2e else {
        return Vec::new();
    };
    let Some(consume) = result.phases.iter().find(|p| p.name == "consume") else {
        return Vec::new();
    };
    let left = unconsumed(&result.config.protocol);
    if left > 0 {
        errln!(
            "perfbase: {} acknowledged records did not reach the consumers within --drain {:?} \
             of the last one",
            perfbase_core::units::thousands(left),
            side.drain
        );
    }
    vec![Closing::Consumed {
        measurement: Box::new(consume.measurement.clone()),
        consumers: side.consumers,
        left,
    }]
}

/// A plan scenario's consumers, measured apart, over every run of the scenario.
pub(super) fn closing_blocks(target: &KafkaTarget, scenario: &str, side: &Side) -> Vec<Closing> {
    let (Some(e2e), Some(consumed)) = (&target.e2e, &side.consumed) else {
        return Vec::new();
    };
    vec![Closing::Block {
        title: Some(format!("consumers of {scenario}:")),
        body: vec![Closing::Consumed {
            measurement: Box::new(consumed.clone()),
            consumers: e2e.consumers,
            left: unconsumed(&side.extras),
        }],
    }]
}
