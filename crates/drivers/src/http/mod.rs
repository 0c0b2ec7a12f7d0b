//! HTTP/1.1 over TCP (keep-alive, or a fresh connection per request), plain or TLS; HTTP/2
//! through hyper ([`h2`]).
//!
//! The hot path is hand-written on tokio's `TcpStream` rather than on hyper's client: the
//! side-by-side benchmark kit (`shared/bench/peers/RESULTS.md`) measured the hyper-based oha
//! at 10.0 CPU-µs per request against wrk's 8.2 on this machine, and perfbase's goal is wrk's
//! cost. Requests are serialised once; responses are parsed in place in a reused buffer
//! (httparse for the head, [`chunked::Decoder`] for chunked bodies) and their bodies counted,
//! not kept.

mod buffers;
pub mod chunked;
pub(crate) mod conn;
pub(crate) mod events;
pub mod fetch;
pub(crate) mod h2;
pub mod journey;
mod outcome;
pub(crate) mod request;
mod response;
mod stamp;
pub mod targets;

pub use conn::TlsOptions;
pub use events::{count_events, stream_held, HELD_AT_MOST};
pub use request::{
    is_token, unsafe_in_header, BodySpec, HttpOptions, HttpVersion, RequestSpec, Target,
};
pub use response::parse_response;
pub use targets::{parse_targets, TargetsError};

use crate::workload::{Corpus, Mix};
use buffers::Lent;
use conn::{Conn, Tls};
use outcome::{answered, cut_off, ended, timing_of};
use perfbase_core::recorder::MAX_LABELS;
use perfbase_core::{Class, Driver, Outcome, Session};
use request::{Prepared, Templated};
use response::{read_response, ReadError};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use thiserror::Error;

/// Why an HTTP driver could not be built from the given targets.
#[derive(Debug, Error)]
pub enum HttpError {
    /// Only http:// and https:// URLs can be loaded.
    #[error("'{url}': unsupported scheme '{scheme}'; use an http:// or https:// URL")]
    Scheme { url: String, scheme: String },
    /// The URL has no host.
    #[error("'{0}': the URL has no host")]
    NoHost(String),
    /// TLS cannot be set up: an unreadable --cacert, a host that is no server name.
    #[error("{0}")]
    Tls(String),
    /// Every target must point at the same host and port (one connection per session).
    #[error("targets mix hosts ({0} and {1}): every target of one run must use the same scheme, host and port")]
    MixedHosts(String, String),
    /// The host name did not resolve.
    #[error("cannot resolve '{host}': {source}")]
    Resolve {
        host: String,
        #[source]
        source: io::Error,
    },
    /// A method that is no HTTP token (letters, digits and `!#$%&'*+-.^_`|~`, no spaces).
    #[error("invalid method '{0}': use a token such as GET, POST or PURGE")]
    Method(String),
    /// A header name or value that cannot be sent.
    #[error("invalid header {0}")]
    Header(String),
    /// Nothing to send.
    #[error("no targets to load")]
    NoTargets,
    /// A request template that does not parse (unknown corpus, unclosed placeholder).
    #[error("{0}")]
    Template(String),
}

/// Where each op's request comes from.
enum Source {
    /// Requests serialised once; op n sends `requests[mix.choose(n)]` (or `n % len`).
    Fixed {
        requests: Box<[Prepared]>,
        mix: Option<Mix>,
    },
    /// Templates filled from corpora per op, rendered into the session's buffer.
    Templated(Templated),
}

impl Source {
    /// Which request (target, mix item) op `op` sends.
    fn index(&self, op: u64) -> usize {
        match self {
            Source::Fixed { mix: Some(m), .. } => m.choose(op),
            Source::Fixed {
                requests,
                mix: None,
            } => (op % requests.len() as u64) as usize,
            Source::Templated(t) => t.mix.choose(op),
        }
    }
}

/// Requests grouped into endpoints by name, for per-endpoint figures.
struct Endpoints {
    /// Distinct names in order of first appearance; empty when there is only one.
    names: Vec<String>,
    /// Per request index, its endpoint's label (1-based index into `names`).
    of_request: Box<[u16]>,
}

