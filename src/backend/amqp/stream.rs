//! RabbitMQ's stream mode around the engine's run: consumers on the publishers' queue start
//! before the first publish and drain after the last, measured apart, as PerfTest runs them.

use super::{AmqpTarget, StreamSide};
use crate::backend::{apart, Ran};
use crate::exit::AppError;
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
    let published = apart::delivered(&ran);
    let consumed = group.finish(published);
    let received = apart::Received {
        recorder: &consumed.recorder,
        elapsed: consumed.elapsed,
        count: consumed.received,
    };
    apart::add(&mut ran, "published", published, received);
    ran
}
