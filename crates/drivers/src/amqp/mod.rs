//! AMQP 0-9-1 (feature `amqp`): publishing to and consuming from RabbitMQ with lapin, plain TCP
//! without TLS.
//!
//! - **Runtime.** lapin 4 is built with only its `tokio` feature (no TLS backend): it finds the
//!   current tokio runtime through `Handle::current()` (async-rs's `tokio_current`), registers
//!   its socket with that runtime's reactor and spawns its internal tasks there. Each
//!   connection also has lapin's own I/O thread (`lapin-io-loop`), which drives the socket
//!   through the same reactor; the session's futures run on the engine's single-threaded
//!   worker.
//! - **One connection and one channel per session.** `open` connects, opens a channel,
//!   enables publisher confirms when [`AmqpOptions::confirms`] is set, declares the session's
//!   queue and, in [`AmqpMode::RoundTrip`], starts a consumer on it. The default queue is
//!   `perfbase-<pid>-<worker>-<n>`: exclusive and auto-delete (the broker deletes it when the
//!   connection closes), or durable and auto-delete when [`AmqpOptions::persistent`] is set,
//!   in which case the session deletes it when it drops (a task on the current runtime, so
//!   best effort) and the broker expires it after a minute unused (`x-expires`) otherwise. A named queue ([`AmqpOptions::queue`]) is declared
//!   durable when persistent, never exclusive nor auto-delete, and is left in place.
//! - **Stream mode** ([`AmqpMode::Stream`]): sessions only publish, to the shared queue of a
//!   [`ConsumerGroup`] (see `consumers.rs`), whose consumers take each message's end-to-end
//!   latency from its send stamp; the queue is auto-delete and declared the same by both.
//! - **execute(op)** publishes one message of [`AmqpOptions::message_size`] bytes (at least 16)
//!   to the default exchange with the queue as routing key (`mandatory` with confirms,
//!   delivery mode 2 when persistent). Its first 8 bytes are `op` (little-endian u64), the next 8 a send stamp
//!   (nanoseconds since the Unix epoch, for consumers outside perfbase; the engine takes the
//!   latency itself), the rest filler. [`AmqpMode::Publish`] returns once the message is
//!   written, or confirmed by the broker with confirms on; [`AmqpMode::RoundTrip`] then waits
//!   until the consumer delivers the message carrying `op` and acks it per [`AckMode`].
//!   **Pipelining** ([`AmqpOptions::pipeline`] = N > 1, Publish and Stream modes): each
//!   `execute(op)` publishes the N messages of ops `N·op … N·op+N−1` at once and returns one
//!   outcome for the batch. lapin hands every publish to its I/O thread and wakes the session
//!   when the frames are written: one message at a time, `bench/amqp_vs_perftest.sh`
//!   measured that I/O thread at 62 % of perfbase's CPU, with 6 futex calls and 2 eventfd
//!   writes per message; a batch shares those wake-ups.
//!   Each session has one message in flight, so on its own queue the next delivery is always
//!   its own message; a delivery carrying another op (possible only when several sessions share
//!   a named queue) is class `protocol`.
//! - **Bytes.** `bytes_out` is the message body, `bytes_in` the body delivered back (0 in
//!   Publish mode).
//! - **Errors.** A broker answer that leaves the channel usable is class `driver` with the
//!   AMQP reply code: a publisher nack, or a message returned as unroutable (`AMQP 312
//!   NO_ROUTE`). An error that closes the channel or the connection (`AMQP 404 NOT_FOUND …`
//!   when the queue was deleted, `AMQP 320 CONNECTION_FORCED` when the broker shuts down), a
//!   consumer the broker cancelled (its queue was deleted), or a lost socket is class `read`:
//!   the session cannot go on, and `read` is a class that makes the engine drop and reopen it
//!   (a `driver` class would keep the dead session and fail every later operation the same
//!   way). The session also marks itself broken, so any further `execute` fails at once.
//!   `open` failures are class `connect` (`AMQP 403 ACCESS_REFUSED` for a wrong user or
//!   password, or the socket error); the password never appears in any message.

