//! `perfbase nats`: core publish/subscribe, request/reply or JetStream publishing.

use super::command::{check_url, one_workload};
use super::LoadArgs;
use crate::backend::options::NatsModeName;
use crate::backend::{Backend, BrokerTarget};
use crate::exit::AppError;
use crate::plan::Plan;
use crate::runner::StudyOptions;
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
        Ok(one_workload(&self.load, &self.url, backend, store))
    }
}
