//! The one seam between what a workload loads and the protocol drivers. [`Backend`] names the
//! protocol and carries its typed options; [`Backend::run`] is the one place a backend becomes
//! a driver, with its set-up (the tables' TPC-B scale, a Redis prefill and slot map) and its
//! clean-up (the driver's `finish` hook: a JetStream stream). Flags and plan files both end
//! here, so a new protocol is its driver, one variant with an arm in each match below, its
//! options (`options.rs`) and its docs.

mod epilogue;
pub mod options;
pub mod setup;
mod stream;
mod vault;
mod version;

use crate::exit::{bad_input, AppError};
use anyhow::Context as _;
use perfbase_core::{redact, Driver};
use perfbase_drivers::http::{HttpDriver, HttpOptions, HttpVersion, RequestSpec, Target};
use perfbase_drivers::workload::Corpus;
use perfbase_drivers::{amqp, mongo, mqtt, nats, redis, sql};
use perfbase_engine::{EngineConfig, Observer, PhaseOutcome, PhaseSpec};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use epilogue::{cluster_lines, epilogue, pgbench_block, PgbenchLoad};
pub use options::Dialect;
pub use vault::{TokenSource, VaultTarget};

/// Default cap on requests in flight in the open model over HTTP.
pub const DEFAULT_MAX_INFLIGHT: u64 = 1000;
/// The in-flight cap of open-model runs on databases and brokers, where every request in
/// flight holds a connection of its own: PostgreSQL allows 100 connections by default, and a
/// burst of 1000 AMQP connections ran a RabbitMQ node out of file descriptors.
pub const BACKEND_MAX_INFLIGHT: u64 = 64;

/// What a workload loads: the protocol and its settings.
#[derive(Debug, Clone)]
pub enum Backend {
    Http(HttpTarget),
    Sql(SqlTarget),
    Redis(RedisTarget),
    /// RabbitMQ; the URL carries the password from the environment, never shown.
    Amqp(AmqpTarget),
    Nats(BrokerTarget<nats::NatsOptions>),
    Mqtt(BrokerTarget<mqtt::MqttOptions>),
    Mongo(MongoTarget),
    /// HashiCorp Vault or OpenBao, over HTTP; the token is read when the driver is built.
    Vault(VaultTarget),
}

/// A workload against MongoDB (or a server of its wire protocol, such as FerretDB).
#[derive(Debug, Clone)]
pub struct MongoTarget {
    /// With the password from the environment; never shown.
    pub url: String,
    pub op: mongo::MongoOp,
    pub options: mongo::MongoOptions,
    /// Rebuild the collections before the scenario (`--init`).
    pub init: bool,
}

/// Requests over HTTP/1.1 or HTTP/2.
#[derive(Debug, Clone)]
pub struct HttpTarget {
    pub requests: HttpRequests,
    pub options: HttpOptions,
}

/// The requests of an HTTP workload.
#[derive(Debug, Clone)]
pub enum HttpRequests {
    /// A URL or a targets file: op n sends target n mod the count.
    Targets(Vec<Target>),
    /// A plan's weighted mix of templates, with the corpora their `{{…}}` draw from.
    Mix {
        specs: Vec<RequestSpec>,
        corpora: Vec<Arc<Corpus>>,
    },
}

/// A workload against a database.
#[derive(Debug, Clone)]
pub struct SqlTarget {
    pub dialect: Dialect,
    /// With the password from the environment; never shown.
    pub url: String,
    pub workload: sql::SqlWorkload,
    /// The workload as results name it: `tpcb`, `custom`, `suite` or an operation.
    pub shown: String,
    pub pipeline: usize,
    /// A TPC-B workload's scale as given; a run takes the tables' own, as pgbench does.
    pub scale_given: Option<u32>,
    /// Create and fill the workload's tables before the run (a plan's `init = true`).
    pub init: bool,
}

/// A workload against Redis (standalone or cluster).
#[derive(Debug, Clone)]
pub struct RedisTarget {
    /// With the password from the environment; never shown.
    pub url: String,
    pub op: redis::RedisOp,
    pub options: redis::RedisOptions,
    /// SET every key of the keyspace once before the scenario.
    pub prefill: bool,
}

/// A workload against RabbitMQ.
#[derive(Debug, Clone)]
pub struct AmqpTarget {
    /// With the password from the environment; never shown.
    pub url: String,
    pub options: amqp::AmqpOptions,
    /// Stream mode: consumers apart from the publishers, on `options.queue`.
    pub stream: Option<StreamSide>,
}

/// The consumer side of a stream: PerfTest's consumers on the publishers' queue.
#[derive(Debug, Clone)]
pub struct StreamSide {
    pub consumers: u64,
    /// Once publishing stopped, how long the consumers wait for messages still queued.
    pub drain: std::time::Duration,
}

