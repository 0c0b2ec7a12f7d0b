//! The broker's product and version for a report's test environment.
//!
//! The broker names itself in the `server-properties` of `connection.start`, but lapin 4.12
//! reads that method and keeps none of its properties. So this function does the AMQP 0-9-1
//! handshake itself on a tokio socket, with lapin's own protocol code encoding and parsing the
//! methods: `connection.start` (read the properties), `start-ok` (PLAIN login), `tune-ok`,
//! `open` of the URL's vhost, then `connection.close`. It goes as far as `open-ok` so that a
//! wrong password or vhost is an error, as it is for the driver's sessions.

use super::{reply_name, AmqpDriver, AmqpError, AmqpOptions};
use lapin::protocol::{connection as conn, gen_class, parse_class, AMQPClass};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::uri::{AMQPUri, SASLMechanism};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Connecting and the whole handshake must end within this; a port that accepts and then says nothing must
/// not hang a report.
const TIMEOUT: Duration = Duration::from_secs(5);
const FRAME_METHOD: u8 = 1;
const FRAME_END: u8 = 0xCE;
/// Frames before `connection.tune` are at most 4096 bytes (the protocol's minimum frame size);
/// this leaves room for brokers that are generous with their properties.
const MAX_FRAME: usize = 1 << 20;

/// The product and version the broker at `url` reports, e.g. `RabbitMQ 3.10.8`. Connects once,
/// logs in and opens the URL's vhost (so a wrong user, password or vhost is an error), then
/// closes. Only the PLAIN login (lapin's default) is spoken. Errors never contain the password.
pub async fn server_version(url: &str) -> Result<String, AmqpError> {
    // The driver's checks (URL, no TLS) and its redacted target for messages.
    let driver = AmqpDriver::new(url, AmqpOptions::default())?;
    let uri: AMQPUri = url.parse().map_err(|reason: String| AmqpError::Url {
        url: driver.target.clone(),
        reason: reason.replace(url, &driver.target),
    })?;
    match uri.query.auth_mechanism.unwrap_or_default() {
        SASLMechanism::Plain => {}
        other => {
            return Err(AmqpError::Unsupported(format!(
                "auth_mechanism {}: the version probe logs in with PLAIN only",
                other.name()
            )))
        }
    }
    let target = driver.target();
    let password = uri.authority.userinfo.password.as_str();
    let probe = async {
        let mut wire = Wire::connect(&uri).await.map_err(|e| e.to_string())?;
        handshake(&mut wire, &uri).await
    };
    match tokio::time::timeout(TIMEOUT, probe).await {
        Ok(Ok(product)) => Ok(product),
        // Brokers do not echo the password; scrubbed anyway, as everywhere else.
        Ok(Err(e)) => Err(AmqpError::Broker(format!(
            "cannot connect to {target}: {}",
            perfbase_core::redact::scrub(&e, &[password])
        ))),
        Err(_) => Err(AmqpError::Broker(format!(
            "cannot connect to {target}: no AMQP handshake within {} s",
            TIMEOUT.as_secs()
        ))),
    }
}

/// The handshake up to `open-ok` and a polite close; the error is a reason in words.
async fn handshake(wire: &mut Wire, uri: &AMQPUri) -> Result<String, String> {
    wire.write(b"AMQP\x00\x00\x09\x01").await?;
    let start = match wire.method().await? {
        conn::AMQPMethod::Start(s) => s,
        other => return Err(unexpected("connection.start", &other)),
    };
    let prop = |key: &str| match start.server_properties.inner().get(key) {
        Some(AMQPValue::LongString(s)) => Some(s.to_string()),
        Some(AMQPValue::ShortString(s)) => Some(s.to_string()),
        _ => None,
    };
    let product = prop("product").unwrap_or_else(|| "AMQP broker".into());
    let version = prop("version").unwrap_or_else(|| "(version not reported)".into());

    // The driver's connection name; `authentication_failure_close` makes RabbitMQ answer a
    // refused login with `connection.close` 403 instead of just dropping the socket.
    let mut capabilities = FieldTable::default();
    capabilities.insert(
        "authentication_failure_close".into(),
        AMQPValue::Boolean(true),
    );
    let mut client = FieldTable::default();
    for (k, v) in [
        ("product", "perfbase"),
        ("version", env!("CARGO_PKG_VERSION")),
        ("platform", "rust"),
        ("connection_name", "perfbase"),
    ] {
        client.insert(k.into(), AMQPValue::LongString(v.into()));
    }
    client.insert("capabilities".into(), AMQPValue::FieldTable(capabilities));
    let user = &uri.authority.userinfo;
    let response = format!("\0{}\0{}", user.username, user.password);
    wire.send(conn::AMQPMethod::StartOk(conn::StartOk {
        client_properties: client,
        mechanism: ShortString::from("PLAIN"),
        response: LongString::from(response),
        locale: ShortString::from("en_US"),
    }))
    .await?;
    let tune = match wire.method().await? {
        conn::AMQPMethod::Tune(t) => t,
        other => return Err(unexpected("connection.tune", &other)),
    };
    // The broker's own limits are always acceptable; no heartbeats for so short a connection.
    wire.send(conn::AMQPMethod::TuneOk(conn::TuneOk {
        channel_max: tune.channel_max,
        frame_max: tune.frame_max,
        heartbeat: 0,
    }))
    .await?;
    wire.send(conn::AMQPMethod::Open(conn::Open {
        virtual_host: ShortString::from(uri.vhost.clone()),
    }))
    .await?;
    match wire.method().await? {
        conn::AMQPMethod::OpenOk(_) => {}
        other => return Err(unexpected("connection.open-ok", &other)),
    }
    // Best effort: the answer is known, a broker slow to acknowledge the close changes nothing.
    let closed = wire
        .send(conn::AMQPMethod::Close(conn::Close {
            reply_code: 200,
            reply_text: ShortString::from("perfbase: version read"),
            class_id: 0,
            method_id: 0,
        }))
        .await;
    if closed.is_ok() {
        let _ = wire.method().await;
    }
    Ok(format!("{product} {version}"))
}

