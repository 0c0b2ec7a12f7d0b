//! NATS (feature `nats`): end-to-end message latency through a NATS server over async-nats,
//! plain TCP (no TLS: async-nats is built without a crypto provider).
//!
//! - **One connection per session.** `open` connects with the URL's user and password (or a
//!   token: a user name without a password), registers the session's own subject
//!   `perfbase.<pid>.<driver>.<session>` and flushes, so the server knows the subscription
//!   before the first op. async-nats runs its connection handler as a tokio task; sessions live
//!   on the engine's single-threaded runtimes inside a `LocalSet`.
//! - **Modes** ([`NatsMode`]): each `execute(op)` sends one message of
//!   [`NatsOptions::message_size`] bytes whose first 8 carry `op` (little-endian) and waits:
//!   - `PubSub`: core publish to the session's subject, which the session itself subscribes
//!     to; done when that message (recognised by its op) comes back. Messages of earlier ops
//!     (late after a timeout) are skipped.
//!   - `Request`: request/reply; the session also runs a responder on its subject (a
//!     `spawn_local` task echoing the payload), so an op is request → responder → reply.
//!   - `JetStream`: publish to the driver's stream (`PERFBASE_<pid>_<driver>`, created on the
//!     first `open` with subjects `perfbase.<pid>.<driver>.js.>`, file storage, at most 1 GiB,
//!     oldest messages discarded beyond) and wait for the server's PubAck, i.e. until the
//!     message is stored. One session at a time checks or creates the stream. The driver
//!     leaves it in place; `perfbase nats` removes it after the run with
//!     [`NatsDriver::delete_stream`].
//! - **Outcomes.** A reply is `ok` with `bytes_out` the payload sent and `bytes_in` the payload
//!   received (0 for a PubAck, whose JSON is not counted). A server error (`-ERR` such as a
//!   permissions violation, a JetStream API error, "no responders") is class `driver` with the
//!   server's text (a `-ERR` arrives asynchronously, so it is charged to the op in flight when
//!   it comes); a lost connection (`Disconnected`, a closed subscription) is `read`, after
//!   which the session answers `read` until the engine replaces it; a publish that cannot be
//!   handed to the connection is `write`. No reply at all is left to the engine's timeout
//!   (the driver sets no timeouts of its own on requests and acks). `open` failures are
//!   `connect` with the reason (`authorization violation` for a wrong password); no message
//!   ever contains the password.

use async_nats::jetstream;
use async_nats::{Client, ConnectErrorKind, ConnectOptions, Event, Subscriber};
use futures_util::StreamExt;
use perfbase_core::{Class, Driver, Outcome};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tokio::sync::mpsc::unbounded_channel;
use tokio::task::JoinHandle;

mod session;
use session::Kind;
pub use session::NatsSession;

/// The default NATS port.
const DEFAULT_PORT: u16 = 4222;
/// Bytes of the payload that carry the op number.
const OP_BYTES: usize = 8;
/// The JetStream stream's size limit (oldest messages are discarded beyond it).
const STREAM_MAX_BYTES: i64 = 1 << 30;
/// How long a JetStream API call or PubAck may take before async-nats gives up: far beyond any
/// sensible engine timeout, so that the engine's timeout is the one that counts.
const ACK_WAIT: Duration = Duration::from_secs(3600);

/// Drivers made in this process, for unique stream names and subjects.
static DRIVERS: AtomicU64 = AtomicU64::new(0);
/// Sessions opened in this process, for unique subjects.
static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// What one op sends and waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NatsMode {
    /// Core publish to the session's subject, which the session subscribes to itself.
    PubSub,
    /// Request/reply: the session also runs a responder on its own subject.
    Request,
    /// Publish to a JetStream stream (created by the driver) and await the PubAck.
    JetStream,
}

/// Options of the NATS driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NatsOptions {
    pub mode: NatsMode,
    /// Payload bytes per message (at least 8: the op number).
    pub message_size: usize,
}

impl Default for NatsOptions {
    fn default() -> NatsOptions {
        NatsOptions {
            mode: NatsMode::PubSub,
            message_size: 128,
        }
    }
}

