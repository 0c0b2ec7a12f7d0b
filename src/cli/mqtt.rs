//! `perfbase mqtt`: QoS 0 or 1 publishing with end-to-end latency through the broker.

use super::command::{check_url, one_workload};
use super::LoadArgs;
use crate::backend::{Backend, BrokerTarget};
use crate::exit::AppError;
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_drivers::mqtt;

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

impl MqttArgs {
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
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
        Ok(one_workload(&self.load, &self.url, backend, store))
    }
}

/// `perfbase mqtt`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load an MQTT broker: QoS 0/1 publish with end-to-end latency.
    Mqtt(Box<MqttArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Mqtt(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
