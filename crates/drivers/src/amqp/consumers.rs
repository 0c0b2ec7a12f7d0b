//! Consumers apart from the publishers ([`AmqpMode::Stream`](super::AmqpMode::Stream)), as
//! RabbitMQ PerfTest runs them: N consumer connections on one shared queue, each delivery's
//! **end-to-end latency** taken from the send stamp the publisher wrote into the message
//! (bytes 8..16, nanoseconds since the Unix epoch; publisher and consumers share this
//! machine's clock), and a consume rate of its own, which falls behind the publish rate when
//! the consumers cannot keep up.
//!
//! The consumers run on a thread of their own (a current-thread tokio runtime; lapin adds its
//! I/O thread per connection), so they never compete with the publishers' engine workers for
//! a runtime. [`ConsumerGroup::start`] declares the queue — durable when persistent,
//! auto-delete so the broker removes it once the last consumer leaves, and expiring after a
//! minute unused should that never happen — and returns once every consumer is subscribed.
//! [`ConsumerGroup::finish`] waits until the consumers received as many messages as were
//! published (or nothing came for the drain time) and returns what they recorded.
//!
//! A consumer that loses its connection records one `read` error and reconnects until the
//! group is finished; deliveries without perfbase's header are class `protocol`.

use super::{describe, AckMode, AmqpError, AUTO_ACK_EVERY, GENERATED_QUEUE_EXPIRY_MS};
pub use crate::apart::Consumed;
use crate::apart::{self, Shared};
use futures_util::StreamExt;
use lapin::options::{BasicAckOptions, BasicConsumeOptions, BasicQosOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{Channel, Connection, ConnectionProperties, Consumer};
use perfbase_core::{Class, Outcome};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Deliveries a consumer may hold unacknowledged (`basic.qos`), with acks on.
const PREFETCH: u16 = 256;
/// How often a consumer re-checks whether the group is finished while no message comes.
const POLL: Duration = Duration::from_millis(50);
/// How often, and how long at most, a finishing consumer waits for its acks to be written.
const ACK_SETTLE_POLL: Duration = Duration::from_millis(1);
const ACK_SETTLE_LIMIT: Duration = Duration::from_secs(2);
/// The pause before a consumer that lost its connection tries again.
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);

/// What the consumers of a group share with the thread that started them.
struct Control {
    /// Set by `finish`: stop once `target` messages arrived or nothing came for `drain`.
    finishing: AtomicBool,
    /// Messages published successfully: how many the consumers should receive.
    target: AtomicU64,
    /// Messages received so far (every consumer), and published: shared with the
    /// publishers through [`super::lag`].
    counters: Arc<super::lag::Counters>,
}

/// Settings of a consumer group.
#[derive(Debug, Clone)]
pub struct ConsumerSettings {
    /// Consumer connections (each with one channel and one consumer).
    pub consumers: usize,
    pub ack: AckMode,
    /// A durable queue for persistent messages.
    pub persistent: bool,
    /// How long `finish` waits for messages still on their way once publishing stopped.
    pub drain: Duration,
    /// Set on Ctrl-C: the consumers stop at once, draining nothing more.
    pub interrupt: Arc<AtomicBool>,
}

/// Consumers on a shared queue, running on their own thread until [`ConsumerGroup::finish`].
pub struct ConsumerGroup {
    queue: String,
    control: Arc<Control>,
    thread: std::thread::JoinHandle<Consumed>,
}

impl ConsumerGroup {
    /// Declares `queue` and subscribes `settings.consumers` consumers to it; returns once all
    /// are ready, or the first connection error (the password never in it).
    pub fn start(
        url: &str,
        queue: String,
        settings: ConsumerSettings,
    ) -> Result<ConsumerGroup, AmqpError> {
        let control = Arc::new(Control {
            finishing: AtomicBool::new(false),
            target: AtomicU64::new(u64::MAX),
            counters: Arc::new(super::lag::Counters::default()),
        });
        super::lag::register(&queue, &control.counters);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), AmqpError>>();
        let (url_t, queue_t, control_t) = (url.to_string(), queue.clone(), control.clone());
        let thread = std::thread::Builder::new()
            .name("perfbase-amqp-consumers".into())
            .spawn(move || run_group(url_t, queue_t, settings, control_t, ready_tx))
            .map_err(|e| AmqpError::Broker(format!("cannot start the consumer thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(ConsumerGroup {
                queue,
                control,
                thread,
            }),
            Ok(Err(e)) => {
                super::lag::unregister(&queue);
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err(AmqpError::Broker(
                "the consumer thread ended before its consumers were ready".into(),
            )),
        }
    }

    /// The shared queue.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// Messages received so far.
    pub fn received(&self) -> u64 {
        self.control.counters.received.load(Ordering::Relaxed)
    }

