//! Apache Kafka (feature `kafka`) through librdkafka, the C client most non-JVM clients wrap
//! (rdkafka builds it from its bundled sources: 1 min 31 s of a debug build here, once).
//!
//! Why librdkafka and not a pure-Rust client or our own framing: what the workloads need is a
//! full producer and consumer — batching with linger, lz4 and zstd, the idempotent producer,
//! consumer groups with their rebalances and commits, SASL SCRAM — and librdkafka is the one
//! client outside the JVM that does all of it and is fuzzed and run everywhere. rskafka has no
//! consumer groups nor idempotence; kafka-protocol's decoders reserve memory for any array
//! length a broker sends (a hostile peer could make perfbase abort), so a hand-written client
//! would have to decode every response itself.
//!
//! - **URL** (`url.rs`): `kafka://[user:password@]host:port[,host:port…][?sasl=MECHANISM]`,
//!   SASL PLAIN by default when it has a user (`scram-sha-256`, `scram-sha-512`), plaintext
//!   otherwise. The password never appears in a message.
//! - **Produce** (`produce.rs`): one producer per run, shared by the sessions, as
//!   `kafka-producer-perf-test` has one. `execute(op)` sends one record and waits for its
//!   delivery report: an op is one record acknowledged as `acks` says. Each value starts with
//!   `op` (little-endian u64) and a send stamp (nanoseconds since the Unix epoch, u64), the rest
//!   filler.
//! - **Consume** (`consume.rs`): each session is one member of a consumer group; `execute`
//!   takes its next record.
//! - **End to end** (`e2e.rs`): producers as above, and consumers on a thread of their own
//!   reading every partition from the offsets it had before the first record; each record's
//!   latency runs from its send stamp to its arrival.
//! - **Set-up** (`admin.rs`): the topic created (`--init`) and filled (`prefill`), deleted
//!   afterwards (`clean`); the cluster's brokers for the result.
//! - **Errors**: a broker's error is class `driver` with Kafka's code and name
//!   (`KAFKA 19 NOT_ENOUGH_REPLICAS`); a record not acknowledged within the producer's
//!   delivery timeout is `timeout`; librdkafka's own transport errors are `read`.
//! - **Memory**: librdkafka's queues are bounded by configuration (`queue.buffering.max.*`
//!   for the producer, `queued.max.messages.kbytes` and `fetch.max.bytes` for consumers,
//!   `receive.message.max.bytes` for any response), so a broker cannot grow it without bound.

mod admin;
mod consume;
mod e2e;
mod errors;
mod produce;
mod url;

pub use crate::apart::{Consumed, HEADER};
pub use admin::{create_topic, delete_topic, prefill, server_version};
pub use consume::ConsumeDriver;
pub use e2e::EndToEnd;
pub use errors::{outcome_of, KafkaError};
pub use produce::ProduceDriver;
pub use url::Broker;

/// Which acknowledgement a produced record waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acks {
    /// None: a record counts once written to the socket.
    Zero,
    /// The partition leader's.
    One,
    /// Every in-sync replica's.
    All,
}

impl Acks {
    fn config(self) -> &'static str {
        match self {
            Acks::Zero => "0",
            Acks::One => "1",
            Acks::All => "all",
        }
    }
}

/// A producer's batch compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Lz4,
    Zstd,
    Snappy,
}

impl Compression {
    fn config(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
            Compression::Snappy => "snappy",
        }
    }
}

/// Which key each record carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keys {
    /// No key: records spread as the partitioner does for keyless records.
    None,
    /// A key drawn at random (from the op number, so a run is repeatable) from the corpus.
    Random(std::sync::Arc<Vec<Vec<u8>>>),
    /// The corpus's keys in turn: op *n* carries key *n mod len*.
    Sequential(std::sync::Arc<Vec<Vec<u8>>>),
}

