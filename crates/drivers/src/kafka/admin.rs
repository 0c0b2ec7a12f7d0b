//! The cluster around a run: the topic's partitions, its creation (`--init`), filling and
//! deletion, and what the cluster says it is.

use super::errors::{code_name, describe};
use super::{Broker, KafkaError, HEADER};
use crate::apart::now_ns;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::RDKafkaErrorCode as Code;
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::util::Timeout;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long set-up waits for the cluster's metadata.
pub(super) const METADATA_WAIT: Duration = Duration::from_secs(10);

/// How long `--init` keeps trying to create a topic that is still being deleted.
const RECREATE_LIMIT: Duration = Duration::from_secs(20);

/// Keeps the last error librdkafka reported on its own (a refused login comes only this way:
/// the request that failed just times out or loses its connection).
#[derive(Default)]
struct Watch {
    last: Mutex<Option<String>>,
}

impl ClientContext for Watch {
    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        if let Ok(mut last) = self.last.lock() {
            // From the broker and librdkafka: no password, but maybe control characters.
            let reason: String = reason.chars().filter(|c| !c.is_control()).collect();
            *last = Some(format!("{reason} ({})", describe(&error)));
        }
    }
}

impl rdkafka::consumer::ConsumerContext for Watch {}

impl Watch {
    fn last(&self) -> Option<String> {
        self.last.lock().ok().and_then(|l| l.clone())
    }
}

/// The partitions of `topic`; a missing topic, an unreachable cluster or a refused login in
/// words.
pub(super) fn partitions(broker: &Broker, topic: &str) -> Result<i32, KafkaError> {
    let client: BaseConsumer<Watch> = broker
        .config()
        .create_with_context(Watch::default())
        .map_err(|e| KafkaError::Options(describe(&e)))?;
    let metadata = client
        .fetch_metadata(Some(topic), Timeout::After(METADATA_WAIT))
        .map_err(|e| {
            // librdkafka's own errors (the login's) reach the context when its queue is polled.
            let _ = client.poll(Duration::from_millis(50));
            (e, client.context().last())
        })
        .map_err(|(e, last)| match last {
            Some(why) if why.contains("SASL") || why.contains("uthentication") => {
                refused(broker, &why)
            }
            Some(why) => unreachable(broker, &why),
            None => unreachable(broker, &describe(&e)),
        })?;
    let Some(t) = metadata.topics().iter().find(|t| t.name() == topic) else {
        return Err(missing(topic));
    };
    match t.error() {
        None if !t.partitions().is_empty() => Ok(t.partitions().len() as i32),
        None => Err(missing(topic)),
        Some(e) => {
            let code = Code::from(e);
            if code == Code::UnknownTopicOrPartition {
                Err(missing(topic))
            } else {
                Err(KafkaError::Broker(format!(
                    "topic {topic}: {}",
                    code_name(code)
                )))
            }
        }
    }
}

fn missing(topic: &str) -> KafkaError {
    KafkaError::Broker(format!(
        "topic {topic} does not exist on the cluster: create it with --init (and --partitions N), \
         or name an existing one with --topic"
    ))
}

/// The cluster refused the URL's login.
fn refused(broker: &Broker, why: &str) -> KafkaError {
    KafkaError::Broker(format!(
        "the Kafka cluster at {} refused the SASL {} login as `{}`: {why}",
        broker.bootstrap,
        broker.mechanism().unwrap_or("PLAIN"),
        broker.user().unwrap_or_default()
    ))
}

/// The cluster did not answer: with a login, the likeliest reason is a refused one.
fn unreachable(broker: &Broker, why: &str) -> KafkaError {
    let login = match broker.mechanism() {
        Some(m) => format!(
            " (SASL {m} as `{}`: a wrong user or password is refused this way too)",
            broker.user().unwrap_or_default()
        ),
        None => String::new(),
    };
    KafkaError::Broker(format!(
        "no answer from the Kafka cluster at {}{login}: {why}",
        broker.bootstrap
    ))
}

fn admin(broker: &Broker) -> Result<AdminClient<DefaultClientContext>, KafkaError> {
    broker
        .config()
        .create()
        .map_err(|e| KafkaError::Options(describe(&e)))
}

