//! `perfbase script`: a JavaScript workload from the command line, as `perfbase http` is a
//! request's: the script's file, the target's URL for its relative requests, `-e` for its
//! `__ENV`, and the load flags every command shares (-c virtual users, or -r iterations per
//! second).

use super::command::Job;
use super::http::parse_header;
use super::LoadArgs;
use crate::backend::http::{HttpRequests, HttpTarget};
use crate::backend::Backend;
use crate::exit::{bad_input, AppError};
use crate::plan::Plan;
use crate::runner::RunOptions;
use crate::store::StoreOptions;
use clap::Args;
use perfbase_core::redact;
use perfbase_drivers::http::HttpOptions;
use perfbase_drivers::script::ScriptSpec;
use std::path::PathBuf;
use url::Url;

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  perfbase script checkout.js --url http://127.0.0.1:8080 -c 20 -d 30s
  perfbase script checkout.js --url http://127.0.0.1:8080 -r 50 -d 1m -e USER=alice
  perfbase script checkout.js --function browse -r 10/s -d 10s

-c is the number of virtual users (each loops over the script's iterations), -r the
iterations started per second; every request the script makes is timed and reported as
an endpoint. The guide: docs/scripts.md")]
pub struct ScriptArgs {
    /// The script: an ES module whose default export (or --function) is one iteration
    pub file: PathBuf,

    /// The target's URL: the script's relative URLs ('/items') are resolved against it
    #[arg(short = 'u', long)]
    pub url: Option<String>,

    /// The exported function each iteration calls [default: the default export]
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,

    /// Set __ENV.KEY for the script (repeatable); a KEY that names a secret (TOKEN,
    /// PASSWORD, …) has its value redacted in every output
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,

    /// Add a header to every request, 'Name: value' (repeatable)
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,

    #[command(flatten)]
    pub tls: super::TlsArgs,

    #[command(flatten)]
    pub load: LoadArgs,
}

impl ScriptArgs {
    fn env(&self) -> Result<Vec<(String, String)>, AppError> {
        self.env
            .iter()
            .map(|e| match e.split_once('=') {
                Some((k, v)) if !k.is_empty() => {
                    if redact::is_secret_name(k) && !v.is_empty() {
                        redact::remember(v);
                    }
                    Ok((k.to_string(), v.to_string()))
                }
                _ => Err(bad_input(format!(
                    "--env '{}': expected KEY=VALUE",
                    e.split('=').next().unwrap_or("")
                ))),
            })
            .collect()
    }

    /// The one-scenario plan these flags describe.
    pub fn plan(&self, store: &StoreOptions) -> Result<(Plan, RunOptions), AppError> {
        let base = match &self.url {
            Some(raw) => Some(
                Url::parse(raw)
                    .map_err(|e| bad_input(redact::text(&format!("--url '{raw}': {e}"))))?,
            ),
            None => None,
        };
        let headers = self
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;
        self.load.check_json()?;
        let spec = ScriptSpec {
            file: self.file.clone(),
            function: self.function.clone(),
            base: base.clone(),
            headers,
            env: self.env()?,
        };
        perfbase_drivers::script::check(&spec).map_err(bad_input)?;
        let label = match &base {
            Some(u) => format!(
                "{} (script {})",
                redact::url(u.as_str()),
                self.file.display()
            ),
            None => format!("script {}", self.file.display()),
        };
        let job = Job {
            step: "measure".into(),
            label,
            backend: Backend::Http(HttpTarget {
                requests: HttpRequests::Script(Box::new(spec)),
                options: HttpOptions {
                    tls: self.tls.options(),
                    ..HttpOptions::default()
                },
            }),
        };
        let plan = self.load.plan("script", vec![job], 1);
        Ok((plan, self.load.options("script", None, store)))
    }
}