use futures_util::StreamExt;
use lapin::message::Delivery;
use lapin::options::{BasicAckOptions, QueueDeclareOptions, QueueDeleteOptions};
use lapin::protocol::AMQPErrorKind;
use lapin::types::{FieldTable, ShortString};
use lapin::{Channel, Connection, Consumer, ErrorKind};
use perfbase_core::{Class, Driver, Outcome, Session};
use std::sync::atomic::AtomicU64;
use thiserror::Error;

mod consumers;
mod lag;
mod open;
mod publish;
mod version;
pub use consumers::{Consumed, ConsumerGroup, ConsumerSettings};
pub use version::server_version;

/// Bytes at the start of each message: the op (u64) and the send stamp (u64).
use crate::apart::HEADER;
/// In [`AckMode::Auto`], deliveries acknowledged together by one `basic.ack(multiple)`.
pub const AUTO_ACK_EVERY: u64 = 32;
/// `x-expires` of a generated durable queue: the broker deletes it after this long unused.
const GENERATED_QUEUE_EXPIRY_MS: i32 = 60_000;

/// What one operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmqpMode {
    /// Publish, then wait until the session's own consumer receives the message: the
    /// operation's latency is the end-to-end latency through the broker.
    RoundTrip,
    /// Publish only; with [`AmqpOptions::confirms`] the operation ends with the broker's ack.
    Publish,
    /// Publish only, to the shared queue ([`AmqpOptions::queue`], required) of a
    /// [`ConsumerGroup`] whose consumers take each message's end-to-end latency from its send
    /// stamp: publishers and consumers apart, as RabbitMQ PerfTest runs them.
    Stream,
}

/// How the RoundTrip consumer acknowledges deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckMode {
    /// A `no_ack` consumer: the broker counts a message as acknowledged once it sent it.
    None,
    /// Cumulative acks: one `basic.ack` with `multiple` every [`AUTO_ACK_EVERY`] deliveries
    /// (and for the rest when the session drops), as a client library's batching would.
    Auto,
    /// One `basic.ack` per delivery, sent inside the operation.
    Manual,
}

/// Options of the AMQP driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmqpOptions {
    pub mode: AmqpMode,
    /// Message body size in bytes, at least 16 (1024 by default).
    pub message_size: usize,
    /// Persistent messages (delivery mode 2) on a durable queue.
    pub persistent: bool,
    /// Publisher confirms: each publish waits for the broker's ack.
    pub confirms: bool,
    /// How RoundTrip deliveries are acknowledged (ignored in Publish mode).
    pub ack: AckMode,
    /// A named queue instead of the per-session `perfbase-<pid>-<worker>-<n>`.
    pub queue: Option<String>,
    /// Publish and Stream modes: messages published at once per `execute` (≥ 1; 1 = one at
    /// a time), see the module docs.
    pub pipeline: usize,
    /// Stream mode: at most this many messages published and not yet consumed (all
    /// publishers together); a publisher waits for the consumers beyond it. `None`: no bound,
    /// as RabbitMQ PerfTest publishes. See `lag.rs`.
    pub max_lag: Option<u64>,
}

impl Default for AmqpOptions {
    fn default() -> AmqpOptions {
        AmqpOptions {
            mode: AmqpMode::RoundTrip,
            message_size: 1024,
            persistent: false,
            confirms: false,
            ack: AckMode::Manual,
            queue: None,
            pipeline: 1,
            max_lag: None,
        }
    }
}

/// Why the AMQP driver cannot be set up. Messages never contain the password.
#[derive(Debug, Error)]
pub enum AmqpError {
    /// The URL does not parse: use `amqp://user:password@host:port/vhost` (`%2f` for `/`).
    #[error("'{url}' is not a usable AMQP URL ({reason}); use amqp://user:password@host:port/%2f")]
    Url { url: String, reason: String },
    /// An option this driver cannot honour; the message says what to use instead.
    #[error("{0}")]
    Unsupported(String),
    /// A broker operation outside a session's operations (e.g. [`AmqpSession::queue_depth`])
    /// failed; the reason carries the AMQP reply code.
    #[error("{0}")]
    Broker(String),
}