/// Creates `topic` afresh with `partitions` partitions and replication 1 (deleting it first
/// if it exists, as `pgbench -i` drops its tables).
pub async fn create_topic(broker: &Broker, topic: &str, partitions: i32) -> Result<(), KafkaError> {
    let admin = admin(broker)?;
    let opts = AdminOptions::new().operation_timeout(Some(Timeout::After(METADATA_WAIT)));
    let _ = delete(&admin, topic, &opts).await;
    let started = Instant::now();
    loop {
        let new = NewTopic::new(topic, partitions, TopicReplication::Fixed(1));
        let answer = admin
            .create_topics([&new], &opts)
            .await
            .map_err(|e| unreachable(broker, &describe(&e)))?;
        match answer.first() {
            Some(Ok(_)) | None => break,
            // The deletion is still under way.
            Some(Err((_, Code::TopicAlreadyExists))) if started.elapsed() < RECREATE_LIMIT => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Some(Err((_, code))) => {
                return Err(KafkaError::Broker(format!(
                    "cannot create topic {topic}: {}",
                    code_name(*code)
                )))
            }
        }
    }
    // Until every partition has its leader, a record to it would wait.
    let client = admin.inner();
    let wait_until = Instant::now() + METADATA_WAIT;
    while Instant::now() < wait_until {
        if let Ok(m) = client.fetch_metadata(Some(topic), Timeout::After(METADATA_WAIT)) {
            let ready = m.topics().iter().any(|t| {
                t.name() == topic
                    && t.partitions().len() == partitions as usize
                    && t.partitions()
                        .iter()
                        .all(|p| p.leader() >= 0 && p.error().is_none())
            });
            if ready {
                return Ok(());
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(KafkaError::Broker(format!(
        "topic {topic} was created but its partitions have no leader after {METADATA_WAIT:?}"
    )))
}

async fn delete(
    admin: &AdminClient<DefaultClientContext>,
    topic: &str,
    opts: &AdminOptions,
) -> Result<(), String> {
    let answer = admin
        .delete_topics(&[topic], opts)
        .await
        .map_err(|e| describe(&e))?;
    match answer.first() {
        Some(Err((_, code))) if *code != Code::UnknownTopicOrPartition => Err(code_name(*code)),
        _ => Ok(()),
    }
}

/// Deletes `topic` (clean-up after a run); a topic already gone is no error.
pub async fn delete_topic(broker: &Broker, topic: &str) -> Result<(), KafkaError> {
    let admin = admin(broker)?;
    let opts = AdminOptions::new().operation_timeout(Some(Timeout::After(METADATA_WAIT)));
    delete(&admin, topic, &opts)
        .await
        .map_err(|why| KafkaError::Broker(format!("cannot delete topic {topic}: {why}")))
}

/// Counts the delivery reports of the prefill's producer.
#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    failed: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl ClientContext for Tally {}

impl ProducerContext for Tally {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(_) => self.ok.fetch_add(1, Ordering::Relaxed),
            Err((e, _)) => {
                if let Ok(mut first) = self.first_error.lock() {
                    first.get_or_insert_with(|| describe(e));
                }
                self.failed.fetch_add(1, Ordering::Relaxed)
            }
        };
    }
}

/// Writes `records` records of `size` bytes to `topic` as fast as the cluster takes them
/// (acks = all, large batches), for a consumer to read: the records of a `consume` run.
pub fn prefill(broker: &Broker, topic: &str, records: u64, size: usize) -> Result<(), KafkaError> {
    let mut config = broker.config();
    config
        .set("acks", "all")
        .set("linger.ms", "20")
        .set("batch.size", "1000000")
        .set("message.timeout.ms", "60000");
    let producer: BaseProducer<Tally> = config
        .create_with_context(Tally::default())
        .map_err(|e| KafkaError::Options(describe(&e)))?;
    let mut value = vec![b'p'; size.max(HEADER)];
    for op in 0..records {
        value[..8].copy_from_slice(&op.to_le_bytes());
        value[8..HEADER].copy_from_slice(&now_ns().to_le_bytes());
        let mut record = BaseRecord::<[u8], [u8]>::to(topic).payload(&value[..]);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((e, back)) if e.rdkafka_error_code() == Some(Code::QueueFull) => {
                    producer.poll(Duration::from_millis(10));
                    record = back;
                }
                Err((e, _)) => {
                    return Err(KafkaError::Broker(format!(
                        "prefilling {topic}: {}",
                        describe(&e)
                    )))
                }
            }
        }
    }
    producer
        .flush(Timeout::After(Duration::from_secs(60)))
        .map_err(|e| KafkaError::Broker(format!("prefilling {topic}: {}", describe(&e))))?;
    let tally = producer.context();
    let failed = tally.failed.load(Ordering::Relaxed);
    if failed > 0 {
        let why = tally.first_error.lock().ok().and_then(|f| f.clone());
        return Err(KafkaError::Broker(format!(
            "prefilling {topic}: {failed} of {records} records were not acknowledged ({})",
            why.unwrap_or_default()
        )));
    }
    Ok(())
}

