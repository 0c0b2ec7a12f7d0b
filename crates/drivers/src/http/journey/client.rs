//! A journey's or a script's connection: HTTP/1.1 keep-alive on the hot path's own
//! connection (plain or TLS) and response reader, each response read whole (a capture, a
//! check or a script may need its headers and body) into a buffer lent for that response
//! only. An idle user keeps its socket and nothing else: with hyper's client, each
//! connection kept its own read and write buffers and a task, about 25 KB per user at 10,000
//! users with a think time; on this reader, 8.2 KB (bench/script_vs_peers.sh).
//!
//! A request waits one turn of the worker's scheduler before it is written, so that the
//! other users whose answers came run their code first and their requests leave together:
//! the server then wakes once for several. Written at once, each request of a script (whose
//! code takes tens of µs between requests) woke the sleeping server alone, and the wake-up
//! was charged to the send: 168 CPU-µs per script journey against 110 with the turn, which
//! hyper's channel to its connection task gave for free (closed, 50 users, one core each).

use crate::http::buffers::Lent;
use crate::http::conn::{Conn, Tls};
use crate::http::response::{read_whole, ReadError};
use bytes::Bytes;
use hyper::header::{HeaderMap, HeaderValue, CONTENT_LENGTH, TRANSFER_ENCODING, USER_AGENT};
use hyper::{Method, Uri};
use perfbase_core::outcome::StreamReply;
use perfbase_core::{Class, Outcome};
use std::net::SocketAddr;

/// How much of a body is kept for captures and checks (the rest is read and counted).
pub(crate) const KEPT_BODY: usize = 1 << 20;
/// The longest response head read (as hyper's default buffer limit allowed about as much).
const MAX_HEAD: usize = 64 * 1024;

/// One request, ready to send (and to send again on a fresh connection).
pub(crate) struct Outgoing {
    pub(crate) method: Method,
    pub(crate) uri: Uri,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Outgoing {
    /// The request's bytes: its line, Host, a User-Agent unless it has one, its headers,
    /// its length (a body, or a method that expects one), its body.
    fn bytes(&self, host: &HeaderValue) -> Vec<u8> {
        let target = self.uri.path_and_query().map_or("/", |p| p.as_str());
        let mut b = Vec::with_capacity(128 + self.body.len());
        b.extend_from_slice(self.method.as_str().as_bytes());
        b.push(b' ');
        b.extend_from_slice(target.as_bytes());
        b.extend_from_slice(b" HTTP/1.1\r\nhost: ");
        b.extend_from_slice(host.as_bytes());
        b.extend_from_slice(b"\r\n");
        if !self.headers.contains_key(USER_AGENT) {
            b.extend_from_slice(b"user-agent: perfbase\r\n");
        }
        for (name, value) in &self.headers {
            b.extend_from_slice(name.as_str().as_bytes());
            b.extend_from_slice(b": ");
            b.extend_from_slice(value.as_bytes());
            b.extend_from_slice(b"\r\n");
        }
        let framed = self.headers.contains_key(CONTENT_LENGTH)
            || self.headers.contains_key(TRANSFER_ENCODING);
        let expects = matches!(self.method, Method::POST | Method::PUT | Method::PATCH);
        if !framed && (expects || !self.body.is_empty()) {
            b.extend_from_slice(format!("content-length: {}\r\n", self.body.len()).as_bytes());
        }
        b.extend_from_slice(b"\r\n");
        b.extend_from_slice(&self.body);
        b
    }

    /// Sent again after a kept-alive connection turned out closed: only when doing it twice
    /// is harmless (RFC 9110 §9.2.2).
    fn idempotent(&self) -> bool {
        matches!(
            self.method,
            Method::GET | Method::HEAD | Method::PUT | Method::DELETE | Method::OPTIONS
        )
    }
}

/// A whole response.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    /// The body's first [`KEPT_BODY`] bytes.
    pub(crate) body: Vec<u8>,
    /// The body's whole length.
    pub(crate) size: u64,
    /// Bytes the connection moved for it: (read, written).
    pub(crate) wire: (u64, u64),
    /// An event stream's events (`text/event-stream`, JSON lines).
    pub(crate) stream: Option<Box<StreamReply>>,
}

