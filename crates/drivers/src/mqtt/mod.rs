//! MQTT (feature `mqtt`): end-to-end message latency through an MQTT 3.1.1 broker over
//! rumqttc, plain TCP (no TLS).
//!
//! - **One connection per session**, with a unique client id `perfbase-<pid>-<session>` and a
//!   clean session. `open` makes rumqttc's `AsyncClient` and drives its `EventLoop` itself
//!   until the broker has accepted the login (CONNACK) and the subscription to the session's
//!   own topic `perfbase/<pid>/<session>` (SUBACK); from then on the event loop is polled by a
//!   `spawn_local` task (sessions live on the engine's single-threaded runtimes inside a
//!   `LocalSet`), which hands the messages it receives to the session.
//! - **An op** publishes one message of [`MqttOptions::message_size`] bytes, whose first 8
//!   carry `op` (little-endian), to the session's topic at [`MqttOptions::qos`] and waits until
//!   the broker delivers it back: the engine measures publish → broker → subscriber. Messages of
//!   earlier ops (late after a timeout) are skipped. At QoS 1 the broker's PUBACK and the
//!   subscriber's PUBACK are exchanged by rumqttc (automatic acks).
//! - **Outcomes.** `ok` with `bytes_out` the payload sent and `bytes_in` the payload received.
//!   A lost connection (the broker closed it, a network error, a keep-alive timeout) is `read`,
//!   after which the session answers `read` until the engine replaces it; a publish rumqttc
//!   cannot take while no loss was reported (its event loop stopped) is `write`. No delivery at all is left to the
//!   engine's timeout. `open` failures: a CONNACK refusal (`not authorized`, `bad user name or
//!   password`) or an unreachable broker is `connect` with the reason; a SUBACK refusal (the
//!   broker's ACL forbids the topic) is `driver`. No message ever contains the password.

use bytes::Bytes;
use perfbase_core::{Class, Driver, Outcome, Session};
use rumqttc::{
    AsyncClient, ConnectReturnCode, ConnectionError, Event, EventLoop, Packet, QoS,
    SubscribeReasonCode,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

/// The default MQTT port.
const DEFAULT_PORT: u16 = 1883;
/// Bytes of the payload that carry the op number.
const OP_BYTES: usize = 8;
/// rumqttc's default packet size limit; larger messages raise it.
const MIN_PACKET_LIMIT: usize = 10 * 1024;
/// How long `open` waits for CONNACK and SUBACK.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// Keep-alive interval (a PINGREQ when the connection is idle this long).
const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// Sessions opened in this process, for unique client ids and topics.
static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// Options of the MQTT driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MqttOptions {
    /// QoS of the publish and of the subscription: 0 (at most once) or 1 (at least once).
    pub qos: u8,
    /// Payload bytes per message (at least 8: the op number).
    pub message_size: usize,
}

impl Default for MqttOptions {
    fn default() -> MqttOptions {
        MqttOptions {
            qos: 0,
            message_size: 128,
        }
    }
}

/// Why the MQTT driver could not be set up. Messages never contain the password.
#[derive(Debug, Error)]
pub enum MqttError {
    /// The URL does not parse: use `mqtt://user:password@host:port` (or `mqtt://host:port`
    /// for a broker without authentication).
    #[error("'{url}' is not a usable MQTT URL ({reason}); use mqtt://user:password@host:port")]
    Url { url: String, reason: String },
    /// A setting the driver cannot use; the message says what to use instead.
    #[error("{0}")]
    Unsupported(String),
}

use crate::userinfo::percent_decode;

struct Shared {
    host: String,
    port: u16,
    credentials: Option<(String, String)>,
    /// `mqtt://user@host:port`, for messages.
    target: String,
    qos: QoS,
    message_size: usize,
}

/// The MQTT driver: the parsed broker settings and options, shared by all sessions.
pub struct MqttDriver {
    shared: Arc<Shared>,
}

impl MqttDriver {
    /// Checks the URL and the options; connects only in `open`.
    pub fn new(url: &str, options: MqttOptions) -> Result<MqttDriver, MqttError> {
        let bad = |reason: &str| MqttError::Url {
            url: perfbase_core::redact::url(url),
            reason: reason.to_string(),
        };
        let parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
        match parsed.scheme() {
            "mqtt" | "tcp" => {}
            "mqtts" | "ssl" | "ws" | "wss" => {
                return Err(MqttError::Unsupported(format!(
                    "{}: this build speaks plain TCP only (no TLS, no websockets); use mqtt://",
                    perfbase_core::redact::url(url)
                )))
            }
            other => return Err(bad(&format!("unknown scheme '{other}'"))),
        }
        let host = parsed
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| bad("no host"))?
            .to_string();
        let port = parsed.port().unwrap_or(DEFAULT_PORT);
        let decode = |s: &str| percent_decode(s).ok_or_else(|| bad("the user info is not UTF-8"));
        let credentials = match (parsed.username(), parsed.password()) {
            ("", None) => None,
            (user, password) => Some((decode(user)?, decode(password.unwrap_or(""))?)),
        };
        let qos = match options.qos {
            0 => QoS::AtMostOnce,
            1 => QoS::AtLeastOnce,
            q => {
                return Err(MqttError::Unsupported(format!(
                    "QoS {q}: use 0 (at most once) or 1 (at least once)"
                )))
            }
        };
        if options.message_size < OP_BYTES {
            return Err(MqttError::Unsupported(format!(
                "message size {} is too small: a message carries its op number, so use at \
                 least {OP_BYTES} bytes",
                options.message_size
            )));
        }
        let target = match &credentials {
            Some((user, _)) => format!("mqtt://{user}@{host}:{port}"),
            None => format!("mqtt://{host}:{port}"),
        };
        Ok(MqttDriver {
            shared: Arc::new(Shared {
                host,
                port,
                credentials,
                target,
                qos,
                message_size: options.message_size,
            }),
        })
    }

    /// The broker without the password, for messages: `mqtt://user@host:port`.
    pub fn target(&self) -> &str {
        &self.shared.target
    }
}