impl Endpoints {
    /// Groups requests by name. Past [`MAX_LABELS`] - 1 distinct names the rest share one
    /// label, `other`.
    fn group(names: impl IntoIterator<Item = String>) -> Endpoints {
        let mut distinct: Vec<String> = Vec::new();
        let mut of_request = Vec::new();
        for name in names {
            let label = match distinct.iter().position(|d| *d == name) {
                Some(i) => i,
                None if distinct.len() < MAX_LABELS - 1 => {
                    distinct.push(name);
                    distinct.len() - 1
                }
                None => {
                    if distinct.len() < MAX_LABELS {
                        distinct.push("other".into());
                    }
                    MAX_LABELS - 1
                }
            };
            of_request.push(label as u16 + 1);
        }
        if distinct.len() < 2 {
            distinct.clear();
        }
        Endpoints {
            names: distinct,
            of_request: of_request.into_boxed_slice(),
        }
    }
}

struct Shared {
    addr: SocketAddr,
    /// Set for https:// targets over HTTP/1.1.
    tls: Option<Tls>,
    source: Source,
    endpoints: Endpoints,
    keepalive: bool,
    max_head: usize,
    /// Set for HTTP/2, which then carries every request.
    h2: Option<Http2>,
    ok_status: StatusSet,
    describe_error: Option<fn(u16, &[u8]) -> String>,
    redirect_fails: bool,
    /// How long after an op's start an event stream is cut, and the timeout it stands for.
    stream_deadline: Option<(std::time::Duration, std::time::Duration)>,
}

/// A set of HTTP status codes (0–639) as bits: one test per response, no allocation.
#[derive(Default)]
struct StatusSet {
    bits: [u64; 10],
    any: bool,
}

impl StatusSet {
    fn of(codes: &[u16]) -> StatusSet {
        let mut set = StatusSet::default();
        for &c in codes.iter().filter(|&&c| c < 640) {
            set.bits[c as usize / 64] |= 1 << (c % 64);
            set.any = true;
        }
        set
    }

    fn contains(&self, code: u16) -> bool {
        code < 640 && self.bits[code as usize / 64] & (1 << (code % 64)) != 0
    }

    /// Makes a response with an expected status a success.
    fn apply(&self, mut o: Outcome) -> Outcome {
        if self.any && o.status != 0 && self.contains(o.status) {
            o.class = Class::Ok;
        }
        o
    }
}

/// What HTTP/2 sessions share.
struct Http2 {
    pool: h2::Pool,
    /// `scheme://host:port`, the start of every request's URI.
    origin: String,
    /// The converted requests of a [`Source::Fixed`], in its order.
    fixed: Box<[h2::H2Request]>,
}

/// The HTTP/1.1 driver: an address and the prepared requests, shared by all sessions.
pub struct HttpDriver {
    shared: Arc<Shared>,
}

/// The TLS client of an https:// target; none for http://.
fn tls_for(url: &url::Url, options: &HttpOptions) -> Result<Option<Tls>, HttpError> {
    if url.scheme() != "https" {
        // An unreadable --cacert is a mistake even where it is not needed: say so, rather
        // than let a later https:// run be the first to notice.
        if let Some(path) = &options.tls.ca_file {
            conn::read_cacert(path)?;
        }
        return Ok(None);
    }
    let host = url
        .host_str()
        .ok_or_else(|| HttpError::NoHost(url.to_string()))?;
    let alpn: &[u8] = match options.version {
        HttpVersion::Http1 => b"http/1.1",
        HttpVersion::Http2 { .. } => b"h2",
    };
    Tls::new(host, &options.tls, alpn).map(Some)
}

impl HttpDriver {
    /// Prepares every target's request bytes and resolves the (single) host.
    pub fn new(targets: &[Target], options: &HttpOptions) -> Result<HttpDriver, HttpError> {
        let first = targets.first().ok_or(HttpError::NoTargets)?;
        let authority = request::origin(&first.url)?;
        for t in targets {
            let a = request::origin(&t.url)?;
            if a != authority {
                return Err(HttpError::MixedHosts(authority, a));
            }
        }
        let addr = request::resolve(&first.url)?;
        let tls = tls_for(&first.url, options)?;
        let requests = targets
            .iter()
            .map(|t| Prepared::build(t, options))
            .collect::<Result<Vec<_>, _>>()?
            .into_boxed_slice();
        HttpDriver::with_source(
            (addr, &first.url),
            tls,
            Source::Fixed {
                requests,
                mix: None,
            },
            Endpoints::group(targets.iter().map(Target::label)),
            options,
        )
    }