/// The AMQP name of a reply code.
fn reply_name(code: u16) -> &'static str {
    match code {
        200 => "REPLY_SUCCESS",
        311 => "CONTENT_TOO_LARGE",
        312 => "NO_ROUTE",
        313 => "NO_CONSUMERS",
        320 => "CONNECTION_FORCED",
        402 => "INVALID_PATH",
        403 => "ACCESS_REFUSED",
        404 => "NOT_FOUND",
        405 => "RESOURCE_LOCKED",
        406 => "PRECONDITION_FAILED",
        501 => "FRAME_ERROR",
        502 => "SYNTAX_ERROR",
        503 => "COMMAND_INVALID",
        504 => "CHANNEL_ERROR",
        505 => "UNEXPECTED_FRAME",
        506 => "RESOURCE_ERROR",
        530 => "NOT_ALLOWED",
        540 => "NOT_IMPLEMENTED",
        541 => "INTERNAL_ERROR",
        _ => "UNKNOWN",
    }
}

/// A one-line description: `AMQP 404 NOT_FOUND: <broker text>` for the broker's errors, the
/// library's message otherwise. `url` (if any) is removed from it, in case an error quotes it.
fn describe(e: &lapin::Error, url: Option<&str>) -> String {
    let text = match e.kind() {
        ErrorKind::ProtocolError(amqp) => {
            let code = amqp.get_id();
            format!("AMQP {code} {}: {}", reply_name(code), amqp.get_message())
        }
        _ => e.to_string(),
    };
    match url {
        Some(u) if !u.is_empty() => text.replace(u, &perfbase_core::redact::url(u)),
        _ => text,
    }
}

/// The outcome of a library error during an operation: always class `read`, which breaks the
/// session (see the module docs). A stopped broker shows up here as a reset connection, seen
/// by lapin's reader whichever call notices it, so it is `read` even during a publish.
fn op_error(e: &lapin::Error) -> Outcome {
    let closed = match e.kind() {
        ErrorKind::ProtocolError(amqp) => match amqp.kind() {
            AMQPErrorKind::Soft(_) => " (channel closed by the broker)",
            AMQPErrorKind::Hard(_) => " (connection closed by the broker)",
        },
        _ => "",
    };
    Outcome::error(Class::Read, format!("{}{closed}", describe(e, None)))
}

/// Distinguishes the queues of sessions opened by one process.
static QUEUE_SEQ: AtomicU64 = AtomicU64::new(0);

/// The AMQP driver: one connection, channel and queue per session.
#[derive(Debug)]
pub struct AmqpDriver {
    url: String,
    target: String,
    options: AmqpOptions,
}

impl AmqpDriver {
    /// Checks `url` (`amqp://user:password@host:port/vhost`) and the options; connects only
    /// in `open`.
    pub fn new(url: &str, options: AmqpOptions) -> Result<AmqpDriver, AmqpError> {
        let parsed: lapin::uri::AMQPUri = url.parse().map_err(|reason: String| AmqpError::Url {
            url: perfbase_core::redact::url(url),
            reason: reason.replace(url, &perfbase_core::redact::url(url)),
        })?;
        if parsed.scheme != lapin::uri::AMQPScheme::AMQP {
            return Err(AmqpError::Unsupported(format!(
                "'{}': this build has no TLS, use amqp:// (plain TCP)",
                perfbase_core::redact::url(url)
            )));
        }
        if options.message_size < HEADER {
            return Err(AmqpError::Unsupported(format!(
                "message size {} is too small: messages carry a {HEADER}-byte header (op and \
                 send stamp), use at least {HEADER}",
                options.message_size
            )));
        }
        if options.pipeline == 0 {
            return Err(AmqpError::Unsupported(
                "pipeline must be at least 1 (1 = one message at a time)".into(),
            ));
        }
        if options.pipeline > 1 && options.mode == AmqpMode::RoundTrip {
            return Err(AmqpError::Unsupported(format!(
                "pipeline {}: a round trip waits for its own message to come back; use the \
                 publish or stream mode to publish several at once",
                options.pipeline
            )));
        }
        if options.max_lag.is_some() && options.mode != AmqpMode::Stream {
            return Err(AmqpError::Unsupported(
                "max lag: only in stream mode, where consumers apart take the messages".into(),
            ));
        }
        if options.max_lag == Some(0) {
            return Err(AmqpError::Unsupported(
                "max lag must be at least 1 (leave it out for no bound)".into(),
            ));
        }
        if options.mode == AmqpMode::Stream && options.queue.is_none() {
            return Err(AmqpError::Unsupported(
                "stream mode publishes to the consumer group's queue: give its name".into(),
            ));
        }
        if let Some(q) = &options.queue {
            if q.is_empty() || q.len() > 255 {
                return Err(AmqpError::Unsupported(format!(
                    "queue name '{q}' must have 1 to 255 bytes"
                )));
            }
        }
        Ok(AmqpDriver {
            url: url.to_string(),
            target: perfbase_core::redact::url(url),
            options,
        })
    }

