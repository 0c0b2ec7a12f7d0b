//! Opening a session: the connection and its channel (publisher confirms on when asked), the
//! session's queue declared, in round trips the session's own consumer on it, and the message
//! bodies its publishes reuse.

use super::{
    consumers, describe, lag, AckMode, AmqpDriver, AmqpMode, AmqpSession,
    GENERATED_QUEUE_EXPIRY_MS, HEADER, QUEUE_SEQ,
};
use lapin::options::{BasicConsumeOptions, ConfirmSelectOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{Channel, Connection, ConnectionProperties, Consumer};
use perfbase_core::{Class, Outcome};
use std::sync::atomic::Ordering;

impl AmqpDriver {
    /// Opens session `worker`'s connection, channel and queue (see the module docs of
    /// `amqp`). Failures are class `connect`, without the password.
    pub(super) async fn connect(&self, worker: usize) -> Result<AmqpSession, Outcome> {
        let (conn, channel) = self.open_channel().await?;
        let (queue, delete_on_drop) = self.session_queue(worker);
        let queue = ShortString::from(queue);
        channel
            .queue_declare(
                queue.clone(),
                self.declare_options(),
                self.queue_arguments(delete_on_drop),
            )
            .await
            .map_err(|e| self.connect_error(&format!("cannot declare queue {queue} on"), &e))?;
        let consumer = match self.options.mode {
            AmqpMode::Publish | AmqpMode::Stream => None,
            AmqpMode::RoundTrip => Some(self.consume_own(&channel, &queue, worker).await?),
        };
        let bodies = self.message_bodies();
        let gate = match (self.options.mode, self.options.max_lag) {
            (AmqpMode::Stream, Some(max)) => lag::Gate::of(queue.as_str(), max),
            _ => None,
        };
        Ok(AmqpSession {
            conn: Some(conn),
            channel,
            consumer,
            queue,
            delete_on_drop,
            mode: self.options.mode,
            ack: self.options.ack,
            confirms: self.options.confirms,
            persistent: self.options.persistent,
            bodies,
            gate,
            unacked: None,
            broken: None,
        })
    }

    /// A failed step of `connect`: class `connect`, naming the broker (never the password).
    fn connect_error(&self, what: &str, e: &lapin::Error) -> Outcome {
        Outcome::error(
            Class::Connect,
            format!("{what} {}: {}", self.target, describe(e, Some(&self.url))),
        )
    }

    /// The connection and its channel, with publisher confirms when they are on.
    async fn open_channel(&self) -> Result<(Connection, Channel), Outcome> {
        // The default properties: no automatic recovery (a broken session is reopened by the
        // engine instead).
        let props = ConnectionProperties::default().with_connection_name("perfbase".into());
        let conn = Connection::connect(&self.url, props)
            .await
            .map_err(|e| self.connect_error("cannot connect to", &e))?;
        let channel = conn
            .create_channel()
            .await
            .map_err(|e| self.connect_error("cannot open a channel on", &e))?;
        if self.options.confirms {
            channel
                .confirm_select(ConfirmSelectOptions::default())
                .await
                .map_err(|e| self.connect_error("cannot enable publisher confirms on", &e))?;
        }
        Ok((conn, channel))
    }

    /// The session's queue, and whether the session deletes it when it drops: the named
    /// queue (kept), or a generated `perfbase-<pid>-<worker>-<n>` (deleted when durable).
    fn session_queue(&self, worker: usize) -> (String, bool) {
        match &self.options.queue {
            Some(q) => (q.clone(), false),
            None => (
                format!(
                    "perfbase-{}-{worker}-{}",
                    std::process::id(),
                    QUEUE_SEQ.fetch_add(1, Ordering::Relaxed)
                ),
                self.options.persistent,
            ),
        }
    }

    /// How the session's queue is declared: durable when persistent; a generated one
    /// exclusive unless durable, and auto-delete.
    fn declare_options(&self) -> QueueDeclareOptions {
        let stream = self.options.mode == AmqpMode::Stream;
        QueueDeclareOptions {
            durable: self.options.persistent,
            exclusive: self.options.queue.is_none() && !self.options.persistent,
            // The consumer group's queue is auto-delete (see consumers.rs): declared the same.
            auto_delete: self.options.queue.is_none() || stream,
            ..QueueDeclareOptions::default()
        }
    }

    /// The session's queue's arguments: the consumer group's in stream mode, and an expiry
    /// for a generated durable queue.
    fn queue_arguments(&self, delete_on_drop: bool) -> FieldTable {
        let mut arguments = if self.options.mode == AmqpMode::Stream {
            consumers::queue_arguments()
        } else {
            FieldTable::default()
        };
        if delete_on_drop {
            // A generated durable queue the session could not delete (the runtime ended
            // first) expires after a minute unused.
            arguments.insert(
                "x-expires".into(),
                AMQPValue::LongInt(GENERATED_QUEUE_EXPIRY_MS),
            );
        }
        arguments
    }

    /// Round trips: the session's consumer on its own queue.
    async fn consume_own(
        &self,
        channel: &Channel,
        queue: &ShortString,
        worker: usize,
    ) -> Result<Consumer, Outcome> {
        channel
            .basic_consume(
                queue.clone(),
                ShortString::from(format!("perfbase-{worker}")),
                BasicConsumeOptions {
                    no_ack: self.options.ack == AckMode::None,
                    ..BasicConsumeOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .map_err(|e| self.connect_error(&format!("cannot consume from {queue} on"), &e))
    }

    /// One message body per message of a pipeline: the header left zero (each publish
    /// stamps it), then `a…z` repeated.
    fn message_bodies(&self) -> Vec<Vec<u8>> {
        let mut body = vec![0u8; self.options.message_size];
        for (i, b) in body.iter_mut().enumerate().skip(HEADER) {
            *b = b'a' + (i % 26) as u8;
        }
        vec![body; self.options.pipeline.max(1)]
    }
}