    /// A driver for a weighted mix of request templates whose `{{corpus}}` placeholders are
    /// filled per op. Templates without placeholders are serialised once, as for targets.
    pub fn from_specs(
        specs: &[RequestSpec],
        corpora: Vec<Arc<Corpus>>,
        options: &HttpOptions,
    ) -> Result<HttpDriver, HttpError> {
        let first = specs.first().ok_or(HttpError::NoTargets)?;
        let authority = request::origin(&first.base)?;
        for s in specs {
            let a = request::origin(&s.base)?;
            if a != authority {
                return Err(HttpError::MixedHosts(authority, a));
            }
        }
        let addr = request::resolve(&first.base)?;
        let tls = tls_for(&first.base, options)?;
        let weights: Vec<u64> = specs.iter().map(|s| s.weight).collect();
        let mix = Mix::new(&weights).map_err(HttpError::Template)?;
        let templated = Templated::build(specs, corpora, mix, options)?;
        let source = if templated.is_literal() {
            Source::Fixed {
                requests: templated.prepare_all(options)?,
                mix: Some(templated.mix.clone()),
            }
        } else {
            Source::Templated(templated)
        };
        let endpoints = Endpoints::group(specs.iter().map(RequestSpec::label));
        HttpDriver::with_source((addr, &first.base), tls, source, endpoints, options)
    }

    /// The HTTP/1.1 bytes ops `0..ops` of a plan's mix put on the wire, built as a run builds
    /// them (templates parsed, values checked, placeholders filled and encoded), without a
    /// connection: for the request builder's fuzzer, and for looking at what a plan sends.
    pub fn wire_bytes(
        specs: &[RequestSpec],
        corpora: Vec<Arc<Corpus>>,
        options: &HttpOptions,
        ops: u64,
    ) -> Result<Vec<Vec<u8>>, HttpError> {
        let weights: Vec<u64> = specs.iter().map(|s| s.weight).collect();
        let mix = Mix::new(&weights).map_err(HttpError::Template)?;
        let templated = Templated::build(specs, corpora, mix, options)?;
        let (mut out, mut scratch) = (Vec::new(), Vec::new());
        Ok((0..ops)
            .map(|op| {
                templated.render(op, &mut out, &mut scratch);
                out.clone()
            })
            .collect())
    }

    fn with_source(
        (addr, url): (SocketAddr, &url::Url),
        tls: Option<Tls>,
        source: Source,
        endpoints: Endpoints,
        options: &HttpOptions,
    ) -> Result<HttpDriver, HttpError> {
        let (tls, h2) = match options.version {
            HttpVersion::Http1 => (tls, None),
            HttpVersion::Http2 { streams } => {
                let origin = request::origin(url)?;
                let fixed = match &source {
                    Source::Fixed { requests, .. } => requests
                        .iter()
                        .map(|p| h2::H2Request::from_http1(&p.bytes, &origin))
                        .collect::<Result<_, _>>()?,
                    Source::Templated(_) => Box::default(),
                };
                let pool = h2::Pool::new(addr, tls, streams);
                (
                    None,
                    Some(Http2 {
                        pool,
                        origin,
                        fixed,
                    }),
                )
            }
        };
        Ok(HttpDriver {
            shared: Arc::new(Shared {
                addr,
                tls,
                source,
                endpoints,
                keepalive: options.keepalive,
                max_head: options.max_head_bytes,
                h2,
                ok_status: StatusSet::of(&options.ok_status),
                describe_error: options.describe_error,
                redirect_fails: options.redirect_fails,
                stream_deadline: options
                    .stream_timeout
                    .map(|t| (events::stream_deadline(t), t)),
            }),
        })
    }

    /// The resolved address every session connects to.
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }
}

impl Driver for HttpDriver {
    type Session = HttpSession;