    /// The broker URL without its password.
    pub fn target(&self) -> &str {
        &self.target
    }
}

impl Driver for AmqpDriver {
    type Session = AmqpSession;

    async fn open(&self, worker: usize) -> Result<AmqpSession, Outcome> {
        self.connect(worker).await
    }
}

/// One connection, channel and queue.
pub struct AmqpSession {
    /// Kept so the connection lives as long as the session (dropping it closes it); taken
    /// only by `drop`.
    conn: Option<Connection>,
    channel: Channel,
    consumer: Option<Consumer>,
    queue: ShortString,
    /// A generated durable queue: deleted when the session drops.
    delete_on_drop: bool,
    mode: AmqpMode,
    ack: AckMode,
    confirms: bool,
    persistent: bool,
    /// One message body per message of a pipeline (one without pipelining).
    bodies: Vec<Vec<u8>>,
    /// Stream mode with a max lag: the bound on the lead over the consumers.
    gate: Option<lag::Gate>,
    /// [`AckMode::Auto`]: the latest delivery tag not yet acknowledged, and how many are.
    unacked: Option<(u64, u64)>,
    /// Why the session cannot go on, once an error closed its channel.
    broken: Option<String>,
}

impl std::fmt::Debug for AmqpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AmqpSession")
            .field("queue", &self.queue.as_str())
            .field("mode", &self.mode)
            .field("broken", &self.broken)
            .finish()
    }
}

impl AmqpSession {
    /// The session's queue.
    pub fn queue(&self) -> &str {
        self.queue.as_str()
    }

