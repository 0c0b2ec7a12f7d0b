//! `perfbase serve` and `perfbase demo`.

use super::parse;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on: a loopback address unless --allow-remote is given
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,

    /// Allow --host to be an address other machines can reach (the service has no
    /// authentication and is made to be loaded)
    #[arg(long)]
    pub allow_remote: bool,

    /// Requests with `Authorization: Bearer TOKEN` bypass /limited/'s rate limit (default:
    /// none do)
    #[arg(
        long,
        env = "PERFBASE_API_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub api_token: Option<String>,

    /// Port to listen on (0 picks a free one; the address is printed on the first line)
    #[arg(long, default_value_t = 8080)]
    pub port: u16,

    /// Serve at most N /lookup and /work requests at once (a capacity cap)
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,

    /// CPU time burned per /lookup request
    #[arg(long, default_value = "0s", value_name = "DURATION", value_parser = parse::duration)]
    pub lookup_cpu: Duration,

    /// Extra latency per /lookup request
    #[arg(long, default_value = "0s", value_name = "DURATION", value_parser = parse::duration)]
    pub lookup_delay: Duration,

    /// A slow drift: /lookup's latency grows by this much for every second the service has
    /// run (e.g. 20us: +1.2 ms after a minute), to see drift fool a comparison run in sequence
    #[arg(long, default_value = "0s", value_name = "DURATION", value_parser = parse::duration)]
    pub lookup_drift: Duration,

    /// Keys in the /lookup corpus (key-0 … key-N-1)
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub corpus_size: u64,

    /// /v1/chat/completions and /v1/completions: time to the first token
    #[arg(long, default_value = "50ms", value_name = "DURATION", value_parser = parse::duration)]
    pub first_token: Duration,

    /// /v1/chat/completions and /v1/completions: time between tokens
    #[arg(long, default_value = "10ms", value_name = "DURATION", value_parser = parse::duration)]
    pub token_gap: Duration,

    /// /health/all runs its checks concurrently instead of one after another
    #[arg(long)]
    pub health_concurrent: bool,

    /// Per-client limit on /limited/…: requests per minute (0 = no limit)
    #[arg(long, default_value_t = 120, value_name = "N")]
    pub rate_limit: u32,

    /// Serve https:// with a self-signed certificate made at start, written to FILE as PEM
    /// (give it to the client as --cacert FILE). FILE is an output: a file that exists is
    /// replaced only when an earlier `perfbase serve` wrote it
    #[arg(long, value_name = "FILE")]
    pub tls_cert_out: Option<PathBuf>,

    /// The old spelling of --tls-cert-out, which read like an input (kept for a release)
    #[arg(
        long,
        value_name = "FILE",
        hide = true,
        conflicts_with = "tls_cert_out"
    )]
    pub tls_cert: Option<PathBuf>,
}

impl ServeArgs {
    /// Where the certificate goes, warning once when the old spelling named it.
    pub fn cert_out(&self) -> Option<&PathBuf> {
        if self.tls_cert.is_some() {
            errln!(
                "perfbase: warning: --tls-cert is now --tls-cert-out (the file is written, not \
                 read); the old spelling will go in a later release"
            );
        }
        self.tls_cert_out.as_ref().or(self.tls_cert.as_ref())
    }
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for result.json and report.md
    #[arg(long, default_value = ".perfbase/demo", value_name = "DIR")]
    pub out: PathBuf,

    /// Multiply every rate and concurrency of the demo plan
    #[arg(long, value_name = "FACTOR")]
    pub scale: Option<f64>,

    /// No live progress line
    #[arg(short = 'q', long)]
    pub quiet: bool,

    #[command(flatten)]
    pub save: super::SaveArgs,
}
