//! Command-line flags, one file per subcommand. Flags only: turning them into typed options
//! and running them is `app`'s job.

mod http;
mod run;
mod serve;

pub use http::HttpArgs;
pub use run::RunArgs;
pub use serve::{DemoArgs, ServeArgs};

use clap::{Parser, Subcommand};

/// Load-test services and turn the measurements into performance baselines.
#[derive(Debug, Parser)]
#[command(name = "perfbase", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load an HTTP/1.1 endpoint (closed model with -c, open model with -r).
    Http(Box<HttpArgs>),
    /// Run a plan file: scenarios, ladders, repetitions, thresholds and checks.
    Run(RunArgs),
    /// Run the embedded reference service on a loopback port.
    Serve(ServeArgs),
    /// Start the reference service in-process and run plans/demo.toml against it.
    Demo(DemoArgs),
}

/// clap value parsers for perfbase's units, so bad values name their flag.
pub(crate) mod parse {
    use std::time::Duration;

    pub fn duration(s: &str) -> Result<Duration, String> {
        perfbase_core::units::parse_duration(s).map_err(|e| e.to_string())
    }

    pub fn positive_duration(s: &str) -> Result<Duration, String> {
        match duration(s)? {
            d if d.is_zero() => Err(format!("'{s}' must be longer than zero")),
            d => Ok(d),
        }
    }

    pub fn rate(s: &str) -> Result<f64, String> {
        perfbase_core::units::parse_rate(s).map_err(|e| e.to_string())
    }

    pub fn count(s: &str) -> Result<u64, String> {
        match perfbase_core::units::parse_count(s) {
            Ok(0) => Err(format!("'{s}' must be at least 1")),
            Ok(n) => Ok(n),
            Err(e) => Err(e.to_string()),
        }
    }
}
