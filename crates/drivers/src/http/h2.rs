//! HTTP/2 (`--http2`): h2c with prior knowledge for `http://`, h2 chosen by ALPN for
//! `https://`, through hyper's client.
//!
//! - **Multiplexing.** Every session is one stream at a time. A worker's sessions share its
//!   connections, at most `streams` sessions on each, as h2load's `-m` and oha's `-p`: with
//!   `-c 4 --streams 10` the closed model runs 40 sessions on 4 connections. Sessions only
//!   share connections within a worker, so each worker opens ⌈its sessions / streams⌉.
//! - **Requests.** They are built the same way as for HTTP/1.1 (one request serialiser, one
//!   templating) and converted: the request line and headers become pseudo-headers and an
//!   HTTP/2 header block; the connection-specific headers HTTP/2 forbids are dropped.
//! - **Cost.** hyper and h2 are not the hand-written HTTP/1.1 path: a request allocates its
//!   header map, and the stream state machine runs per request. No benchmark has shown them
//!   to be the bottleneck against HTTP/2 peers (see `bench/README.md`).
//! - **Bytes.** Transfer counts what crossed the socket (frames, HPACK-compressed headers,
//!   settings and window updates included), as HTTP/1.1's counts heads and bodies: each
//!   connection counts its bytes, and an op that ends takes what was counted since the last
//!   one. On a shared connection an op may so carry another stream's frames; the run's totals
//!   are exact, and the bytes of an op that timed out are not lost.

use super::conn::{self, Tls};
use super::events::{Events, Format};
use super::HttpError;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::{self, SendRequest};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{HeaderMap, Method, Request, Uri};
use hyper_util::rt::{TokioExecutor, TokioIo};
use perfbase_core::outcome::StreamReply;
use perfbase_core::{Class, ConnUse, Outcome, Timing};
use std::collections::HashMap;
use std::error::Error as _;
use std::future::Future;
use std::io::IoSlice;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// One request, ready to be sent as often as needed.
pub(crate) struct H2Request {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
}

/// Headers that name connection-level behaviour of HTTP/1.1, which HTTP/2 forbids
/// (RFC 9113 §8.2.2), and `Host`, which becomes `:authority`. `Content-Length` is set by
/// hyper from the body.
pub(crate) const DROPPED: &[&str] = &[
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "te",
    "content-length",
];

impl H2Request {
    /// Converts a request serialised for HTTP/1.1 (`head` + body) for `origin`
    /// (`scheme://host:port`).
    pub(crate) fn from_http1(bytes: &[u8], origin: &str) -> Result<H2Request, HttpError> {
        let bad = |why: String| HttpError::Template(format!("HTTP/2 request: {why}"));
        let mut slots = [httparse::EMPTY_HEADER; 128];
        let mut parsed = httparse::Request::new(&mut slots);
        let head = match parsed.parse(bytes) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Err(bad("incomplete head".into())),
            Err(e) => return Err(bad(e.to_string())),
        };
        let method = Method::from_bytes(parsed.method.unwrap_or("GET").as_bytes())
            .map_err(|e| bad(e.to_string()))?;
        let path = parsed.path.unwrap_or("/");
        let uri: Uri = format!("{origin}{path}")
            .parse()
            .map_err(|e| bad(format!("'{origin}{path}': {e}")))?;
        let mut headers = HeaderMap::new();
        for h in parsed.headers.iter() {
            if DROPPED.iter().any(|d| h.name.eq_ignore_ascii_case(d)) {
                continue;
            }
            let name = HeaderName::from_bytes(h.name.as_bytes())
                .map_err(|e| bad(format!("header '{}': {e}", h.name)))?;
            let value = HeaderValue::from_bytes(h.value)
                .map_err(|e| bad(format!("header '{}': {e}", h.name)))?;
            headers.append(name, value);
        }
        Ok(H2Request {
            method,
            uri,
            headers,
            body: Bytes::copy_from_slice(&bytes[head..]),
        })
    }

    fn to_request(&self) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(self.body.clone()));
        *req.method_mut() = self.method.clone();
        *req.uri_mut() = self.uri.clone();
        *req.headers_mut() = self.headers.clone();
        req
    }
}

/// The bytes a connection moved and no op has yet reported. (Atomics, as hyper requires its
/// IO to be `Send`; the connection runs on the worker's thread, so they are never contended.)
#[derive(Default)]
pub(crate) struct WireBytes {
    read: AtomicU64,
    written: AtomicU64,
}

impl WireBytes {
    /// What was counted since the last take: (read, written).
    pub(crate) fn take(&self) -> (u64, u64) {
        (
            self.read.swap(0, Ordering::Relaxed),
            self.written.swap(0, Ordering::Relaxed),
        )
    }
}