    /// Messages ready in the session's queue (a passive declare on the session's channel;
    /// unacknowledged deliveries are not counted). Sends pending [`AckMode::Auto`] acks first.
    pub async fn queue_depth(&mut self) -> Result<u32, AmqpError> {
        self.flush_acks()
            .await
            .map_err(|e| AmqpError::Broker(describe(&e, None)))?;
        let q = self
            .channel
            .queue_declare(
                self.queue.clone(),
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .map_err(|e| AmqpError::Broker(describe(&e, None)))?;
        Ok(q.message_count())
    }

    /// Acknowledges the deliveries that [`AckMode::Auto`] has not acknowledged yet.
    pub async fn flush_acks(&mut self) -> Result<(), lapin::Error> {
        if let Some((tag, _)) = self.unacked.take() {
            self.channel
                .basic_ack(tag, BasicAckOptions { multiple: true })
                .await?;
        }
        Ok(())
    }

    /// Marks the session broken and returns `outcome`.
    fn fail(&mut self, outcome: Outcome) -> Outcome {
        if outcome.class.breaks_session() {
            self.broken = outcome.detail.as_deref().map(str::to_string);
        }
        outcome
    }

    /// Per op: a publish (or a pipeline's batch) and, in round trips, the message's delivery.
    /// Every message crosses lapin's I/O thread, so the helpers awaited here (a publish, a
    /// delivery's check) cost nothing beside that.
    async fn run(&mut self, op: u64) -> Outcome {
        if let Some(why) = &self.broken {
            return Outcome::error(Class::Read, format!("session broken earlier: {why}"));
        }
        if let Some(gate) = &self.gate {
            gate.room(self.bodies.len() as u64).await;
        }
        if self.bodies.len() > 1 {
            return self.publish_batch(op).await;
        }
        let sent = match self.publish_one(op).await {
            Ok(sent) => sent,
            Err(failure) => return failure,
        };
        let Some(consumer) = self.consumer.as_mut() else {
            return Outcome::ok(0, sent);
        };
        let next = consumer.next().await;
        self.take_delivery(op, sent, next).await
    }

    /// A round trip's end: the delivery that should carry op `op` (whose message was `sent`
    /// bytes), acknowledged as the ack mode says, and its op checked.
    async fn take_delivery(
        &mut self,
        op: u64,
        sent: u64,
        next: Option<lapin::Result<Delivery>>,
    ) -> Outcome {
        let delivery = match next {
            Some(Ok(d)) => d,
            Some(Err(e)) => return self.fail(op_error(&e).with_bytes(0, sent)),
            None => {
                let detail = format!(
                    "AMQP consumer cancelled by the broker (queue {} deleted?)",
                    self.queue
                );
                return self.fail(Outcome::error(Class::Read, detail).with_bytes(0, sent));
            }
        };
        let received = delivery.data.len() as u64;
        let got = delivery
            .data
            .get(..8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes);
        if let Err(e) = self.ack_delivery(delivery.delivery_tag).await {
            return self.fail(op_error(&e).with_bytes(received, sent));
        }
        if got != Some(op) {
            let detail = match got {
                Some(other) => format!(
                    "expected the message of op {op} on queue {}, got op {other} (is the queue \
                     shared with another session?)",
                    self.queue
                ),
                None => format!("a {received}-byte message without perfbase's header"),
            };
            return self.fail(Outcome::error(Class::Malformed, detail).with_bytes(received, sent));
        }
        Outcome::ok(received, sent)
    }

    /// Acknowledges a round trip's delivery `tag` as the ack mode says: not at all, at once,
    /// or with the next cumulative ack ([`AUTO_ACK_EVERY`]).
    async fn ack_delivery(&mut self, tag: u64) -> Result<(), lapin::Error> {
        match self.ack {
            AckMode::None => Ok(()),
            AckMode::Manual => {
                self.channel
                    .basic_ack(tag, BasicAckOptions::default())
                    .await
            }
            AckMode::Auto => {
                let n = self.unacked.map_or(0, |(_, n)| n) + 1;
                self.unacked = Some((tag, n));
                if n >= AUTO_ACK_EVERY {
                    self.flush_acks().await
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl Session for AmqpSession {
    async fn execute(&mut self, op: u64) -> Outcome {
        self.run(op).await
    }

    /// Pending acks, a generated durable queue's deletion, then the channel's and the
    /// connection's close handshakes: the broker answers them only once it has handled every
    /// message published before, so none is lost with the connection (a connection that just
    /// drops loses what the broker had not read yet, which a pipeline or a busy broker
    /// makes thousands).
    async fn close(mut self) {
        let _ = self.flush_acks().await;
        if std::mem::take(&mut self.delete_on_drop) {
            let _ = self
                .channel
                .queue_delete(self.queue.clone(), QueueDeleteOptions::default())
                .await;
        }
        let _ = self.channel.close(200, "perfbase done".into()).await;
        if let Some(conn) = self.conn.take() {
            let _ = conn.close(200, "perfbase done".into()).await;
        }
    }
}

impl Drop for AmqpSession {
    fn drop(&mut self) {
        // Pending Auto acks and a generated durable queue need the broker: do that on the
        // current runtime, if there still is one; the connection closes when the task ends.
        // An exclusive queue goes with the connection anyway.
        let ack = self.unacked.take().map(|(tag, _)| tag);
        if ack.is_none() && !self.delete_on_drop {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let channel = self.channel.clone();
        let conn = self.conn.take();
        let queue = self.queue.clone();
        let delete = self.delete_on_drop;
        handle.spawn(async move {
            if let Some(tag) = ack {
                let _ = channel
                    .basic_ack(tag, BasicAckOptions { multiple: true })
                    .await;
            }
            if delete {
                let _ = channel
                    .queue_delete(queue, QueueDeleteOptions::default())
                    .await;
            }
            drop(channel);
            drop(conn);
        });
    }
}
