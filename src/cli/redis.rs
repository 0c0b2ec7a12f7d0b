//! `perfbase redis`: one command or the suite, as redis-benchmark runs them, standalone or on
//! a cluster.

use super::command::{check_url, op_jobs, pick_ops};
use super::LoadArgs;
use crate::backend::redis::RedisTarget;
use crate::backend::Backend;
use crate::exit::AppError;
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_core::redact;
use perfbase_drivers::redis;

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

impl RedisArgs {
    /// One scenario per command asked for (the suite: every command in turn).
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
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

/// `perfbase redis`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load Redis (standalone or cluster): an operation suite like redis-benchmark, or one op.
    Redis(Box<RedisArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Redis(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