/// Why the NATS driver or one of its stream helpers could not do its work. Messages never
/// contain the password.
#[derive(Debug, Error)]
pub enum NatsError {
    /// The URL does not parse: use `nats://user:password@host:port` (or `nats://token@host`,
    /// or `nats://host:port` without authentication).
    #[error("'{url}' is not a usable NATS URL ({reason}); use nats://user:password@host:port")]
    Url { url: String, reason: String },
    /// A setting the driver cannot use; the message says what to use instead.
    #[error("{0}")]
    Unsupported(String),
    /// No connection: the server is not running or not reachable, or it refused the login
    /// (`authorization violation`: check the user and password).
    #[error("cannot connect to {target}: {reason}; check that the server is running and that the user and password are right")]
    Connect { target: String, reason: String },
    /// The JetStream API refused a request (JetStream not enabled on the server: start it
    /// with `-js`; no such stream: nothing was published yet or it was deleted).
    #[error("JetStream on {target}: {reason}")]
    JetStream { target: String, reason: String },
}

/// The connection settings from a `nats://` URL.
struct Target {
    /// `nats://host:port`, without credentials: what async-nats connects to.
    address: String,
    user: Option<String>,
    password: Option<String>,
    /// `nats://user@host:port`, for messages.
    display: String,
}

fn parse_url(url: &str) -> Result<Target, NatsError> {
    let bad = |reason: &str| NatsError::Url {
        url: perfbase_core::redact::url(url),
        reason: reason.to_string(),
    };
    let parsed = url::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
    match parsed.scheme() {
        "nats" => {}
        "tls" | "nats+tls" | "wss" | "ws" => {
            return Err(NatsError::Unsupported(format!(
                "{}: this build speaks plain TCP only (no TLS, no websockets); use nats://",
                perfbase_core::redact::url(url)
            )))
        }
        other => return Err(bad(&format!("unknown scheme '{other}'"))),
    }
    let host = parsed
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| bad("no host"))?;
    let port = parsed.port().unwrap_or(DEFAULT_PORT);
    let decode = |s: &str| percent_decode(s).ok_or_else(|| bad("the user info is not UTF-8"));
    let user = match parsed.username() {
        "" => None,
        u => Some(decode(u)?),
    };
    let password = match parsed.password() {
        None => None,
        Some(p) => Some(decode(p)?),
    };
    let display = match (&user, &password) {
        (Some(u), Some(_)) => format!("nats://{u}@{host}:{port}"),
        (Some(_), None) => format!("nats://{}@{host}:{port}", perfbase_core::redact::REDACTED),
        _ => format!("nats://{host}:{port}"),
    };
    Ok(Target {
        address: format!("nats://{host}:{port}"),
        user,
        password,
        display,
    })
}

use crate::userinfo::percent_decode;

struct Shared {
    target: Target,
    mode: NatsMode,
    message_size: usize,
    /// `perfbase.<pid>.<driver>`: every subject of this driver starts with it.
    prefix: String,
    /// `PERFBASE_<pid>_<driver>`, the JetStream stream.
    stream: String,
    /// Whether this driver has made sure its stream exists. Sessions open concurrently on
    /// several threads, and concurrent creates of one stream on a freshly started server were
    /// seen to fail with "subjects overlap with an existing stream" (CI): so one session at a
    /// time checks or creates it, and the rest find it done. A failed create leaves it unset,
    /// so the next session tries again.
    stream_ready: tokio::sync::Mutex<bool>,
}

/// The NATS driver: the parsed connection settings and the mode, shared by all sessions.
pub struct NatsDriver {
    shared: Arc<Shared>,
}

impl NatsDriver {
    /// Checks the URL and the options; connects only in `open`.
    pub fn new(url: &str, options: NatsOptions) -> Result<NatsDriver, NatsError> {
        let target = parse_url(url)?;
        if options.message_size < OP_BYTES {
            return Err(NatsError::Unsupported(format!(
                "message size {} is too small: a message carries its op number, so use at \
                 least {OP_BYTES} bytes",
                options.message_size
            )));
        }
        let pid = std::process::id();
        let n = DRIVERS.fetch_add(1, Ordering::Relaxed);
        Ok(NatsDriver {
            shared: Arc::new(Shared {
                target,
                mode: options.mode,
                message_size: options.message_size,
                prefix: format!("perfbase.{pid}.{n}"),
                stream: format!("PERFBASE_{pid}_{n}"),
                stream_ready: tokio::sync::Mutex::new(false),
            }),
        })
    }

    /// The server without the password, for messages: `nats://user@host:port`.
    pub fn target(&self) -> &str {
        &self.shared.target.display
    }

    /// The JetStream stream this driver publishes to in `JetStream` mode.
    pub fn stream_name(&self) -> &str {
        &self.shared.stream
    }

    async fn admin(&self) -> Result<jetstream::Context, NatsError> {
        let client = connect(&self.shared, None)
            .await
            .map_err(|reason| NatsError::Connect {
                target: self.shared.target.display.clone(),
                reason,
            })?;
        Ok(jetstream::new(client))
    }

