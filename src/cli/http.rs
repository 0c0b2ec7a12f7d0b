//! `perfbase http`: flags in the habits of wrk, oha and hey.

use super::command::Job;
use super::LoadArgs;
use crate::backend::http::{HttpRequests, HttpTarget};
use crate::backend::Backend;
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_core::redact;
use perfbase_drivers::http::{targets::read_targets, HttpOptions, HttpVersion, Target};
use std::path::PathBuf;
use url::Url;

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

    #[command(flatten)]
    pub tls: super::TlsArgs,

    /// Requests from a file in vegeta's format ('METHOD URL', header lines, '@body-file'),
    /// used in turn
    #[arg(long, value_name = "FILE", conflicts_with_all = ["body", "body_file"])]
    pub targets: Option<PathBuf>,

    #[command(flatten)]
    pub load: LoadArgs,
}

/// One `-H "Name: value"` flag: a valid header name and a value without line breaks.
pub fn parse_header(h: &str) -> Result<(String, String), AppError> {
    if h.contains(['\r', '\n']) {
        // A line break would end the header early and smuggle the rest in as another header
        // or the body; the value may be a secret, so only the name is shown.
        return Err(bad_input(format!(
            "--header '{}': the header has a line break (CR or LF); give one 'Name: value' per -H",
            h.split([':', '\r', '\n']).next().unwrap_or("").trim()
        )));
    }
    match h.split_once(':') {
        Some((n, v)) if perfbase_drivers::http::is_token(n.trim()) => {
            Ok((n.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(bad_input(format!(
            "--header '{}': expected 'Name: value'",
            redact::header_line(h.split(':').next().unwrap_or(""), "…")
        ))),
    }
}

impl HttpArgs {
    /// The requests: a targets file's, or the URL's with its body.
    fn targets(&self) -> Result<Vec<Target>, AppError> {
        match (&self.targets, &self.url) {
            (Some(_), Some(url)) => Err(bad_input(format!(
                "give either a URL ('{}') or --targets, not both",
                redact::url(url)
            ))),
            (None, None) => Err(bad_input(
                "no target: give a URL (e.g. http://127.0.0.1:8080/) or --targets FILE",
            )),
            (Some(file), None) => read_targets(file).map_err(|e| bad_input(e.to_string())),
            (None, Some(raw)) => {
                let url = Url::parse(raw).map_err(|e| {
                    let hint = if e == url::ParseError::RelativeUrlWithoutBase {
                        format!("; give the scheme: http://{raw} (or https://)")
                    } else {
                        String::new()
                    };
                    bad_input(redact::text(&format!("URL '{raw}': {e}{hint}")))
                })?;
                let body: Vec<u8> = match (&self.body, &self.body_file) {
                    (Some(b), _) => b.clone().into_bytes(),
                    (None, Some(f)) => perfbase_drivers::input::read(f).map_err(|e| {
                        bad_input(format!("--body-file {}: cannot read: {e}", f.display()))
                    })?,
                    (None, None) => Vec::new(),
                };
                Ok(vec![Target {
                    method: self.method.clone(),
                    url,
                    headers: Vec::new(),
                    body: body.into(),
                }])
            }
        }
    }

    /// The one-scenario plan these flags describe; every error names its flag or file.
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
        let headers = self
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;
        let targets = self.targets()?;
        self.load.check_json()?;
        if self.tls.given() && targets.iter().all(|t| t.url.scheme() == "http") {
            errln!(
                "perfbase: warning: {} has no effect: every target is http://, so no certificate \
                 is checked",
                if self.tls.insecure { "-k" } else { "--cacert" }
            );
        }
        let label = match &self.targets {
            Some(f) => format!(
                "{} (targets: {})",
                redact::url(targets[0].url.as_str()),
                f.display()
            ),
            None => redact::url(self.url.as_deref().unwrap_or_default()),
        };
        let version = match self.http2 {
            false => HttpVersion::Http1,
            true => HttpVersion::Http2 {
                streams: self.streams as usize,
            },
        };
        let options = HttpOptions {
            keepalive: !self.no_keepalive,
            headers,
            tls: self.tls.options(),
            version,
            ok_status: self.ok_status.clone(),
            ..HttpOptions::default()
        };
        let job = Job {
            step: "measure".into(),
            label,
            backend: Backend::Http(HttpTarget {
                requests: HttpRequests::Targets(targets),
                options,
            }),
        };
        // -c N --streams M: N connections carry N × M sessions (one stream each), as with
        // h2load's -c N -m M. (A plan's `concurrency` counts streams.)
        let per_connection = if self.http2 { self.streams } else { 1 };
        let plan = self.load.plan("http", vec![job], per_connection);
        Ok((plan, self.load.options("http", None, store)))
    }
}

/// `perfbase http`: its place among the subcommands, from the list of protocols.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Load an HTTP endpoint: HTTP/1.1, HTTP/2 (--http2), TLS (closed model with -c, open
    /// model with -r).
    Http(Box<HttpArgs>),
}

impl Command {
    /// Runs the command: its flags become a plan, run as any other.
    pub fn run(self) -> Result<crate::exit::Exit, AppError> {
        match self {
            Command::Http(a) => crate::runner::launch(a.plan(&a.load.save.options()?)?),
        }
    }
}
