//! `perfbase http`: flags in the habits of wrk, oha and hey.

use super::LoadArgs;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  perfbase http http://127.0.0.1:8080/ -c 50 -d 10s
  perfbase http http://127.0.0.1:8080/ -r 2k -d 30s --json result.json
  perfbase http --targets targets.txt -n 1000
  perfbase http http://127.0.0.1:8080/ --http2 -c 4 --streams 25")]
pub struct HttpArgs {
    /// The URL to load (http://). Not needed with --targets.
    pub url: Option<String>,

    /// HTTP method
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,

    /// Add a header, 'Name: value' (repeatable); secret ones are redacted in every output
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    /// Request body
    #[arg(short = 'b', long, conflicts_with = "body_file")]
    pub body: Option<String>,

    /// Request body read from a file
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,

    /// Open a new TCP connection for every request
    #[arg(long, conflicts_with = "http2")]
    pub no_keepalive: bool,

    /// Count these statuses as success too (repeatable or comma-separated), e.g. 404 for
    /// lookups meant to miss; they are still counted by status
    #[arg(long, value_name = "CODE", value_delimiter = ',', value_parser = clap::value_parser!(u16).range(100..=599))]
    pub ok_status: Vec<u16>,

    /// Speak HTTP/2: h2c with prior knowledge for http://, ALPN h2 for https://
    #[arg(long)]
    pub http2: bool,

    /// --http2: concurrent streams per connection; the closed model then runs -c × this many
    /// requests at once (h2load's -m, oha's -p)
    #[arg(long, value_name = "M", default_value_t = 1, requires = "http2",
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub streams: u64,

    /// https://: accept any server certificate (self-signed, expired, other name)
    #[arg(short = 'k', long)]
    pub insecure: bool,

    /// https://: also trust the PEM certificates in this file (besides the system's roots)
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub cacert: Option<PathBuf>,

    /// Requests from a file in vegeta's format ('METHOD URL', header lines, '@body-file'),
    /// used in turn
    #[arg(long, value_name = "FILE", conflicts_with_all = ["body", "body_file"])]
    pub targets: Option<PathBuf>,

    #[command(flatten)]
    pub load: LoadArgs,
}
