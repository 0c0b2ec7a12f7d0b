//! The producer: one librdkafka producer per run, shared by every session, so records from
//! all of them share its batches as one application's would. An op is one record: sent, then
//! waited for until its delivery report (the broker's acknowledgement as `acks` says).

use super::errors::{describe, outcome_of};
use super::{Broker, KafkaError, Keys, Partitioner, ProduceOptions, HEADER};
use crate::apart::now_ns;
use perfbase_core::{Class, Driver, Outcome, Session};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::util::Timeout;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The largest record value perfbase sends.
const MAX_RECORD: usize = 64 << 20;
/// How long the end of a run waits for records still queued in librdkafka.
const FLUSH_LIMIT: Duration = Duration::from_secs(5);

/// Produces to `topic`: the driver of `-w produce` and of the producers of `-w e2e`.
pub struct ProduceDriver {
    broker: Broker,
    topic: Arc<str>,
    options: ProduceOptions,
    producer: FutureProducer,
    /// The topic's partitions, read by [`ProduceDriver::prepare`] (round robin needs them).
    partitions: AtomicI32,
    headers: Option<OwnedHeaders>,
}

impl ProduceDriver {
    /// A producer for `topic` with `options`; connects on first use.
    pub fn new(
        broker: &Broker,
        topic: &str,
        options: ProduceOptions,
    ) -> Result<ProduceDriver, KafkaError> {
        if options.record_size < HEADER {
            return Err(KafkaError::Options(format!(
                "records of {} bytes: at least {HEADER} (perfbase's op number and send stamp)",
                options.record_size
            )));
        }
        if options.record_size > MAX_RECORD {
            return Err(KafkaError::Options(format!(
                "records of {} bytes: at most {} MiB (a broker takes 1 MB by default)",
                options.record_size,
                MAX_RECORD >> 20
            )));
        }
        if options.idempotent && options.acks != super::Acks::All {
            return Err(KafkaError::Options(
                "the idempotent producer needs acks = all".into(),
            ));
        }
        let mut config = broker.config();
        config
            .set("acks", options.acks.config())
            .set("batch.size", options.batch_bytes.to_string())
            .set("linger.ms", linger_ms(options.linger))
            .set("compression.type", options.compression.config())
            .set("enable.idempotence", options.idempotent.to_string())
            .set("partitioner", "murmur2_random")
            // Room for a record of any size allowed (librdkafka's default is 1,000,000 B);
            // the broker's own limit answers as `KAFKA 10 MESSAGE_TOO_LARGE`.
            .set(
                "message.max.bytes",
                (options.record_size + 64 * 1024).max(1_000_000).to_string(),
            )
            // librdkafka's default is 5 minutes: a run against a stopped broker would keep
            // every record in flight until then.
            .set("message.timeout.ms", delivery_ms(options.delivery_timeout))
            // What waits in librdkafka is bounded: 1 M records or 256 MiB, whichever first.
            .set("queue.buffering.max.messages", "1000000")
            .set("queue.buffering.max.kbytes", "262144");
        let producer: FutureProducer = config
            .create()
            .map_err(|e| KafkaError::Options(describe(&e)))?;
        let headers = (!options.headers.is_empty()).then(|| {
            options
                .headers
                .iter()
                .fold(OwnedHeaders::new(), |h, (k, v)| {
                    h.insert(Header {
                        key: k,
                        value: Some(v.as_bytes()),
                    })
                })
        });
        Ok(ProduceDriver {
            broker: broker.clone(),
            topic: topic.into(),
            options,
            producer,
            partitions: AtomicI32::new(0),
            headers,
        })
    }

    /// Reads the topic's partitions before the run: a missing topic, an unreachable cluster
    /// or a refused login is an error here, before any load.
    pub fn prepare(&self) -> Result<i32, KafkaError> {
        let n = super::admin::partitions(&self.broker, &self.topic)?;
        self.partitions.store(n, Ordering::Relaxed);
        Ok(n)
    }
}

/// At least 10 ms, as librdkafka requires more than its linger.
fn delivery_ms(timeout: Duration) -> String {
    timeout.as_millis().clamp(10, 900_000).to_string()
}

fn linger_ms(linger: Duration) -> String {
    format!("{}", linger.as_secs_f64() * 1000.0)
}

impl Driver for ProduceDriver {
    type Session = ProduceSession;

    async fn open(&self, _worker: usize) -> Result<ProduceSession, Outcome> {
        Ok(ProduceSession {
            producer: self.producer.clone(),
            topic: self.topic.clone(),
            keys: self.options.keys.clone(),
            round_robin: match self.options.partitioner {
                Partitioner::RoundRobin => self.partitions.load(Ordering::Relaxed).max(1),
                Partitioner::Default => 0,
            },
            headers: self.headers.clone(),
            size: self.options.record_size,
        })
    }

    /// Waits for what librdkafka still holds (bounded by [`FLUSH_LIMIT`]).
    async fn finish(&self) -> Result<(), String> {
        self.producer
            .flush(Timeout::After(FLUSH_LIMIT))
            .map_err(|e| format!("Kafka: records still unsent at the end: {}", describe(&e)))
    }
}

/// One engine session's handle on the shared producer. Its value is written into its
/// worker thread's buffer, which librdkafka copies on send: the open model's thousands of
/// sessions in flight hold no value each (10,000 of 1 MB would be 10 GB).
pub struct ProduceSession {
    producer: FutureProducer,
    topic: Arc<str>,
    keys: Keys,
    /// Partitions to spread over in turn; 0 leaves the choice to the partitioner.
    round_robin: i32,
    headers: Option<OwnedHeaders>,
    size: usize,
}

thread_local! {
    /// The value of the record a session of this thread is sending.
    static VALUE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `value` at `size` bytes: filler that compresses as real payloads do, not as zeros.
fn sized(value: &mut Vec<u8>, size: usize) {
    if value.len() != size {
        value.clear();
        value.extend((0..size).map(|i| b"perfbase kafka record "[i % 22]));
    }
}

impl Session for ProduceSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        let key = self.keys.of(op);
        let out = (self.size + key.map_or(0, <[u8]>::len)) as u64;
        // Sent (and copied) before the first await: no other session of the thread runs
        // in between.
        let sent = VALUE.with_borrow_mut(|value| {
            sized(value, self.size);
            value[..8].copy_from_slice(&op.to_le_bytes());
            value[8..HEADER].copy_from_slice(&now_ns().to_le_bytes());
            let mut record = FutureRecord::<[u8], [u8]>::to(&self.topic).payload(&value[..]);
            if let Some(key) = key {
                record = record.key(key);
            }
            if self.round_robin > 0 {
                record = record.partition((op % self.round_robin as u64) as i32);
            }
            if let Some(h) = &self.headers {
                record = record.headers(h.clone());
            }
            self.producer.send_result(record).map_err(|(e, _)| e)
        });
        let delivery = match sent {
            Ok(d) => d,
            Err(e) => return outcome_of(&e),
        };
        match delivery.await {
            Ok(Ok(_)) => Outcome::ok(0, out),
            Ok(Err((e, _))) => outcome_of(&e).with_bytes(0, out),
            Err(_) => Outcome::error(
                Class::Read,
                "the producer was dropped before the record's delivery report",
            ),
        }
    }
}