/// A CONNACK refusal in words.
fn refusal(code: ConnectReturnCode) -> &'static str {
    match code {
        ConnectReturnCode::Success => "accepted",
        ConnectReturnCode::RefusedProtocolVersion => {
            "unacceptable protocol version (the broker does not speak MQTT 3.1.1)"
        }
        ConnectReturnCode::BadClientId => "identifier rejected",
        ConnectReturnCode::ServiceUnavailable => "server unavailable",
        ConnectReturnCode::BadUserNamePassword => {
            "bad user name or password: check the credentials in the URL"
        }
        ConnectReturnCode::NotAuthorized => {
            "not authorized: check the user name and password in the URL"
        }
    }
}

/// A connection error in words (rumqttc's text carries no credentials).
fn describe(e: &ConnectionError) -> String {
    match e {
        ConnectionError::ConnectionRefused(code) => {
            format!("CONNACK refused the connection: {}", refusal(*code))
        }
        ConnectionError::NetworkTimeout => "network timeout".to_string(),
        other => other.to_string(),
    }
}

/// What the event-loop task hands the session.
enum Delivery {
    Message(Bytes),
    /// The connection ended: the reason.
    Lost(String),
}

/// Polls the event loop until the broker has answered the CONNECT and the SUBSCRIBE.
async fn handshake(eventloop: &mut EventLoop, target: &str, topic: &str) -> Result<(), Outcome> {
    let connect_error =
        |reason: String| Outcome::error(Class::Connect, format!("connect {target}: {reason}"));
    loop {
        match eventloop.poll().await {
            Ok(Event::Incoming(Packet::SubAck(ack))) => {
                return match ack.return_codes.first() {
                    Some(SubscribeReasonCode::Success(_)) => Ok(()),
                    _ => Err(Outcome::error(
                        Class::ServerError,
                        format!(
                            "SUBACK from {target} refused the subscription to {topic} \
                             (the broker's ACL must let the user read and write it)"
                        ),
                    )),
                };
            }
            Ok(Event::Incoming(Packet::ConnAck(ack))) if ack.code != ConnectReturnCode::Success => {
                return Err(connect_error(format!(
                    "CONNACK refused the connection: {}",
                    refusal(ack.code)
                )))
            }
            Ok(_) => {}
            Err(e) => return Err(connect_error(describe(&e))),
        }
    }
}

/// Polls the event loop for the rest of the session: messages go to the session, and the
/// first connection error ends the task (rumqttc would reconnect; the engine opens a new
/// session instead).
async fn pump(mut eventloop: EventLoop, tx: UnboundedSender<Delivery>) {
    loop {
        match eventloop.poll().await {
            Ok(Event::Incoming(Packet::Publish(p))) => {
                if tx.send(Delivery::Message(p.payload)).is_err() {
                    return;
                }
            }
            Ok(Event::Incoming(Packet::Disconnect)) => {
                let _ = tx.send(Delivery::Lost("the broker sent DISCONNECT".into()));
                return;
            }
            Ok(_) => {}
            Err(e) => {
                let _ = tx.send(Delivery::Lost(format!("connection lost: {}", describe(&e))));
                return;
            }
        }
    }
}

impl Driver for MqttDriver {
    type Session = MqttSession;