/// A workload against a message broker.
#[derive(Debug, Clone)]
pub struct BrokerTarget<O> {
    /// With the password from the environment; never shown.
    pub url: String,
    pub options: O,
}

/// What a run of the engine with a backend's driver gave.
pub struct Ran {
    pub outcomes: Vec<PhaseOutcome>,
    /// Figures only the driver knows (a cluster's replies per node), for `config.protocol`.
    pub extras: BTreeMap<String, Value>,
    /// A stream's consumer side, measured apart from the publishers.
    pub consumed: Option<perfbase_core::result::Measurement>,
}

/// Builds the backend's driver and hands it to `$body` as `$d` (an `Arc` of the concrete
/// driver type), so each protocol is picked in this one match. `$workload` replaces a SQL
/// target's workload when it is `Some` (the scale the tables decided).
macro_rules! with_driver {
    ($backend:expr, $workload:expr, $d:ident => $body:expr) => {
        match $backend {
            Backend::Http(h) => {
                let $d = Arc::new(h.driver().map_err(|e| e.to_string())?);
                $body
            }
            Backend::Sql(s) => match s.dialect {
                Dialect::Postgres => {
                    let options = sql::postgres::PgOptions {
                        pipeline: s.pipeline,
                    };
                    let $d = Arc::new(
                        sql::postgres::PgDriver::new(
                            &s.url,
                            $workload.unwrap_or_else(|| s.workload.clone()),
                            options,
                        )
                        .map_err(|e| e.to_string())?,
                    );
                    $body
                }
                Dialect::Mysql => {
                    let $d = Arc::new(
                        sql::mysql::MyDriver::new(
                            &s.url,
                            $workload.unwrap_or_else(|| s.workload.clone()),
                        )
                        .map_err(|e| e.to_string())?,
                    );
                    $body
                }
            },
            Backend::Redis(r) => {
                let $d = Arc::new(
                    redis::RedisDriver::new(&r.url, r.op, r.options.clone())
                        .map_err(|e| e.to_string())?,
                );
                $body
            }
            Backend::Amqp(b) => {
                let $d = Arc::new(
                    amqp::AmqpDriver::new(&b.url, b.options.clone()).map_err(|e| e.to_string())?,
                );
                $body
            }
            Backend::Nats(b) => {
                let $d =
                    Arc::new(nats::NatsDriver::new(&b.url, b.options).map_err(|e| e.to_string())?);
                $body
            }
            Backend::Mqtt(b) => {
                let $d =
                    Arc::new(mqtt::MqttDriver::new(&b.url, b.options).map_err(|e| e.to_string())?);
                $body
            }
            Backend::Mongo(m) => {
                let $d = Arc::new(
                    mongo::MongoDriver::new(&m.url, m.op, m.options.clone())
                        .map_err(|e| e.to_string())?,
                );
                $body
            }
            Backend::Vault(v) => {
                let $d = Arc::new(v.driver()?);
                $body
            }
        }
    };
}

impl HttpTarget {
    fn driver(&self) -> Result<HttpDriver, perfbase_drivers::http::HttpError> {
        match &self.requests {
            HttpRequests::Targets(t) => HttpDriver::new(t, &self.options),
            HttpRequests::Mix { specs, corpora } => {
                HttpDriver::from_specs(specs, corpora.clone(), &self.options)
            }
        }
    }
}

impl Backend {
    /// The same load without its set-up (tables made, collections rebuilt, keys prefilled):
    /// a suite's later operations, which run on what the first one set up.
    pub fn without_setup(mut self) -> Backend {
        match &mut self {
            Backend::Sql(s) => s.init = false,
            Backend::Redis(r) => r.prefill = false,
            Backend::Mongo(m) => m.init = false,
            Backend::Vault(v) => v.init = false,
            _ => {}
        }
        self
    }