/// A connection's IO that counts the bytes crossing it, and may hold its writes for a turn.
pub(crate) struct Counted<T> {
    pub(crate) io: T,
    pub(crate) bytes: Arc<WireBytes>,
    /// With [`Sender::CORKED`]: whether the next write goes through (`Some(true)`) or first
    /// yields once, the task waking itself (`Some(false)`). The tasks woken before it (the
    /// calls whose replies the connection just read) then run and queue their next requests,
    /// and the write that follows carries them all (grpc/channel.rs).
    pub(crate) held: Option<bool>,
}

impl<T> Counted<T> {
    /// Pending, once, for the first write of a turn when corked; Ready otherwise.
    fn hold(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.held {
            Some(through) if !*through => {
                *through = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Some(through) => {
                *through = false;
                Poll::Ready(())
            }
            None => Poll::Ready(()),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Counted<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before) as u64;
        self.bytes.read.fetch_add(n, Ordering::Relaxed);
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counted<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        std::task::ready!(self.hold(cx));
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            self.bytes.written.fetch_add(n as u64, Ordering::Relaxed);
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        std::task::ready!(self.hold(cx));
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = r {
            self.bytes.written.fetch_add(n as u64, Ordering::Relaxed);
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// A connection's request sender as the pool keeps it: hyper's client for HTTP/2 (and gRPC's
/// reflection), the h2 crate's own for gRPC's calls (grpc/channel.rs).
pub(crate) trait Sender: Clone + Send + Sync + Sized + 'static {
    /// Whether its connections hold each turn's first write ([`Counted::held`]).
    const CORKED: bool = false;

    /// Whether the connection can no longer carry requests (GOAWAY, closed, failed).
    fn is_closed(&self) -> bool;

    /// The HTTP/2 handshake over `io`; the connection then runs as its own task on the
    /// worker.
    fn start<T>(io: T, addr: SocketAddr) -> impl Future<Output = Result<Self, Outcome>>
    where
        T: AsyncRead + AsyncWrite + Send + Unpin + 'static;
}

impl Sender for SendRequest<Full<Bytes>> {
    fn is_closed(&self) -> bool {
        SendRequest::is_closed(self)
    }

    fn start<T>(io: T, addr: SocketAddr) -> impl Future<Output = Result<Self, Outcome>>
    where
        T: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        start(io, addr)
    }
}

/// hyper's sender, which HTTP/2 requests and gRPC's reflection use.
pub(crate) type HyperSender = SendRequest<Full<Bytes>>;

/// An open HTTP/2 connection of one worker and how many sessions use it.
struct Multiplexed<S> {
    send: S,
    users: Arc<AtomicUsize>,
    bytes: Arc<WireBytes>,
}

/// A session's share of a connection; giving it back (dropping it) frees a stream slot.
pub(crate) struct Lease<S = HyperSender> {
    send: S,
    users: Arc<AtomicUsize>,
    bytes: Arc<WireBytes>,
    /// The connect and TLS times (µs) of the connection this lease opened, told with its
    /// first request; None for a lease on a connection already open.
    opened: Option<(u32, u32)>,
}

impl<S> Drop for Lease<S> {
    fn drop(&mut self) {
        self.users.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<S: Sender> Lease<S> {
    /// Whether the connection can no longer carry requests (GOAWAY, closed, failed).
    pub(crate) fn is_closed(&self) -> bool {
        self.send.is_closed()
    }
}

/// What a protocol on HTTP/2 that reads its replies its own way (gRPC) needs of a lease.
#[cfg_attr(not(feature = "grpc"), allow(dead_code))]
impl<S> Lease<S> {
    /// The connection's request sender, for a protocol on HTTP/2 that reads its replies
    /// its own way (gRPC).
    pub(crate) fn sender(&mut self) -> &mut S {
        &mut self.send
    }

    /// The bytes (read, written) the connection moved since they were last taken.
    pub(crate) fn take_bytes(&self) -> (u64, u64) {
        self.bytes.take()
    }

    /// The connect and TLS times (µs) of the connection this lease opened, the first time
    /// they are asked for.
    pub(crate) fn take_opened(&mut self) -> Option<(u32, u32)> {
        self.opened.take()
    }
}

/// The connections of every worker, and how to open more.
pub(crate) struct Pool<S = HyperSender> {
    addr: SocketAddr,
    tls: Option<Tls>,
    streams: usize,
    /// Per worker, its connections. A worker's sessions run on its one thread, so its async
    /// mutex is never contended across threads; it stops two sessions from both opening a
    /// connection where one would do.
    workers: Mutex<HashMap<usize, WorkerConns<S>>>,
}

/// One worker's connections.
type WorkerConns<S> = Arc<tokio::sync::Mutex<Vec<Multiplexed<S>>>>;

impl<S: Sender> Pool<S> {
    pub(crate) fn new(addr: SocketAddr, tls: Option<Tls>, streams: usize) -> Pool<S> {
        Pool {
            addr,
            tls,
            streams: streams.max(1),
            workers: Mutex::new(HashMap::new()),
        }
    }

    /// A stream slot on one of `worker`'s connections, opening a connection when every one
    /// is full or closed.
    pub(crate) async fn lease(&self, worker: usize) -> Result<Lease<S>, Outcome> {
        let slot = {
            let mut workers = self.workers.lock().unwrap_or_else(|p| p.into_inner());
            workers.entry(worker).or_default().clone()
        };
        let mut conns = slot.lock().await;
        conns.retain(|c| !c.send.is_closed());
        if let Some(c) = conns
            .iter()
            .find(|c| c.users.load(Ordering::Relaxed) < self.streams)
        {
            c.users.fetch_add(1, Ordering::Relaxed);
            return Ok(Lease {
                send: c.send.clone(),
                users: c.users.clone(),
                bytes: c.bytes.clone(),
                opened: None,
            });
        }
        let bytes = Arc::new(WireBytes::default());
        // Boxed: the handshake's state (8 KB) would otherwise sit in every session's op
        // future, and so in the memory of every connection, for the rare op that connects.
        let (send, times) = Box::pin(self.connect(&bytes)).await?;
        let users = Arc::new(AtomicUsize::new(1));
        conns.push(Multiplexed {
            send: send.clone(),
            users: users.clone(),
            bytes: bytes.clone(),
        });
        Ok(Lease {
            send,
            users,
            bytes,
            opened: Some(times),
        })
    }

    /// A new connection, and how long its TCP connect and its TLS handshake took (µs; the
    /// HTTP/2 handshake after them counts with neither).
    async fn connect(&self, bytes: &Arc<WireBytes>) -> Result<(S, (u32, u32)), Outcome> {
        let addr = self.addr;
        let t0 = std::time::Instant::now();
        let tcp = conn::connect(addr).await?;
        let connected = std::time::Instant::now();
        let connect_us = conn::micros(connected - t0);
        let counted = |io| Counted {
            io,
            bytes: bytes.clone(),
            held: S::CORKED.then_some(false),
        };
        match &self.tls {
            None => Ok((S::start(counted(tcp), addr).await?, (connect_us, 0))),
            Some(tls) => {
                let stream = conn::handshake(tcp, tls, addr).await?;
                let tls_us = conn::micros(connected.elapsed());
                if stream.get_ref().1.alpn_protocol() != Some(b"h2") {
                    return Err(Outcome::error(
                        Class::Connect,
                        format!(
                            "{addr} did not agree to HTTP/2 in the TLS handshake (ALPN h2): \
                             load it without --http2"
                        ),
                    ));
                }
                // Counted above TLS: the bytes of the HTTP/2 stream, as HTTP/1.1 counts the
                // request and response, not the TLS records around them.
                let send = S::start(
                    Counted {
                        io: stream,
                        bytes: bytes.clone(),
                        held: S::CORKED.then_some(false),
                    },
                    addr,
                )
                .await?;
                Ok((send, (connect_us, tls_us)))
            }
        }
    }
}

/// The HTTP/2 handshake over `io`; the connection then runs as its own task on the worker.
async fn start<T>(io: T, addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>, Outcome>
where
    T: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (send, connection) = http2::Builder::new(TokioExecutor::new())
        .handshake(TokioIo::new(io))
        .await
        .map_err(|e| handshake_failed(addr, &e))?;
    tokio::spawn(async move {
        // Its errors reach the requests in flight, which report them.
        let _ = connection.await;
    });
    Ok(send)
}

/// Sends `req` on the lease's connection and reads the whole response: its status and the
/// bytes (read, written) its connection moved since the last op took them, or the error's
/// outcome with those bytes.
/// An event stream is cut at `until` (its instant, and the timeout it stands for), keeping
/// what it brought.
pub(crate) async fn send(
    lease: &mut Lease,
    req: &H2Request,
    until: Option<(std::time::Instant, std::time::Duration)>,
) -> Result<Outcome, Outcome> {
    let result = exchange(lease, req, until).await;
    let (read, written) = lease.bytes.take();
    match result {
        Ok((status, mut timing, stream)) => {
            // The first request on a connection this lease opened brings its set-up times.
            if let Some((connect_us, tls_us)) = lease.opened.take() {
                timing.conn = ConnUse::New;
                timing.connect_us = connect_us;
                timing.tls_us = tls_us;
            }
            let mut o = Outcome::http(status, read, written).with_timing(timing);
            o.stream = stream;
            Ok(o)
        }
        Err(o) => Err(o.with_bytes(read, written)),
    }
}

/// One request: its status, where its time went (waiting from when the connection took the
/// stream to the response's headers, receiving from those to the body's end) and, for an
/// event stream, its events.
async fn exchange(
    lease: &mut Lease,
    req: &H2Request,
    until: Option<(std::time::Instant, std::time::Duration)>,
) -> Result<(u16, Timing, Option<Box<StreamReply>>), Outcome> {
    lease.send.ready().await.map_err(|e| failure(&e))?;
    let sent = std::time::Instant::now();
    let resp = lease
        .send
        .send_request(req.to_request())
        .await
        .map_err(|e| failure(&e))?;
    let first = std::time::Instant::now();
    let status = resp.status().as_u16();
    let mut events = resp
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| Format::of(v.as_bytes()))
        .map(|f| Box::new(Events::new(f)));
    let mut body = resp.into_body();
    let until = until.filter(|_| events.is_some());
    let frames = async {
        while let Some(frame) = body.frame().await {
            match frame {
                Err(e) => return Err(failure(&e)),
                Ok(f) => {
                    if let (Some(e), Some(data)) = (events.as_deref_mut(), f.data_ref()) {
                        e.feed(data);
                    }
                }
            }
        }
        Ok(())
    };
    match until {
        Some((at, timeout)) => {
            if tokio::time::timeout_at(at.into(), frames).await.is_err() {
                // Cut at its deadline (the stream is reset when `body` drops): what came counts.
                let messages = events.as_ref().map_or(0, |e| e.clock.count);
                let mut o = Outcome::error(Class::Timeout, super::events::cut(timeout, messages));
                o.status = status;
                o.stream = events.map(|e| Box::new(e.reply(sent, std::time::Instant::now())));
                return Err(o);
            }
        }
        None => frames.await?,
    }
    let end = std::time::Instant::now();
    Ok((
        status,
        Timing {
            conn: ConnUse::Reused,
            waiting_us: conn::micros(first - sent),
            receiving_us: conn::micros(end - first),
            ..Timing::default()
        },
        events.map(|e| Box::new(e.reply(sent, end))),
    ))
}

/// The outcome of a failed request: a reset or closed connection is class `read`, anything
/// the peer did against the protocol (GOAWAY or RST_STREAM with an error, a malformed frame)
/// class `protocol`.
pub(crate) fn failure(e: &hyper::Error) -> Outcome {
    let io = {
        let mut source = e.source();
        let mut found = false;
        while let Some(s) = source {
            found |= s.is::<std::io::Error>();
            source = s.source();
        }
        found
    };
    let class = if e.is_timeout() {
        Class::Timeout
    } else if io || e.is_canceled() || e.is_closed() || e.is_incomplete_message() {
        Class::Read
    } else {
        Class::Malformed
    };
    Outcome::error(class, with_hint(chain(e)))
}

/// A failed HTTP/2 handshake with `addr`: class `connect`, its causes in its message.
pub(crate) fn handshake_failed(addr: SocketAddr, e: &dyn std::error::Error) -> Outcome {
    Outcome::error(
        Class::Connect,
        format!("HTTP/2 handshake with {addr}: {}", chain(e)),
    )
}

/// An HTTP/2 error's text, with a hint when the server may not speak HTTP/2 at all.
pub(crate) fn with_hint(mut text: String) -> String {
    if text.contains("frame with invalid size") || text.contains("PROTOCOL_ERROR") {
        text.push_str(" (does the server speak HTTP/2 with prior knowledge? drop --http2 if not)");
    }
    text
}

/// An error and its causes, `outer: inner: …`.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http1_request_becomes_pseudo_headers_and_a_header_block() {
        let h1 = b"POST /a/b?x=1 HTTP/1.1\r\nHost: example:8080\r\nConnection: keep-alive\r\n\
                   Content-Length: 3\r\nX-Id: 7\r\nAuthorization: Bearer t\r\n\r\nabc";
        let r = H2Request::from_http1(h1, "http://example:8080").unwrap();
        assert_eq!(r.method, Method::POST);
        assert_eq!(r.uri.to_string(), "http://example:8080/a/b?x=1");
        assert_eq!(r.body.as_ref(), b"abc");
        let names: Vec<&str> = r.headers.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["x-id", "authorization"]);
        assert_eq!(r.to_request().headers()["x-id"], "7");
    }

    #[test]
    fn a_broken_request_is_an_error_not_a_panic() {
        assert!(H2Request::from_http1(b"GET / HTTP/1.1\r\nHost", "http://h").is_err());
        assert!(H2Request::from_http1(b"\x01\x02 / HTTP/1.1\r\n\r\n", "http://h").is_err());
    }
}