    /// Waits until `published` messages arrived (or none came for the drain time), stops the
    /// consumers (the broker then deletes the queue) and returns what they measured.
    pub fn finish(self, published: u64) -> Consumed {
        super::lag::unregister(&self.queue);
        self.control.target.store(published, Ordering::Relaxed);
        self.control.finishing.store(true, Ordering::Relaxed);
        let received = self.control.counters.received.load(Ordering::Relaxed);
        self.thread
            .join()
            .unwrap_or_else(|_| Consumed::nothing(received))
    }
}

/// The consumer thread: a current-thread runtime running every consumer.
fn run_group(
    url: String,
    queue: String,
    settings: ConsumerSettings,
    control: Arc<Control>,
    ready: std::sync::mpsc::Sender<Result<(), AmqpError>>,
) -> Consumed {
    let rt = match apart::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(AmqpError::Broker(e)));
            return Consumed::nothing(0);
        }
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let mut subscribed = Vec::new();
        for i in 0..settings.consumers.max(1) {
            match subscribe(&url, &queue, &settings, i).await {
                Ok(s) => subscribed.push(s),
                Err(e) => {
                    let _ = ready.send(Err(e));
                    return Consumed::nothing(0);
                }
            }
        }
        let shared = Shared::start();
        let _ = ready.send(Ok(()));
        let tasks: Vec<_> = subscribed
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                tokio::task::spawn_local(consume(
                    s,
                    i,
                    url.clone(),
                    queue.clone(),
                    settings.clone(),
                    control.clone(),
                    shared.clone(),
                ))
            })
            .collect();
        for t in tasks {
            let _ = t.await;
        }
        shared.finish(control.counters.received.load(Ordering::Relaxed))
    })
}

/// One consumer's connection, channel and subscription.
struct Subscribed {
    /// Kept so the connection lives as long as the consumer.
    _conn: Connection,
    channel: Channel,
    consumer: Consumer,
}