/// What arrived instead of `wanted`: the broker's `connection.close` in the driver's words
/// (`AMQP 403 ACCESS_REFUSED: …`), or the method's name.
fn unexpected(wanted: &str, got: &conn::AMQPMethod) -> String {
    match got {
        conn::AMQPMethod::Close(c) => format!(
            "AMQP {} {}: {}",
            c.reply_code,
            reply_name(c.reply_code),
            c.reply_text
        ),
        conn::AMQPMethod::Secure(_) => {
            "the broker asked for a SASL challenge (connection.secure), which PLAIN never does"
                .into()
        }
        other => format!("expected {wanted}, got {other:?}"),
    }
}

/// The socket and the bytes received but not yet parsed.
struct Wire {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Wire {
    async fn connect(uri: &AMQPUri) -> std::io::Result<Wire> {
        // The URL parser keeps an IPv6 literal's brackets; the resolver wants it bare.
        let host = uri
            .authority
            .host
            .trim_start_matches('[')
            .trim_end_matches(']');
        let stream = TcpStream::connect((host, uri.authority.port)).await?;
        let _ = stream.set_nodelay(true);
        Ok(Wire {
            stream,
            buf: Vec::with_capacity(8192),
        })
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.stream
            .write_all(bytes)
            .await
            .map_err(|e| format!("write: {e}"))
    }

    /// Sends a connection-class method on channel 0.
    async fn send(&mut self, method: conn::AMQPMethod) -> Result<(), String> {
        let class = AMQPClass::Connection(method);
        let payload = gen_class::<Vec<u8>>(&class)(Vec::new().into())
            .map_err(|e| format!("encoding a method: {e}"))?
            .write;
        let mut frame = Vec::with_capacity(payload.len() + 8);
        frame.push(FRAME_METHOD);
        frame.extend_from_slice(&0u16.to_be_bytes());
        frame.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        frame.extend_from_slice(&payload);
        frame.push(FRAME_END);
        self.write(&frame).await
    }

    /// The next connection-class method the broker sends (other frames are skipped).
    async fn method(&mut self) -> Result<conn::AMQPMethod, String> {
        loop {
            let payload = self.frame().await?;
            let Some(payload) = payload else { continue };
            return match parse_class(payload.as_slice()) {
                Ok((_, AMQPClass::Connection(m))) => Ok(m),
                Ok((_, other)) => Err(format!("unexpected method on channel 0: {other:?}")),
                Err(_) => Err("a malformed method frame".into()),
            };
        }
    }

    /// One frame: `Some(payload)` for a method frame on channel 0, `None` for any other.
    async fn frame(&mut self) -> Result<Option<Vec<u8>>, String> {
        loop {
            if self.buf.len() >= 7 {
                let kind = self.buf[0];
                if !matches!(kind, 1..=4 | 8) {
                    // A broker that refuses the protocol version answers with its own header.
                    return Err(if self.buf.starts_with(b"AMQP") {
                        "the broker does not speak AMQP 0-9-1".into()
                    } else {
                        "this is no AMQP broker (unknown frame type)".into()
                    });
                }
                let channel = u16::from_be_bytes([self.buf[1], self.buf[2]]);
                let size = u32::from_be_bytes([self.buf[3], self.buf[4], self.buf[5], self.buf[6]])
                    as usize;
                if size > MAX_FRAME {
                    return Err(format!("a frame of {size} bytes"));
                }
                // The frame-end octet follows the payload.
                let end = 7 + size;
                if self.buf.len() > end {
                    if self.buf[end] != FRAME_END {
                        return Err("a frame without its end marker".into());
                    }
                    let payload = self.buf[7..end].to_vec();
                    self.buf.drain(..=end);
                    return Ok((kind == FRAME_METHOD && channel == 0).then_some(payload));
                }
            }
            let n = self
                .stream
                .read_buf(&mut self.buf)
                .await
                .map_err(|e| format!("read: {e}"))?;
            if n == 0 {
                return Err(
                    "the broker closed the connection during the handshake (a wrong user or \
                     password, or a vhost the user may not use?)"
                        .into(),
                );
            }
        }
    }
}
