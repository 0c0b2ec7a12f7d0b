//! WebSocket (`ws://`, `wss://`, RFC 6455) on tokio-tungstenite: a session is one connection,
//! an op one message sent and its reply awaited.
//!
//! - **Messages.** A template (`{{n}}` is the op's number, plans add corpora) sent as a text
//!   message, or binary. The reply is the next message the server sends, or with a match field
//!   the first whose field (a top-level name, or a JSON pointer `/a/b`) equals the sent
//!   message's: the others (a server's pushes) are counted as unmatched and skipped. Pings are
//!   answered as they come; a close frame or a dropped connection ends the op as class `read`,
//!   naming the close code and reason.
//! - **Timing.** The connect apart from the messages: a session's first op carries its
//!   connection's times (`connect` = TCP connect and the upgrade handshake, `tls`), so the
//!   result's `http_timing` counts connections, not messages; each op's latency is its
//!   message's round trip.
//! - **Holding connections.** With a pause (`--interval`) each session waits that long between
//!   its messages (the engine spreads them over the interval, not all at once), so `-c 10000`
//!   holds ten thousand connections for a soak; [`held::Memory`] says what they cost in
//!   resident memory. Sockets keep small buffers (1 KiB to read, writes go out at once) so a
//!   held connection costs a few KiB.

mod held;
mod io;
mod upgrade;

pub use held::Memory;

use crate::http::conn::{self, Tls, TlsOptions};
use crate::workload::{with_number, Corpus, Template};
use futures_util::{SinkExt, StreamExt};
use io::Io;
use perfbase_core::{redact, Class, ConnUse, Driver, Outcome, Session, Timing};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use upgrade::Upgrade;

/// What was wrong with a WebSocket load, found before any connection.
#[derive(Debug, thiserror::Error)]
pub enum WsError {
    /// The URL is not ws://host:port/path or wss://…
    #[error("{0}")]
    Url(String),
    /// The message template names a corpus there is none of.
    #[error("message: {0}")]
    Message(String),
    /// A header the upgrade request cannot carry.
    #[error("header: {0}")]
    Header(String),
    /// TLS could not be set up (a --cacert file).
    #[error("{0}")]
    Tls(String),
}

/// A WebSocket load's settings.
#[derive(Debug, Clone, Default)]
pub struct WsOptions {
    /// The message sent per op: a template.
    pub message: String,
    /// Send binary messages instead of text.
    pub binary: bool,
    /// Match each reply by this field (a name, or a JSON pointer) instead of taking the next.
    pub match_field: Option<String>,
    /// Headers of the upgrade request (`name`, `value`); values are secrets to redaction.
    pub headers: Vec<(String, String)>,
    /// The subprotocol asked for (`Sec-WebSocket-Protocol`).
    pub subprotocol: Option<String>,
    pub tls: TlsOptions,
    /// Closed model: each session's quiet time between messages (holding connections).
    pub interval: Duration,
    pub corpora: Vec<Arc<Corpus>>,
}

/// The name of the placeholder that is the op's own number.
const NUMBER: &str = "n";

/// Read buffer per connection: a held connection costs this, not tungstenite's 128 KiB (a
/// longer message makes it grow for as long as it is read).
const READ_BUFFER: usize = 1024;

struct Shared {
    addr: SocketAddr,
    tls: Option<Tls>,
    upgrade: Upgrade,
    template: Template,
    corpora: Vec<Arc<Corpus>>,
    binary: bool,
    match_field: Option<String>,
    interval: Duration,
    config: WebSocketConfig,
    received: AtomicU64,
    sent: AtomicU64,
    unmatched: AtomicU64,
    held: Arc<held::Held>,
    /// Connects and upgrades in progress at once: the rest wait their turn.
    opening: tokio::sync::Semaphore,
}

/// The most connections opened at once. A handshake's buffers are freed once it is done, but
/// ten thousand at once left their peak in the heap: the resident memory of 10,000 held
/// connections was about twice what it is when they open a few hundred at a time.
const OPENING_AT_ONCE: usize = 256;

/// The WebSocket driver.
#[derive(Clone)]
pub struct WsDriver {
    shared: Arc<Shared>,
}

