//! gRPC over HTTP/2 (`grpc://` h2c with prior knowledge, `grpcs://` TLS with ALPN h2), on the
//! HTTP/2 driver's connection pool: a worker's sessions share its connections, `streams`
//! calls on each. The calls go through the h2 crate directly (channel.rs), one write each.
//!
//! - **Calls.** All four kinds. A client stream's messages (`messages` per call) go out as
//!   one request body, as ghz sends them; a bidirectional call's replies are read as they
//!   come, so a server that answers each message as it reads it works as one that answers at
//!   the end.
//! - **Messages.** The method comes from `.proto` files compiled in-process (schema.rs), or
//!   without them from the server's reflection service (reflect.rs); its
//!   request is a JSON template (`{{n}}`, corpora) made protobuf through the input type. A
//!   template without placeholder is encoded once. Replies are not decoded: their messages
//!   are counted and their bytes summed (the server's work is what is measured).
//! - **Outcomes.** A call with `grpc-status` 0 is `ok`. Any other status is class `driver`
//!   with the code as the outcome's status (so the statuses table counts each code exactly)
//!   and `NAME: grpc-message` as its sample. The call's deadline (`--timeout`, sent as
//!   `grpc-timeout`) is also kept here, a little before the engine's own cut and the
//!   server's, so a call past it ends as DEADLINE_EXCEEDED, as a gRPC client reports it.
//! - **Timing.** As HTTP's split: connect and TLS on a new connection, "waiting" until the
//!   first reply message (time to first message), "receiving" from it to the call's end.
//!   A server-streaming or bidirectional reply is a stream (`Outcome::stream`): its messages
//!   and the gaps between them, 0 for messages one DATA frame completed together.

mod channel;
mod reflect;
mod schema;
mod wire;

pub use schema::{method_from_protos, Body, CallKind, Method};
pub use wire::status_name;

use crate::http::conn::{Tls, TlsOptions};
use crate::http::events::Clock;
use crate::http::h2::{Lease, Pool};
use bytes::Bytes;
use channel::{failure, Channel};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{HeaderMap, Method as HttpMethod, Request, Uri};
use perfbase_core::outcome::StreamReply;
use perfbase_core::{Class, ConnUse, Driver, Outcome, Session, Timing};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What was wrong with a gRPC load, found before any call.
#[derive(Debug, thiserror::Error)]
pub enum GrpcError {
    /// The URL is not grpc://host:port or grpcs://host:port.
    #[error("{0}")]
    Url(String),
    /// A .proto file is missing or does not compile.
    #[error("proto: {0}")]
    Proto(String),
    /// The method is not in the schema.
    #[error("--call: {0}")]
    Call(String),
    /// The request template does not make a message of the method's input type.
    #[error("request data: {0}")]
    Data(String),
    /// A metadata header that HTTP/2 cannot carry.
    #[error("metadata: {0}")]
    Metadata(String),
    /// TLS could not be set up (a --cacert file).
    #[error("{0}")]
    Tls(String),
}

/// A gRPC load's settings.
#[derive(Debug, Clone, Default)]
pub struct GrpcOptions {
    /// `package.Service/Method`.
    pub call: String,
    pub protos: Vec<PathBuf>,
    pub import_paths: Vec<PathBuf>,
    /// The request message as a JSON template; `{}` when empty.
    pub data: String,
    /// Messages a client-streaming or bidirectional call sends (1 for the others).
    pub messages: u32,
    /// Metadata sent with every call (`name`, `value`); values are secrets to redaction.
    pub metadata: Vec<(String, String)>,
    /// Calls in flight on one HTTP/2 connection.
    pub streams: usize,
    pub tls: TlsOptions,
    /// The call deadline (the run's --timeout), None for none.
    pub deadline: Option<Duration>,
    pub corpora: Vec<Arc<crate::workload::Corpus>>,
}

