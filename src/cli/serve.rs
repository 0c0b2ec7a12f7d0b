//! `perfbase serve` and `perfbase demo`.

use super::parse;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,

    /// Port to listen on (0 picks a free one; the address is printed on the first line)
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Length of each of the demo's runs
    #[arg(short = 'd', long, default_value = "3s", value_parser = parse::positive_duration)]
    pub duration: Duration,

    /// Folder for the result JSON files
    #[arg(long, default_value = ".perfbase/demo", value_name = "DIR")]
    pub out: PathBuf,
}