impl WsDriver {
    /// The driver for `url`; the first message is rendered here, so a bad template is an
    /// error before any connection.
    pub fn new(url: &str, options: WsOptions) -> Result<WsDriver, WsError> {
        let parsed =
            url::Url::parse(url).map_err(|e| WsError::Url(format!("{}: {e}", redact::url(url))))?;
        let secure = match parsed.scheme() {
            "ws" => false,
            "wss" => true,
            other => {
                return Err(WsError::Url(format!(
                    "{}: the scheme is {other}://; give ws:// or wss://",
                    redact::url(url)
                )))
            }
        };
        let host = parsed
            .host_str()
            .ok_or_else(|| WsError::Url(format!("{}: no host", redact::url(url))))?;
        let addr =
            crate::http::request::resolve(&parsed).map_err(|e| WsError::Url(e.to_string()))?;
        let tls = if secure {
            Some(
                Tls::new(host, &options.tls, b"http/1.1")
                    .map_err(|e| WsError::Tls(e.to_string()))?,
            )
        } else {
            None
        };
        let upgrade = Upgrade::new(&parsed, &upgrade_headers(&options)?);
        let corpora = with_number(&options.corpora, NUMBER).map_err(WsError::Message)?;
        let template = Template::parse(&options.message, &corpora).map_err(WsError::Message)?;
        if let Some(f) = &options.match_field {
            let mut first = Vec::new();
            template.write(0, &corpora, &mut first);
            if field(&first, f).is_none() {
                return Err(WsError::Message(format!(
                    "the first message has no field {f} to match its reply by (a JSON object \
                     with it, e.g. {{\"{f}\": {{{{n}}}}}})"
                )));
            }
        }
        let config = WebSocketConfig::default()
            .read_buffer_size(READ_BUFFER)
            .write_buffer_size(0);
        Ok(WsDriver {
            shared: Arc::new(Shared {
                addr,
                tls,
                upgrade,
                template,
                corpora,
                binary: options.binary,
                match_field: options.match_field,
                interval: options.interval,
                config,
                received: AtomicU64::new(0),
                sent: AtomicU64::new(0),
                unmatched: AtomicU64::new(0),
                held: Arc::default(),
                opening: tokio::sync::Semaphore::new(OPENING_AT_ONCE),
            }),
        })
    }

    /// Messages (received, sent, received but matching no message sent) so far.
    pub fn messages(&self) -> (u64, u64, u64) {
        let s = &self.shared;
        (
            s.received.load(Ordering::Relaxed),
            s.sent.load(Ordering::Relaxed),
            s.unmatched.load(Ordering::Relaxed),
        )
    }

    /// What the connections held cost in memory.
    pub fn memory(&self) -> Memory {
        self.shared.held.memory()
    }

    /// Op `op`'s message, as sent.
    pub fn message(&self, op: u64) -> Vec<u8> {
        let mut out = Vec::new();
        self.shared
            .template
            .write(op, &self.shared.corpora, &mut out);
        out
    }
}

/// The upgrade request's own headers: the subprotocol asked for and the headers given, each
/// checked to be a header (a name, a value without line breaks) that is not the handshake's.
fn upgrade_headers(options: &WsOptions) -> Result<Vec<(String, String)>, WsError> {
    let mut out = Vec::new();
    if let Some(p) = &options.subprotocol {
        HeaderValue::from_str(p).map_err(|e| WsError::Header(format!("--subprotocol {p}: {e}")))?;
        out.push(("Sec-WebSocket-Protocol".to_string(), p.clone()));
    }
    for (name, value) in &options.headers {
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| WsError::Header(format!("{name}: {e}")))?;
        if n.as_str().starts_with("sec-websocket-")
            || matches!(n.as_str(), "upgrade" | "connection" | "host")
        {
            return Err(WsError::Header(format!(
                "{name}: set by the WebSocket handshake itself"
            )));
        }
        HeaderValue::from_str(value).map_err(|e| WsError::Header(format!("{name}: {e}")))?;
        out.push((name.clone(), value.clone()));
    }
    Ok(out)
}

impl Driver for WsDriver {
    type Session = WsSession;

    async fn open(&self, _worker: usize) -> Result<WsSession, Outcome> {
        let s = &self.shared;
        s.held.start();
        // The semaphore is never closed; the turn is held until the upgrade is done.
        let _turn = s.opening.acquire().await;
        let start = Instant::now();
        let tcp = conn::connect(s.addr).await?;
        let connected = Instant::now();
        let (io, tls_us) = match &s.tls {
            None => (Io::Plain(tcp), 0),
            Some(tls) => {
                let stream = conn::handshake(tcp, tls, s.addr).await?;
                (Io::Tls(Box::new(stream)), conn::micros(connected.elapsed()))
            }
        };
        let upgrading = Instant::now();
        let mut io = io;
        let after = s.upgrade.perform(&mut io, s.addr).await?;
        let ws =
            WebSocketStream::from_partially_read(io, after, Role::Client, Some(s.config)).await;
        // The TCP connect and the upgrade are the connection's `connect`; TLS is apart.
        let connect_us = conn::micros((connected - start) + upgrading.elapsed());
        s.held.open.fetch_add(1, Ordering::Relaxed);
        Ok(WsSession {
            shared: s.clone(),
            ws: Some(ws),
            opened: Some((connect_us, tls_us)),
            out: Vec::new(),
        })
    }

    fn pause(&self) -> Duration {
        self.shared.interval
    }
}

/// One connection.
pub struct WsSession {
    shared: Arc<Shared>,
    ws: Option<WebSocketStream<Io>>,
    /// The connection's connect and TLS times (µs), told with its first op.
    opened: Option<(u32, u32)>,
    out: Vec<u8>,
}