/// What the cluster is: its brokers, and the highest Produce and Fetch versions of the first
/// bootstrap server (Kafka's protocol carries no release number; these say how recent it is).
pub async fn server_version(broker: &Broker) -> Result<String, KafkaError> {
    let admin = admin(broker)?;
    let m = admin
        .inner()
        .fetch_metadata(None, Timeout::After(METADATA_WAIT))
        .map_err(|e| unreachable(broker, &describe(&e)))?;
    let n = m.brokers().len();
    let first = broker.bootstrap.split(',').next().unwrap_or_default();
    let apis = match api_versions(first) {
        Ok(v) => {
            let max = |key: i16| v.iter().find(|a| a.0 == key).map_or(-1, |a| a.2);
            format!(", Produce v{} Fetch v{}", max(0), max(1))
        }
        Err(_) => String::new(),
    };
    Ok(format!(
        "Apache Kafka, {n} broker{}{apis}",
        if n == 1 { "" } else { "s" }
    ))
}

/// The largest ApiVersions answer read: a broker's list is about 80 entries of 6 bytes.
const API_VERSIONS_MAX: usize = 64 * 1024;

/// ApiVersions v0 (allowed before SASL): each API's key, lowest and highest version.
fn api_versions(addr: &str) -> std::io::Result<Vec<(i16, i16, i16)>> {
    let bad = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
    let sock: std::net::SocketAddr = addr
        .trim_start_matches('[')
        .replacen("]:", ":", 1)
        .parse()
        .or_else(|_| addr.parse())
        .map_err(|_| bad("not an address"))?;
    let mut s = std::net::TcpStream::connect_timeout(&sock, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let client = b"perfbase";
    let mut req = Vec::new();
    req.extend_from_slice(&(10 + client.len() as i32).to_be_bytes());
    req.extend_from_slice(&18i16.to_be_bytes()); // ApiVersions
    req.extend_from_slice(&0i16.to_be_bytes()); // v0
    req.extend_from_slice(&1i32.to_be_bytes()); // correlation id
    req.extend_from_slice(&(client.len() as i16).to_be_bytes());
    req.extend_from_slice(client);
    s.write_all(&req)?;
    let mut len = [0u8; 4];
    s.read_exact(&mut len)?;
    let len = i32::from_be_bytes(len);
    if len < 10 || len as usize > API_VERSIONS_MAX {
        return Err(bad("an ApiVersions answer of an impossible length"));
    }
    let mut body = vec![0u8; len as usize];
    s.read_exact(&mut body)?;
    let count = i32::from_be_bytes([body[6], body[7], body[8], body[9]]);
    let entries = body.get(10..).unwrap_or_default();
    if count < 0 || count as usize * 6 > entries.len() {
        return Err(bad("an ApiVersions answer shorter than its count"));
    }
    let i16_at = |at: usize| i16::from_be_bytes([entries[at], entries[at + 1]]);
    Ok((0..count as usize)
        .map(|i| (i16_at(i * 6), i16_at(i * 6 + 2), i16_at(i * 6 + 4)))
        .collect())
}