/// The driver: the resolved method, the request and the connections, shared with every
/// session.
pub struct GrpcDriver {
    shared: Arc<Shared>,
}

struct Shared {
    method: Method,
    body: Body,
    uri: Uri,
    headers: HeaderMap,
    deadline: Option<Duration>,
    pool: Pool<Channel>,
    /// Messages a call sends.
    sent_per_call: u64,
    /// Messages received and sent over the run (replies counted whole).
    received: AtomicU64,
    sent: AtomicU64,
}

/// The address, TLS and `scheme://authority` of a grpc:// or grpcs:// URL.
fn target(url: &str, tls: &TlsOptions) -> Result<(SocketAddr, Option<Tls>, String), GrpcError> {
    let bad = |why: &str| {
        GrpcError::Url(format!(
            "'{}': {why} (grpc://host:port or grpcs://host:port)",
            perfbase_core::redact::url(url)
        ))
    };
    let parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
    let secure = match parsed.scheme() {
        "grpc" => false,
        "grpcs" => true,
        _ => return Err(bad("not a gRPC URL")),
    };
    let host = parsed.host_str().ok_or_else(|| bad("no host"))?.to_string();
    let port = parsed.port().ok_or_else(|| bad("no port"))?;
    if !matches!(parsed.path(), "" | "/") {
        return Err(bad("a path has no place in it; the method goes in --call"));
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&(bare, port))
        .map_err(|e| GrpcError::Url(format!("cannot resolve '{host}': {e}")))?
        .next()
        .ok_or_else(|| GrpcError::Url(format!("'{host}' resolves to no address")))?;
    let tls = match secure {
        true => Some(Tls::new(&host, tls, b"h2").map_err(|e| GrpcError::Tls(e.to_string()))?),
        false => None,
    };
    let origin = format!("{}://{host}:{port}", if secure { "https" } else { "http" });
    Ok((addr, tls, origin))
}

/// The headers every call carries: gRPC's own, then the metadata.
fn headers(options: &GrpcOptions) -> Result<HeaderMap, GrpcError> {
    let mut h = HeaderMap::new();
    h.insert("content-type", HeaderValue::from_static("application/grpc"));
    h.insert("te", HeaderValue::from_static("trailers"));
    h.insert(
        "user-agent",
        HeaderValue::from_static(concat!("perfbase/", env!("CARGO_PKG_VERSION"))),
    );
    if let Some(d) = options.deadline {
        // The server is told the whole timeout, so its own deadline (which resets the
        // stream) never comes before the call's here.
        let v = wire::timeout_header(d);
        h.insert(
            "grpc-timeout",
            HeaderValue::from_str(&v).expect("digits and a unit"),
        );
    }
    for (name, value) in &options.metadata {
        if perfbase_core::redact::is_secret_name(name) {
            perfbase_core::redact::remember(value);
        }
        let n = HeaderName::from_bytes(name.trim().to_ascii_lowercase().as_bytes())
            .map_err(|e| GrpcError::Metadata(format!("'{name}': {e}")))?;
        if n.as_str().starts_with("grpc-") || n.as_str().starts_with(':') {
            return Err(GrpcError::Metadata(format!(
                "'{name}' is gRPC's own header; choose another name"
            )));
        }
        // Sent by perfbase already (content-type, te) or forbidden in HTTP/2 (RFC 9113
        // §8.2.2): a second copy breaks the call.
        if n == hyper::header::CONTENT_TYPE || crate::http::h2::DROPPED.contains(&n.as_str()) {
            return Err(GrpcError::Metadata(format!(
                "'{name}' is set by perfbase or not allowed in HTTP/2 (content-type, {}); \
                 leave it out",
                crate::http::h2::DROPPED.join(", ")
            )));
        }
        let value = value.trim();
        // Binary metadata travels base64-encoded: its value is given so, checked, and sent
        // unpadded as gRPC asks.
        let value = if n.as_str().ends_with("-bin") {
            use base64::Engine as _;
            let unpadded = value.trim_end_matches('=');
            base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(unpadded)
                .map_err(|e| {
                    GrpcError::Metadata(format!(
                        "'{name}': a -bin value is given base64-encoded ({e})"
                    ))
                })?;
            unpadded
        } else {
            value
        };
        let v = HeaderValue::from_str(value)
            .map_err(|e| GrpcError::Metadata(format!("'{name}': {e}")))?;
        if n == hyper::header::USER_AGENT {
            // Replaces perfbase's own, as a client's user agent.
            h.insert(n, v);
        } else {
            h.append(n, v);
        }
    }
    Ok(h)
}

