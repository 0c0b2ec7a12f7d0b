//! `perfbase kafka`: produce, consume in a group, or both with end-to-end latency.

use super::command::one_workload;
use super::LoadArgs;
use crate::backend::kafka::{
    self as target, AcksName, CommitName, CompressionName, EndToEndSide, FromName, KafkaTarget,
    KafkaWorkload, KeysName, PartitionerName,
};
use crate::backend::{Backend, Target as _};
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_drivers::kafka::{ConsumeOptions, ProduceOptions};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct KafkaArgs {
    /// kafka://[user:password@]host:port[,host:port…][?sasl=plain|scram-sha-256|scram-sha-512]
    /// (the password is redacted everywhere)
    pub bootstrap: String,

    #[arg(short = 'w', long, value_enum, default_value = "produce")]
    pub workload: KafkaWorkload,

    #[arg(long, default_value = "perfbase")]
    pub topic: String,

    /// Create the topic afresh (deleted first if it exists) with --partitions, replication 1
    #[arg(long)]
    pub init: bool,

    /// --init: the topic's partitions
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub partitions: u32,

    /// Write this many records of --size first (for -w consume to read)
    #[arg(long, default_value_t = 0, value_name = "RECORDS")]
    pub prefill: u64,

    /// Delete the topic after the run
    #[arg(long)]
    pub clean: bool,

    /// The acknowledgement a produced record waits for
    #[arg(long, value_enum, default_value = "all")]
    pub acks: AcksName,

    /// Record value size in bytes (at least 16)
    #[arg(long, default_value_t = 1024)]
    pub size: usize,

    /// The most bytes of a partition's batch (batch.size)
    #[arg(long, default_value_t = 16_384, value_name = "BYTES")]
    pub batch_size: u64,

    /// How long a batch waits for more records (linger.ms)
    #[arg(long, default_value = "5ms", value_name = "DURATION", value_parser = crate::cli::parse::duration)]
    pub linger: Duration,

    #[arg(long, value_enum, default_value = "none")]
    pub compression: CompressionName,

    /// The key each record carries: from --keys-file, or key-0 … key-(N-1) for --key-count N
    #[arg(long, value_enum, default_value = "none")]
    pub keys: KeysName,

    #[arg(long, default_value_t = 1000, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub key_count: u64,

    /// Keys, one per line
    #[arg(long, value_name = "FILE")]
    pub keys_file: Option<PathBuf>,

    /// A header on every record ("Name: value"; repeatable)
    #[arg(long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// The idempotent producer (needs --acks all)
    #[arg(long)]
    pub idempotent: bool,

    #[arg(long, value_enum, default_value = "default")]
    pub partitioner: PartitionerName,

    /// -w consume: the consumer group (default: one new for this run)
    #[arg(long)]
    pub group: Option<String>,

    /// -w consume: where a group without committed offsets starts
    #[arg(long, value_enum, default_value = "earliest")]
    pub from: FromName,

    /// -w consume: how the consumers commit
    #[arg(long, value_enum, default_value = "auto")]
    pub commit: CommitName,

    /// -w e2e: consumers reading the topic's partitions
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub consumers: u64,

    /// -w e2e: once producing stopped, how long the consumers wait for records still on
    /// their way
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = crate::cli::parse::duration)]
    pub drain: Duration,

    #[command(flatten)]
    pub load: LoadArgs,
}

impl KafkaArgs {
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
        let url = if self.bootstrap.contains("://") {
            self.bootstrap.clone()
        } else {
            format!("kafka://{}", self.bootstrap)
        };
        self.load.check_json()?;
        if self.workload == KafkaWorkload::E2e && self.load.warmup.is_some() {
            return Err(bad_input(
                "--warmup: not with -w e2e (the consumers would count the warm-up's records); \
                 leave it out",
            ));
        }
        let keys = target::keys(self.keys, self.key_count, self.keys_file.as_deref())
            .map_err(|e| bad_input(format!("--keys: {e}")))?;
        let headers = self
            .headers
            .iter()
            .map(|h| target::header(h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad_input(format!("--header: {e}")))?;
        let t = KafkaTarget {
            url: url.clone(),
            topic: self.topic.clone(),
            workload: self.workload,
            produce: ProduceOptions {
                acks: self.acks.get(),
                record_size: self.size,
                batch_bytes: self.batch_size,
                linger: self.linger,
                compression: self.compression.get(),
                keys,
                headers,
                idempotent: self.idempotent,
                partitioner: self.partitioner.get(),
                ..ProduceOptions::default()
            },
            consume: ConsumeOptions {
                group: self.group.clone().unwrap_or_else(target::default_group),
                from: self.from.get(),
                commit: self.commit.get(),
            },
            init: self.init.then_some(self.partitions as i32),
            prefill: self.prefill,
            clean: self.clean,
            e2e: (self.workload == KafkaWorkload::E2e).then_some(EndToEndSide {
                consumers: self.consumers,
                drain: self.drain,
            }),
        };
        t.validate().map_err(bad_input)?;
        Ok(one_workload(&self.load, &url, Backend::Kafka(t), store))
    }
}

/// `perfbase kafka`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load Apache Kafka: produce, consume in a group, or both with end-to-end latency.
    Kafka(Box<KafkaArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Kafka(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
