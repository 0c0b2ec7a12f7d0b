//! `perfbase redis`, `perfbase amqp`, `perfbase nats`, `perfbase mqtt`.

use super::LoadArgs;
use clap::Args;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AmqpModeArg {
    /// Publish, then receive the same message: latency is end to end through the broker
    Roundtrip,
    /// Publish only (with --confirms: until the broker acknowledges)
    Publish,
    /// Publishers and --consumers apart on one queue, as RabbitMQ PerfTest: publish rate and
    /// latency, consume rate, end-to-end latency from the send stamp in each message
    Stream,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AckArg {
    None,
    Auto,
    Manual,
}

#[derive(Debug, Args)]
pub struct AmqpArgs {
    /// amqp://user:password@host:port/vhost (the password is redacted everywhere)
    pub url: String,

    #[arg(long, value_enum, default_value = "roundtrip")]
    pub mode: AmqpModeArg,

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
    pub ack: AckArg,

    /// --mode stream: consumer connections on the shared queue
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub consumers: u64,

    /// --mode stream: once publishing stopped, how long the consumers wait for messages still
    /// queued before giving up on them
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = crate::cli::parse::duration)]
    pub drain: Duration,

    #[command(flatten)]
    pub load: LoadArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NatsModeArg {
    /// Core publish to a subject the session subscribes to: end-to-end latency
    Pubsub,
    /// Request/reply through a responder
    Request,
    /// JetStream publish, until the PubAck
    Jetstream,
}

#[derive(Debug, Args)]
pub struct NatsArgs {
    /// nats://user:password@host:port
    pub url: String,

    #[arg(long, value_enum, default_value = "pubsub")]
    pub mode: NatsModeArg,

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
