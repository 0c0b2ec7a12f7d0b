//! `perfbase nats`: core publish/subscribe, request/reply or JetStream publishing.

use super::command::{check_url, one_workload};
use super::LoadArgs;
use crate::backend::nats::NatsModeName;
use crate::backend::{Backend, BrokerTarget};
use crate::exit::AppError;
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_drivers::nats;

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

impl NatsArgs {
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
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
        Ok(one_workload(&self.load, &self.url, backend, store))
    }
}

/// `perfbase nats`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load NATS: publish/subscribe, request/reply or JetStream publish.
    Nats(Box<NatsArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Nats(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