impl GrpcDriver {
    /// Resolves the method and builds the first call's request: a bad URL, schema, method,
    /// message or header is an error here, before any load.
    pub fn new(url: &str, options: GrpcOptions) -> Result<GrpcDriver, GrpcError> {
        let (addr, tls, origin) = target(url, &options.tls)?;
        let method = if options.protos.is_empty() {
            // No schema given: the server's own, through reflection.
            let service = schema::service_of(&options.call)?;
            let tls_again = match url.starts_with("grpcs://") {
                true => target(url, &options.tls)?.1,
                false => None,
            };
            let pool = reflect::pool_of((addr, tls_again), &origin, service)?;
            schema::method_in(&pool, &options.call)?
        } else {
            method_from_protos(&options.protos, &options.import_paths, &options.call)?
        };
        let messages = if method.kind.client_streams() {
            options.messages.max(1)
        } else {
            1
        };
        let data = if options.data.trim().is_empty() {
            "{}"
        } else {
            &options.data
        };
        let body = Body::new(&method, data, &options.corpora, messages)?;
        let uri: Uri = format!("{origin}{}", method.path)
            .parse()
            .map_err(|e| GrpcError::Call(format!("'{}': {e}", method.path)))?;
        let shared = Shared {
            headers: headers(&options)?,
            deadline: options.deadline.map(crate::http::events::stream_deadline),
            pool: Pool::new(addr, tls, options.streams),
            sent_per_call: u64::from(messages),
            method,
            body,
            uri,
            received: AtomicU64::new(0),
            sent: AtomicU64::new(0),
        };
        Ok(GrpcDriver {
            shared: Arc::new(shared),
        })
    }

    /// The method called.
    pub fn method(&self) -> &Method {
        &self.shared.method
    }

    /// Messages received and sent so far.
    pub fn messages(&self) -> (u64, u64) {
        (
            self.shared.received.load(Ordering::Relaxed),
            self.shared.sent.load(Ordering::Relaxed),
        )
    }

    /// The bytes of call 0's request body (its framed messages): the size a result shows
    /// instead of the JSON, which may hold a secret.
    pub fn request_bytes(&self) -> usize {
        self.shared.body.build(0).map_or(0, |b| b.len())
    }
}

impl Driver for GrpcDriver {
    type Session = GrpcSession;

    async fn open(&self, worker: usize) -> Result<GrpcSession, Outcome> {
        Ok(GrpcSession {
            worker,
            lease: None,
            shared: self.shared.clone(),
        })
    }
}

/// One call at a time, on a stream slot of its worker's connections.
pub struct GrpcSession {
    worker: usize,
    lease: Option<Lease<Channel>>,
    shared: Arc<Shared>,
}