    async fn open(&self, worker: usize) -> Result<HttpSession, Outcome> {
        if let Some(h2) = &self.shared.h2 {
            // Like keep-alive sessions, HTTP/2 ones take their connection now.
            return Ok(HttpSession {
                shared: self.shared.clone(),
                stream: None,
                request: Vec::new(),
                scratch: Vec::new(),
                worker,
                lease: Some(h2.pool.lease(worker).await?),
                written_by_op: 0,
                opened: None,
                until: None,
                arrived: None,
            });
        }
        let mut s = HttpSession {
            shared: self.shared.clone(),
            stream: None,
            request: Vec::new(),
            scratch: Vec::new(),
            worker,
            lease: None,
            written_by_op: 0,
            opened: None,
            until: None,
            arrived: None,
        };
        // Keep-alive sessions connect now, so the connect is not in the first latency (as
        // wrk does); fresh-connection sessions connect inside every request instead.
        if self.shared.keepalive {
            let (conn, times) =
                Box::pin(Conn::open_timed(self.shared.addr, self.shared.tls.as_ref())).await?;
            s.stream = Some(conn);
            s.opened = Some(times);
        }
        Ok(s)
    }

    fn labels(&self) -> Vec<String> {
        self.shared.endpoints.names.clone()
    }

    fn label(&self, op: u64) -> u16 {
        let e = &self.shared.endpoints;
        e.of_request[self.shared.source.index(op)]
    }
}

/// One connection (or, without keep-alive, one connection per request).
pub struct HttpSession {
    shared: Arc<Shared>,
    stream: Option<Conn>,
    /// The rendered request of a templated op, reused from op to op.
    request: Vec<u8>,
    /// The rendered body, before its length goes into the head.
    scratch: Vec<u8>,
    worker: usize,
    /// HTTP/2: this session's stream slot on a shared connection.
    lease: Option<h2::Lease>,
    /// Bytes the current op has written, for the engine when it abandons the op on timeout
    /// (a completed op reports its bytes in its outcome).
    written_by_op: u64,
    /// The connect and TLS times (µs) of a connection opened before its first request (a
    /// keep-alive session's first), told with that request.
    opened: Option<(u32, u32)>,
    /// When the current op's event stream is cut (its start plus the stream deadline), and
    /// the run's timeout.
    until: Option<(std::time::Instant, std::time::Duration)>,
    /// When the current op's response arrived, by the kernel's stamps (plain HTTP/1.1
    /// without an event stream): see [`Session::arrived`].
    arrived: Option<std::time::Instant>,
}

impl HttpSession {
    async fn attempt(&mut self, req: Req<'_>) -> Result<Outcome, (Outcome, bool)> {
        let reused = self.reusable();
        let shared = &self.shared;
        let stream = match self.stream {
            Some(ref mut s) => s,
            None => {
                // Boxed, as a connect is rare next to the requests: its state (a TLS
                // handshake's, 1.3 KB) stays out of the op future every connection holds.
                let (conn, times) = Box::pin(Conn::open_timed(shared.addr, shared.tls.as_ref()))
                    .await
                    .map_err(|o| (o, false))?;
                self.opened = Some(times);
                self.stream.insert(conn)
            }
        };
        let mut timing = timing_of(self.opened.take());
        let out = req.bytes.len() as u64;
        if let Err(e) = stream.write_all(req.bytes).await {
            self.stream = None;
            let retry = reused && req.idempotent;
            return Err((Outcome::error(Class::Write, format!("write: {e}")), retry));
        }
        self.written_by_op += out;
        let sent = std::time::Instant::now();
        let keep_error_body = shared.describe_error.is_some();
        // The read buffer is taken only once the response has begun to arrive (see buffers).
        stream.readable().await;
        let mut buf = Lent::take();
        let until = self.until.map(|(at, _)| at);
        match read_response(
            stream,
            buf.boxed(),
            shared.max_head,
            req.head,
            keep_error_body,
            until,
        )
        .await
        {
            Ok(resp) if resp.cut => {
                let length = self.until.map(|(_, t)| t).unwrap_or_default();
                let o = cut_off(resp, sent, out, timing, length);
                self.stream = None;
                Ok(o)
            }
            Ok(mut resp) => {
                let (end, stamped) = ended(stream, &mut resp, sent, &mut timing);
                if stamped {
                    self.arrived = Some(end);
                }
                if resp.close || !shared.keepalive {
                    self.stream = None;
                } else {
                    stream.forget_readiness();
                }
                Ok(answered(shared, resp, out, timing, (sent, end)))
            }
            Err(e) => {
                self.stream = None;
                let retry =
                    reused && req.idempotent && matches!(e, ReadError::ClosedBeforeResponse);
                let (class, bytes) = e.class_and_bytes();
                Err((
                    Outcome::error(class, e.to_string()).with_bytes(bytes, out),
                    retry,
                ))
            }
        }
    }