    async fn open(&self, _worker: usize) -> Result<MqttSession, Outcome> {
        let shared = self.shared.clone();
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let topic = format!("perfbase/{pid}/{n}");
        let mut options =
            rumqttc::MqttOptions::new(format!("perfbase-{pid}-{n}"), &shared.host, shared.port);
        options.set_keep_alive(KEEP_ALIVE).set_clean_session(true);
        if let Some((user, password)) = &shared.credentials {
            options.set_credentials(user.clone(), password.clone());
        }
        // A PUBLISH is the payload, the topic and a few header bytes.
        let limit = (shared.message_size + topic.len() + 64).max(MIN_PACKET_LIMIT);
        options.set_max_packet_size(limit, limit);
        let (client, mut eventloop) = AsyncClient::new(options, 16);
        eventloop
            .network_options
            .set_connection_timeout(OPEN_TIMEOUT.as_secs());
        client
            .subscribe(topic.clone(), shared.qos)
            .await
            .map_err(|e| {
                Outcome::error(Class::Connect, format!("connect {}: {e}", shared.target))
            })?;
        match tokio::time::timeout(
            OPEN_TIMEOUT,
            handshake(&mut eventloop, &shared.target, &topic),
        )
        .await
        {
            Ok(result) => result?,
            Err(_) => {
                return Err(Outcome::error(
                    Class::Connect,
                    format!(
                        "connect {}: no CONNACK and SUBACK within {} s",
                        shared.target,
                        OPEN_TIMEOUT.as_secs()
                    ),
                ))
            }
        }
        let (tx, deliveries) = unbounded_channel();
        let task = tokio::task::spawn_local(pump(eventloop, tx));
        let mut template = vec![b'x'; shared.message_size];
        template[..OP_BYTES].fill(0);
        Ok(MqttSession {
            client,
            shared,
            topic,
            deliveries,
            task,
            broken: None,
            template,
        })
    }
}

/// One connection subscribed to its own topic.
pub struct MqttSession {
    client: AsyncClient,
    shared: Arc<Shared>,
    topic: String,
    /// Messages (and the connection's end) from the event-loop task.
    deliveries: UnboundedReceiver<Delivery>,
    /// The event-loop task, aborted when the session is dropped.
    task: JoinHandle<()>,
    /// Set once the connection is lost: every later op answers `read` with it.
    broken: Option<String>,
    /// A message with zeros where the op number goes.
    template: Vec<u8>,
}

impl Drop for MqttSession {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The op number a payload carries.
fn op_of(payload: &[u8]) -> Option<u64> {
    let bytes: [u8; OP_BYTES] = payload.get(..OP_BYTES)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

impl Session for MqttSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        if let Some(why) = &self.broken {
            return Outcome::error(Class::Read, why.clone());
        }
        let mut buf = self.template.clone();
        buf[..OP_BYTES].copy_from_slice(&op.to_le_bytes());
        let out = buf.len() as u64;
        if let Err(e) = self
            .client
            .publish_bytes(self.topic.clone(), self.shared.qos, false, Bytes::from(buf))
            .await
        {
            // The event loop stops when the connection is lost: report that cause, as `read`.
            let mut lost = None;
            while let Ok(d) = self.deliveries.try_recv() {
                if let Delivery::Lost(why) = d {
                    lost = Some(why);
                }
            }
            let (class, why) = match lost {
                Some(why) => (Class::Read, why),
                None => (
                    Class::Write,
                    format!("publish: the connection's event loop has stopped ({e})"),
                ),
            };
            self.broken = Some(why.clone());
            return Outcome::error(class, why).with_bytes(0, out);
        }
        loop {
            match self.deliveries.recv().await {
                Some(Delivery::Message(p)) if op_of(&p) == Some(op) => {
                    return Outcome::ok(p.len() as u64, out)
                }
                // A late message of an earlier (timed-out) op.
                Some(Delivery::Message(_)) => continue,
                Some(Delivery::Lost(why)) => {
                    self.broken = Some(why.clone());
                    return Outcome::error(Class::Read, why).with_bytes(0, out);
                }
                None => {
                    let why = "connection lost: the event loop ended".to_string();
                    self.broken = Some(why.clone());
                    return Outcome::error(Class::Read, why).with_bytes(0, out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_options_are_checked_without_the_password() {
        let d = MqttDriver::new("mqtt://u:s3cret@127.0.0.1:1999", MqttOptions::default()).unwrap();
        assert_eq!(d.target(), "mqtt://u@127.0.0.1:1999");
        assert_eq!(
            d.shared.credentials,
            Some(("u".to_string(), "s3cret".to_string()))
        );
        let d = MqttDriver::new("mqtt://h", MqttOptions::default()).unwrap();
        assert_eq!(d.target(), "mqtt://h:1883");
        assert_eq!(
            perfbase_core::redact::url("mqtt://u:p@ss@h:1"),
            "mqtt://u:[redacted]@h:1"
        );
        for bad in [
            "http://u:s3cret@h",
            "mqtt://u:s3cret@h:x",
            "mqtts://u:s3cret@h",
        ] {
            let e = MqttDriver::new(bad, MqttOptions::default())
                .err()
                .unwrap()
                .to_string();
            assert!(!e.contains("s3cret"), "{e}");
        }
        for (qos, message_size) in [(2, 128), (0, 7)] {
            assert!(matches!(
                MqttDriver::new("mqtt://h", MqttOptions { qos, message_size }),
                Err(MqttError::Unsupported(_))
            ));
        }
        assert_eq!(percent_decode("p%2Bq"), Some("p+q".to_string()));
    }

    #[test]
    fn payloads_carry_the_op() {
        assert_eq!(op_of(&7u64.to_le_bytes()), Some(7));
        assert_eq!(op_of(b"1234567"), None);
    }
}
