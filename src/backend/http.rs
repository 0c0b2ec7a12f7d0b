//! HTTP/1.1 and HTTP/2 workloads: a URL, a targets file or a plan's weighted mix of templates.

use super::protocol::{Extras, Target, Ran, RunArgs, DEFAULT_MAX_INFLIGHT};
use super::setup::block_on_local;
use crate::exit::AppError;
use perfbase_core::redact;
use perfbase_drivers::http::journey::{JourneyDriver, JourneySpec};
use perfbase_drivers::script::{ScriptDriver, ScriptSpec};
use perfbase_drivers::http::{HttpDriver, HttpOptions, HttpVersion, RequestSpec, Target as UrlTarget};
use perfbase_drivers::workload::Corpus;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use url::Url;

/// Requests over HTTP/1.1 or HTTP/2.
#[derive(Debug, Clone)]
pub struct HttpTarget {
    pub requests: HttpRequests,
    pub options: HttpOptions,
}

/// The requests of an HTTP workload.
#[derive(Debug, Clone)]
pub enum HttpRequests {
    /// A URL or a targets file: op n sends target n mod the count.
    Targets(Vec<UrlTarget>),
    /// A plan's weighted mix of templates, with the corpora their `{{…}}` draw from.
    Mix {
        specs: Vec<RequestSpec>,
        corpora: Vec<Arc<Corpus>>,
    },
    /// A plan's journeys: each op an iteration of steps that carry values from one request
    /// to the next.
    Journeys {
        spec: Box<JourneySpec>,
        corpora: Vec<Arc<Corpus>>,
    },
    /// A script: each op an iteration of its function, each request it makes timed.
    Script(Box<ScriptSpec>),
}

impl HttpTarget {
    /// The driver; with the run's `timeout`, an event stream near it is cut by the driver,
    /// which keeps what the stream brought.
    fn driver(
        &self,
        timeout: Option<std::time::Duration>,
    ) -> Result<HttpDriver, perfbase_drivers::http::HttpError> {
        let options = HttpOptions {
            stream_timeout: timeout,
            ..self.options.clone()
        };
        match &self.requests {
            HttpRequests::Targets(t) => HttpDriver::new(t, &options),
            HttpRequests::Mix { specs, corpora } => {
                HttpDriver::from_specs(specs, corpora.clone(), &options)
            }
            HttpRequests::Journeys { .. } | HttpRequests::Script(_) => {
                unreachable!("journeys and scripts have drivers of their own")
            }
        }
    }

    fn script_driver(spec: &ScriptSpec, options: &HttpOptions) -> Result<ScriptDriver, String> {
        ScriptDriver::new(spec, &options.tls)
    }

    fn journey_driver(
        spec: &JourneySpec,
        corpora: &[Arc<Corpus>],
        options: &HttpOptions,
    ) -> Result<JourneyDriver, perfbase_drivers::http::HttpError> {
        JourneyDriver::new(spec, corpora.to_vec(), &options.tls)
    }
}

impl Extras for HttpDriver {}

impl Extras for ScriptDriver {
    /// The script's `setup()`, once, before any load: a failure stops the run (exit 3),
    /// with the script's message and stack.
    fn before(&self) -> Result<(), AppError> {
        block_on_local(self.prepare())?.map_err(AppError::Unusable)
    }
}

impl Extras for JourneyDriver {
    /// The set-up steps, once, before any load: a failure stops the run (exit 3), naming the
    /// step and why.
    fn before(&self) -> Result<(), AppError> {
        block_on_local(self.prepare())?.map_err(AppError::Unusable)
    }
}