impl Session for GrpcSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        let d = &*self.shared;
        // The deadline runs from the call's start, a connection's opening included, as a
        // gRPC client's context deadline does.
        let until = d.deadline.map(|t| (tokio::time::Instant::now() + t, t));
        let body = match d.body.build(op) {
            Ok(b) => b,
            Err(e) => return Outcome::error(Class::ServerError, format!("request data: {e}")),
        };
        let lease = match &mut self.lease {
            Some(l) if !l.is_closed() => l,
            stale => {
                *stale = None;
                match within(until, d.pool.lease(self.worker)).await {
                    Ok(Ok(l)) => stale.insert(l),
                    Ok(Err(o)) | Err(o) => return o,
                }
            }
        };
        let mut req = Request::new(());
        *req.method_mut() = HttpMethod::POST;
        *req.uri_mut() = d.uri.clone();
        *req.headers_mut() = d.headers.clone();
        let streamed = matches!(d.method.kind, CallKind::ServerStreaming | CallKind::Bidi);
        let mut arrivals = Arrivals::default();
        let exchange = call(lease.sender(), (req, body), streamed, &mut arrivals);
        let result = match within(until, exchange).await {
            Ok(r) => r,
            // Cut by the deadline: a stream still brought what it brought.
            Err(mut o) => {
                if let (true, Some(sent)) = (streamed, arrivals.sent) {
                    let stream = arrivals.clock.reply(sent, Instant::now());
                    if stream.messages > 0 {
                        let length = until.map(|(_, l)| l).unwrap_or_default();
                        o = status_outcome(
                            wire::DEADLINE_EXCEEDED,
                            &crate::http::events::cut(length, stream.messages),
                        );
                    }
                    o.stream = Some(Box::new(stream));
                }
                Err(o)
            }
        };
        let (read, written) = lease.take_bytes();
        let opened = lease.take_opened();
        d.sent.fetch_add(d.sent_per_call, Ordering::Relaxed);
        match result {
            Ok(Reply { stream, mut timing }) => {
                d.received.fetch_add(stream.messages, Ordering::Relaxed);
                if let Some((connect_us, tls_us)) = opened {
                    timing.conn = ConnUse::New;
                    timing.connect_us = connect_us;
                    timing.tls_us = tls_us;
                }
                let mut o = Outcome::ok(read, written).with_timing(timing);
                if streamed {
                    o.stream = Some(Box::new(stream));
                }
                o
            }
            Err(o) => {
                if let Some(st) = &o.stream {
                    d.received.fetch_add(st.messages, Ordering::Relaxed);
                }
                o.with_bytes(read, written)
            }
        }
    }
}

/// `work` until the deadline `until` (its instant and length), past which it is
/// DEADLINE_EXCEEDED; without a deadline, for as long as it takes.
async fn within<T>(
    until: Option<(tokio::time::Instant, Duration)>,
    work: impl std::future::Future<Output = T>,
) -> Result<T, Outcome> {
    match until {
        Some((at, length)) => tokio::time::timeout_at(at, work).await.map_err(|_| {
            status_outcome(
                wire::DEADLINE_EXCEEDED,
                &format!("no reply within the deadline ({length:?})"),
            )
        }),
        None => Ok(work.await),
    }
}

/// The outcome of a call that ended with gRPC status `code` (not OK).
fn status_outcome(code: u16, message: &str) -> Outcome {
    let name = wire::status_name(code);
    let mut o = Outcome::error(
        Class::ServerError,
        if message.is_empty() {
            name
        } else {
            format!("{name}: {message}")
        },
    );
    o.status = code;
    o
}

/// A reply's messages as their bytes arrive, and when each came. Held by the session, not
/// the call, so that a stream the deadline cuts still tells what it brought.
#[derive(Default)]
struct Arrivals {
    messages: wire::Messages,
    clock: Clock,
    /// When the request went out.
    sent: Option<Instant>,
}

impl Arrivals {
    /// A DATA frame's bytes, as they arrive.
    fn take(&mut self, data: &[u8]) {
        self.clock.arrived(self.messages.push(data));
    }
}

/// A call's reply: its messages (with the gaps between them when `streamed`) and where its
/// time went.
struct Reply {
    stream: StreamReply,
    timing: Timing,
}

