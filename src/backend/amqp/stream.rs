//! RabbitMQ's stream mode around the engine's run: consumers on the publishers' queue start
//! before the first publish and drain after the last, measured apart, as PerfTest runs them.

use super::{AmqpTarget, StreamSide};
use crate::backend::Ran;
use crate::exit::AppError;
use perfbase_core::result::Measurement;
use perfbase_drivers::amqp::{ConsumerGroup, ConsumerSettings};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Starts the consumers; a broker that refuses them makes the run unusable (exit 3).
pub(super) fn start(
    AmqpTarget { url, options, .. }: &AmqpTarget,
    side: &StreamSide,
    interrupt: &Arc<AtomicBool>,
) -> Result<ConsumerGroup, AppError> {
    let queue = options.queue.clone().unwrap_or_default();
    ConsumerGroup::start(
        url,
        queue,
        ConsumerSettings {
            consumers: side.consumers as usize,
            ack: options.ack,
            persistent: options.persistent,
            drain: side.drain,
            interrupt: interrupt.clone(),
        },
    )
    .map_err(|e| AppError::Unusable(e.to_string()))
}

/// Waits for what is still queued (or the drain time without a message), then adds the
/// consumers' side to the run: their measurement, and how many messages were published and
/// never consumed.
pub(super) fn finish(group: ConsumerGroup, mut ran: Ran) -> Ran {
    let published = ran
        .outcomes
        .iter()
        .rev()
        .find(|o| o.spec.record)
        .map_or(0, |o| {
            let m = o.measurement();
            m.requests.saturating_sub(m.errors.values().sum::<u64>())
        });
    let consumed = group.finish(published);
    let unconsumed = published.saturating_sub(consumed.received);
    ran.extras.insert("published".into(), published.into());
    ran.extras.insert("unconsumed".into(), unconsumed.into());
    ran.consumed = Some(Measurement::from_recorder(
        &consumed.recorder,
        consumed.elapsed,
        None,
    ));
    ran
}