    fn js_error(&self, e: impl std::fmt::Display) -> NatsError {
        NatsError::JetStream {
            target: self.shared.target.display.clone(),
            reason: e.to_string(),
        }
    }

    /// How many messages the driver's stream holds (after a `JetStream` run).
    pub async fn stream_messages(&self) -> Result<u64, NatsError> {
        let js = self.admin().await?;
        let stream = js
            .get_stream(&self.shared.stream)
            .await
            .map_err(|e| self.js_error(e))?;
        let info = stream.get_info().await.map_err(|e| self.js_error(e))?;
        Ok(info.state.messages)
    }

    /// Deletes the driver's stream and its messages (it is kept after a run otherwise).
    /// Succeeds when there is no such stream.
    pub async fn delete_stream(&self) -> Result<(), NatsError> {
        let js = self.admin().await?;
        // A later session creates it again.
        *self.shared.stream_ready.lock().await = false;
        match js.delete_stream(&self.shared.stream).await {
            Ok(_) => Ok(()),
            Err(e) => match e.kind() {
                // 404 / 10059: stream not found, nothing to delete.
                jetstream::context::GetStreamErrorKind::JetStream(j) if j.code() == 404 => Ok(()),
                _ => Err(self.js_error(e)),
            },
        }
    }
}

/// The server's product and version for a report, e.g. `NATS 2.10.24`: the `version` of the
/// INFO the server sends on connect. Connects as the sessions do (same credentials and name),
/// then closes. Errors never contain the password.
pub async fn server_version(url: &str) -> Result<String, NatsError> {
    let driver = NatsDriver::new(url, NatsOptions::default())?;
    let shared = &driver.shared;
    let client = connect(shared, None)
        .await
        .map_err(|reason| NatsError::Connect {
            target: shared.target.display.clone(),
            reason,
        })?;
    let version = client.server_info().version;
    // Nothing was published: closing loses nothing, and ends the connection's task now.
    let _ = client.drain().await;
    Ok(format!("NATS {}", version.trim()))
}

/// Connects; `events` (when given) receives the connection's events. The error is a one-line
/// reason without the password.
async fn connect(
    shared: &Shared,
    events: Option<tokio::sync::mpsc::UnboundedSender<Event>>,
) -> Result<Client, String> {
    let t = &shared.target;
    let mut options = match (&t.user, &t.password) {
        (Some(u), Some(p)) => ConnectOptions::with_user_and_password(u.clone(), p.clone()),
        (Some(token), None) => ConnectOptions::with_token(token.clone()),
        _ => ConnectOptions::new(),
    };
    options = options
        .name("perfbase")
        .connection_timeout(Duration::from_secs(10))
        // The engine times ops out; async-nats must not answer first with its own timeout.
        .request_timeout(None)
        // A lost connection is reported as `read` and the engine opens a new session; the
        // client only retries briefly so that a dropped session's task ends.
        .max_reconnects(Some(2));
    if let Some(tx) = events {
        options = options.event_callback(move |event| {
            let tx = tx.clone();
            async move {
                // The session is gone when the receiver is: nothing to tell then.
                let _ = tx.send(event);
            }
        });
    }
    options
        .connect(t.address.as_str())
        .await
        .map_err(|e| match e.kind() {
            ConnectErrorKind::AuthorizationViolation => {
                "authorization violation (the server refused the user, password or token)"
                    .to_string()
            }
            _ => e.to_string(),
        })
}

impl Driver for NatsDriver {
    type Session = NatsSession;

    /// A JetStream run's stream is perfbase's scratch space (up to 1 GiB on the server's
    /// disk): deleted once the run is over, measured or not.
    async fn finish(&self) -> Result<(), String> {
        if self.shared.mode != NatsMode::JetStream {
            return Ok(());
        }
        self.delete_stream().await.map_err(|e| {
            format!(
                "could not delete JetStream stream {}: {e}",
                self.stream_name()
            )
        })
    }

    async fn open(&self, _worker: usize) -> Result<NatsSession, Outcome> {
        let shared = self.shared.clone();
        let (tx, events) = unbounded_channel();
        let client = connect(&shared, Some(tx))
            .await
            .map_err(|reason| shared.connect_error(reason))?;
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        let (subject, kind) = match shared.mode {
            NatsMode::PubSub => {
                let (subject, sub) = subscribe_own(&shared, &client, n).await?;
                (subject, Kind::PubSub(sub))
            }
            NatsMode::Request => {
                let (subject, sub) = subscribe_own(&shared, &client, n).await?;
                (subject, Kind::Request(spawn_responder(client.clone(), sub)))
            }
            NatsMode::JetStream => {
                let js = jetstream_context(&shared, &client).await?;
                (format!("{}.js.{n}", shared.prefix), Kind::JetStream(js))
            }
        };
        // The server has registered the subscription once it answered this PING.
        client
            .flush()
            .await
            .map_err(|e| shared.connect_error(format!("flush: {e}")))?;
        Ok(NatsSession {
            client,
            subject,
            kind,
            events,
            broken: None,
            template: message_template(shared.message_size),
        })
    }
}

