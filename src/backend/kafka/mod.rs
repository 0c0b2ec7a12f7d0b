//! Apache Kafka workloads: producing, consuming in a group, or both with the end-to-end
//! latency through the broker (`e2e.rs`), with the topic's set-up and clean-up around them.

mod e2e;
mod names;
pub use names::{
    AcksName, CommitName, CompressionName, FromName, KafkaWorkload, KeysName, PartitionerName,
};

use super::options::name_of;
use super::protocol::{ask_version, header_lines, Extras, Ran, RunArgs, Target};
use super::setup::block_on_local;
use super::Side;
use crate::exit::AppError;
use perfbase_core::closing::Closing;
use perfbase_core::result::RunResult;
use perfbase_drivers::kafka::{
    self, Broker, ConsumeDriver, ConsumeOptions, Keys, ProduceDriver, ProduceOptions,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// Records a Kafka run may have in flight at once in the open model. A record in flight
/// costs a session of a few hundred bytes plus its value, not a connection, so the cap is
/// high: a broker stall of a few seconds leaves every record's start at its intended time,
/// which the end-to-end latency needs.
const KAFKA_MAX_INFLIGHT: u64 = 10_000;

/// A workload against a Kafka cluster.
#[derive(Debug, Clone)]
pub struct KafkaTarget {
    /// With the password from the environment; never shown.
    pub url: String,
    pub topic: String,
    pub workload: KafkaWorkload,
    pub produce: ProduceOptions,
    pub consume: ConsumeOptions,
    /// `--init`: the topic created afresh with this many partitions.
    pub init: Option<i32>,
    /// Records written before the run (for a consumer to read).
    pub prefill: u64,
    /// The topic deleted after the run.
    pub clean: bool,
    /// `-w e2e`: the consumers apart from the producers.
    pub e2e: Option<EndToEndSide>,
}

/// The consumer side of `-w e2e`.
#[derive(Debug, Clone)]
pub struct EndToEndSide {
    pub consumers: u64,
    /// Once producing stopped, how long the consumers wait for records still on their way.
    pub drain: Duration,
}

impl KafkaTarget {
    fn broker(&self) -> Result<Broker, String> {
        Broker::parse(&self.url).map_err(|e| e.to_string())
    }

    fn producer(&self) -> Result<ProduceDriver, String> {
        ProduceDriver::new(&self.broker()?, &self.topic, self.produce.clone())
            .map_err(|e| e.to_string())
    }

    /// The producer of a run: librdkafka gives a record up (with its error code) just before
    /// the engine would time it out.
    fn producer_for(&self, cfg: &perfbase_engine::EngineConfig) -> Result<ProduceDriver, String> {
        let mut produce = self.produce.clone();
        produce.delivery_timeout = cfg.timeout.mul_f64(0.9);
        ProduceDriver::new(&self.broker()?, &self.topic, produce).map_err(|e| e.to_string())
    }

    fn consumer(&self) -> Result<ConsumeDriver, String> {
        ConsumeDriver::new(&self.broker()?, &self.topic, self.consume.clone())
            .map_err(|e| e.to_string())
    }

    /// The topic created and filled as asked, before any driver reads it.
    fn set_up(&self, args: &RunArgs<'_>) -> Result<(), AppError> {
        let broker = self.broker().map_err(|e| args.bad("", e))?;
        let unusable = |e: kafka::KafkaError| AppError::Unusable(e.to_string());
        if let Some(partitions) = self.init {
            block_on_local(kafka::create_topic(&broker, &self.topic, partitions))?
                .map_err(unusable)?;
        }
        if self.prefill > 0 {
            kafka::prefill(&broker, &self.topic, self.prefill, self.produce.record_size)
                .map_err(unusable)?;
        }
        Ok(())
    }

    fn clean_up(&self) {
        let Ok(broker) = self.broker() else { return };
        match block_on_local(kafka::delete_topic(&broker, &self.topic)) {
            Ok(Err(e)) => errln!("perfbase: warning: {e}"),
            Err(e) => errln!("perfbase: warning: {e}"),
            Ok(Ok(())) => {}
        }
    }
}

impl Extras for ProduceDriver {
    fn before(&self) -> Result<(), AppError> {
        self.prepare()
            .map(drop)
            .map_err(|e| AppError::Unusable(e.to_string()))
    }
}

impl Extras for ConsumeDriver {
    fn before(&self) -> Result<(), AppError> {
        self.prepare()
            .map(drop)
            .map_err(|e| AppError::Unusable(e.to_string()))
    }
}

impl Target for KafkaTarget {
    fn name(&self) -> &'static str {
        "kafka"
    }

    fn service_kind(&self) -> &'static str {
        "Apache Kafka"
    }

    /// One producer or one consumer, as Kafka's perf tools run.
    fn default_connections(&self) -> u64 {
        1
    }

    fn default_max_inflight(&self) -> u64 {
        match self.workload {
            // Each op in flight is a member of the group.
            KafkaWorkload::Consume => super::BACKEND_MAX_INFLIGHT,
            KafkaWorkload::Produce | KafkaWorkload::E2e => KAFKA_MAX_INFLIGHT,
        }
    }

    fn skip_setup(&mut self) {
        self.init = None;
        self.prefill = 0;
    }

    fn streams(&self) -> bool {
        self.e2e.is_some()
    }

    fn validate(&self) -> Result<(), String> {
        match self.workload {
            KafkaWorkload::Consume => self.consumer().map(drop),
            KafkaWorkload::Produce | KafkaWorkload::E2e => self.producer().map(drop),
        }
    }

    /// Set-up, the run (with the end-to-end consumers around it), and the clean-up whatever
    /// became of the run.
    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        self.set_up(&args)?;
        let ran = match (self.workload, &self.e2e) {
            (KafkaWorkload::Consume, _) => args.drive(self.consumer()),
            (_, Some(side)) => e2e::run(self, side, args),
            (_, None) => {
                let producer = self.producer_for(args.cfg);
                args.drive(producer)
            }
        };
        if self.clean {
            self.clean_up();
        }
        // The cluster as it answered, in the result beside the settings.
        ran.map(|mut ran| {
            let broker = self.server_version().unwrap_or_else(|e| format!("not reported: {e}"));
            ran.extras.insert("broker".into(), broker.into());
            ran
        })
    }

    fn settings(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        m.insert("workload".into(), name_of(self.workload).into());
        m.insert("topic".into(), self.topic.clone().into());
        if let Ok(b) = self.broker() {
            if let Some(mech) = b.mechanism() {
                m.insert("sasl".into(), mech.into());
            }
        }
        if let Some(p) = self.init {
            m.insert("partitions".into(), p.into());
        }
        if self.prefill > 0 {
            m.insert("prefill".into(), self.prefill.into());
        }
        if self.workload == KafkaWorkload::Consume {
            let c = &self.consume;
            m.insert("group".into(), c.group.clone().into());
            m.insert("from".into(), name_of(FromName::of(c.from)).into());
            m.insert("commit".into(), name_of(CommitName::of(c.commit)).into());
            return m;
        }
        produce_settings(&self.produce, &mut m);
        if let Some(side) = &self.e2e {
            m.insert("consumers".into(), side.consumers.into());
        }
        m
    }

    fn server_url(&self) -> String {
        self.url.clone()
    }

    fn server_version(&self) -> Result<String, String> {
        let broker = self.broker()?;
        ask_version(async move { kafka::server_version(&broker).await })
    }

    fn closing(
        &self,
        _extras: &[BTreeMap<String, Value>],
        result: &RunResult,
        _single: bool,
    ) -> Vec<Closing> {
        e2e::closing(self, result)
    }

    fn closing_blocks(&self, scenario: &str, side: &Side, _result: &RunResult) -> Vec<Closing> {
        e2e::closing_blocks(self, scenario, side)
    }
}