    /// The protocol results carry.
    pub fn protocol(&self) -> &'static str {
        match self {
            Backend::Http(_) => "http",
            Backend::Sql(s) => s.dialect.protocol(),
            Backend::Redis(_) => "redis",
            Backend::Amqp(_) => "amqp",
            Backend::Nats(_) => "nats",
            Backend::Mqtt(_) => "mqtt",
            Backend::Mongo(_) => "mongodb",
            Backend::Vault(_) => "vault",
        }
    }

    /// Closed-model connections without -c: wrk's 50 for HTTP and redis-benchmark's 50 for
    /// Redis; vault-benchmark's 10 workers for Vault; one for databases and brokers, as
    /// pgbench and PerfTest start.
    pub fn default_connections(&self) -> u64 {
        match self {
            Backend::Http(_) | Backend::Redis(_) => 50,
            Backend::Vault(_) => 10,
            _ => 1,
        }
    }

    /// The open model's cap on requests in flight without --max-inflight.
    pub fn default_max_inflight(&self) -> u64 {
        match self {
            Backend::Http(_) | Backend::Vault(_) => DEFAULT_MAX_INFLIGHT,
            _ => BACKEND_MAX_INFLIGHT,
        }
    }

    /// Builds the driver and drops it: a bad URL or option is an error before any load.
    pub fn validate(&self) -> Result<(), String> {
        let as_planned: Option<sql::SqlWorkload> = None;
        with_driver!(self, as_planned, _d => Ok(()))
    }

    /// Runs `specs` with this backend's driver; input errors start with `context`.
    pub fn run(
        &self,
        context: &str,
        cfg: &EngineConfig,
        specs: &[PhaseSpec],
        interrupt: Arc<AtomicBool>,
        observer: &mut dyn Observer,
    ) -> Result<Ran, AppError> {
        if let Backend::Sql(s) = self.clone() {
            if s.init {
                let done = setup::init_tables(&s, s.scale_given.unwrap_or(1))
                    .map_err(|e| bad_input(format!("{context}init: {e}")))?;
                errln!("perfbase: {done}");
            }
        }
        let workload = match self {
            Backend::Sql(s) => Some(setup::table_scale(s)?),
            _ => None,
        };
        // The scale the run drew over, which the tables decided.
        let scale = workload.as_ref().and_then(sql::SqlWorkload::tpcb_scale);
        if let Backend::Redis(r) = self {
            if r.prefill {
                setup::prefill(r).map_err(|e| bad_input(format!("{context}prefill: {e}")))?;
            }
        }
        if let Backend::Mongo(m) = self {
            if m.init {
                setup::mongo_init(m).map_err(|e| bad_input(format!("{context}--init: {e}")))?;
            }
        }
        if let Backend::Vault(v) = self {
            if v.init {
                v.init()
                    .map_err(|e| bad_input(format!("{context}--init: {e}")))?;
            }
        }
        let group = match self {
            Backend::Amqp(AmqpTarget {
                stream: Some(side), ..
            }) => Some(stream::start(self, side, &interrupt)?),
            _ => None,
        };
        let drive = || -> Result<Result<Ran, AppError>, String> {
            with_driver!(self, workload, d => Ok(self.drive(d, cfg, specs, interrupt, observer)))
        };
        let ran = drive().map_err(|e| bad_input(format!("{context}{e}")));
        let mut ran = match (group, ran) {
            (Some(group), Ok(Ok(ran))) => stream::finish(group, ran),
            (Some(group), failed) => {
                group.finish(0);
                failed??
            }
            (None, ran) => ran??,
        };
        if let Some(scale) = scale {
            ran.extras.insert("scale".into(), scale.into());
        }
        Ok(ran)
    }

    fn drive<D: Driver + Extras>(
        &self,
        driver: Arc<D>,
        cfg: &EngineConfig,
        specs: &[PhaseSpec],
        interrupt: Arc<AtomicBool>,
        observer: &mut dyn Observer,
    ) -> Result<Ran, AppError> {
        driver.before()?;
        let outcomes = perfbase_engine::run(driver.clone(), cfg, specs, interrupt, observer);
        // Clean up whether or not the engine ran: the driver may have made server state.
        match setup::block_on_local(driver.finish()) {
            Ok(Err(e)) => errln!("perfbase: warning: {}", redact::url(&e)),
            Err(e) => errln!("perfbase: warning: {e}"),
            Ok(Ok(())) => {}
        }
        let outcomes = outcomes.context("the load engine could not start")?;
        Ok(Ran {
            outcomes,
            extras: driver.extras(),
            consumed: None,
        })
    }

    /// The backend's settings for a result's `config.protocol` (secrets redacted).
    pub fn settings(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        let mut put = |k: &str, v: Value| {
            m.insert(k.to_string(), v);
        };
        match self {
            Backend::Http(h) => return http_settings(h),
            Backend::Sql(s) => {
                put("workload", s.shown.clone().into());
                if let Some(scale) = s.workload.tpcb_scale() {
                    put("scale", scale.into());
                }
                put("pipeline", s.pipeline.into());
                if let sql::SqlWorkload::Custom { sql, .. } = &s.workload {
                    put("sql", sql.clone().into());
                }
            }
            Backend::Redis(r) => {
                put("workload", r.op.name().into());
                put("keyspace", r.options.keyspace.into());
                put("value_size", r.options.value_size.into());
                put("pipeline", r.options.pipeline.into());
            }
            Backend::Amqp(b) => {
                let o = &b.options;
                put(
                    "mode",
                    options::name_of(options::AmqpModeName::of(o.mode)).into(),
                );
                put("message_size", o.message_size.into());
                put("persistent", o.persistent.into());
                put("confirms", o.confirms.into());
                put("ack", options::name_of(options::AckName::of(o.ack)).into());
                put("pipeline", o.pipeline.into());
                if let Some(max) = o.max_lag {
                    put("max_lag", max.into());
                }
                if let (Some(side), Some(queue)) = (&b.stream, &o.queue) {
                    put("consumers", side.consumers.into());
                    put("queue", queue.clone().into());
                }
            }
            Backend::Nats(b) => {
                put(
                    "mode",
                    options::name_of(options::NatsModeName::of(b.options.mode)).into(),
                );
                put("message_size", b.options.message_size.into());
            }
            Backend::Mqtt(b) => {
                put("qos", b.options.qos.into());
                put("message_size", b.options.message_size.into());
            }
            Backend::Mongo(m) => {
                put("workload", m.op.name().into());
                put("keyspace", m.options.keyspace.into());
                put("scan_docs", m.options.scan_docs.into());
                put("doc_size", m.options.doc_size.into());
            }
            Backend::Vault(v) => return v.settings(),
        }
        m
    }
}

