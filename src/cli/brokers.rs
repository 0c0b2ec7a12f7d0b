//! `perfbase redis`, `perfbase amqp`, `perfbase nats`, `perfbase mqtt`.

use super::command::{check_url, op_jobs, pick_ops, Job};
use super::LoadArgs;
use crate::backend::options::{AckName, AmqpModeName, NatsModeName};
use crate::backend::{AmqpTarget, Backend, BrokerTarget, RedisTarget, StreamSide};
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::StudyOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_core::redact;
use perfbase_drivers::{amqp, mqtt, nats, redis};
use std::time::Duration;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  perfbase redis redis://:secret@127.0.0.1:6379 --prefill -w get -c 50 -d 10s
  perfbase redis redis://127.0.0.1:6379 -w suite --pipeline 16
  perfbase redis redis+cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003 -w set")]
pub struct RedisArgs {
    /// redis://[:password@]host:port[/db], or redis+cluster://host:port,host:port,… for a cluster
    pub url: String,

    /// suite (every operation in turn, as redis-benchmark) or one of: ping, set, get, get-miss,
    /// del, incr, lpush, rpush, lpop, rpop, sadd, zadd, hset
    #[arg(short = 'w', long, default_value = "suite")]
    pub workload: String,

    /// Keys used: key:000000000000 … (random per request)
    #[arg(long, default_value_t = 100_000)]
    pub keyspace: u64,

    /// Bytes per value (SET, LPUSH, …)
    #[arg(long, default_value_t = 3)]
    pub value_size: usize,

    /// Commands sent together per connection (as redis-benchmark -P)
    #[arg(short = 'P', long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub pipeline: u64,

    /// SET every key of the keyspace first, so GET hits
    #[arg(long)]
    pub prefill: bool,

    #[command(flatten)]
    pub load: LoadArgs,
}

#[derive(Debug, Args)]
pub struct AmqpArgs {
    /// amqp://user:password@host:port/vhost (the password is redacted everywhere)
    pub url: String,

    #[arg(long, value_enum, default_value = "roundtrip")]
    pub mode: AmqpModeName,

    /// Message size in bytes
    #[arg(long, default_value_t = 1024)]
    pub size: usize,

    /// Persistent messages on a durable queue
    #[arg(long)]
    pub persistent: bool,

    /// Publisher confirms
    #[arg(long)]
    pub confirms: bool,

    /// How the consumer acknowledges
    #[arg(long, value_enum, default_value = "manual")]
    pub ack: AckName,

    /// --mode publish or stream: messages published at once on each connection (each is
    /// counted; the batch's latency is each one's)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub pipeline: u64,

    /// --mode stream: consumer connections on the shared queue
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub consumers: u64,

    /// --mode stream: at most this many messages published and not yet consumed; publishers
    /// wait for the consumers beyond it (default: no bound, as PerfTest)
    #[arg(long, value_name = "MESSAGES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_lag: Option<u64>,

    /// --mode stream: once publishing stopped, how long the consumers wait for messages still
    /// queued before giving up on them
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = crate::cli::parse::duration)]
    pub drain: Duration,

    #[command(flatten)]
    pub load: LoadArgs,
}

#[derive(Debug, Args)]
pub struct NatsArgs {
    /// nats://user:password@host:port
    pub url: String,

    #[arg(long, value_enum, default_value = "pubsub")]
    pub mode: NatsModeName,

    /// Message size in bytes
    #[arg(long, default_value_t = 128)]
    pub size: usize,

    #[command(flatten)]
    pub load: LoadArgs,
}

#[derive(Debug, Args)]
pub struct MqttArgs {
    /// mqtt://user:password@host:port
    pub url: String,

    /// Quality of service: 0 or 1
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub qos: u8,

    /// Message size in bytes
    #[arg(long, default_value_t = 1024)]
    pub size: usize,

    #[command(flatten)]
    pub load: LoadArgs,
}