/// An open connection.
pub(crate) struct Link {
    conn: Conn,
}

/// Where a session's connections go.
pub(crate) struct Client {
    pub(crate) addr: SocketAddr,
    pub(crate) tls: Option<Tls>,
    /// The Host header: `host:port`.
    pub(crate) host: HeaderValue,
}

impl Client {
    /// Its host (lower case, without the port) and whether it speaks TLS: the site a cookie
    /// jar judges domains and `Secure` by.
    pub(crate) fn site(&self) -> super::cookies::Site<'_> {
        let authority = self.host.to_str().unwrap_or("");
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(""),
            None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
        };
        super::cookies::Site {
            host,
            secure: self.tls.is_some(),
        }
    }

    /// Where requests to `url`'s origin go: its address, its Host header and, for https://,
    /// its TLS settings.
    pub(crate) fn for_url(
        url: &url::Url,
        options: &crate::http::TlsOptions,
    ) -> Result<Client, crate::http::HttpError> {
        use crate::http::HttpError;
        let host = crate::http::request::authority(url)?;
        let addr = crate::http::request::resolve(url)?;
        let tls = if url.scheme() == "https" {
            let name = url
                .host_str()
                .ok_or_else(|| HttpError::NoHost(url.to_string()))?;
            Some(Tls::new(name, options, b"http/1.1")?)
        } else {
            None
        };
        let host = HeaderValue::from_str(&host).map_err(|_| HttpError::NoHost(host.clone()))?;
        Ok(Client { addr, tls, host })
    }

    /// Sends `out` on `link` (opened, or opened again when closed) and reads the whole
    /// answer. A kept-alive connection that the server closed in between is replaced, and an
    /// idempotent request sent once more on the new one.
    pub(crate) async fn exchange(
        &self,
        link: &mut Option<Link>,
        out: &Outgoing,
    ) -> Result<Reply, Outcome> {
        if link.as_ref().is_some_and(|l| l.conn.closed_while_idle()) {
            *link = None;
        }
        let reused = link.is_some();
        match self.attempt(link, out).await {
            Err((_, true)) if reused && out.idempotent() => {
                *link = None;
                self.attempt(link, out).await.map_err(|(o, _)| o)
            }
            other => other.map_err(|(o, _)| o),
        }
    }

    /// One try; an error says whether nothing of the answer arrived (so a retry is safe).
    async fn attempt(
        &self,
        link: &mut Option<Link>,
        out: &Outgoing,
    ) -> Result<Reply, (Outcome, bool)> {
        if link.is_none() {
            let (conn, _) = Conn::open_timed(self.addr, self.tls.as_ref())
                .await
                .map_err(|o| (o, false))?;
            *link = Some(Link { conn });
        }
        let Some(l) = link.as_mut() else {
            unreachable!("a link was just opened");
        };
        // Other users whose answers are in run their code first, so that their requests leave
        // together (see the module's note).
        tokio::task::yield_now().await;
        let bytes = out.bytes(&self.host);
        let written = bytes.len() as u64;
        if let Err(e) = l.conn.write_all(&bytes).await {
            *link = None;
            return Err((Outcome::error(Class::Write, format!("write: {e}")), true));
        }
        let sent = std::time::Instant::now();
        // The buffer is taken only once the answer has begun to arrive.
        l.conn.readable().await;
        let mut buf = Lent::take();
        let head = out.method == Method::HEAD;
        match read_whole(&mut l.conn, buf.boxed(), MAX_HEAD, head, KEPT_BODY).await {
            Ok((r, headers)) => {
                if r.close {
                    *link = None;
                } else {
                    l.conn.forget_readiness();
                }
                Ok(Reply {
                    status: r.status,
                    headers,
                    body: r.error_body.unwrap_or_default(),
                    size: r.body_len,
                    wire: (r.bytes_in, written),
                    stream: r
                        .events
                        .map(|e| Box::new(e.reply(sent, std::time::Instant::now()))),
                })
            }
            Err(e) => {
                *link = None;
                let (class, got) = e.class_and_bytes();
                let nothing = matches!(e, ReadError::ClosedBeforeResponse);
                Err((
                    Outcome::error(class, e.to_string()).with_bytes(got, written),
                    nothing,
                ))
            }
        }
    }
}