/// The HTTP part of a result's `config` (headers redacted).
fn http_settings(h: &HttpTarget) -> BTreeMap<String, Value> {
    let mut protocol = BTreeMap::new();
    let (method, count, body, own_headers) = match &h.requests {
        HttpRequests::Targets(t) => (
            t[0].method.clone(),
            t.len(),
            t[0].body.len(),
            t[0].headers.clone(),
        ),
        HttpRequests::Mix { specs, .. } => (specs[0].method.clone(), specs.len(), 0, Vec::new()),
    };
    protocol.insert("method".into(), method.into());
    protocol.insert("keepalive".into(), h.options.keepalive.into());
    if let HttpVersion::Http2 { streams } = h.options.version {
        protocol.insert("version".into(), "HTTP/2".into());
        protocol.insert("streams_per_connection".into(), streams.into());
    }
    if !h.options.ok_status.is_empty() {
        protocol.insert("ok_status".into(), h.options.ok_status.clone().into());
    }
    protocol.insert("targets".into(), count.into());
    protocol.insert("body_bytes".into(), body.into());
    let headers: Vec<Value> = h
        .options
        .headers
        .iter()
        .chain(own_headers.iter())
        .map(|(n, v)| redact::header_line(n, v).into())
        .collect();
    protocol.insert("headers".into(), headers.into());
    protocol
}

/// What a driver does around the engine's run beyond the `Driver` trait: set-up it needs
/// first, and figures only it knows afterwards. Nothing, for most.
trait Extras {
    fn before(&self) -> Result<(), AppError> {
        Ok(())
    }
    fn extras(&self) -> BTreeMap<String, Value> {
        BTreeMap::new()
    }
}

impl Extras for HttpDriver {}
impl Extras for sql::postgres::PgDriver {}
impl Extras for sql::mysql::MyDriver {}
impl Extras for amqp::AmqpDriver {}
impl Extras for nats::NatsDriver {}
impl Extras for mqtt::MqttDriver {}

impl Extras for perfbase_drivers::vault::VaultDriver {
    /// The op's key, secret or role is on the server (else: run with --init), and its request
    /// is built, with the ciphertext or signature it sends asked for once.
    fn before(&self) -> Result<(), AppError> {
        setup::block_on_local(self.prepare())?.map_err(|e| bad_input(e.to_string()))
    }
}

impl Extras for mongo::MongoDriver {
    /// The collection the operation reads holds documents (else: run with --init).
    fn before(&self) -> Result<(), AppError> {
        setup::block_on_local(self.check())?.map_err(|e| bad_input(e.to_string()))
    }

    /// Finds, updates and deletes that matched no document.
    fn extras(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        if self.misses() > 0 {
            m.insert("misses".into(), self.misses().into());
        }
        m
    }
}

impl Extras for redis::RedisDriver {
    /// Per-node figures need the slot map first. A cluster that does not answer now is left
    /// to the run, which counts its connect errors.
    fn before(&self) -> Result<(), AppError> {
        if self.is_cluster() {
            let _ = setup::block_on_local(self.map_nodes())?;
        }
        Ok(())
    }

    /// GETs that found no key; per node and cluster-wide: replies per node, redirects
    /// followed.
    fn extras(&self) -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        if self.misses() > 0 {
            m.insert("misses".into(), self.misses().into());
        }
        if self.is_cluster() {
            let nodes: serde_json::Map<String, Value> = self
                .per_node()
                .into_iter()
                .map(|(a, n)| (a.to_string(), n.into()))
                .collect();
            let (moved, ask) = self.redirects();
            m.insert("cluster_nodes".into(), nodes.into());
            m.insert(
                "redirects".into(),
                serde_json::json!({ "moved": moved, "ask": ask }),
            );
        }
        m
    }
}
