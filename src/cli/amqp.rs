//! `perfbase amqp`: RabbitMQ round trips, publishing, or a stream with consumers apart.

use super::command::{check_url, one_workload};
use super::LoadArgs;
use crate::backend::amqp::{AckName, AmqpModeName};
use crate::backend::amqp::{AmqpTarget, StreamSide};
use crate::backend::Backend;
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_drivers::amqp;
use std::time::Duration;

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

impl AmqpArgs {
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
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
        Ok(one_workload(&self.load, &self.url, backend, store))
    }
}

/// `perfbase amqp`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load RabbitMQ (AMQP 0-9-1): publish, or publish and consume with end-to-end latency.
    Amqp(Box<AmqpArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Amqp(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
