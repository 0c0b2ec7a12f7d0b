//! End to end (`-w e2e`): the engine's sessions produce, and consumers on a thread of their
//! own read every partition from the offsets it had before the first record, taking each
//! record's latency from the send stamp in its value (bytes 8..16, nanoseconds since the Unix
//! epoch; producer and consumers share this machine's clock) to its arrival. The stamp is
//! taken when the engine starts the op, which in the open model is its intended start unless
//! the in-flight cap held it back (the Kafka target's cap is high for that reason), so a
//! broker stall is charged to every record sent during it.
//!
//! The consumers are assigned partitions (consumer *i* takes partitions *p* with
//! *p mod N = i*), not subscribed: no group join to wait for, no rebalance mid-run, and no
//! record produced before they were ready is missed or counted.

use super::errors::{describe, outcome_of};
use super::{Broker, KafkaError};
use crate::apart::{self, Consumed, Shared};
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::Message;
use rdkafka::util::Timeout;
use rdkafka::{Offset, TopicPartitionList};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often a consumer re-checks whether the run is over while no record comes.
const POLL: Duration = Duration::from_millis(50);

struct Control {
    finishing: AtomicBool,
    /// Records acknowledged to the producers: how many the consumers should receive.
    target: AtomicU64,
    received: AtomicU64,
    drain: Duration,
    interrupt: Arc<AtomicBool>,
}

/// Consumers on the topic, running on their own thread until [`EndToEnd::finish`].
pub struct EndToEnd {
    control: Arc<Control>,
    thread: std::thread::JoinHandle<Consumed>,
    /// Consumers reading: as many as asked, or as the topic has partitions if fewer.
    reading: usize,
}

impl EndToEnd {
    /// Starts `consumers` consumers on every partition of `topic` from its current end;
    /// returns once they are assigned, or the first error.
    pub fn start(
        broker: &Broker,
        topic: &str,
        consumers: usize,
        drain: Duration,
        interrupt: Arc<AtomicBool>,
    ) -> Result<EndToEnd, KafkaError> {
        let control = Arc::new(Control {
            finishing: AtomicBool::new(false),
            target: AtomicU64::new(u64::MAX),
            received: AtomicU64::new(0),
            drain,
            interrupt,
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let control_t = control.clone();
        let (broker, topic) = (broker.clone(), topic.to_string());
        let thread = std::thread::Builder::new()
            .name("perfbase-kafka-consumers".into())
            .spawn(move || run(&broker, &topic, consumers.max(1), control_t, ready_tx))
            .map_err(|e| KafkaError::Broker(format!("cannot start the consumer thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(reading)) => Ok(EndToEnd {
                control,
                thread,
                reading,
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err(KafkaError::Broker(
                "the consumer thread ended before its consumers were ready".into(),
            )),
        }
    }

    /// Consumers reading the topic: a partition has at most one, so fewer than asked when the
    /// topic has fewer partitions.
    pub fn reading(&self) -> usize {
        self.reading
    }

    /// Waits until `published` records arrived (or none came for the drain time), stops the
    /// consumers and returns what they measured.
    pub fn finish(self, published: u64) -> Consumed {
        self.control.target.store(published, Ordering::Relaxed);
        self.control.finishing.store(true, Ordering::Relaxed);
        let received = self.control.received.load(Ordering::Relaxed);
        self.thread
            .join()
            .unwrap_or_else(|_| Consumed::nothing(received))
    }
}

/// The consumers, each assigned its share of the partitions at their current end offsets.
fn assign(broker: &Broker, topic: &str, n: usize) -> Result<Vec<StreamConsumer>, KafkaError> {
    let make = || -> Result<StreamConsumer, KafkaError> {
        let mut config = broker.config();
        config
            .set("group.id", format!("perfbase-e2e-{}", std::process::id()))
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "false")
            .set("fetch.wait.max.ms", "5")
            .set("queued.max.messages.kbytes", "65536");
        config
            .create()
            .map_err(|e| KafkaError::Options(describe(&e)))
    };
    let first = make()?;
    let partitions = super::admin::partitions(broker, topic)?;
    let mut consumers = vec![first];
    for _ in 1..n.min(partitions as usize) {
        consumers.push(make()?);
    }
    let n = consumers.len() as i32;
    for (i, c) in consumers.iter().enumerate() {
        let mut list = TopicPartitionList::new();
        for p in (0..partitions).filter(|p| p % n == i as i32) {
            let (_, high) = c
                .fetch_watermarks(topic, p, Timeout::After(super::admin::METADATA_WAIT))
                .map_err(|e| {
                    KafkaError::Broker(format!("topic {topic} partition {p}: {}", describe(&e)))
                })?;
            list.add_partition_offset(topic, p, Offset::Offset(high))
                .map_err(|e| KafkaError::Broker(describe(&e)))?;
        }
        c.assign(&list)
            .map_err(|e| KafkaError::Broker(format!("cannot assign {topic}: {}", describe(&e))))?;
    }
    Ok(consumers)
}

/// The consumer thread: a current-thread runtime running every consumer (rdkafka's stream
/// consumers are made inside it: they need its reactor).
fn run(
    broker: &Broker,
    topic: &str,
    n: usize,
    control: Arc<Control>,
    ready: std::sync::mpsc::Sender<Result<usize, KafkaError>>,
) -> Consumed {
    let rt = match apart::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(KafkaError::Broker(e)));
            return Consumed::nothing(0);
        }
    };
    let consumers = {
        let _inside = rt.enter();
        match assign(broker, topic, n) {
            Ok(c) => c,
            Err(e) => {
                let _ = ready.send(Err(e));
                return Consumed::nothing(0);
            }
        }
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let shared = Shared::start();
        let _ = ready.send(Ok(consumers.len()));
        let tasks: Vec<_> = consumers
            .into_iter()
            .map(|c| tokio::task::spawn_local(consume(c, control.clone(), shared.clone())))
            .collect();
        for t in tasks {
            let _ = t.await;
        }
        shared.finish(control.received.load(Ordering::Relaxed))
    })
}

fn done(control: &Control, shared: &Shared) -> bool {
    control.finishing.load(Ordering::Relaxed)
        && (control.interrupt.load(Ordering::Relaxed)
            || control.received.load(Ordering::Relaxed) >= control.target.load(Ordering::Relaxed)
            || shared.quiet_for() >= control.drain)
}

/// Receives until the run is over, recording each record's end-to-end latency.
async fn consume(consumer: StreamConsumer, control: Arc<Control>, shared: Rc<Shared>) {
    while !done(&control, &shared) {
        let next = match tokio::time::timeout(POLL, consumer.recv()).await {
            Err(_) => continue,
            Ok(n) => n,
        };
        match next {
            Ok(m) => {
                let value = m.payload().unwrap_or_default();
                let unmarked = |n| format!("a {n}-byte record without perfbase's header");
                if shared.message(value, unmarked) {
                    control.received.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(e) => shared.error(&outcome_of(&e)),
        }
    }
}