/// The URL's scheme is one of `schemes`, else an error naming the command's.
/// A plan of one broker workload under `load`'s flags.
fn one(load: &LoadArgs, url: &str, backend: Backend, store: &StoreOptions) -> (Plan, StudyOptions) {
    let kind = backend.protocol();
    let job = Job {
        step: "measure".into(),
        label: redact::url(url),
        backend,
    };
    (
        load.plan(kind, vec![job], 1),
        load.options(kind, None, store),
    )
}

impl RedisArgs {
    /// One scenario per command asked for (the suite: every command in turn).
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, StudyOptions), AppError> {
        check_url(&self.url, &["redis", "redis+cluster"], "redis")?;
        self.load.check_json()?;
        let options = redis::RedisOptions {
            keyspace: self.keyspace.max(1),
            value_size: self.value_size,
            pipeline: self.pipeline as usize,
        };
        let ops = pick_ops::<redis::RedisOp>(&self.workload)?;
        let label = redact::url(&self.url);
        let jobs = op_jobs(&ops, &label, |i, op| {
            Backend::Redis(RedisTarget {
                url: self.url.clone(),
                op: *op,
                options: options.clone(),
                // Once, before the first command.
                prefill: self.prefill && i == 0,
            })
        });
        let title = (ops.len() > 1).then(|| {
            let on = format!("{label} (pipeline {})", options.pipeline);
            self.load.suite_title("redis", &on, ops.len())
        });
        Ok((
            self.load.plan("redis", jobs, 1),
            self.load.options("redis", title, store),
        ))
    }
}

impl AmqpArgs {
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, StudyOptions), AppError> {
        check_url(&self.url, &["amqp"], "amqp")?;
        self.load.check_json()?;
        let mut options = amqp::AmqpOptions {
            mode: self.mode.mode(),
            message_size: self.size,
            persistent: self.persistent,
            confirms: self.confirms,
            ack: self.ack.mode(),
            queue: None,
            pipeline: self.pipeline as usize,
            max_lag: self.max_lag,
        };
        if self.max_lag.is_some() && self.mode != AmqpModeName::Stream {
            return Err(bad_input("--max-lag: only with --mode stream"));
        }
        if self.pipeline > 1 && self.mode == AmqpModeName::Roundtrip {
            return Err(bad_input(
                "--pipeline: only with --mode publish or stream (a round trip waits for its own \
                 message to come back)",
            ));
        }
        let stream = if self.mode == AmqpModeName::Stream {
            if self.load.warmup.is_some() {
                return Err(bad_input(
                    "--warmup: not with --mode stream (the consumers would count the warm-up's \
                     messages); leave it out",
                ));
            }
            options.queue = Some(format!("perfbase-{}-stream", std::process::id()));
            Some(StreamSide {
                consumers: self.consumers,
                drain: self.drain,
            })
        } else {
            None
        };
        let backend = Backend::Amqp(AmqpTarget {
            url: self.url.clone(),
            options,
            stream,
        });
        Ok(one(&self.load, &self.url, backend, store))
    }
}

impl NatsArgs {
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, StudyOptions), AppError> {
        check_url(&self.url, &["nats"], "nats")?;
        self.load.check_json()?;
        let options = nats::NatsOptions {
            mode: self.mode.mode(),
            message_size: self.size,
        };
        let backend = Backend::Nats(BrokerTarget {
            url: self.url.clone(),
            options,
        });
        Ok(one(&self.load, &self.url, backend, store))
    }
}

impl MqttArgs {
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, StudyOptions), AppError> {
        check_url(&self.url, &["mqtt"], "mqtt")?;
        self.load.check_json()?;
        let options = mqtt::MqttOptions {
            qos: self.qos,
            message_size: self.size,
        };
        let backend = Backend::Mqtt(BrokerTarget {
            url: self.url.clone(),
            options,
        });
        Ok(one(&self.load, &self.url, backend, store))
    }
}
