//! A journey session's connection: hyper's HTTP/1.1 client (keep-alive) on the same TCP and
//! TLS code as the load's hot path, reading each whole response (a capture or a check may
//! need its headers and body). hyper rather than the hand-written reader: journeys keep
//! headers and bodies, which the hot path never does, and they cost a Python or Node peer
//! hundreds of µs per request, so hyper's few µs are not what decides their cost.

use crate::http::conn::{self, Tls};
use crate::http::events::{Events, Format};
use crate::http::h2::{failure, Counted, WireBytes};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HeaderMap, HeaderValue, HOST, USER_AGENT};
use hyper::{Method, Request, Uri};
use hyper_util::rt::TokioIo;
use perfbase_core::outcome::StreamReply;
use perfbase_core::{Class, Outcome};
use std::net::SocketAddr;
use std::sync::Arc;

/// How much of a body is kept for captures and checks (the rest is read and counted).
pub(crate) const KEPT_BODY: usize = 1 << 20;

/// One request, ready to send (and to send again on a fresh connection).
pub(crate) struct Outgoing {
    pub(crate) method: Method,
    pub(crate) uri: Uri,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Outgoing {
    fn request(&self, host: &HeaderValue) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(self.body.clone()));
        *req.method_mut() = self.method.clone();
        *req.uri_mut() = self.uri.clone();
        let h = req.headers_mut();
        h.insert(HOST, host.clone());
        h.insert(USER_AGENT, HeaderValue::from_static("perfbase"));
        for (name, value) in &self.headers {
            h.append(name, value.clone());
        }
        req
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

/// What [`Client::round_trip`] read: status, headers, the kept body, its length, its events.
type Answered = (u16, HeaderMap, Vec<u8>, u64, Option<Box<StreamReply>>);

/// An open connection.
pub(crate) struct Link {
    send: SendRequest<Full<Bytes>>,
    bytes: Arc<WireBytes>,
}

/// Where a session's connections go.
pub(crate) struct Client {
    pub(crate) addr: SocketAddr,
    pub(crate) tls: Option<Tls>,
    /// The Host header: `host:port`.
    pub(crate) host: HeaderValue,
}

impl Client {
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

    async fn open(&self) -> Result<Link, Outcome> {
        let tcp = conn::connect(self.addr).await?;
        let bytes = Arc::new(WireBytes::default());
        let send = match &self.tls {
            None => {
                let io = Counted {
                    io: tcp,
                    bytes: bytes.clone(),
                };
                handshake(io, self.addr).await?
            }
            Some(tls) => {
                let stream = conn::handshake(tcp, tls, self.addr).await?;
                let io = Counted {
                    io: stream,
                    bytes: bytes.clone(),
                };
                handshake(io, self.addr).await?
            }
        };
        Ok(Link { send, bytes })
    }

    /// Sends `out` on `link` (opened, or opened again when closed) and reads the whole
    /// answer. A kept-alive connection that the server closed in between is replaced, and an
    /// idempotent request sent once more on the new one.
    pub(crate) async fn exchange(
        &self,
        link: &mut Option<Link>,
        out: &Outgoing,
    ) -> Result<Reply, Outcome> {
        let reused = link.as_ref().is_some_and(|l| !l.send.is_closed());
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
        if link.as_ref().is_none_or(|l| l.send.is_closed()) {
            *link = Some(self.open().await.map_err(|o| (o, false))?);
        }
        let Some(l) = link.as_mut() else {
            unreachable!("a link was just opened");
        };
        let result = Self::round_trip(l, out, &self.host).await;
        let wire = l.bytes.take();
        match result {
            Ok((status, headers, body, size, stream)) => Ok(Reply {
                status,
                headers,
                body,
                size,
                wire,
                stream,
            }),
            Err((o, before_answer)) => {
                *link = None;
                Err((o.with_bytes(wire.0, wire.1), before_answer))
            }
        }
    }

    async fn round_trip(
        l: &mut Link,
        out: &Outgoing,
        host: &HeaderValue,
    ) -> Result<Answered, (Outcome, bool)> {
        l.send.ready().await.map_err(|e| (failure(&e), true))?;
        let sent = std::time::Instant::now();
        let resp = l
            .send
            .send_request(out.request(host))
            .await
            .map_err(|e| (failure(&e), e.is_canceled() || e.is_incomplete_message()))?;
        let status = resp.status().as_u16();
        let (parts, mut body) = resp.into_parts();
        let mut events = parts
            .headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| Format::of(v.as_bytes()))
            .map(Events::new);
        let (mut kept, mut size) = (Vec::new(), 0u64);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| (failure(&e), false))?;
            if let Some(data) = frame.data_ref() {
                size += data.len() as u64;
                let room = KEPT_BODY.saturating_sub(kept.len());
                kept.extend_from_slice(&data[..data.len().min(room)]);
                if let Some(e) = &mut events {
                    e.feed(data);
                }
            }
        }
        let stream = events.map(|e| Box::new(e.reply(sent, std::time::Instant::now())));
        Ok((status, parts.headers, kept, size, stream))
    }
}

/// The HTTP/1.1 handshake over `io`; the connection then runs as its own task.
async fn handshake<T>(io: T, addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>, Outcome>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (send, connection) = http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| Outcome::error(Class::Connect, format!("HTTP handshake with {addr}: {e}")))?;
    tokio::spawn(async move {
        // Its errors reach the request in flight, which reports them.
        let _ = connection.await;
    });
    Ok(send)
}