impl Shared {
    /// A failed `open`: class `connect`, with the server (never the password).
    fn connect_error(&self, reason: String) -> Outcome {
        Outcome::error(
            Class::Connect,
            format!("connect {}: {reason}", self.target.display),
        )
    }
}

/// Subscribes to session `n`'s own subject, `<prefix>.<n>`.
async fn subscribe_own(
    shared: &Shared,
    client: &Client,
    n: u64,
) -> Result<(String, Subscriber), Outcome> {
    let subject = format!("{}.{n}", shared.prefix);
    let sub = client
        .subscribe(subject.clone())
        .await
        .map_err(|e| shared.connect_error(format!("subscribe {subject}: {e}")))?;
    Ok((subject, sub))
}

/// The `Request` mode's responder: echoes each request's payload to its reply subject until
/// the subscription or the connection ends.
fn spawn_responder(responder: Client, mut sub: Subscriber) -> JoinHandle<()> {
    tokio::task::spawn_local(async move {
        while let Some(message) = sub.next().await {
            if let Some(reply) = message.reply {
                if responder.publish(reply, message.payload).await.is_err() {
                    break;
                }
            }
        }
    })
}

/// The session's JetStream context, once the driver's stream exists: the first session
/// creates it, one session at a time (see [`Shared::stream_ready`]).
async fn jetstream_context(
    shared: &Shared,
    client: &Client,
) -> Result<jetstream::Context, Outcome> {
    let mut js = jetstream::new(client.clone());
    js.set_timeout(ACK_WAIT);
    let mut ready = shared.stream_ready.lock().await;
    if !*ready {
        js.get_or_create_stream(jetstream::stream::Config {
            name: shared.stream.clone(),
            subjects: vec![format!("{}.js.>", shared.prefix)],
            max_bytes: STREAM_MAX_BYTES,
            discard: jetstream::stream::DiscardPolicy::Old,
            ..Default::default()
        })
        .await
        .map_err(|e| {
            Outcome::error(
                Class::ServerError,
                format!(
                    "JetStream on {}: creating stream {}: {e}",
                    shared.target.display, shared.stream
                ),
            )
        })?;
        *ready = true;
    }
    Ok(js)
}

/// A message of `size` bytes with zeros where the op number goes.
fn message_template(size: usize) -> Vec<u8> {
    let mut template = vec![b'x'; size];
    template[..OP_BYTES].fill(0);
    template
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_redact() {
        let t = parse_url("nats://u:s3cret@127.0.0.1:4333").unwrap();
        assert_eq!(t.address, "nats://127.0.0.1:4333");
        assert_eq!(t.user.as_deref(), Some("u"));
        assert_eq!(t.password.as_deref(), Some("s3cret"));
        assert_eq!(t.display, "nats://u@127.0.0.1:4333");
        let t = parse_url("nats://tok@h").unwrap();
        assert_eq!(t.address, "nats://h:4222");
        assert_eq!(t.display, "nats://[redacted]@h:4222");
        assert_eq!(
            perfbase_core::redact::url("nats://u:p@ss@h:1"),
            "nats://u:[redacted]@h:1"
        );
        assert_eq!(
            perfbase_core::redact::url("nats://tok@h:1"),
            "nats://[redacted]@h:1"
        );
        assert_eq!(perfbase_core::redact::url("nats://h:1"), "nats://h:1");
        assert_eq!(percent_decode("a%40b%2"), Some("a@b%2".to_string()));
        assert_eq!(
            parse_url("nats://u:p%2Bq%40@h")
                .unwrap()
                .password
                .as_deref(),
            Some("p+q@")
        );
        for bad in ["http://h", "nats://u:s3cret@h:notaport", "tls://u:s3cret@h"] {
            let e = NatsDriver::new(bad, NatsOptions::default())
                .err()
                .unwrap()
                .to_string();
            assert!(!e.contains("s3cret"), "{e}");
        }
        assert!(matches!(
            NatsDriver::new(
                "nats://h",
                NatsOptions {
                    mode: NatsMode::PubSub,
                    message_size: 4
                }
            ),
            Err(NatsError::Unsupported(_))
        ));
    }
}