impl WsSession {
    /// The connection is gone: it no longer counts as held.
    fn lost(&mut self) {
        if self.ws.take().is_some() {
            self.shared.held.open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for WsSession {
    fn drop(&mut self) {
        self.lost();
    }
}

impl Session for WsSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        let shared = self.shared.clone();
        self.out.clear();
        shared.template.write(op, &shared.corpora, &mut self.out);
        let expected = match &shared.match_field {
            None => None,
            Some(f) => match field(&self.out, f) {
                Some(v) => Some(v),
                None => {
                    return Outcome::error(
                        Class::ServerError,
                        format!("message {op} has no field {f} to match its reply by"),
                    )
                }
            },
        };
        let bytes_out = self.out.len() as u64;
        let message = if shared.binary {
            Message::binary(std::mem::take(&mut self.out))
        } else {
            match String::from_utf8(std::mem::take(&mut self.out)) {
                Ok(text) => Message::text(text),
                Err(_) => {
                    return Outcome::error(
                        Class::ServerError,
                        "the message is not UTF-8: send --binary",
                    )
                }
            }
        };
        let Some(ws) = self.ws.as_mut() else {
            return Outcome::error(Class::Read, "the connection was closed");
        };
        let sent = Instant::now();
        if let Err(e) = ws.send(message).await {
            self.lost();
            return Outcome::error(Class::Write, format!("send: {e}")).with_bytes(0, bytes_out);
        }
        shared.sent.fetch_add(1, Ordering::Relaxed);
        let reply = reply(ws, &shared, expected.as_ref()).await;
        let mut o = match reply {
            Ok(bytes_in) => Outcome::ok(bytes_in, bytes_out),
            Err(o) => {
                self.lost();
                return o.with_bytes(0, bytes_out);
            }
        };
        if let Some((connect_us, tls_us)) = self.opened.take() {
            o = o.with_timing(Timing {
                conn: ConnUse::New,
                connect_us,
                tls_us,
                waiting_us: conn::micros(sent.elapsed()),
                ..Timing::default()
            });
        }
        o
    }

    async fn close(mut self) {
        if let Some(ws) = self.ws.as_mut() {
            // A polite close, bounded: a server that does not answer is not waited for.
            let _ = tokio::time::timeout(Duration::from_millis(200), ws.close(None)).await;
        }
        self.lost();
    }
}

/// Reads until the reply: the next data message, or the one whose match field equals
/// `expected`. Its bytes, or the failed op's outcome.
async fn reply(
    ws: &mut WebSocketStream<Io>,
    shared: &Shared,
    expected: Option<&Value>,
) -> Result<u64, Outcome> {
    loop {
        let msg = match ws.next().await {
            Some(Ok(m)) => m,
            Some(Err(e)) => return Err(Outcome::error(Class::Read, format!("read: {e}"))),
            None => {
                return Err(Outcome::error(
                    Class::Read,
                    "the server closed the connection without a close frame",
                ))
            }
        };
        let data: &[u8] = match &msg {
            Message::Text(t) => t.as_bytes(),
            Message::Binary(b) => b,
            Message::Close(frame) => {
                let why = frame.as_ref().map_or("no code".to_string(), |f| {
                    format!("code {}: {}", u16::from(f.code), f.reason)
                });
                return Err(Outcome::error(
                    Class::Read,
                    format!("closed by the server ({why})"),
                ));
            }
            // Pings are answered by tungstenite on the next write or read.
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
        };
        shared.received.fetch_add(1, Ordering::Relaxed);
        match (expected, &shared.match_field) {
            (Some(want), Some(f)) if field(data, f).as_ref() != Some(want) => {
                shared.unmatched.fetch_add(1, Ordering::Relaxed);
            }
            _ => return Ok(data.len() as u64),
        }
    }
}

/// The value of `name` (a top-level field, or a JSON pointer `/a/b`) in a JSON message.
fn field(message: &[u8], name: &str) -> Option<Value> {
    let v: Value = serde_json::from_slice(message).ok()?;
    if name.starts_with('/') {
        v.pointer(name).cloned()
    } else {
        v.get(name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_by_name_and_by_pointer() {
        let m = br#"{"id": 7, "a": {"b": "x"}}"#;
        assert_eq!(field(m, "id"), Some(Value::from(7)));
        assert_eq!(field(m, "/a/b"), Some(Value::from("x")));
        assert_eq!(field(m, "missing"), None);
        assert_eq!(field(b"not json", "id"), None);
    }

    #[test]
    fn bad_urls_and_headers_are_refused() {
        let o = |m: &str| WsOptions {
            message: m.into(),
            ..WsOptions::default()
        };
        let e = WsDriver::new("http://127.0.0.1:1/", o("x")).err().unwrap();
        assert!(e.to_string().contains("give ws:// or wss://"), "{e}");
        let mut opts = o("x");
        opts.headers = vec![("Sec-WebSocket-Key".into(), "k".into())];
        let e = WsDriver::new("ws://127.0.0.1:1/", opts).err().unwrap();
        assert!(
            e.to_string().contains("set by the WebSocket handshake"),
            "{e}"
        );
        let e = WsDriver::new("ws://127.0.0.1:1/", o("{{nope}}"))
            .err()
            .unwrap();
        assert!(e.to_string().contains("nope"), "{e}");
        let d = WsDriver::new("ws://127.0.0.1:1/", o(r#"{"id": {{n}}}"#)).unwrap();
        assert_eq!(d.message(42), br#"{"id": 42}"#);
    }
}