impl Keys {
    /// The key of op `op`.
    fn of(&self, op: u64) -> Option<&[u8]> {
        match self {
            Keys::None => None,
            Keys::Sequential(k) if !k.is_empty() => Some(&k[(op % k.len() as u64) as usize]),
            Keys::Random(k) if !k.is_empty() => Some(&k[(splitmix(op) % k.len() as u64) as usize]),
            _ => None,
        }
    }

    /// A corpus of keys from a file, one per line (empty lines skipped), read through the
    /// capped reader.
    pub fn corpus(path: &std::path::Path) -> Result<Vec<Vec<u8>>, KafkaError> {
        let bytes = crate::input::read(path)
            .map_err(|e| KafkaError::Options(format!("{}: {e}", path.display())))?;
        let keys: Vec<Vec<u8>> = bytes
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        if keys.is_empty() {
            return Err(KafkaError::Options(format!(
                "{}: no keys (one per line)",
                path.display()
            )));
        }
        Ok(keys)
    }

    /// `key-0` … `key-(n-1)`: the corpus when none is given.
    pub fn numbered(n: usize) -> Vec<Vec<u8>> {
        (0..n).map(|i| format!("key-{i}").into_bytes()).collect()
    }
}

/// A fixed permutation of op numbers: keys look random and a run repeats its choices.
fn splitmix(op: u64) -> u64 {
    let mut z = op.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How records are spread over partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partitioner {
    /// As the Java client: murmur2 of the key, sticky batches for records without one.
    Default,
    /// Op *n* to partition *n mod partitions*, whatever its key.
    RoundRobin,
}

/// Where a consumer group without committed offsets starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    Earliest,
    Latest,
}

/// How a consumer commits what it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// librdkafka's periodic commit (every 5 s and at the end), as the Java default.
    Auto,
    /// A blocking commit after each record.
    Sync,
    /// A commit after each record, not waited for.
    Async,
    /// No commit.
    None,
}

/// What the producer of a run does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProduceOptions {
    pub acks: Acks,
    /// Value bytes, at least [`HEADER`].
    pub record_size: usize,
    /// The most bytes of one partition's batch (`batch.size`).
    pub batch_bytes: u64,
    /// How long a batch waits for more records (`linger.ms`).
    pub linger: std::time::Duration,
    pub compression: Compression,
    pub keys: Keys,
    /// Headers on every record.
    pub headers: Vec<(String, String)>,
    pub idempotent: bool,
    pub partitioner: Partitioner,
    /// How long librdkafka tries to deliver a record before it fails it as
    /// `MESSAGE_TIMED_OUT` (`message.timeout.ms`): the run's timeout, a little less, so the
    /// error has its code rather than the engine's plain timeout.
    pub delivery_timeout: std::time::Duration,
}

impl Default for ProduceOptions {
    fn default() -> ProduceOptions {
        ProduceOptions {
            acks: Acks::All,
            record_size: 1024,
            batch_bytes: 16_384,
            linger: std::time::Duration::from_millis(5),
            compression: Compression::None,
            keys: Keys::None,
            headers: Vec::new(),
            idempotent: false,
            partitioner: Partitioner::Default,
            delivery_timeout: std::time::Duration::from_secs(30),
        }
    }
}

/// What the consumers of a run do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumeOptions {
    /// The group's id.
    pub group: String,
    pub from: From,
    pub commit: Commit,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_turn_and_at_random_come_from_the_corpus() {
        let corpus = std::sync::Arc::new(Keys::numbered(3));
        let seq = Keys::Sequential(corpus.clone());
        assert_eq!(seq.of(4), Some(&b"key-1"[..]));
        let random = Keys::Random(corpus);
        let drawn: std::collections::BTreeSet<_> =
            (0..100).filter_map(|op| random.of(op)).collect();
        assert_eq!(drawn.len(), 3, "100 draws over 3 keys reach every key");
        assert_eq!(random.of(7), random.of(7));
        assert_eq!(Keys::None.of(1), None);
    }
}