/// One call: sends the request (its HEADERS and its DATA queued together), counts the
/// reply's messages (timing the gaps between them when the reply is `streamed`), reads its
/// status; or the failed call's outcome.
async fn call(
    channel: &mut Channel,
    (req, body): (Request<()>, Bytes),
    streamed: bool,
    arrivals: &mut Arrivals,
) -> Result<Reply, Outcome> {
    let send = &mut channel.send;
    std::future::poll_fn(|cx| send.poll_ready(cx))
        .await
        .map_err(|e| failure(&e))?;
    let sent = *arrivals.sent.insert(Instant::now());
    let (resp, mut stream) = send.send_request(req, false).map_err(|e| failure(&e))?;
    stream.send_data(body, true).map_err(|e| failure(&e))?;
    let resp = resp.await.map_err(|e| failure(&e))?;
    let http = resp.status().as_u16();
    if http != 200 {
        return Err(status_outcome(
            wire::status_of_http(http),
            &format!("HTTP status {http} instead of a gRPC reply"),
        ));
    }
    // Trailers-Only: the status came with the headers, and nothing follows.
    if let Some((code, message)) = wire::status_of(resp.headers()) {
        if code != 0 {
            return Err(status_outcome(code, &message));
        }
    }
    let mut body = resp.into_body();
    while let Some(data) = body.data().await {
        let data = data.map_err(|e| failure(&e))?;
        arrivals.take(&data);
        // Read, so the window opens again (h2 sends WINDOW_UPDATE once half of it is used).
        let _ = body.flow_control().release_capacity(data.len());
    }
    let trailers = body.trailers().await.map_err(|e| failure(&e))?;
    let status = trailers.as_ref().and_then(wire::status_of);
    let end = Instant::now();
    let first = arrivals.clock.first.unwrap_or(end);
    let timing = Timing {
        conn: ConnUse::Reused,
        waiting_us: crate::http::conn::micros(first - sent),
        receiving_us: crate::http::conn::micros(end - first),
        ..Timing::default()
    };
    let partial = arrivals.messages.partial();
    let stream = std::mem::take(&mut arrivals.clock).reply(sent, end);
    match status {
        Some((0, _)) if partial => Err(status_outcome(
            wire::INTERNAL,
            "the reply ended inside a message",
        )),
        Some((0, _)) => Ok(Reply { stream, timing }),
        Some((code, message)) => {
            // A stream that ends with an error status still brought its messages.
            let mut o = status_outcome(code, &message);
            if streamed {
                o.stream = Some(Box::new(stream));
            }
            Err(o)
        }
        None => Err(Outcome::error(
            Class::Malformed,
            "the reply ended without grpc-status (is this a gRPC server?)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(metadata: &[(&str, &str)]) -> Result<HeaderMap, GrpcError> {
        headers(&GrpcOptions {
            metadata: metadata
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            ..GrpcOptions::default()
        })
    }

    /// Metadata cannot send a header twice that HTTP/2 or gRPC reads once (issue 47's
    /// judgement call), and binary metadata goes base64-encoded, checked.
    #[test]
    fn metadata_neither_repeats_a_calls_own_header_nor_sends_raw_binary() {
        for name in [
            "content-type",
            "TE",
            "host",
            "connection",
            "grpc-timeout",
            ":path",
        ] {
            assert!(with(&[(name, "x")]).is_err(), "{name}");
        }
        let h = with(&[
            ("trace-bin", "AAEC"),
            ("user-agent", "mine/1"),
            ("x-a", "1"),
        ])
        .unwrap();
        assert_eq!(h["trace-bin"], "AAEC");
        assert_eq!(h.get_all("user-agent").iter().count(), 1);
        assert_eq!(h["user-agent"], "mine/1");
        assert_eq!(h.get_all("content-type").iter().count(), 1);
        // Padded is accepted and sent unpadded; not base64 is refused, naming the rule.
        assert_eq!(with(&[("k-bin", "AA==")]).unwrap()["k-bin"], "AA");
        let e = with(&[("k-bin", "not base64!")]).unwrap_err().to_string();
        assert!(e.contains("base64"), "{e}");
    }
}