impl Target for HttpTarget {
    fn name(&self) -> &'static str {
        "http"
    }

    fn service_kind(&self) -> &'static str {
        "API (HTTP)"
    }

    /// wrk's 50 connections.
    fn default_connections(&self) -> u64 {
        50
    }

    fn default_max_inflight(&self) -> u64 {
        DEFAULT_MAX_INFLIGHT
    }

    /// Nothing is set up for HTTP.
    fn skip_setup(&mut self) {}

    fn validate(&self) -> Result<(), String> {
        match &self.requests {
            HttpRequests::Journeys { spec, corpora } => {
                Self::journey_driver(spec, corpora, &self.options).map(drop)
            }
            HttpRequests::Script(spec) => return Self::script_driver(spec, &self.options).map(drop),
            _ => self.driver(None).map(drop),
        }
        .map_err(|e| e.to_string())
    }

    fn run(&self, args: RunArgs<'_>) -> Result<Ran, AppError> {
        match &self.requests {
            HttpRequests::Journeys { spec, corpora } => {
                args.drive(Self::journey_driver(spec, corpora, &self.options))
            }
            HttpRequests::Script(spec) => args.drive(Self::script_driver(spec, &self.options)),
            _ => {
                let timeout = args.cfg.timeout;
                args.drive(self.driver(Some(timeout)))
            }
        }
    }

    /// The method, keep-alive, version, targets and headers (redacted).
    fn settings(&self) -> BTreeMap<String, Value> {
        let mut protocol = BTreeMap::new();
        let (method, count, body, own_headers) = match &self.requests {
            HttpRequests::Targets(t) => (
                t[0].method.clone(),
                t.len(),
                t[0].body.len(),
                t[0].headers.clone(),
            ),
            HttpRequests::Mix { specs, .. } => {
                (specs[0].method.clone(), specs.len(), 0, Vec::new())
            }
            HttpRequests::Journeys { spec, .. } => {
                let steps: usize = spec.journeys.iter().map(|j| j.steps.len()).sum();
                protocol.insert("journeys".into(), spec.journeys.len().into());
                protocol.insert("setup_steps".into(), spec.setup.len().into());
                protocol.insert("cookies".into(), spec.cookies.into());
                ("journey".into(), steps, 0, spec.headers.clone())
            }
            HttpRequests::Script(spec) => {
                protocol.insert("script".into(), spec.file.display().to_string().into());
                let function = spec.function.as_deref().unwrap_or("default");
                protocol.insert("function".into(), function.into());
                ("script".into(), 0, 0, spec.headers.clone())
            }
        };
        protocol.insert("method".into(), method.into());
        protocol.insert("keepalive".into(), self.options.keepalive.into());
        if let HttpVersion::Http2 { streams } = self.options.version {
            protocol.insert("version".into(), "HTTP/2".into());
            protocol.insert("streams_per_connection".into(), streams.into());
        }
        if !self.options.ok_status.is_empty() {
            protocol.insert("ok_status".into(), self.options.ok_status.clone().into());
        }
        protocol.insert("targets".into(), count.into());
        protocol.insert("body_bytes".into(), body.into());
        let headers: Vec<Value> = self
            .options
            .headers
            .iter()
            .chain(own_headers.iter())
            .map(|(n, v)| redact::header_line(n, v).into())
            .collect();
        protocol.insert("headers".into(), headers.into());
        protocol
    }

    fn server_url(&self) -> String {
        match &self.requests {
            HttpRequests::Targets(t) => t.first().map(|t| t.url.to_string()),
            HttpRequests::Mix { specs, .. } => specs.first().map(|s| s.base.to_string()),
            HttpRequests::Journeys { spec, .. } => Some(spec.base.to_string()),
            HttpRequests::Script(spec) => spec.base.as_ref().map(Url::to_string),
        }
        .unwrap_or_default()
    }

    fn server_version(&self) -> Result<String, String> {
        let url = self.server_url();
        block_on_local(server_header(&url)).map_err(|e| e.to_string())
    }
}

/// An HTTP server's `Server` header from one GET of the URL (http:// only; a TLS server's
/// header would need the run's trust settings, so it is left unasked).
async fn server_header(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(u) = url::Url::parse(url) else {
        return "not reported: the URL does not parse".into();
    };
    if u.scheme() != "http" {
        return "not asked (https: the Server header is read over plain http only)".into();
    }
    let host = u.host_str().unwrap_or("").to_string();
    let port = u.port_or_known_default().unwrap_or(80);
    let ask = async {
        let mut s = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .ok()?;
        let req = format!(
            "GET {} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nUser-Agent: perfbase\r\n\r\n",
            u.path()
        );
        s.write_all(req.as_bytes()).await.ok()?;
        let mut head = vec![0u8; 8192];
        let mut n = 0;
        while n < head.len() {
            let got = s.read(&mut head[n..]).await.ok()?;
            if got == 0 {
                break;
            }
            n += got;
            if head[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let text = String::from_utf8_lossy(&head[..n]).into_owned();
        Some(
            text.lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("server")
                        .then(|| v.trim().to_string())
                })
                .unwrap_or_else(|| "HTTP server (no Server header)".into()),
        )
    };
    match tokio::time::timeout(std::time::Duration::from_secs(3), ask).await {
        Ok(Some(v)) => v,
        _ => "not reported: no answer within 3 s".into(),
    }
}
