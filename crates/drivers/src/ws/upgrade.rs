//! The opening handshake (RFC 6455 §4.1), written here rather than by tokio-tungstenite's
//! `client_async`: tungstenite reads the server's answer into a 4 KiB buffer and keeps that
//! buffer as the connection's frame buffer for its whole life. heaptrack on 3,000 held
//! connections put 12.3 MB (4.1 KiB each) of the peak there, a fifth of the 64 MB that 10,000
//! held connections may cost. Here the answer is read into a buffer that is dropped, and only
//! the bytes after it (none, in practice) go on to tungstenite's `from_partially_read`, which
//! then reserves the 1 KiB read buffer asked for.

use super::io::Io;
use perfbase_core::{Class, Outcome};
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::handshake::client::generate_key;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

/// The longest answer head read: a server sending more is not a WebSocket server.
const MAX_HEAD: usize = 16 * 1024;

/// The upgrade request of every connection, but its key.
#[derive(Debug, Clone)]
pub(super) struct Upgrade {
    /// `GET … HTTP/1.1` and every header line but `Sec-WebSocket-Key`, each ending in CRLF.
    head: String,
}

impl Upgrade {
    /// The request for `url` (its path and query) with `headers` (already checked: no
    /// `Sec-WebSocket-*`, `Upgrade` or `Connection` among them).
    pub(super) fn new(url: &url::Url, headers: &[(String, String)]) -> Upgrade {
        let host = match (url.host_str(), url.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            (None, _) => String::new(),
        };
        let mut target = url.path().to_string();
        if let Some(q) = url.query() {
            target.push('?');
            target.push_str(q);
        }
        let mut head = format!(
            "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Version: 13\r\n"
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        Upgrade { head }
    }

    /// Sends the request with a fresh key and reads the answer: the bytes that came after its
    /// head, or the outcome of a refusal (its HTTP status kept) or a broken answer.
    pub(super) async fn perform(&self, io: &mut Io, addr: SocketAddr) -> Result<Vec<u8>, Outcome> {
        let key = generate_key();
        let request = format!("{}Sec-WebSocket-Key: {key}\r\n\r\n", self.head);
        let fail = |what: String| {
            Outcome::error(
                Class::Connect,
                format!("WebSocket upgrade with {addr}: {what}"),
            )
        };
        io.write_all(request.as_bytes())
            .await
            .map_err(|e| fail(format!("write: {e}")))?;
        let mut buf = vec![0u8; 1024];
        let mut filled = 0;
        loop {
            if filled == buf.len() {
                if buf.len() >= MAX_HEAD {
                    return Err(fail(format!("an answer head over {MAX_HEAD} bytes")));
                }
                buf.resize(buf.len() * 2, 0);
            }
            let n = io
                .read(&mut buf[filled..])
                .await
                .map_err(|e| fail(format!("read: {e}")))?;
            if n == 0 {
                return Err(fail(
                    "the server closed the connection before answering".into(),
                ));
            }
            filled += n;
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut answer = httparse::Response::new(&mut headers);
            match answer.parse(&buf[..filled]) {
                Ok(httparse::Status::Partial) => continue,
                Err(e) => return Err(fail(format!("a malformed answer ({e})"))),
                Ok(httparse::Status::Complete(len)) => {
                    accepted(&answer, &key).map_err(|(status, why)| {
                        let mut o = fail(why);
                        o.status = status;
                        o
                    })?;
                    return Ok(buf[len..filled].to_vec());
                }
            }
        }
    }
}

/// Whether the answer accepts the upgrade asked for with `key`; its status and why not.
fn accepted(answer: &httparse::Response<'_, '_>, key: &str) -> Result<(), (u16, String)> {
    let status = answer.code.unwrap_or(0);
    if status != 101 {
        return Err((
            status,
            format!(
                "refused: HTTP {status} {}",
                answer.reason.unwrap_or_default()
            ),
        ));
    }
    let header = |name: &str| {
        answer
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).into_owned())
    };
    let has = |name: &str, token: &str| {
        header(name).is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    };
    if !has("upgrade", "websocket") || !has("connection", "upgrade") {
        return Err((
            status,
            "101 without Upgrade: websocket and Connection: Upgrade".into(),
        ));
    }
    let want = derive_accept_key(key.as_bytes());
    match header("sec-websocket-accept") {
        Some(got) if got.trim() == want => Ok(()),
        got => Err((
            status,
            format!("Sec-WebSocket-Accept is {got:?}, not {want:?} (not a WebSocket server?)"),
        )),
    }
}