/// The producer's settings for `config.protocol`; header values through the redaction of
/// headers (a token in a header is a secret).
fn produce_settings(p: &ProduceOptions, m: &mut BTreeMap<String, Value>) {
    m.insert("acks".into(), name_of(AcksName::of(p.acks)).into());
    m.insert("record_size".into(), p.record_size.into());
    m.insert("batch_size".into(), p.batch_bytes.into());
    m.insert(
        "linger_ms".into(),
        (p.linger.as_secs_f64() * 1000.0).into(),
    );
    m.insert(
        "compression".into(),
        name_of(CompressionName::of(p.compression)).into(),
    );
    let keys = match &p.keys {
        Keys::None => "none".to_string(),
        Keys::Random(k) => format!("random of {}", k.len()),
        Keys::Sequential(k) => format!("sequential of {}", k.len()),
    };
    m.insert("keys".into(), keys.into());
    if !p.headers.is_empty() {
        m.insert("headers".into(), header_lines(&p.headers).into());
    }
    m.insert("idempotent".into(), p.idempotent.into());
    m.insert(
        "partitioner".into(),
        name_of(PartitionerName::of(p.partitioner)).into(),
    );
}

/// The consumer group of a run that names none: new for each process, so `from = earliest`
/// reads the topic from its start.
pub fn default_group() -> String {
    format!("perfbase-{}", std::process::id())
}

/// The keys `kind` asks for: from `file` (one per line) or `key-0` … `key-(count-1)`.
pub fn keys(kind: KeysName, count: u64, file: Option<&std::path::Path>) -> Result<Keys, String> {
    if kind == KeysName::None {
        return match file {
            Some(_) => Err("a keys file needs keys = random or sequential".into()),
            None => Ok(Keys::None),
        };
    }
    let corpus = match file {
        Some(path) => Keys::corpus(path).map_err(|e| e.to_string())?,
        None => Keys::numbered(count.min(10_000_000) as usize),
    };
    let corpus = std::sync::Arc::new(corpus);
    Ok(match kind {
        KeysName::Random => Keys::Random(corpus),
        _ => Keys::Sequential(corpus),
    })
}

/// A record header given as `Name: value`.
pub fn header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        // The text is not shown: a header is where tokens go.
        _ => Err("a header is written \"Name: value\" (a name, a colon, its value)".into()),
    }
}