    /// Whether the session holds a connection to reuse; one the server closed while it was
    /// idle is dropped first.
    fn reusable(&mut self) -> bool {
        if self.stream.as_ref().is_some_and(Conn::closed_while_idle) {
            self.stream = None;
        }
        self.stream.is_some()
    }
}

/// One request to send: its bytes and what the response handling needs to know.
#[derive(Clone, Copy)]
struct Req<'a> {
    bytes: &'a [u8],
    head: bool,
    idempotent: bool,
}

impl HttpSession {
    async fn send(&mut self, req: Req<'_>) -> Outcome {
        match self.attempt(req).await {
            Ok(o) => o,
            // A reused keep-alive connection that the server had already closed: the request
            // never reached it, so an idempotent request is sent once more on a fresh one.
            Err((_, true)) => match self.attempt(req).await {
                Ok(o) => o,
                Err((o, _)) => o,
            },
            Err((o, false)) => o,
        }
    }
}

impl HttpSession {
    /// Op `op` over HTTP/2: on the session's connection, or on another of its worker's when
    /// that one has closed (the engine counts a failure to get one as the op's outcome).
    async fn execute_h2(&mut self, h2: &Http2, op: u64) -> Outcome {
        let rendered;
        let req = match &self.shared.source {
            Source::Fixed { .. } => &h2.fixed[self.shared.source.index(op)],
            Source::Templated(t) => {
                self.request.clear();
                t.render(op, &mut self.request, &mut self.scratch);
                rendered = match h2::H2Request::from_http1(&self.request, &h2.origin) {
                    Ok(r) => r,
                    Err(e) => return Outcome::error(Class::Malformed, e.to_string()),
                };
                &rendered
            }
        };
        let lease = match &mut self.lease {
            Some(l) if !l.is_closed() => l,
            stale => {
                *stale = None;
                match h2.pool.lease(self.worker).await {
                    Ok(l) => stale.insert(l),
                    Err(o) => return o,
                }
            }
        };
        match h2::send(lease, req, self.until).await {
            Ok(o) | Err(o) => o,
        }
    }
}

impl Session for HttpSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        self.written_by_op = 0;
        self.arrived = None;
        self.until = self
            .shared
            .stream_deadline
            .map(|(d, t)| (std::time::Instant::now() + d, t));
        let mut o = self.execute_op(op).await;
        if self.shared.redirect_fails && o.class == Class::Ok && (300..400).contains(&o.status) {
            o.class = Class::ServerError;
            o.detail =
                Some(format!("redirected ({}): the server did not serve it", o.status).into());
        }
        self.shared.ok_status.apply(o)
    }

    fn arrived(&self) -> Option<std::time::Instant> {
        self.arrived
    }

    fn bytes_of_abandoned_op(&mut self) -> (u64, u64) {
        // HTTP/2 counts its connection's bytes itself, whichever op they belong to.
        (0, std::mem::take(&mut self.written_by_op))
    }
}

impl HttpSession {
    async fn execute_op(&mut self, op: u64) -> Outcome {
        let shared = self.shared.clone();
        if let Some(h2) = &shared.h2 {
            return self.execute_h2(h2, op).await;
        }
        match &shared.source {
            Source::Fixed { requests, .. } => {
                let p = &requests[shared.source.index(op)];
                let req = Req {
                    bytes: &p.bytes,
                    head: p.head,
                    idempotent: p.idempotent,
                };
                self.send(req).await
            }
            Source::Templated(t) => {
                let mut bytes = std::mem::take(&mut self.request);
                let (head, idempotent) = t.render(op, &mut bytes, &mut self.scratch);
                let out = self
                    .send(Req {
                        bytes: &bytes,
                        head,
                        idempotent,
                    })
                    .await;
                self.request = bytes;
                out
            }
        }
    }
}

#[cfg(test)]
mod endpoint_tests;