/// Connects, declares the shared queue (idempotent: every consumer declares the same) and
/// subscribes.
async fn subscribe(
    url: &str,
    queue: &str,
    settings: &ConsumerSettings,
    index: usize,
) -> Result<Subscribed, AmqpError> {
    let target = perfbase_core::redact::url(url);
    let err = |what: &str, e: &lapin::Error| {
        AmqpError::Broker(format!(
            "consumer {index}: {what} {target}: {}",
            describe(e, Some(url))
        ))
    };
    let props = ConnectionProperties::default().with_connection_name("perfbase-consumer".into());
    let conn = Connection::connect(url, props)
        .await
        .map_err(|e| err("cannot connect to", &e))?;
    let channel = conn
        .create_channel()
        .await
        .map_err(|e| err("cannot open a channel on", &e))?;
    if settings.ack != AckMode::None {
        channel
            .basic_qos(PREFETCH, BasicQosOptions::default())
            .await
            .map_err(|e| err("cannot set the prefetch on", &e))?;
    }
    channel
        .queue_declare(
            ShortString::from(queue),
            QueueDeclareOptions {
                durable: settings.persistent,
                auto_delete: true,
                ..QueueDeclareOptions::default()
            },
            queue_arguments(),
        )
        .await
        .map_err(|e| err(&format!("cannot declare queue {queue} on"), &e))?;
    let consumer = channel
        .basic_consume(
            ShortString::from(queue),
            ShortString::from(format!("perfbase-consumer-{index}")),
            BasicConsumeOptions {
                no_ack: settings.ack == AckMode::None,
                ..BasicConsumeOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .map_err(|e| err(&format!("cannot consume from {queue} on"), &e))?;
    Ok(Subscribed {
        _conn: conn,
        channel,
        consumer,
    })
}

/// The arguments of the shared queue, the same for the consumers that declare it and the
/// publishers that check it: it expires after a minute unused, should auto-delete never fire.
pub(super) fn queue_arguments() -> FieldTable {
    let mut arguments = FieldTable::default();
    arguments.insert(
        "x-expires".into(),
        AMQPValue::LongInt(GENERATED_QUEUE_EXPIRY_MS),
    );
    arguments
}

/// Whether the group is done: finishing, and every published message arrived or nothing
/// arrived for the drain time.
fn done(control: &Control, shared: &Shared, settings: &ConsumerSettings) -> bool {
    if !control.finishing.load(Ordering::Relaxed) {
        return false;
    }
    settings.interrupt.load(Ordering::Relaxed)
        || control.counters.received.load(Ordering::Relaxed)
            >= control.target.load(Ordering::Relaxed)
        || shared.quiet_for() >= settings.drain
}

/// Receives until the group is done, recording each delivery's end-to-end latency. Per
/// message, but each delivery already crossed lapin's I/O thread to get here: the helpers it
/// calls cost nothing beside that.
async fn consume(
    mut s: Subscribed,
    index: usize,
    url: String,
    queue: String,
    settings: ConsumerSettings,
    control: Arc<Control>,
    shared: Rc<Shared>,
) {
    let mut unacked: Option<(u64, u64)> = None;
    // Manual acks handed over and not yet written.
    let acks_pending = Rc::new(Cell::new(0u64));
    loop {
        if done(&control, &shared, &settings) {
            break;
        }
        let next = match tokio::time::timeout(POLL, s.consumer.next()).await {
            Err(_) => continue,
            Ok(n) => n,
        };
        let failure = match next {
            Some(Ok(delivery)) => {
                record_delivery(&shared, &delivery.data, &queue);
                control.counters.received.fetch_add(1, Ordering::Relaxed);
                let tag = delivery.delivery_tag;
                ack(&s.channel, settings.ack, tag, &mut unacked, &acks_pending)
                    .await
                    .err()
                    .map(|e| describe(&e, Some(&url)))
            }
            Some(Err(e)) => Some(describe(&e, Some(&url))),
            None => Some(format!(
                "consumer cancelled by the broker (queue {queue} deleted?)"
            )),
        };
        if let Some(why) = failure {
            shared.error(&Outcome::error(
                Class::Read,
                format!("consumer {index}: {why}"),
            ));
            unacked = None;
            match resubscribe(&url, &queue, &settings, index, &control, &shared).await {
                Some(fresh) => s = fresh,
                None => return,
            }
        }
    }
    ack_and_close(s, unacked, &acks_pending).await;
}

/// Records a delivery: its end-to-end latency from the send stamp it carries, or a
/// `protocol` error for a message without perfbase's header.
fn record_delivery(shared: &Shared, data: &[u8], queue: &str) {
    shared.message(data, |n| {
        format!("a {n}-byte message without perfbase's header on queue {queue}")
    });
}

/// Acknowledges delivery `tag` as `mode` says: nothing, one ack handed over without waiting
/// (counted in `acks_pending` until written), or one cumulative ack every [`AUTO_ACK_EVERY`]
/// deliveries (the latest unacknowledged tag and the count kept in `unacked`).
async fn ack(
    channel: &Channel,
    mode: AckMode,
    tag: u64,
    unacked: &mut Option<(u64, u64)>,
    acks_pending: &Rc<Cell<u64>>,
) -> Result<(), lapin::Error> {
    match mode {
        AckMode::None => Ok(()),
        AckMode::Manual => {
            // Handed to the connection without waiting until it is written, as a client
            // that writes its ack and reads on does: waiting costs two thread hand-offs per
            // message through lapin's I/O thread. A failed ack means a lost connection,
            // which the next delivery reports.
            let channel = channel.clone();
            let pending = acks_pending.clone();
            pending.set(pending.get() + 1);
            tokio::task::spawn_local(async move {
                let _ = channel.basic_ack(tag, BasicAckOptions::default()).await;
                pending.set(pending.get() - 1);
            });
            Ok(())
        }
        AckMode::Auto => {
            let n = unacked.map_or(0, |(_, n)| n) + 1;
            *unacked = Some((tag, n));
            if n >= AUTO_ACK_EVERY {
                *unacked = None;
                channel
                    .basic_ack(tag, BasicAckOptions { multiple: true })
                    .await
            } else {
                Ok(())
            }
        }
    }
}

/// After a lost connection: subscribes again, every [`RECONNECT_PAUSE`], until it works
/// (the fresh subscription) or the group is done (`None`).
async fn resubscribe(
    url: &str,
    queue: &str,
    settings: &ConsumerSettings,
    index: usize,
    control: &Control,
    shared: &Shared,
) -> Option<Subscribed> {
    loop {
        if done(control, shared, settings) {
            return None;
        }
        tokio::time::sleep(RECONNECT_PAUSE).await;
        if let Ok(fresh) = subscribe(url, queue, settings, index).await {
            return Some(fresh);
        }
    }
}

/// The consumer's end: the pending cumulative ack, the manual acks still being written
/// (waited for up to [`ACK_SETTLE_LIMIT`]), then the channel's close.
async fn ack_and_close(s: Subscribed, unacked: Option<(u64, u64)>, acks_pending: &Cell<u64>) {
    if let Some((tag, _)) = unacked {
        let _ = s
            .channel
            .basic_ack(tag, BasicAckOptions { multiple: true })
            .await;
    }
    // Every ack out before the channel closes: the broker requeues what a closed channel
    // left unacknowledged, and another consumer of the queue would receive it a second time.
    let settle = async {
        while acks_pending.get() > 0 {
            tokio::time::sleep(ACK_SETTLE_POLL).await;
        }
    };
    let _ = tokio::time::timeout(ACK_SETTLE_LIMIT, settle).await;
    let _ = s.channel.close(200, "perfbase done".into()).await;
}
